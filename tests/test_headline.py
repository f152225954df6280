"""Answer first: each command's output opens with a short headline, fits the terminal, and titles its
tables the same way."""

from __future__ import annotations

import functools

import pytest
from clitools import REPO, run_cli, run_json

pytestmark = pytest.mark.slow  # the file takes seconds: out of the fast stage (pytest -m "not slow")

MAIN = [
    ("estimate", "--model", "bert-large", "--cpu", "icx"),
    ("estimate", "--model", "bert-large", "--cpu", "gnr", "--memory-model", "paper"),
    ("estimate", "--model", "llama-3.2-3b", "--cpu", "spr", "--phase", "decode"),
    ("estimate", "--model", "mixtral-8x7b", "--cpu", "turin", "--phase", "prefill"),
    ("footprint", "--model", "qwen3-0.6b", "--precision", "int8-weight-only", "--base-dtype", "fp32"),
    ("footprint", "--model", "mixtral-8x7b", "--precision", "q4_k_m"),
    ("check", "--model", "bert-large", "--cpu", "gnr", "--precision", "int8-static", "--throughput-speedup", "5.82",
     "--linear-speedup", "8.7"),
    ("check", "--report", "validation/results/zen4-2vcpu-bert-large.json", "--calibration",
     "platforms/calibration/zen4-2vcpu.toml"),
    ("accuracy",),
    ("platforms",), ("platforms", "show", "gnr"), ("models",), ("models", "show", "mixtral-8x7b"),
    ("plan", "--model", "bert-large", "--cpu", "icx,gnr", "--p99-ms", "50", "--target-rps", "20000",
     "--price-per-hour", "1.2,3.9"),
    ("plan", "--model", "llama-3.2-1b", "--cpu", "gnr", "--precision", "int8-weight-only", "--ttft-ms", "2000",
     "--tpot-ms", "100", "--target-rps", "10"),
]


@functools.cache
def _output(args: tuple[str, ...], columns: int) -> tuple[int, str, str]:
    """One run of the CLI at ``columns`` (the same command at the same width prints the same: several tests read
    one run)."""
    proc = run_cli(*args, env={"COLUMNS": str(columns)}, cwd=REPO)
    return proc.returncode, proc.stdout, proc.stderr


def _lines(*args: str, columns: int) -> list[str]:
    rc, out, err = _output(args, columns)
    assert rc == 0, err
    return out.splitlines()


@pytest.mark.parametrize("columns", [80, 120])
@pytest.mark.parametrize("args", MAIN, ids=[" ".join(a[:3]) for a in MAIN])
def test_no_line_is_wider_than_the_terminal_and_nothing_is_cut(args, columns, request):
    if args[0] == "accuracy":
        request.getfixturevalue("corpus_accuracy")  # computed once, then read from its cache
    lines = _lines(*args, columns=columns)
    wide = [line for line in lines if len(line) > columns]
    assert not wide, wide[:3]
    cut = [line for line in lines if "\u2026" in line]  # rich's ellipsis: a cell too narrow for its value
    assert not cut, cut[:3]
    assert all(line == line.rstrip() for line in lines), "trailing spaces"


@pytest.mark.parametrize("columns", [80, 100, 120])
def test_the_quick_start_answers_in_its_first_lines(columns):
    """The ceiling (3.15x) and the GEMM speedup (4.00x) of the paper's Ice Lake case, with what bounds each
    precision and the realistic estimate with its error band, before any table."""
    head = _lines("estimate", "--model", "bert-large", "--cpu", "icx", columns=columns)[:8]
    text = "\n".join(head)
    assert "3.15x" in text and "4.00x" in text, text
    data = run_json("estimate", "--model", "bert-large", "--cpu", "icx")
    row = next(line for line in head if line.startswith("int8-static"))
    realistic = data["speedups"][0]["realistic"]  # the stack profile's: a refit moves it
    assert row.split()[1] == "compute" and "4.00x" in row and f"3.15x / {realistic:.2f}x" in row
    assert 1 < realistic < 3.15
    assert next(line for line in head if line.startswith("fp32")).split()[1] == "compute"
    # each precision's error band: the profile's, or that of its figures on the precision's compute path class
    # where that is wider (FP32's on fp32-avx512 here; INT8's class is predicted better than the profile, so it
    # quotes the profile's)
    from roofline.catalog.stacks import load_stack
    band = data["realistic_accuracy"]["median_abs_error"]
    classes = load_stack("torch-inductor").accuracy.classes
    for name, cls in (("fp32", "fp32-avx512"), ("int8-static", "int8-avx512")):
        p = data["precisions"][name]
        line = next(line for line in head if line.startswith(name + " "))
        want = max(band, classes[cls].median_abs_error)
        assert line.split()[-1] == f"{want:.0%}" and p["error_band"]["realistic_error"] == pytest.approx(want), line
    assert data["precisions"]["fp32"]["error_band"]["realistic_error"] > band
    assert "+/-: median error on unseen CPUs by path class (torch-inductor)" in " ".join(head)


def test_the_headline_figures_are_the_json_ones():
    data = run_json("estimate", "--model", "bert-large", "--cpu", "gnr")
    rows = {line.split()[0]: line.split() for line in _lines("estimate", "--model", "bert-large", "--cpu", "gnr",
                                                               "--brief", columns=120)[2:5]}
    for name, p in data["precisions"].items():
        cells = rows[name]
        assert cells[1] == p["bound"]
        assert float(cells[2].replace(",", "")) == pytest.approx(p["instance_latency_s"] * 1e3, rel=5e-3)
        assert float(cells[4].replace(",", "")) == pytest.approx(p["realistic_instance_latency_s"] * 1e3, rel=5e-3)
        assert float(cells[5].replace(",", "")) == pytest.approx(p["throughput_per_s"], rel=5e-3)
        assert cells[-1] == f"{p['error_band']['realistic_error']:.0%}"  # its band (+/-)
    for s in data["speedups"]:
        cells = rows[s["precision"]]
        assert cells[-5:-1] == [f"{s['gemm_speedup']:.2f}x", f"{s['end_to_end_ceiling']:.2f}x", "/",
                                f"{s['realistic']:.2f}x"]


@pytest.mark.parametrize("args, most", [
    (("estimate", "--model", "bert-large", "--cpu", "icx"), 6),
    (("estimate", "--model", "bert-large", "--cpu", "gnr"), 7),  # three precisions and the platform factor's note
    (("estimate", "--model", "llama-3.2-3b", "--cpu", "spr", "--phase", "decode", "--precision", "int8-dynamic"), 6),
    (("footprint", "--model", "mixtral-8x7b", "--precision", "q4_k_m"), 6),
    (("check", "--model", "bert-large", "--cpu", "gnr", "--precision", "int8-static", "--throughput-speedup", "5.82"), 6),
    (("accuracy",), 30),  # a line, then a row per stack and per group, the legend, the plans' lines (BERT and LLM)
    (("platforms", "show", "icx"), 6),
    (("models", "show", "bert-large"), 6),
    (("platforms",), 8),  # 47 names wrap to 6 lines at 100 columns, then the hint
    (("plan", "--model", "bert-large", "--cpu", "icx,gnr", "--p99-ms", "50", "--target-rps", "20000"), 7),
])
@pytest.mark.parametrize("columns", [120])  # the full outputs the width test ran at 120 (cached), and --brief
def test_brief_is_the_headline_alone(args, most, columns, request):
    if args[0] == "accuracy":
        request.getfixturevalue("corpus_accuracy")  # computed once, then read from its cache
    brief = _lines(*args, "--brief", columns=columns)
    assert 1 <= len(brief) <= most, brief
    full = _lines(*args, columns=columns)
    assert full[:len(brief)] == brief and full[len(brief)] == "" and len(full) > len(brief) + 2


def test_paper_memory_model_headline_gives_the_paper_ceilings():
    head = "\n".join(_lines("estimate", "--model", "bert-large", "--cpu", "gnr", "--precision", "bf16,int8-static",
                            "--baseline", "bf16", "--memory-model", "paper", "--brief", columns=100))
    assert "1.91x" in head and "1.53x /" in head


def test_sections_are_titled_the_same_way():
    """A section is a blank line, a title line, then its table's header and rule: no framed tables, no title
    padded or centred over a table."""
    for args in MAIN[:1] + MAIN[4:5] + MAIN[6:7] + MAIN[10:11]:
        lines = _lines(*args, columns=100)
        assert not any(set(line) & set("┏┃│╇┡") for line in lines), args
        rules = [i for i, line in enumerate(lines) if line.startswith("──")]
        assert rules, args
        for i in rules:
            title = lines[i - 2]
            assert lines[i - 3] == "" or lines[i - 4] == "", (args, title)
            assert title and not title.startswith(" "), (args, title)


def test_sweep_to_a_file_says_what_it_wrote(tmp_path):
    out = tmp_path / "grid.csv"
    proc = run_cli("sweep", "--model", "bert-base,bert-large", "--cpu", "icx", "--batch", "1,8", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (f"sweep: 8 rows (2 models x 1 CPU x 2 precisions x 2 batches x 1 sequence length) "
                           f"written to {out} (csv)\n")
    assert len(out.read_text().splitlines()) == 9


@pytest.mark.parametrize("columns", ["0", "-5", "abc", ""])
def test_an_unusable_columns_is_the_default_width(columns):
    """COLUMNS that is not a positive number (0, negative, text, empty) prints at the default 100 columns,
    not nothing (rich took 0 as a width and printed no line)."""
    proc = run_cli("estimate", "--model", "bert-large", "--cpu", "icx", env={"COLUMNS": columns}, cwd=REPO)
    rc, default, _ = _output(("estimate", "--model", "bert-large", "--cpu", "icx"), 100)
    assert proc.returncode == rc == 0 and proc.stdout == default and "3.15x" in proc.stdout


def test_extreme_values_are_not_cut():
    """A million prompts of 131,072 tokens: latencies of 1e13 ms print as 7.38e12, and no cell is cut."""
    lines = _lines("estimate", "--model", "llama-3.1-8b", "--cpu", "icx", "--phase", "prefill", "--batch", "1000000",
                   "--seq-len", "131072", columns=100)
    assert not [line for line in lines if "\u2026" in line or len(line) > 100]
    fp32 = next(line for line in lines if line.startswith("fp32"))
    assert "e12 / " in fp32


def test_sig_keeps_three_figures_at_any_size():
    from roofline.report.fmt import sig

    assert [sig(x) for x in (7382074936621, 9_999_999, 9.996e9, 2.17e-5, 0.00217, 1234.5)] == [
        "7.38e12", "9,999,999", "1.00e10", "2.17e-5", "0.00217", "1,234"]
