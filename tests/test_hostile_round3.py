"""Hostile input, third round (issue 49): each defect found becomes a case here, with inputs generated in
``tmp_path``. Every case ends in a result or a one-line UserError (exit 2 from the CLI), never a traceback."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from clitools import run_cli

from roofline.catalog import builtin_dir
from roofline.catalog.cache import load_validated
from roofline.errors import UserError
from roofline.files.reading import parse_toml
from roofline.spec.platform import Platform

GNR = (builtin_dir("platforms") / "gnr.toml").read_text()


def one_line_refusal(proc, *fragments: str) -> None:
    """The CLI refused with exit 2 and one line holding every fragment."""
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-500:], proc.stderr[-2000:])
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    for fragment in fragments:
        assert fragment in proc.stderr, proc.stderr


# ------------------------------------------------------------------ 1. caches


@pytest.fixture
def spec(tmp_path, monkeypatch):
    monkeypatch.setenv("ROOFLINE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ROOFLINE_NO_CACHE", raising=False)
    path = tmp_path / "gnr.toml"
    path.write_text(GNR)
    return path


def _load(path: Path) -> Platform:
    return load_validated(Platform, path, lambda raw: parse_toml(raw, path))


def _the_entry(spec: Path) -> Path:
    [entry] = (spec.parent / "cache" / "specs").iterdir()
    return entry


@pytest.mark.parametrize("content", ["[1, 2]", '"text"', "3", '{"name": 3}', '{"name": "gnr"}', "{}", "null",
                                     "[" * 100_000])
def test_a_cache_entry_of_the_wrong_shape_is_discarded_and_rebuilt(spec, content):
    fresh = _load(spec)
    entry = _the_entry(spec)
    entry.write_text(content)
    assert _load(spec) == fresh  # not AttributeError on every later command, as before
    assert json.loads(entry.read_text())["name"] == "gnr"  # rebuilt in place


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "directory"])
def test_a_cache_entry_that_is_not_a_regular_file_is_never_read(spec, kind):
    fresh = _load(spec)
    entry = _the_entry(spec)
    entry.unlink()
    if kind == "fifo":
        os.mkfifo(entry)  # opened blocking, it hung every command
    elif kind == "dev-zero":
        entry.symlink_to("/dev/zero")  # read whole, it ran to MemoryError
    else:
        entry.mkdir()
        (entry / "inside").write_text("x")
    start = time.monotonic()
    assert _load(spec) == fresh
    assert time.monotonic() - start < 5
    leftovers = [p.name for p in entry.parent.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []  # a rename over a directory fails: its temporary file is removed, not left behind


def test_a_cache_write_that_fails_leaves_no_temporary_file(spec, monkeypatch):
    import roofline.catalog.cache as cache

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cache.os, "replace", broken_replace)
    fresh = _load(spec)  # the cache is skipped, the result still comes
    assert fresh.name == "gnr"
    assert list((spec.parent / "cache" / "specs").iterdir()) == []


def test_a_corrupt_cache_entry_through_the_cli_is_rebuilt(tmp_path):
    env = {"ROOFLINE_CACHE_DIR": str(tmp_path / "c")}
    first = run_cli("estimate", "--model", "bert-base", "--cpu", "icx", "--json", env=env)
    assert first.returncode == 0, first.stderr
    for entry in (tmp_path / "c" / "specs").iterdir():
        entry.write_text("[1, 2]")
    again = run_cli("estimate", "--model", "bert-base", "--cpu", "icx", "--json", env=env)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout) == json.loads(first.stdout)


def test_results_cache_keys_never_read_a_large_file_or_open_a_fifo(tmp_path, monkeypatch):
    from roofline.catalog import results_cache

    models = tmp_path / "models"
    models.mkdir()
    gguf = models / "big.gguf"
    with open(gguf, "wb") as f:  # sparse: 8 GiB on paper, nothing on disk
        f.truncate(8 << 30)
    os.mkfifo(models / "pipe")
    (models / "small.toml").write_text("a = 1\n")
    monkeypatch.setenv("ROOFLINE_MODELS", str(models))
    start = time.monotonic()
    key = results_cache.inputs_key("t", [models])
    assert time.monotonic() - start < 10
    assert results_cache.file_identity(gguf) == f"{gguf}\0{8 << 30}\0{gguf.stat().st_mtime_ns}\0".encode()
    # a change the size or time shows changes the key; a small file's content counts too
    (models / "small.toml").write_text("a = 2\n")
    os.utime(models / "small.toml", ns=((models / "small.toml").stat().st_atime_ns, 0))
    assert results_cache.inputs_key("t", [models]) != key


# ------------------------------------------------------------------ 2. outputs

FIXTURES = Path(__file__).parent / "fixtures"
PROBE = str(FIXTURES / "llama-bench" / "zen5-2vcpu-probe.toml")
ESTIMATE = ["estimate", "--model", "bert-base", "--cpu", "icx"]


def test_check_from_never_replaces_its_measurement(tmp_path):
    m = tmp_path / "m.jsonl"
    m.write_bytes((FIXTURES / "llama-bench" / "zen5-2vcpu-q4_0-small.jsonl").read_bytes())
    before = m.read_bytes()
    proc = run_cli("check", "--from", "m.jsonl", "--cpu", PROBE, "--model", "llama-3.2-1b", "--brief",
                   "--json", "m.jsonl", cwd=tmp_path)
    one_line_refusal(proc, "is also an input of this command", "--from m.jsonl")
    assert m.read_bytes() == before


def test_the_mlperf_system_json_beside_a_summary_is_an_input(tmp_path):
    import shutil

    shutil.copytree(FIXTURES / "mlperf-v3.1", tmp_path / "tree")
    [summary] = [p for p in (tmp_path / "tree").rglob("mlperf_log_summary.txt") if "Offline" in p.parts]
    [system] = (tmp_path / "tree").rglob("systems/*.json")
    before = system.read_bytes()
    proc = run_cli("check", "--from", str(summary), "--brief", "--json", str(system), cwd=tmp_path)
    one_line_refusal(proc, "is also an input of this command", "the system description beside the summary")
    assert system.read_bytes() == before


def test_a_record_nested_under_records_dir_is_an_input(tmp_path):
    nested = tmp_path / "recs" / "sub" / "r.toml"
    nested.parent.mkdir(parents=True)
    record = Path(__file__).parents[1] / "validation" / "records" / "emr-16vcpu-bert-large-4layer-16t.toml"
    nested.write_bytes(record.read_bytes())
    for out in ("recs/sub/r.toml", "recs/sub/link.json"):
        if out.endswith(".json"):
            (tmp_path / out).symlink_to("r.toml")
        proc = run_cli("accuracy", "--records", "recs", "--brief", "--json", out, cwd=tmp_path, timeout=60)
        one_line_refusal(proc, "is also an input of this command", "--records recs")
    assert nested.read_bytes() == record.read_bytes()


@pytest.mark.parametrize("argv, fragment", [
    ([*ESTIMATE, "--json", "out.png"], "--json out.png: the result is written as JSON, not .png"),
    ([*ESTIMATE, "--json", "out.toml"], "name the file .json"),
    (["calibrate", "--records", "-o", "cal.json"], "-o cal.json: written as TOML; name the file .toml"),
    (["accuracy", "--write-gate", "gate.json", "--reason", "r"], "--write-gate gate.json: written as TOML"),
])
def test_an_output_named_for_another_format_is_refused(tmp_path, argv, fragment):
    proc = run_cli(*argv, cwd=tmp_path, timeout=60)
    one_line_refusal(proc, fragment)
    assert list(tmp_path.iterdir()) == []


def test_a_name_without_a_format_suffix_is_written_as_json(tmp_path):
    proc = run_cli(*ESTIMATE, "--json", "result", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "result").read_text())["platform"]["name"] == "icx"


def test_a_device_is_refused_as_an_output_even_as_root(tmp_path):
    import stat

    disk = tmp_path / "disk"
    try:  # a loop device's node (7, 200): a disk to the kernel; none is attached there, so nothing could be hurt
        os.mknod(disk, 0o660 | stat.S_IFBLK, os.makedev(7, 200))
    except (PermissionError, OSError):
        pytest.skip("creating a device node needs root")
    proc = run_cli(*ESTIMATE, "--json", str(disk), timeout=60)
    one_line_refusal(proc, "is a device, not a file")
    mem = tmp_path / "mem"  # /dev/mem's numbers: the same major as /dev/null, refused by its minor
    os.mknod(mem, 0o660 | stat.S_IFCHR, os.makedev(1, 1))
    one_line_refusal(run_cli(*ESTIMATE, "--json", str(mem), timeout=60), "is a device")


def test_a_fifo_output_is_refused_at_once(tmp_path):
    fifo = tmp_path / "out.json"
    os.mkfifo(fifo)
    start = time.monotonic()
    for argv in ([*ESTIMATE, "--json", str(fifo)], ["records", "add", str(FIXTURES / "llama-bench" /
                                                     "zen5-2vcpu-q4_0-small.jsonl"), "-o", str(fifo)]):
        one_line_refusal(run_cli(*argv, timeout=60), "a FIFO")
    assert time.monotonic() - start < 30


def test_standard_output_by_its_device_name_is_still_written(tmp_path):
    proc = run_cli(*ESTIMATE, "--json", "/dev/stdout", process=True)  # a pipe here: /proc/self/fd/1 -> pipe:[...]
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout[:proc.stdout.rindex("}") + 1])["platform"]["name"] == "icx"


# ------------------------------------------------------------------ 3. tracebacks: the measurement readers

from hypothesis import HealthCheck, example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from roofline.catalog.batched_bench import parse_batched_bench  # noqa: E402
from roofline.catalog.llama_bench import MAX_TOKENS, parse_llama_bench  # noqa: E402

pytestmark = pytest.mark.slow  # the file takes seconds: out of the fast stage (pytest -m "not slow")

LB_JSONL = (FIXTURES / "llama-bench" / "zen5-2vcpu-q4_0-small.jsonl").read_text()
LB_TEST = json.loads(LB_JSONL.splitlines()[0])
LB_CSV = (FIXTURES / "llama-bench" / "zen5-2vcpu-q4_0-small.csv").read_text()
LB_MD = (FIXTURES / "llama-bench" / "zen5-2vcpu-llama-3.2-1b.md").read_text()
BB_JSONL = (FIXTURES / "llama-batched-bench" / "zen5-2vcpu-r3-llama-3.2-1b-q4_0.jsonl").read_text()
BB_MD = (FIXTURES / "llama-batched-bench" / "zen5-2vcpu-r3-llama-3.2-1b-q4_0.md").read_text()


def _jsonl_with(key: str, literal: str) -> bytes:
    """The fixture's first test with ``key`` set to the JSON text ``literal`` (written as is: 1e400 stays 1e400)."""
    d = dict(LB_TEST)
    d[key] = "@@"
    return (json.dumps(d).replace('"@@"', literal) + "\n").encode()


@pytest.mark.parametrize("raw, fragment", [
    (_jsonl_with("n_prompt", "1e400"), "line 1: n_prompt: inf is not a whole number"),
    (_jsonl_with("avg_ts", "9" * 400), "line 1: avg_ts: 99999"),
    (_jsonl_with("n_prompt", "true"), "n_prompt: True is not a whole number"),
    (_jsonl_with("n_prompt", '"64"'), "n_prompt: '64' is not a whole number"),
    (_jsonl_with("n_prompt", str(MAX_TOKENS + 1)), "a number from 0 to 134,217,728"),
    (_jsonl_with("n_threads", "0"), "n_threads: 0: a number from 1"),
    (_jsonl_with("model_type", "5"), "model_type: 5 is not a string"),
    (_jsonl_with("samples_ts", "[true]"), "samples_ts: a list of rates"),
    (_jsonl_with("samples_ts", "[1e308, 1e308]"), "samples_ts: a list of rates"),
    (("[" * 100_000 + "]" * 100_000 + "\n").encode(), "nested deeper than any real file"),
    (("{" + '"a":' + "[" * 100_000 + "\n").encode(), "line 1: not usable JSON: nested deeper"),
    (("[" + _jsonl_with("n_gen", "1e400").decode().strip() + "]").encode(), "test 1: n_gen: inf is not a whole"),
    (LB_MD.replace("99.74 ± 9.68", "9.9.74 ± 9.68").encode(), "line 3: t/s: '9.9.74 ± 9.68' is not a rate"),
    (LB_MD.replace("99.74 ± 9.68", "9" * 400).encode(), "is not a rate"),
    (LB_MD.replace("|                  t/s |", "|              avg t/s |", 1).encode(), "0 columns named 't/s'"),
    (LB_MD.replace("| backend    |", "| test       |", 1).encode(), "2 columns named 'test'"),
    (LB_MD.replace("| backend    |", "| size       |", 1).encode(), "the column 'size' is there twice"),
    (LB_MD.replace("pp512", "pp" + "9" * 30, 1).encode(), "is not a llama-bench test"),
    (LB_CSV.replace('"AMD EPYC"', '"' + "A" * 140_000 + '"', 1).encode(), "field larger than field limit"),
    (LB_CSV.replace(",n_threads,", ",n_batch,", 1).encode(), "the column 'n_batch' is there twice"),
])
def test_llama_bench_hostile_numbers_and_shapes_are_one_line(raw, fragment):
    with pytest.raises(UserError) as e:
        parse_llama_bench(raw, "f")
    assert fragment in str(e.value) and "\n" not in str(e.value) and len(str(e.value)) < 400


def test_the_fixtures_still_read():
    assert [t.test for t in parse_llama_bench(LB_JSONL.encode(), "f").tests] == ["pp64", "tg16"]
    assert [t.n_prompt for t in parse_llama_bench(LB_CSV.encode(), "f").tests] == [64, 0]
    assert parse_llama_bench(LB_MD.encode(), "f").tests[0].avg_ts == 99.74


@pytest.mark.parametrize("raw, fragment", [
    (BB_JSONL.splitlines()[0].replace('"pl": 1', '"pl": ' + "9" * 5000) + "\n", "line 1: not a JSON object"),
    ('{"speed_tg": 1, "pl": ' + "[" * 100_000 + "\n", "line 1: not usable JSON: nested deeper"),
])
def test_batched_bench_hostile_lines_are_one_line(raw, fragment):
    assert '"pl": 1' in BB_JSONL.splitlines()[0]
    with pytest.raises(UserError) as e:
        parse_batched_bench(raw.encode(), "f")
    assert fragment in str(e.value)


HOSTILE_NUMBERS = st.sampled_from([float("inf"), float("-inf"), float("nan"), 10 ** 400, -(10 ** 400), 1e300, -1.0, 0,
                                   True, False, "9" * 400, "1e400", "", "0x10", 2 ** 63, 0.5, 1 << 27, (1 << 27) + 1])
JSON_VALUES = HOSTILE_NUMBERS | st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12)
NUMERIC_LB_KEYS = ["n_prompt", "n_gen", "n_depth", "avg_ts", "stddev_ts", "n_threads", "samples_ts", "n_batch",
                   "n_ubatch", "model_size", "model_n_params", "model_type"]
LB_KEYS = sorted(LB_TEST)
BB_TEST = json.loads(BB_JSONL.splitlines()[0])
BB_KEYS = sorted(BB_TEST)


def _mutated(base: dict, keys, data) -> dict:
    d = dict(base)
    for _ in range(data.draw(st.integers(1, 3), label="changes")):
        d[data.draw(st.sampled_from(keys) | st.text(max_size=8), label="key")] = data.draw(JSON_VALUES, label="value")
    return d


def _in_range(x, whole: bool, high: float) -> bool:
    return (type(x) is int if whole else type(x) in (int, float)) and 0 <= x <= high


def _result_or_user_error(parse, raw: bytes) -> None:
    """A result whose numbers are numbers of the right type and range (never ``True`` read as 1, never inf), or
    a one-line UserError."""
    try:
        got = parse(raw, "f")
    except UserError as e:
        assert "\n" not in str(e)
        return
    for t in getattr(got, "tests", ()):
        assert all(_in_range(v, True, MAX_TOKENS) for v in (t.n_prompt, t.n_gen, t.n_depth)), t
        assert _in_range(t.avg_ts, False, 1e9) and t.avg_ts > 0, t
        assert t.n_threads is None or _in_range(t.n_threads, True, 1 << 20), t
    for r in getattr(got, "rows", ()):
        assert all(_in_range(v, True, 1e12) for v in (r.pp, r.tg, r.b, r.n_kv)), r


FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(raw=st.binary(max_size=300) | st.sampled_from([LB_JSONL, LB_CSV, LB_MD]).flatmap(
    lambda t: st.integers(0, len(t)).map(lambda i: t[:i].encode())))
@example(raw=LB_MD[:LB_MD.index("build:") + len("build: ")].encode())  # a build line cut after its blank
def test_property_llama_bench_bytes(raw):
    _result_or_user_error(parse_llama_bench, raw)


@FUZZ
@given(data=st.data(), form=st.sampled_from(["json", "jsonl", "csv"]))
def test_property_llama_bench_json_values(data, form):
    d = _mutated(LB_TEST, NUMERIC_LB_KEYS + LB_KEYS, data)
    if form == "json":
        raw = json.dumps([d])
    elif form == "jsonl":
        raw = json.dumps(d) + "\n"
    else:
        import csv
        import io

        out = io.StringIO()
        w = csv.DictWriter(out, fieldnames=list(d))
        w.writeheader()
        w.writerow({k: json.dumps(v) if not isinstance(v, str) else v for k, v in d.items()})
        raw = out.getvalue()
    _result_or_user_error(parse_llama_bench, raw.encode("utf-8", "surrogatepass"))


@FUZZ
@given(raw=st.binary(max_size=300) | st.sampled_from([BB_JSONL, BB_MD]).flatmap(
    lambda t: st.integers(0, len(t)).map(lambda i: t[:i].encode())))
def test_property_batched_bench_bytes(raw):
    _result_or_user_error(parse_batched_bench, raw)


@FUZZ
@given(data=st.data())
def test_property_batched_bench_json_values(data):
    raw = json.dumps(_mutated(BB_TEST, BB_KEYS, data)) + "\n"
    _result_or_user_error(parse_batched_bench, raw.encode("utf-8", "surrogatepass"))


# ------------------------------------------------------------------ 3. tracebacks: MLPerf, records, pages, charts, API

MLPERF = FIXTURES / "mlperf-v3.1"


@pytest.fixture
def tree(tmp_path):
    import shutil

    shutil.copytree(MLPERF, tmp_path / "tree")
    [summary] = [p for p in (tmp_path / "tree").rglob("mlperf_log_summary.txt") if "Offline" in p.parts]
    [system] = (tmp_path / "tree").rglob("systems/*.json")
    return summary, system


@pytest.mark.parametrize("rate", ["nan", "0", "-5", "1e300", "inf"])
def test_an_mlperf_rate_out_of_range_is_one_line(tree, rate):
    import re

    summary, _ = tree
    summary.write_text(re.sub(r"(?m)^Samples per second: .*$", f"Samples per second: {rate}", summary.read_text()))
    proc = run_cli("records", "add", str(summary), timeout=60)
    one_line_refusal(proc, "line 7: Samples per second", "a rate is a positive number")


@pytest.mark.parametrize("count", ["-4", '"-4"', "0", "1e3", "true", '"9999999"'])
def test_an_mlperf_system_count_out_of_range_is_one_line(tree, count):
    import re

    summary, system = tree
    system.write_text(re.sub(r'"host_processor_core_count": *"?\d+"?', f'"host_processor_core_count": {count}',
                             system.read_text()))
    proc = run_cli("records", "add", str(summary), timeout=60)
    one_line_refusal(proc, "host_processor_core_count")


def test_a_flag_inside_its_range_but_outside_a_records_is_one_line(tree):
    summary, _ = tree
    for command in ("records", "check"):
        argv = ["records", "add", str(summary)] if command == "records" else ["check", "--from", str(summary)]
        proc = run_cli(*argv, "--seq-len", str(1 << 27), timeout=60)  # --seq-len's own limit: a record's is 1e6
        one_line_refusal(proc, "the record it makes is refused", "seq_len")


def _bench_named(folder: Path, name: str, model_type: str = "llama 1B Q4_0") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(LB_JSONL.replace("llama 1B Q4_0", model_type))
    return path


def test_records_add_writes_what_its_readers_accept(tmp_path):
    """A lone surrogate (an undecodable byte of a file name), control characters and a non-BMP character reach
    the record as text its TOML reader loads back, and the loader reads the file ``records add`` wrote."""
    import tomllib

    from roofline.catalog.records import load_record

    bench = _bench_named(tmp_path, "m\udcff\x1b[31m😀.jsonl")
    out = tmp_path / "r.toml"
    proc = run_cli("records", "add", str(bench), "--cpu", PROBE, "--model", "llama-3.2-1b", "-o", str(out),
                   timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stdout + proc.stderr
    text = out.read_text(encoding="utf-8")  # strict UTF-8: no surrogate reached the file
    data = tomllib.loads(text)
    assert "m\\udcff" in data["source"] and "\x1b[31m😀" in data["source"]  # the control char as a TOML escape
    assert "\x1b" not in text
    assert load_record(out).record.model == "llama-3.2-1b"
    printed = run_cli("records", "add", str(bench), "--cpu", PROBE, "--model", "llama-3.2-1b", timeout=60)
    assert printed.returncode == 0 and "\x1b" not in printed.stdout and tomllib.loads(printed.stdout) == data


def test_toml_strings_and_comments_round_trip():
    import tomllib

    from roofline.catalog.write import toml_comment, toml_string

    for text in ['a"b\\c', "x\x1b[31m\x00\x7f\t\n\r", "emoji 😀 é \u2028", "\x85 C1"]:
        assert tomllib.loads(f"a = {toml_string(text)}  # {toml_comment(text)}\n")["a"] == text
    lone = toml_string("bad \udcff end")
    assert tomllib.loads(f"a = {lone}")["a"] == "bad \\udcff end"


def test_html_with_a_surrogate_and_a_script_in_names(tmp_path):
    bench = _bench_named(tmp_path, "m\udcff<!--<script>.jsonl")
    page = tmp_path / "p.html"
    proc = run_cli("check", "--from", str(bench), "--cpu", PROBE, "--model", "llama-3.2-1b", "--brief",
                   "--html", str(page), timeout=60)
    assert proc.returncode == 0, proc.stderr
    html = page.read_text(encoding="utf-8")
    embedded = html.split('<script type="application/json" id="result-json">', 1)[1].split("</script>", 1)[0]
    assert "<" not in embedded  # no "<!--" or "</script" of a name can reach the element's text
    assert "m\udcff<!--<script>.jsonl" in json.loads(embedded)["source"]  # the same text, read back
    assert html.count("<script") == 2  # the data and the sorting script, nothing from the name


def test_a_mathtext_name_reaches_the_chart_as_text(tmp_path):
    pytest.importorskip("matplotlib")
    platform = tmp_path / "p.toml"
    platform.write_text((builtin_dir("platforms") / "icx.toml").read_text().replace(
        'name = "icx"', 'name = "x$\\\\frac{$y"', 1))
    proc = run_cli("plot", "--model", "bert-base", "--cpu", str(platform), "-o", str(tmp_path / "c.svg"), timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "frac" in (tmp_path / "c.svg").read_text()


def test_a_name_too_long_for_the_file_system_is_an_unknown_name():
    import roofline.api as api

    long = "z" * 300
    for kwargs, fragment in ((dict(model=long, cpu="icx"), "unknown model"),
                             (dict(model="bert-base", cpu=long), "unknown CPU"),
                             (dict(model="bert-base", cpu="icx", stack=long), "unknown stack")):
        with pytest.raises(UserError, match=fragment):
            api.estimate(**kwargs)
    with pytest.raises(UserError):
        api.accuracy(records=[long])
    proc = run_cli("estimate", "--model", "bert-base", "--cpu", "icx", "--calibration", long)
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1 and "cannot write" not in proc.stderr


def _api_values():
    import decimal
    import fractions

    import numpy as np

    return {"np.int64": np.int64(8), "np.float32": np.float32(0.5), "np.bool_": np.bool_(True),
            "Decimal": decimal.Decimal("2.5"), "Fraction": fractions.Fraction(1, 2), "generator": (x for x in [1]),
            "array": np.array([1.0, 2.0]), "array0": np.array(3.0), "object": object(), "long": "q" * 300}


@pytest.mark.parametrize("command", ["estimate", "check"])
def test_the_api_gives_a_result_or_a_user_error_for_any_python_value(command):
    import roofline.api as api
    from roofline import arguments as A

    for arg in getattr(A, command.upper()).args:
        for name, value in _api_values().items():
            kwargs = dict(model="bert-base", cpu="icx")
            if command == "check":
                kwargs.update(precision="int8-static", throughput_speedup=2.0)
            kwargs[arg.name] = value
            try:
                getattr(api, command)(**kwargs)
            except UserError as e:
                assert "\n" not in str(e)
            except Exception as e:  # noqa: BLE001
                pytest.fail(f"{command}({arg.name}={name}): {type(e).__name__}: {e}")


def test_numpy_scalars_are_numbers():
    import numpy as np

    import roofline.api as api

    plain = api.estimate(model="bert-base", cpu="icx", batch=4, seq_len=128)
    numpy = api.estimate(model="bert-base", cpu="icx", batch=np.int64(4), seq_len=np.int32(128))
    assert numpy.to_json() == plain.to_json()


# ------------------------------------------------------------------ 4. records

RECORD = Path(__file__).parents[1] / "validation" / "records" / "emr-16vcpu-bert-large-4layer-16t.toml"


def test_one_bad_record_in_a_folder_is_reported_and_skipped(tmp_path):
    folder = tmp_path / "recs"
    (folder / "sub").mkdir(parents=True)
    (folder / "good.toml").write_bytes(RECORD.read_bytes())
    (folder / "bad.toml").write_bytes(b'description = "x\x01"\n')  # a control character: not TOML
    us = RECORD.read_text().replace('date = "2026-11-30"', 'date = "11/30/2026"')
    (folder / "sub" / "us-date.toml").write_text(us)
    proc = run_cli("accuracy", "--records", "recs", "--brief", "--json", cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    warnings = proc.stderr.splitlines()
    assert len(warnings) == 2 and all(w.startswith("roofline: warning: skipped recs/") for w in warnings), warnings
    assert "bad.toml: not valid TOML" in warnings[0]
    assert "us-date.toml: date: a date as YYYY-MM-DD" in warnings[1]
    data = json.loads(proc.stdout)
    assert (data["records"], data["figures"]) == (1, 4)  # the good record's four latencies
    # named on its own, a bad record is refused
    one_line_refusal(run_cli("accuracy", "--records", "recs/sub/us-date.toml", cwd=tmp_path), "got '11/30/2026'")
    (folder / "good.toml").unlink()
    one_line_refusal(run_cli("accuracy", "--records", "recs", cwd=tmp_path), "not valid TOML", "(and 1 more record")


@pytest.mark.parametrize("date, ok", [("2026-11-30", True), ("", True), ("11/30/2026", False), ("2026-02-30", False),
                                      ("2026-11-30T10:00:00Z", False), ("30.11.2026", False)])
def test_a_records_date_is_a_date(date, ok):
    from roofline.catalog.validate import validate

    data = parse_toml(RECORD.read_bytes(), "r.toml")
    data["date"] = date
    from roofline.spec.record import Record

    if ok:
        assert validate(Record, data, "r.toml").date == date
    else:
        with pytest.raises(UserError, match="date: a date as YYYY-MM-DD"):
            validate(Record, data, "r.toml")


def test_a_llama_bench_test_time_that_is_not_iso_is_refused():
    raw = _jsonl_with("test_time", '"12/01/2026 23:28:59"')
    with pytest.raises(UserError, match="test_time: '12/01/2026 23:28:59': llama-bench writes an ISO 8601 time"):
        parse_llama_bench(raw, "f")


def _toml_literal(v) -> str | None:
    """A JSON value as a TOML value (None where TOML has none: null)."""
    import math

    if v is None:
        return None
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and not math.isfinite(v):
        return "nan" if v != v else ("inf" if v > 0 else "-inf")
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        from roofline.catalog.write import toml_string

        return toml_string(v)
    if isinstance(v, list):
        items = [_toml_literal(x) for x in v]
        return "[" + ", ".join(x for x in items if x is not None) + "]"
    items = [(k, _toml_literal(x)) for k, x in v.items()]
    from roofline.catalog.write import toml_string

    return "{ " + ", ".join(f"{toml_string(k)} = {x}" for k, x in items if x is not None) + " }"


RECORD_TEXT = RECORD.read_text()
RECORD_KEYS = ["description", "date", "model", "batch", "seq_len", "layers", "embeddings", "stack", "schema_version",
               "threads", "scenario", "latency_bound_s", "report", "context", "phase"]


def _load_record_bytes(raw: bytes) -> None:
    import tempfile

    from roofline.catalog.records import load_records

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "r.toml"
        path.write_bytes(raw)
        old = os.environ.get("ROOFLINE_NO_CACHE")
        os.environ["ROOFLINE_NO_CACHE"] = "1"
        try:
            [loaded] = load_records([str(path)])
            assert loaded.record.date == "" or loaded.record.date[4] == "-"
        except UserError as e:
            assert "\n" not in str(e)
        finally:
            if old is None:
                del os.environ["ROOFLINE_NO_CACHE"]
            else:
                os.environ["ROOFLINE_NO_CACHE"] = old


@FUZZ
@given(raw=st.binary(max_size=300) | st.integers(0, len(RECORD_TEXT)).map(lambda i: RECORD_TEXT[:i].encode()))
def test_property_record_loader_bytes(raw):
    _load_record_bytes(raw)


@FUZZ
@given(key=st.sampled_from(RECORD_KEYS) | st.text(st.characters(codec="ascii", categories=["L"]), min_size=1,
                                                   max_size=8),
       value=JSON_VALUES, where=st.sampled_from(["top", "platform", "measurement"]))
def test_property_record_loader_values(key, value, where):
    literal = _toml_literal(value)
    if literal is None:
        return
    lines = [line for line in RECORD_TEXT.splitlines() if not line.startswith(f"{key} =")]
    at = {"top": 0, "platform": lines.index("[platform]") + 1,
          "measurement": lines.index("[[measurements]]") + 1}[where]
    lines.insert(at, f"{key} = {literal}")
    _load_record_bytes("\n".join(lines).encode("utf-8", "surrogatepass"))


# ------------------------------------------------------------------ 5. models: config.json

#: meta-llama/Llama-3.1-8B's config.json shape (https://huggingface.co/meta-llama/Llama-3.1-8B, config.json), without
#: its model_type
LLAMA_31_8B = {"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "intermediate_size": 14336,
               "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256,
               "max_position_embeddings": 131072, "hidden_act": "silu", "tie_word_embeddings": False}


def _config(tmp_path: Path, name: str, cfg: dict) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(cfg))
    return folder


def test_a_config_without_model_type_is_typed_from_its_architectures(tmp_path, monkeypatch):
    from roofline.catalog import load_model, load_model_file
    from roofline.model.footprint import active_params, weight_params

    monkeypatch.setenv("ROOFLINE_CACHE_DIR", str(tmp_path / "cache"))
    load_model_file.cache_clear()
    m = load_model(str(_config(tmp_path, "l", LLAMA_31_8B)))
    assert (m.family, m.gated_mlp) == ("decoder", True)
    # per layer: q, o 4096^2; k, v 4096 x 1024; gate, up, down 4096 x 14336; embeddings and lm_head 128256 x 4096
    layer = 2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14336
    assert weight_params(m) == 32 * layer + 2 * 128256 * 4096 == 8_029_995_008
    assert active_params(m) == 8_029_995_008 + (2 * 32 + 1) * 4096  # and the RMSNorm weights: 8.03e9, not 6.16e9


@pytest.mark.parametrize("architectures, fragment", [
    ([], "model_type: missing (no architectures either)"),
    (["LlamaForCausalLM", "BertModel"], "name no single known type"),
    (["SomethingNewForCausalLM"], "name no single known type"),
])
def test_a_config_without_model_type_and_no_single_architecture_is_refused(tmp_path, architectures, fragment):
    folder = _config(tmp_path, "m", {**LLAMA_31_8B, "architectures": architectures})
    proc = run_cli("models", "show", str(folder), env={"ROOFLINE_CACHE_DIR": str(tmp_path / "c")})
    one_line_refusal(proc, fragment)


def test_electra_small_embedding_size_is_refused_naming_the_key(tmp_path):
    #: google/electra-small-discriminator's config.json (https://huggingface.co/google/electra-small-discriminator)
    electra = {"architectures": ["ElectraForPreTraining"], "model_type": "electra", "embedding_size": 128,
               "hidden_size": 256, "intermediate_size": 1024, "num_hidden_layers": 12, "num_attention_heads": 4,
               "vocab_size": 30522, "max_position_embeddings": 512, "type_vocab_size": 2, "hidden_act": "gelu"}
    env = {"ROOFLINE_CACHE_DIR": str(tmp_path / "c")}
    proc = run_cli("models", "show", str(_config(tmp_path, "small", electra)), env=env)
    one_line_refusal(proc, "embedding_size: 128, not hidden_size 256")
    base = {**electra, "embedding_size": 768, "hidden_size": 768, "intermediate_size": 3072, "num_attention_heads": 12}
    ok = run_cli("models", "show", str(_config(tmp_path, "base", base)), env=env)
    assert ok.returncode == 0, ok.stderr
    bad_type = run_cli("models", "show", str(_config(tmp_path, "t", {**electra, "embedding_size": 128.0})), env=env)
    one_line_refusal(bad_type, "embedding_size")


def test_an_mlperf_summary_stating_its_rate_twice_is_refused(tree):
    summary, _ = tree
    text = summary.read_text()
    summary.write_text(text.replace("Samples per second: 1357.33\n", "Samples per second: 1357.33\n"
                                    "Samples per second: 2714.66\n", 1))
    one_line_refusal(run_cli("records", "add", str(summary), timeout=60), "line 8: Samples per second: stated twice")
    summary.write_text(text.replace("Samples per second: 1357.33\n", "Samples per second: 1357.33\n" * 2, 1))
    assert run_cli("records", "add", str(summary), timeout=60).returncode == 0  # the same line again says nothing new


def test_spec_files_with_a_byte_order_mark_are_read(tmp_path):
    """A UTF-8 BOM (Windows editors write one) was refused as 'not valid TOML: Invalid statement'."""
    bom = b"\xef\xbb\xbf"
    platform = tmp_path / "p.toml"
    platform.write_bytes(bom + GNR.encode())
    record = tmp_path / "r.toml"
    record.write_bytes(bom + RECORD.read_bytes())
    config = _config(tmp_path, "cfg", {**LLAMA_31_8B, "model_type": "llama"}) / "config.json"
    config.write_bytes(bom + config.read_bytes())
    env = {"ROOFLINE_CACHE_DIR": str(tmp_path / "c")}
    for argv in (["platforms", "show", str(platform)], ["models", "show", str(config.parent)],
                 ["accuracy", "--records", str(record), "--brief"]):
        proc = run_cli(*argv, env=env, timeout=120)
        assert proc.returncode == 0, (argv, proc.stderr)


def test_n_ubatch_splits_a_long_prompt_into_the_micro_batches_llama_cpp_runs(tmp_path):
    """pp2048 with -ub 512 runs four micro-batches of 512 tokens at contexts 0, 512, 1024, 1536: priced as one of
    512 at their mean, 768 (+ the depth); with -ub 2048, one of 2048 as before."""
    import roofline.api as api

    def first_measurement(n_prompt: int, n_ubatch, n_depth: int = 0):
        d = {**LB_TEST, "n_prompt": n_prompt, "n_gen": 0, "n_depth": n_depth, "n_ubatch": n_ubatch}
        if n_ubatch is None:
            del d["n_ubatch"]
        path = tmp_path / f"b{n_prompt}-{n_ubatch}-{n_depth}.jsonl"
        path.write_text(json.dumps(d) + "\n")
        measured, text = api.records_add(file=str(path), cpu=PROBE, model="llama-3.2-1b")
        m = measured.record.measurements[0]
        return m.seq_len, m.context, text

    seq, ctx, text = first_measurement(2048, 512)
    assert (seq, ctx) == (512, (2048 - 512) // 2) and "micro-batches of 512" in text
    assert first_measurement(2048, 512, n_depth=100)[:2] == (512, 100 + 768)
    assert first_measurement(2048, 2048)[:2] == (2048, None)
    assert first_measurement(64, 512)[:2] == (64, None)
    assert first_measurement(2048, None)[:2] == (2048, None)  # a table without n_ubatch: the prompt whole


def test_a_file_of_more_tests_than_are_priced_in_seconds_is_refused():
    from roofline.catalog.batched_bench import MAX_ROWS
    from roofline.catalog.llama_bench import MAX_TESTS

    line = LB_JSONL.splitlines()[0] + "\n"
    assert len(parse_llama_bench((line * MAX_TESTS).encode(), "f").tests) == MAX_TESTS
    with pytest.raises(UserError, match=f"{MAX_TESTS + 1:,} tests, more than the {MAX_TESTS:,}"):
        parse_llama_bench((line * (MAX_TESTS + 1)).encode(), "f")
    row = BB_JSONL.splitlines()[0] + "\n"
    with pytest.raises(UserError, match=f"{MAX_ROWS + 1:,} tests, more than the {MAX_ROWS:,}"):
        parse_batched_bench((row * (MAX_ROWS + 1)).encode(), "f")


def test_records_add_prints_no_escape_sequence_from_a_platform_file(tmp_path):
    probe = tmp_path / "p.toml"
    probe.write_text(Path(PROBE).read_text().replace('name = "host"', 'name = "host\\u001b]0;owned\\u0007"', 1))
    assert "\\u001b" in probe.read_text()
    proc = run_cli("records", "add", str(FIXTURES / "llama-bench" / "zen5-2vcpu-q4_0-small.jsonl"), "--cpu",
                   str(probe), "--model", "llama-3.2-1b", "-o", str(tmp_path / "r.toml"), timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stdout + proc.stderr and "\\x1b]0;owned\\x07" in proc.stdout


# ------------------------------------------------------------------ GGUF: every matrix against the header


def _gguf(path: Path, arch: str, tensors: dict[str, tuple[int, ...]], hidden=64, layers=2, heads=4, kv=4, ffn=128):
    """A GGUF file of F32 zeros: ``tensors`` as numpy shapes (rows, cols), GGUF stores them reversed."""
    gguf = pytest.importorskip("gguf")
    import numpy as np

    w = gguf.GGUFWriter(str(path), arch)
    for key, value in {"block_count": layers, "context_length": 512, "embedding_length": hidden,
                       "feed_forward_length": ffn, "attention.head_count": heads,
                       "attention.head_count_kv": kv}.items():
        w.add_uint32(f"{arch}.{key}", value)
    w.add_string("general.name", "tiny")
    w.add_token_list([f"t{i}" for i in range(300)])
    for name, shape in tensors.items():
        w.add_tensor_info(name, shape, np.dtype(np.float32), int(np.prod(shape)) * 4)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    for shape in tensors.values():
        w.write_tensor_data(np.zeros(shape, dtype=np.float32))
    w.close()
    return path


def _phi3_tensors(hidden=64, layers=2, ffn=128, fused=True) -> dict[str, tuple[int, ...]]:
    """Phi-3 as llama.cpp's convert_hf_to_gguf.py writes it: qkv_proj as attn_qkv, gate_up_proj as ffn_up."""
    out = {"token_embd.weight": (300, hidden), "output_norm.weight": (hidden,), "output.weight": (300, hidden)}
    for i in range(layers):
        out.update({f"blk.{i}.attn_norm.weight": (hidden,), f"blk.{i}.attn_qkv.weight": (3 * hidden, hidden),
                    f"blk.{i}.attn_output.weight": (hidden, hidden), f"blk.{i}.ffn_norm.weight": (hidden,),
                    f"blk.{i}.ffn_down.weight": (hidden, ffn)})
        if fused:
            out[f"blk.{i}.ffn_up.weight"] = (2 * ffn, hidden)
        else:
            out.update({f"blk.{i}.ffn_gate.weight": (ffn, hidden), f"blk.{i}.ffn_up.weight": (ffn, hidden)})
    return out


def test_a_phi3_gguf_with_fused_gate_and_up_is_read(tmp_path):
    from roofline.catalog.gguf_file import read_gguf_fields

    fields = read_gguf_fields(_gguf(tmp_path / "phi3.gguf", "phi3", _phi3_tensors()))
    assert (fields["gated_mlp"], fields["intermediate_size"], fields["hidden_size"]) == (True, 128, 64)
    split = read_gguf_fields(_gguf(tmp_path / "split.gguf", "phi3", _phi3_tensors(fused=False)))
    assert split["gated_mlp"] and split["intermediate_size"] == 128
    # the same fused layout under an architecture llama.cpp does not split is what it is: a header that disagrees
    llama = {k.replace("attn_qkv", "attn_q"): ((64, 64) if "attn_qkv" in k else v) for k, v in _phi3_tensors().items()}
    with pytest.raises(UserError, match="feed_forward_length: 128, but the file's blk.0.ffn_up.weight stores 256"):
        read_gguf_fields(_gguf(tmp_path / "llama.gguf", "llama", llama))


@pytest.mark.parametrize("tensor, shape, fragment", [
    ("blk.1.ffn_down.weight", (64, 96), "feed_forward_length: 128, but the file's blk.1.ffn_down.weight stores 96"),
    ("blk.1.ffn_down.weight", (48, 128), "embedding_length: 64, but the file's blk.1.ffn_down.weight stores 48"),
    ("blk.1.attn_output.weight", (64, 32), "head_count: 64, but the file's blk.1.attn_output.weight stores 32"),
    ("blk.1.ffn_gate.weight", (128, 32), "embedding_length: 64, but the file's blk.1.ffn_gate.weight stores 32"),
    ("blk.1.attn_v.weight", (16, 64), "head_count_kv: 32, but the file's blk.1.attn_v.weight stores 16"),
])
def test_every_matrix_of_every_layer_agrees_with_the_header(tmp_path, tensor, shape, fragment):
    from gguf_files import tiny_tensors, write_gguf

    from roofline.catalog.gguf_file import read_gguf_fields

    pytest.importorskip("gguf")
    tensors = tiny_tensors()
    assert tensor in tensors
    read_gguf_fields(write_gguf(tmp_path / "ok.gguf", tensors=tensors))
    tensors[tensor] = shape
    with pytest.raises(UserError, match=fragment.replace("(", r"\(")):
        read_gguf_fields(write_gguf(tmp_path / "bad.gguf", tensors=tensors))


def test_records_add_refuses_an_mlperf_server_run_it_would_score_as_offline(tmp_path):
    import shutil

    shutil.copytree(MLPERF, tmp_path / "tree")
    [server] = [p for p in (tmp_path / "tree").rglob("mlperf_log_summary.txt") if "Server" in p.parts]
    proc = run_cli("records", "add", str(server), "-o", str(tmp_path / "r.toml"), timeout=60)
    one_line_refusal(proc, "a Server run", "130000000 ns", "records add writes Offline runs")
    assert not (tmp_path / "r.toml").exists()
    assert run_cli("check", "--from", str(server), "--brief", timeout=60).returncode == 0  # its rate is still checked


def _unscored_stack(tmp_path: Path) -> Path:
    """torch-inductor's profile with an accuracy over no scored figure (what a fit whose figures all stayed on one
    platform, or were all set aside, leaves): its median and worst are 0, which is no band."""
    import re

    text = (builtin_dir("platforms") / "stacks" / "torch-inductor.toml").read_text()
    text = re.sub(r"\n\[accuracy\.classes\.[^\]]+\]\n(?:[^\[\n][^\n]*\n)*", "\n", text)
    head, accuracy = text.split("\n[accuracy]\n", 1)
    for key, value in (("median_abs_error", "0.0"), ("worst_abs_error", "0.0"), ("figures", "0"), ("records", "0"),
                       ("platforms", "0")):
        accuracy, n = re.subn(rf"(?m)^{key} = .*$", f"{key} = {value}", accuracy, count=1)
        assert n == 1, key
    text = head + "\n[accuracy]\n" + accuracy
    path = tmp_path / "unscored.toml"
    path.write_text(text)
    return path


def test_a_stack_with_no_scored_figure_quotes_no_band(tmp_path):
    stack = str(_unscored_stack(tmp_path))
    shown = run_cli("stacks", "show", stack)
    assert shown.returncode == 0, shown.stderr
    assert "no measured accuracy (no figure scored leave-one-platform-out)" in shown.stdout
    assert "median 0%" not in shown.stdout
    est = run_cli("estimate", "--model", "bert-large", "--cpu", "icx", "--stack", stack, "--brief")
    assert est.returncode == 0 and "no measured error band" in est.stdout and "+/-" not in est.stdout, est.stdout


def test_the_accuracy_page_and_json_name_no_absolute_path(tmp_path):
    (tmp_path / "recs").mkdir()
    (tmp_path / "recs" / "good.toml").write_bytes(RECORD.read_bytes())
    proc = run_cli("accuracy", "--records", "recs", "--brief", "--json", "a.json", "--html", "a.html",
                   cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    page, data = (tmp_path / "a.html").read_text(), (tmp_path / "a.json").read_text()
    root = str(Path(__file__).resolve().parents[1])
    for text in (page, data):
        assert str(tmp_path) not in text and root not in text
    assert "<td>recs/good.toml</td>" in page  # relative to the working directory
    assert {s["profile"] for s in json.loads(data)["stacks"]} == {"platforms/stacks/torch-inductor.toml"}


def test_records_add_refuses_a_record_its_reader_would_refuse(monkeypatch):
    """The last guard: the TOML is loaded back before it is written (a writer bug is one line, no file)."""
    import roofline.api as api
    import roofline.catalog.write as write

    real = write.record_toml
    monkeypatch.setattr(write, "record_toml", lambda *a, **k: real(*a, **k).replace("schema_version = 1",
                                                                                    "schema_version = 99", 1))
    with pytest.raises(UserError, match="the record made from it would not load back .*schema_version"):
        api.records_add(file=str(FIXTURES / "llama-bench" / "zen5-2vcpu-q4_0-small.jsonl"), cpu=PROBE,
                        model="llama-3.2-1b")


def test_a_catalog_folder_is_validated_once_not_on_every_lookup(tmp_path, monkeypatch):
    """60,000 invalid files in ROOFLINE_PLATFORMS cost 13-24 s on every command: the folder's index (names and
    refusals) is cached under the files' metadata; a changed file rebuilds it."""
    import roofline.catalog as catalog

    folder = tmp_path / "plats"
    folder.mkdir()
    for i in range(200):
        (folder / f"bad{i}.toml").write_text(f'name = "x{i}"\n')
    mine = folder / "mine.toml"
    mine.write_text(GNR.replace('name = "gnr"', 'name = "mine"', 1).replace("aliases = [", 'aliases = ["my-alias", ', 1))
    monkeypatch.setenv("ROOFLINE_PLATFORMS", str(folder))
    monkeypatch.setenv("ROOFLINE_CACHE_DIR", str(tmp_path / "cache"))
    catalog.load_platform_file.cache_clear()
    assert catalog.find_file("platforms", "my-alias") == mine.resolve()
    calls = []
    real = catalog.load_platform_file
    monkeypatch.setattr(catalog, "load_platform_file", lambda p: calls.append(p) or real(p))
    assert catalog.find_file("platforms", "my-alias") == mine.resolve()
    index, skipped = catalog._folder_index("platforms", folder)
    assert calls == [] and index["mine"] == mine.resolve() and len(skipped) == 200
    assert all("cores_per_socket" in why or "required" in why for _, why in skipped), skipped[0]
    mine.write_text(mine.read_text().replace('"my-alias"', '"other-alias"'))  # a change: read again
    real.cache_clear()  # this process's own cache of the file (a command reads it once)
    assert catalog.find_file("platforms", "other-alias") == mine.resolve() and calls
    (tmp_path / "cache" / "index").mkdir(exist_ok=True)
    for entry in (tmp_path / "cache" / "index").iterdir():
        entry.write_text('{"names": [], "refused": 3}')  # an entry of another shape: rebuilt, not fatal
    assert catalog.find_file("platforms", "other-alias") == mine.resolve()


def test_real_numbers_of_any_type_are_numbers_where_a_number_is_meant():
    import decimal
    import fractions

    import numpy as np

    import roofline.api as api

    ref = api.check(model="bert-base", cpu="icx", precision="int8-static", throughput_speedup=2.5).to_json()
    for v in (np.float32(2.5), np.float64(2.5), fractions.Fraction(5, 2), decimal.Decimal("2.5")):
        got = api.check(model="bert-base", cpu="icx", precision="int8-static", throughput_speedup=v)
        assert got.to_json() == ref, type(v)
    for v in (decimal.Decimal("NaN"), decimal.Decimal("Infinity"), np.bool_(True), 2.5j):
        with pytest.raises(UserError, match="throughput_speedup"):
            api.check(model="bert-base", cpu="icx", precision="int8-static", throughput_speedup=v)


def test_an_estimate_s_json_and_page_name_no_absolute_path(tmp_path):
    """A catalog CPU is named relative to the checkout (platforms/genoa.toml), a CPU file relative to the working
    directory, in the JSON and on the page alike."""
    (tmp_path / "cpus").mkdir()
    (tmp_path / "cpus" / "mine.toml").write_bytes((builtin_dir("platforms") / "icx.toml").read_bytes())
    root = str(Path(__file__).resolve().parents[1])
    for cpu, shown in (("genoa", "platforms/genoa.toml"), ("cpus/mine.toml", "cpus/mine.toml")):
        proc = run_cli("estimate", "--model", "bert-base", "--cpu", cpu, "--brief", "--json", "e.json", "--html",
                       "e.html", cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        data, page = (tmp_path / "e.json").read_text(), (tmp_path / "e.html").read_text()
        assert json.loads(data)["platform"]["file"] == shown
        for text in (data, page):
            assert str(tmp_path) not in text and root not in text
