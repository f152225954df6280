"""The serving benchmarks LLM users run, read by `check --from` and `records add`: `vllm bench serve --save-result`,
SGLang's `bench_serving --output-file`, GuideLLM's JSON report, and OpenVINO `benchmark_app`'s report and log. The
fixtures are written in each tool's layout from its source (each fixture folder's README.md cites the file, the
commit and the lines); their numbers are consistent with each other (rates = totals / duration) by construction."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest
from clitools import REPO, run_cli

import roofline
from roofline.catalog.guidellm_report import parse_guidellm
from roofline.catalog.openvino_benchmark import parse_benchmark_app
from roofline.catalog.sglang_serve import parse_sglang_serve
from roofline.catalog.vllm_serve import parse_vllm_serve
from roofline.errors import UserError
from roofline.fidelity.measured import FORMATS

FIX = REPO / "tests" / "fixtures"
VLLM = FIX / "vllm-bench-serve" / "spr-llama-3.2-1b-bf16.json"
SGLANG = FIX / "sglang-bench-serving" / "spr-qwen2.5-0.5b-bf16.jsonl"
GUIDELLM = FIX / "guidellm" / "spr-llama-3.2-1b-bf16.json"
OV_JSON = FIX / "openvino-benchmark-app" / "benchmark_report.json"
OV_LOG = FIX / "openvino-benchmark-app" / "benchmark_app.log"


def _read(parse, path):
    return parse(path.read_bytes(), str(path))


def _same(a, b):
    """Two rate rows alike but for their names."""
    assert dataclasses.replace(a, what="", spread=None) == dataclasses.replace(b, what="", spread=None)


def _typed(row, stack: str, cores: int = 56, model: str = "llama-3.2-1b"):
    """The typed flags that state one serving rate row: --tokens-per-s at the row's step."""
    extra = dict(context=row.context) if row.phase == "decode" else dict(seq_len=row.seq_len)
    return roofline.check(model=model, cpu="spr", precision=row.precision, phase=row.phase, tokens_per_s=row.measured,
                          batch=row.batch, cores=cores, stack=stack, **extra).rates[0]


# ------------------------------------------------------------------ the parsers: exact values read


def test_vllm_bench_serve_as_its_main_writes_it():
    f = _read(parse_vllm_serve, VLLM)
    (run,) = f.runs
    assert (f.tool, f.format) == ("vllm bench serve", "--save-result JSON")
    assert (run.completed, run.input_tokens, run.output_tokens) == (200, 51200, 25600)
    assert (run.output_throughput, run.input_throughput, run.request_throughput) == (160.0, 320.0, 1.25)
    assert (run.max_concurrency, run.request_rate, run.concurrency) == (8, math.inf, None)
    assert (run.model, run.backend, run.date, run.duration_s) == ("meta-llama/Llama-3.2-1B-Instruct", "vllm",
                                                                  "20261206-101500", 160.0)
    assert (run.mean_input_len, run.mean_output_len) == (256.0, 128.0)
    assert run.latencies_ms["mean_ttft_ms"] == 1020.5 and run.latencies_ms["p99_tpot_ms"] == 46.0
    assert run.latencies_ms["median_e2el_ms"] == 6050.0 and len(run.latencies_ms) == 16


def test_sglang_bench_serving_lines_are_runs():
    f = _read(parse_sglang_serve, SGLANG)
    assert [r.where for r in f.runs] == ["line 1", "line 2"]
    a, b = f.runs
    assert (a.request_rate, a.max_concurrency, a.concurrency) == (math.inf, 1, 1.0)  # JSON's Infinity
    assert (b.max_concurrency, b.concurrency) == (4, 3.92)
    assert (a.input_throughput, a.output_throughput) == (51200 / 400.0, 25600 / 400.0)
    assert (b.input_throughput, b.output_throughput) == (51200 / 125.0, 25600 / 125.0)
    assert a.latencies_ms["mean_tpot_ms"] == 14.6875 and b.latencies_ms["mean_e2e_latency_ms"] == 4900.0
    assert a.model is None  # bench_serving writes no model: --model names it


def test_guidellm_report_benchmarks_are_runs():
    f = _read(parse_guidellm, GUIDELLM)
    assert (f.tool, f.version) == ("GuideLLM", "0.4.0")
    sync, conc = f.runs
    assert (sync.strategy, sync.max_concurrency, sync.request_rate) == ("synchronous", 1, None)
    assert (conc.strategy, conc.max_concurrency, conc.concurrency) == ("concurrent", 4, 4.0)
    assert (sync.completed, sync.input_tokens, sync.output_tokens) == (50, 12800, 6400)
    assert sync.output_throughput == 6400 / 167.75 and conc.input_throughput == 25600 / 105.75
    assert sync.latencies_ms == {"mean_ttft_ms": 180.0, "median_ttft_ms": 176.0, "p99_ttft_ms": 215.0,
                                 "mean_tpot_ms": 25.0, "median_tpot_ms": 25.0, "p99_tpot_ms": 26.5,
                                 "mean_itl_ms": 25.0, "median_itl_ms": 25.0, "p99_itl_ms": 28.0}


def test_benchmark_app_report_and_log_say_the_same():
    j, log = _read(parse_benchmark_app, OV_JSON), _read(parse_benchmark_app, OV_LOG)
    assert (j.fps, log.fps) == (612.46, 612.46)
    for v in (j, log):
        assert (v.values["count"], v.values["duration_ms"], v.values["median_ms"], v.values["mean_ms"]) == \
               (36755, 60012.34, 45.62, 45.70)
        assert (v.batch, v.streams) == (1, 28)
    assert (j.device, j.api, j.shape) == ("CPU", "async", "[1,384]")
    assert j.where["batch"] == "configuration_setup: batch size"
    assert log.where["batch"].startswith("Throughput x Duration / Count")  # 612.46 x 60.01234 / 36755 = 1.0000


# ------------------------------------------------------------------ check --from: every rate against its ceilings


def test_check_from_vllm_is_the_typed_flags():
    r = roofline.check(from_file=str(VLLM), cpu="spr", precision="bf16")
    assert r.model == "llama-3.2-1b"  # from model_id meta-llama/Llama-3.2-1B-Instruct
    assert [(x.what, x.phase, x.measured, x.batch) for x in r.rates] == [
        ("output B8", "decode", 160.0, 8), ("input B8", "prefill", 320.0, 8), ("TPOT B8", "decode", 200.0, 8)]
    assert [x.context for x in r.rates if x.phase == "decode"] == [256 + 64] * 2 and r.rates[1].seq_len == 256
    for row in r.rates:
        _same(row, _typed(row, "vllm"))
        assert row.ceiling <= row.upper_bound and row.cores == 56 and row.instances == 1
    src = {i.what: i.source for i in r.measured_from.inputs}
    assert (src["model"], src["precision"], src["platform"], src["threads"], src["batch (the result)"],
            src["stack"]) == ("file", "flag", "flag", "assumed", "file", "assumed")
    (latencies,) = r.measured_from.left_out
    assert "TTFT mean 1020 ms" in latencies.why and "not priced" in latencies.why
    assert r.stack is None and any("no vllm stack profile" in n for n in r.notes)


def test_check_from_sglang_takes_each_run_at_its_concurrency():
    r = roofline.check(from_file=str(SGLANG), cpu="spr", precision="bf16", model="qwen2.5-0.5b", cores=32)
    assert [(x.what, x.batch) for x in r.rates] == [("output B1 #1", 1), ("input B1 #1", 1), ("TPOT B1 #1", 1),
                                                    ("output B4 #2", 4), ("input B4 #2", 4), ("TPOT B4 #2", 4)]
    assert r.rates[2].measured == 1000 / 14.6875 and r.rates[5].measured == 4 * 1000 / 16.82
    for row in r.rates:
        _same(row, _typed(row, "sglang", cores=32, model="qwen2.5-0.5b"))
    batch = {i.what: i for i in r.measured_from.inputs if i.what.startswith("batch")}
    assert batch["batch (line 2)"].source == "file" and "concurrency 3.92" in batch["batch (line 2)"].detail


def test_check_from_guidellm_and_a_batch_flag():
    r = roofline.check(from_file=str(GUIDELLM), cpu="spr", precision="bf16", model="llama-3.2-1b", stack="none")
    assert [x.batch for x in r.rates] == [1, 1, 1, 4, 4, 4]
    flagged = roofline.check(from_file=str(GUIDELLM), cpu="spr", precision="bf16", model="llama-3.2-1b",
                             stack="none", batch=2)
    assert {x.batch for x in flagged.rates} == {2}
    assert {i.source for i in flagged.measured_from.inputs if i.what.startswith("batch")} == {"flag"}


@pytest.mark.parametrize("path, seq", [(OV_JSON, None), (OV_LOG, 384)])
def test_check_from_benchmark_app_is_the_typed_samples_rate(path, seq):
    r = roofline.check(from_file=str(path), cpu="spr", precision="int8-static", model="bert-large", seq_len=seq)
    (row,) = r.rates
    assert (row.measured, row.batch, row.seq_len, row.cores, row.instances) == (612.46, 1, 384, 112, 28)
    typed = roofline.check(model="bert-large", cpu="spr", precision="int8-static", samples_per_s=612.46, batch=1,
                           seq_len=384, instance_cores=4, stack="openvino").rates[0]
    _same(row, typed)
    assert r.stack == "openvino"


def test_records_add_of_a_serving_run_loads_as_the_check_compares(tmp_path):
    from roofline.api import records_add
    from roofline.catalog.records import load_record

    measured, text = records_add(str(VLLM), cpu="spr", precision="bf16")
    out = tmp_path / "vllm.toml"
    out.write_text(text)
    assert load_record(out).record == measured.record
    assert "# assumed:" in text and "value = 160.0  # output_throughput (the result)" in text
    acc = run_cli("accuracy", "--records", str(out), "--json")
    assert acc.returncode == 0, acc.stderr
    rows = json.loads(acc.stdout)["rows"]
    check = roofline.check(from_file=str(VLLM), cpu="spr", precision="bf16")
    assert [a["measured"] for a in rows] == [c.measured for c in check.rates]
    assert [a["ceiling"] for a in rows] == pytest.approx([c.ceiling for c in check.rates], rel=1e-12)


# ------------------------------------------------------------------ what the file lacks, bad values: one line, exit 2


def _mutated(tmp_path, source, change, name="bad.json"):
    d = json.loads(source.read_text())
    change(d)
    p = tmp_path / name
    p.write_text(json.dumps(d))
    return str(p)


@pytest.mark.parametrize("change, fragment", [
    (lambda d: d.update(output_throughput=float("nan")), "output_throughput: nan"),
    (lambda d: d.update(total_input_tokens="51200"), "total_input_tokens: '51200' is not a number"),
    (lambda d: d.update(completed=-3), "completed: -3"),
    (lambda d: d.update(total_token_throughput=1e300), "total_token_throughput: 1e+300"),
    (lambda d: d.update(max_concurrency=2.5), "max_concurrency: 2.5"),
    (lambda d: d.update(request_rate=4.0, max_concurrency=None), "give --batch"),
])
def test_bad_vllm_values_are_one_line_naming_the_field(tmp_path, change, fragment):
    path = _mutated(tmp_path, VLLM, change)
    with pytest.raises(UserError, match=None) as e:
        roofline.check(from_file=path, cpu="spr", precision="bf16")
    assert fragment in str(e.value) and path in str(e.value) and "\n" not in str(e.value)


def test_refusals_exit_2_with_one_line(tmp_path):
    bad = _mutated(tmp_path, GUIDELLM, lambda d: d["benchmarks"][1]["config"]["strategy"].update(type_="bursty"))
    for args, fragment in (([str(VLLM), "--cpu", "spr"], "--precision"),
                           ([str(VLLM), "--precision", "bf16"], "--cpu"),
                           ([str(SGLANG), "--cpu", "spr", "--precision", "bf16"], "--model"),
                           ([str(OV_LOG), "--cpu", "spr", "--precision", "int8-static", "--model", "bert-large"],
                            "--seq-len"),
                           ([bad, "--cpu", "spr", "--precision", "bf16", "--model", "llama-3.2-1b"],
                            "benchmarks[1]: config.strategy.type_")):
        for command in (["check", "--from"], ["records", "add"]):
            proc = run_cli(*command, *args)
            assert proc.returncode == 2 and fragment in proc.stderr, (command, args, proc.stderr)
            assert len(proc.stderr.splitlines()) == 1 and "Traceback" not in proc.stderr


@pytest.mark.parametrize("content", ['{"results": [1, 2, 3]}', '[{"name": "x"}]', '{"a": 1}\n{"a": 2}\n'])
def test_an_unknown_json_names_the_formats_read(tmp_path, content):
    p = tmp_path / "other.json"
    p.write_text(content)
    with pytest.raises(UserError) as e:
        roofline.check(from_file=str(p), cpu="spr", precision="bf16")
    assert str(e.value) == f"{p}: not a format roofline reads ({FORMATS})"
    for name in ("vllm bench serve JSON", "SGLang bench_serving JSONL", "GuideLLM JSON", "benchmark_app report/JSON",
                 "llama-batched-bench table/JSONL", "MLPerf summary", "llama-bench JSON/JSONL/CSV/markdown"):
        assert name in FORMATS


def _mutated_lines(tmp_path, source, line, change):
    rows = [json.loads(x) for x in source.read_text().splitlines()]
    change(rows[line])
    p = tmp_path / "bad.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(p)


@pytest.mark.parametrize("make, fragment", [
    (lambda t: _mutated_lines(t, SGLANG, 1, lambda d: d.update(input_throughput=-1.0)),
     "line 2: input_throughput: -1.0"),
    (lambda t: _mutated_lines(t, SGLANG, 0, lambda d: d.update(output_throughput=float("inf"))),
     "line 1: output_throughput: inf"),
    (lambda t: _mutated_lines(t, SGLANG, 1, lambda d: d.update(completed=True)), "line 2: completed: True"),
    (lambda t: _mutated(t, GUIDELLM, lambda d: d["benchmarks"][0]["metrics"]["output_tokens_per_second"]
                        ["successful"].update(mean="fast")),
     "benchmarks[0]: metrics.output_tokens_per_second.successful.mean: 'fast' is not a number"),
    (lambda t: _mutated(t, GUIDELLM, lambda d: d["benchmarks"][1]["metrics"]["request_totals"].update(successful=0)),
     "benchmarks[1]: metrics.request_totals.successful: 0: no request completed"),
    (lambda t: _mutated(t, OV_JSON, lambda d: d["execution_results"].update(throughput="nan")),
     "execution_results: throughput: 'nan'"),
    (lambda t: _mutated(t, OV_JSON, lambda d: d["configuration_setup"].update({"number of CPU streams": "-4"})),
     "configuration_setup: number of CPU streams: '-4'"),
    (lambda t: _mutated(t, OV_JSON, lambda d: d["configuration_setup"].update({"target device": "GPU"})),
     "target device: GPU: roofline prices CPUs"),
])
def test_bad_values_of_the_other_tools_name_the_field(tmp_path, make, fragment):
    path = make(tmp_path)
    with pytest.raises(UserError) as e:
        roofline.check(from_file=path, cpu="spr", precision="bf16", model="llama-3.2-1b")
    assert fragment in str(e.value) and str(e.value).startswith(path) and "\n" not in str(e.value)


def test_a_seq_len_flag_is_the_prompt_and_instance_cores_is_refused():
    r = roofline.check(from_file=str(VLLM), cpu="spr", precision="bf16", seq_len=1000)
    assert [x.seq_len for x in r.rates if x.phase == "prefill"] == [1000]
    assert [x.context for x in r.rates if x.phase == "decode"] == [1000 + 64] * 2
    assert any(i.what == "prompt (the result)" and i.source == "flag" for i in r.measured_from.inputs)
    with pytest.raises(UserError, match="--instance-cores"):
        roofline.check(from_file=str(VLLM), cpu="spr", precision="bf16", instance_cores=4)


def test_a_pooling_run_is_refused_by_name(tmp_path):
    def pooling(d):
        for key in ("total_output_tokens", "output_throughput"):
            d.pop(key)
    path = _mutated(tmp_path, VLLM, pooling)
    with pytest.raises(UserError, match="a pooling"):
        roofline.check(from_file=path, cpu="spr", precision="bf16")
