"""Measurement files as users have them: llama-bench's results (-o json, jsonl, csv, the markdown table) and MLPerf
summaries, read by `check --from` and `records add`. The fixtures are real (tests/fixtures/README.md): a llama-bench
run on a 2-vCPU Zen 5 guest and Intel's published MLPerf v3.1 BERT-99 results on 2x Xeon 8480+."""

from __future__ import annotations

import dataclasses
import json

import pytest
from clitools import REPO, run_cli

import roofline
from roofline.catalog.llama_bench import read_llama_bench
from roofline.catalog.mlperf_log import read_summary, read_system

pytestmark = pytest.mark.slow  # the file takes seconds: out of the fast stage (pytest -m "not slow")

FIX = REPO / "tests" / "fixtures"
BENCH = FIX / "llama-bench"
JSON, MD = BENCH / "zen5-2vcpu-llama-3.2-1b.json", BENCH / "zen5-2vcpu-llama-3.2-1b.md"
JSONL, CSV = BENCH / "zen5-2vcpu-q4_0-small.jsonl", BENCH / "zen5-2vcpu-q4_0-small.csv"
HOST = BENCH / "zen5-2vcpu-probe.toml"
TREE = FIX / "mlperf-v3.1" / "closed" / "Intel"
OFFLINE = TREE / "results" / "1-node-2S-SPR-PyTorch-INT8" / "bert-99" / "Offline" / "performance" / "run_1" / \
    "mlperf_log_summary.txt"
SERVER = OFFLINE.parents[3] / "Server" / "performance" / "run_1" / "mlperf_log_summary.txt"
SYSTEM = TREE / "systems" / "1-node-2S-SPR-PyTorch-INT8.json"
LLAMA = dict(cpu=str(HOST), model="llama-3.2-1b")


# ------------------------------------------------------------------ the parsers


def test_llama_bench_json_as_the_run_wrote_it():
    b = read_llama_bench(JSON)
    assert b.format == "json" and [t.test for t in b.tests] == ["pp512", "tg128"] * 3
    assert [t.file_type for t in b.tests] == ["Q8_0"] * 2 + ["Q4_0"] * 2 + ["Q4_K - Small"] * 2
    t = b.tests[0]
    assert (t.avg_ts, t.stddev_ts, t.n_threads, t.n_prompt, t.n_gen, t.n_depth) == (99.742971, 9.676689, 2, 512, 0, 0)
    assert t.samples_ts == (114.047, 100.705, 100.148, 96.7084, 87.1071) and t.repetitions == 5
    assert (t.model_n_params, t.model_size, t.type_k, t.type_v) == (1235814400, 1313251328, "f16", "f16")
    assert t.model_filename == "llama-3.2-1b-q8_0.gguf" and t.build_commit == "0c1e570"
    assert t.architecture == "llama 1B" and t.cpu_info == "AMD EPYC"


def test_the_markdown_table_says_the_same_rounded():
    """The table llama-bench printed beside the JSON (-oe md): the same tests, each rate and deviation to two
    decimals, the sizes in GiB/MiB, no file name, the build from the line under the table."""
    j, m = read_llama_bench(JSON), read_llama_bench(MD)
    assert m.format == "md" and m.build == "0c1e570 (1)"
    assert [(t.test, t.model_type, t.n_threads) for t in m.tests] == [(t.test, t.model_type, t.n_threads) for t in j.tests]
    for a, b in zip(j.tests, m.tests):
        assert b.avg_ts == round(a.avg_ts, 2) and b.stddev_ts == round(a.stddev_ts, 2)
        assert b.model_size == pytest.approx(a.model_size, rel=5e-3) and b.model_n_params == 1.24e9
        assert b.model_filename is None and b.build_commit == "0c1e570"


def test_jsonl_and_csv_of_one_run_agree():
    a, b = read_llama_bench(JSONL), read_llama_bench(CSV)
    assert (a.format, b.format) == ("jsonl", "csv")
    assert [dataclasses.replace(t, where="", samples_ts=()) for t in a.tests] == \
           [dataclasses.replace(t, where="", flash_attn="-1") for t in b.tests]
    assert [t.test for t in a.tests] == ["pp64", "tg16"] and a.tests[0].samples_ts == (199.507, 200.111)


def test_the_mlperf_summary_and_its_system():
    s = read_summary(OFFLINE)
    assert (s.scenario, s.mode, s.valid, s.sut_name) == ("Offline", "PerformanceOnly", True, "BERT Offline")
    assert (s.samples_per_s.value, s.samples_per_s.line) == (1357.33, 7) and s.tokens_per_s is None
    assert s.latency_ns["99.00"] == 679020913509 and s.parameters["performance_sample_count"] == "10833"
    assert (s.benchmark, s.system) == ("bert-99", "1-node-2S-SPR-PyTorch-INT8") and s.system_file == SYSTEM
    v = read_system(SYSTEM)
    assert (v.processor, v.processors_per_node, v.cores_per_processor, v.nodes, v.accelerators_per_node) == \
           ("Intel(R) Xeon(R) Platinum 8480+", 2, 56, 1, 0)
    server = read_summary(SERVER)
    assert (server.scenario, server.samples_per_s.value, server.completed_samples_per_s.value) == \
           ("Server", 1089.77, 1089.63)


# ------------------------------------------------------------------ check --from: the same answer as the flags


def _typed(row, **kw):
    """The typed flags that state one llama-bench row."""
    phase = row.phase
    extra = dict(seq_len=row.seq_len) if phase == "prefill" else dict(context=row.context)
    return roofline.check(**LLAMA, precision=row.precision, phase=phase, tokens_per_s=row.measured, cores=2,
                          kv_dtype="fp16", quantize_lm_head=True, stack="llama.cpp", **extra, **kw).rates[0]


def _same(a, b):
    assert dataclasses.replace(a, what="", spread=None) == dataclasses.replace(b, what="", spread=None)


def test_check_from_llama_bench_json_is_the_typed_flags():
    r = roofline.check(from_file=str(JSON), **LLAMA)
    assert [(x.what, x.precision) for x in r.rates] == [("pp512", "q8_0"), ("tg128", "q8_0"), ("pp512", "q4_0"),
                                                        ("tg128", "q4_0"), ("pp512", "q4_k"), ("tg128", "q4_k")]
    assert [x.context for x in r.rates if x.phase == "decode"] == [64] * 3  # tg128 from an empty cache: 128 / 2
    assert r.rates[0].spread == pytest.approx(9.676689 / 99.742971)
    for row in r.rates:
        _same(row, _typed(row))
    # llama.cpp's profile (platforms/stacks/llama.cpp.toml) prices the realistic rates, with its own band
    assert r.stack == "llama.cpp" and r.realistic_accuracy is not None
    assert all(row.realistic <= row.ceiling * (1 + 1e-9) and row.stack == "llama.cpp" for row in r.rates)
    assert r.measured_from.format == "llama-bench -o json" and r.measured_from.tool == "llama-bench build 0c1e570"
    sources = {(i.what, i.source) for i in r.measured_from.inputs}
    assert {("threads", "file"), ("model", "flag"), ("platform", "flag"), ("batch", "assumed"),
            ("KV cache", "file"), ("stack", "assumed")} <= sources


def test_the_ceiling_is_the_estimate_of_that_step():
    """Each row's ceiling is what `estimate` gives for the same step, by another path: tokens/s of one decode step
    at the tg's mean context, and the prefill's sequences per second times the prompt."""
    r = roofline.check(from_file=str(JSON), **LLAMA)
    for row in r.rates:
        kw = dict(context=row.context) if row.phase == "decode" else dict(seq_len=row.seq_len)
        e = roofline.estimate(**LLAMA, precision=row.precision, baseline=row.precision, phase=row.phase, cores=2,
                              instance_cores=2, kv_dtype="fp16", quantize_lm_head=True, stack="none", **kw)
        pr = e.precisions[row.precision]
        per_step = 1 if row.phase == "decode" else row.seq_len
        assert row.ceiling == pytest.approx(pr.throughput_per_s * per_step, rel=1e-12), row.what
        assert row.bound == pr.bound


def test_the_markdown_table_and_the_jsonl_and_csv_give_their_rows():
    md = roofline.check(from_file=str(MD), **LLAMA)
    js = roofline.check(from_file=str(JSON), **LLAMA)
    for a, b in zip(md.rates, js.rates):
        assert a.measured == round(b.measured, 2) and a.ceiling == b.ceiling
    assert any(i.what == "KV cache" and i.source == "assumed" for i in md.measured_from.inputs)
    a, b = (roofline.check(from_file=str(f), **LLAMA) for f in (JSONL, CSV))
    assert [(x.what, x.measured, x.ceiling) for x in a.rates] == [(x.what, x.measured, x.ceiling) for x in b.rates]
    assert [x.what for x in a.rates] == ["pp64", "tg16"] and a.rates[1].context == 8
    for row in a.rates:
        _same(row, _typed(row))


def test_check_from_prints_what_the_flags_print():
    """The command line: --from and the typed flags give the same rates in --json."""
    proc = run_cli("check", "--from", str(JSONL), "--cpu", str(HOST), "--model", "llama-3.2-1b", "--json")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)["rates"]
    typed = run_cli("check", "--cpu", str(HOST), "--model", "llama-3.2-1b", "--precision", "q4_0", "--phase", "decode",
                    "--tokens-per-s", "43.940578", "--context", "8", "--cores", "2", "--kv-dtype", "fp16",
                    "--quantize-lm-head", "--stack", "llama.cpp", "--json")
    assert typed.returncode == 0, typed.stderr
    (row,) = json.loads(typed.stdout)["rates"]
    assert {**rows[1], "what": "", "spread": None} == {**row, "what": "", "spread": None}


def test_check_from_mlperf_is_the_typed_flags():
    r = roofline.check(from_file=str(OFFLINE))
    (row,) = r.rates
    assert (r.model, r.cpu, row.precision, row.unit, row.measured) == ("bert-large", "spr", "int8-full", "samples/s",
                                                                       1357.33)
    assert (row.batch, row.seq_len, row.cores, row.instances) == (8, 172, 112, 28)
    typed = roofline.check(model="bert-large", cpu="spr", precision="int8-full", samples_per_s=1357.33, batch=8,
                           seq_len=172, instance_cores=4, stack="intel-mlperf").rates[0]
    _same(row, typed)
    inputs = {i.what: i for i in r.measured_from.inputs}
    assert inputs["platform"].source == "file" and "8480+" in inputs["platform"].detail
    assert inputs["model"].value == "bert-large" and inputs["model"].source == "file"
    assert inputs["precision"].source == inputs["batch"].source == "assumed"
    e = roofline.estimate(model="bert-large", cpu="spr", precision="int8-full", baseline="int8-full", batch=8,
                          seq_len=172, instance_cores=4, stack="none")
    assert row.ceiling == pytest.approx(e.precisions["int8-full"].throughput_per_s, rel=1e-12)


def test_the_server_scenario_and_flags_over_the_assumptions():
    r = roofline.check(from_file=str(SERVER), batch=4, seq_len=384, instance_cores=8, system=str(SYSTEM))
    (row,) = r.rates
    assert (row.what, row.measured, row.batch, row.seq_len, row.instances) == ("Server", 1089.77, 4, 384, 14)
    inputs = {i.what: i.source for i in r.measured_from.inputs}
    assert inputs["batch"] == inputs["tokens per sample"] == inputs["cores per instance"] == inputs["system"] == "flag"
    assert any("latency constraint" in x.what for x in r.measured_from.left_out)


# ------------------------------------------------------------------ records add: the round trip


@pytest.mark.parametrize("source, flags", [(JSON, ["--cpu", str(HOST), "--model", "llama-3.2-1b"]), (OFFLINE, [])])
def test_records_add_round_trips_through_accuracy(tmp_path, source, flags):
    """The record `records add` writes loads, is the measurement check --from compares, and `roofline accuracy`
    prices each of its figures at the ceiling check --from gives."""
    from roofline.catalog.records import load_record

    out = tmp_path / "mine.toml"
    proc = run_cli("records", "add", str(source), *flags, "-o", str(out))
    assert proc.returncode == 0 and "roofline accuracy --records" in proc.stdout, proc.stderr
    text = out.read_text()
    assert "# assumed:" in text and text.startswith("#")
    rec = load_record(out).record
    measured, _ = roofline.api.records_add(str(source), **({"cpu": str(HOST), "model": "llama-3.2-1b"} if flags else {}))
    assert rec == measured.record
    acc = run_cli("accuracy", "--records", str(out), "--json")
    assert acc.returncode == 0, acc.stderr
    rows = json.loads(acc.stdout)["rows"]
    check = roofline.check(from_file=str(source), **({"cpu": str(HOST), "model": "llama-3.2-1b"} if flags else {}))
    assert len(rows) == len(check.rates)
    for a, c in zip(rows, check.rates):
        assert a["measured"] == c.measured and a["ceiling"] == pytest.approx(c.ceiling, rel=1e-12), a["what"]
        assert a["violation"] == (c.fraction_of_ceiling > 1)


@pytest.mark.parametrize("fa, want, said", [("1", True, "on"), ("0", False, "off"), ("-1", None, "the build's default")])
def test_records_add_takes_the_runs_flash_attention_at_its_word(tmp_path, fa, want, said):
    """llama-bench's flash_attn: 1 and 0 are the run's setting, written as the record's ``flash_attention``; -1 (auto)
    leaves it to the stack's rule by the build's date, said as assumed."""
    rows = json.loads(JSON.read_text())
    for r in rows:
        r["flash_attn"] = int(fa)
    src = tmp_path / "bench.json"
    src.write_text(json.dumps(rows))
    from roofline.api import records_add

    measured, _ = records_add(str(src), cpu=str(HOST), model="llama-3.2-1b")
    assert measured.record.flash_attention is want
    item = next(i for i in measured.origin.inputs if i.what == "flash attention")
    assert item.value == said and item.source == ("assumed" if want is None else "file")


def test_records_add_prints_the_record_without_o():
    proc = run_cli("records", "add", str(OFFLINE))
    assert proc.returncode == 0 and proc.stdout.startswith("# MLPerf bert-99 Offline"), proc.stderr
    assert 'precision = "int8-full"  # assumed:' in proc.stdout and "value = 1357.33  # Samples per second (line 7)" \
        in proc.stdout


# ------------------------------------------------------------------ what the file lacks: the flag named


@pytest.mark.parametrize("args, fragment", [
    ([str(JSON), "--model", "llama-3.2-1b"], "--cpu"),
    ([str(JSON), "--cpu", str(HOST)], "--model"),
    ([str(MD), "--cpu", str(HOST)], "--model"),
    ([str(JSON), "--cpu", str(HOST), "--model", "llama-3.2-3b"], "--model llama-3.2-3b"),
    ([str(JSON), "--cpu", str(HOST), "--model", "llama-3.2-1b", "--cores", "1"], "--cores"),
    ([str(JSON), "--cpu", str(HOST), "--model", "llama-3.2-1b", "--precision", "q8_0"], "--precision"),
    ([str(JSON), "--cpu", str(HOST), "--model", "bert-base"], "--model bert-base"),
    ([str(HOST)], "not a format roofline reads"),
    ([str(OFFLINE), "--model", "llama-3.2-1b"], "--model llama-3.2-1b"),
])
def test_what_is_missing_names_its_flag(args, fragment):
    for command in (["check", "--from"], ["records", "add"]):
        proc = run_cli(*command, *args)
        assert proc.returncode == 2 and fragment in proc.stderr, (command, proc.stderr)
        assert len(proc.stderr.splitlines()) == 1 and "Traceback" not in proc.stderr


def test_a_summary_outside_its_tree_asks_for_the_cpu_and_an_invalid_run_is_refused(tmp_path):
    alone = tmp_path / "mlperf_log_summary.txt"
    alone.write_text(OFFLINE.read_text())
    proc = run_cli("check", "--from", str(alone))
    assert proc.returncode == 2 and "--cpu" in proc.stderr, proc.stderr
    proc = run_cli("check", "--from", str(alone), "--cpu", "spr")
    assert proc.returncode == 2 and "--model" in proc.stderr, proc.stderr  # no tree: no benchmark in the path
    proc = run_cli("check", "--from", str(alone), "--cpu", "spr", "--model", "bert-large")
    assert proc.returncode == 2 and "--precision" in proc.stderr, proc.stderr  # no system: its name says nothing
    r = roofline.check(from_file=str(alone), cpu="spr", model="bert-large", precision="int8-full")
    assert r.rates[0].measured == 1357.33 and r.stack is None and any("no unknown stack" in n for n in r.notes)
    invalid = tmp_path / "invalid.txt"
    invalid.write_text(OFFLINE.read_text().replace("Result is : VALID", "Result is : INVALID"))
    proc = run_cli("check", "--from", str(invalid), "--cpu", "spr", "--model", "bert-large", "--precision", "int8-full")
    assert proc.returncode == 2 and "not VALID" in proc.stderr and "line 8" in proc.stderr, proc.stderr


def test_rates_refuse_speedup_flags_and_need_their_own():
    for kw, fragment in ((dict(throughput_speedup=2.0), "--throughput-speedup"), (dict(phase="forward"), "--phase"),
                         (dict(seq_len=128, phase="decode"), "--seq-len")):
        with pytest.raises(roofline.errors.UserError, match=fragment):
            roofline.check(**LLAMA, precision="q8_0", tokens_per_s=20.0, **kw)
    with pytest.raises(roofline.errors.UserError, match="--from takes it from the file"):
        roofline.check(from_file=str(JSON), **LLAMA, context=64)
    with pytest.raises(roofline.errors.UserError, match="applies to measured rates"):
        roofline.check(model="bert-large", cpu="icx", precision="int8-static", throughput_speedup=2.0, cores=8)


def test_a_q4_k_s_file_is_the_mix_or_a_pure_file_by_its_stated_size(tmp_path):
    """'Q4_K - Small' names llama.cpp's Q4_K_S mix, and also what ``llama-quantize --pure`` (and the suite's GGUF
    writer) writes with Q4_K throughout: the file's stated size picks the one whose tensors weigh nearer it."""
    r = roofline.check(from_file=str(JSON), **LLAMA)
    (note,) = [i.detail for i in r.measured_from.inputs if i.what == "precision" and i.value == "q4_k"]
    assert "nearer the q4_k file's 0.647 GiB than the q4_k_s file's 0.715 GiB" in note
    runs = json.loads(JSON.read_text())
    for run in runs:
        if run["model_type"].endswith("Q4_K - Small"):
            run["model_size"] = 0.715 * 2**30
    path = tmp_path / "q4_k_s.json"
    path.write_text(json.dumps(runs))
    r = roofline.check(from_file=str(path), **LLAMA)
    assert [x.precision for x in r.rates] == ["q8_0", "q8_0", "q4_0", "q4_0", "q4_k_s", "q4_k_s"]
    pure = roofline.check(from_file=str(JSON), **LLAMA)
    decode = [next(x for x in c.rates if x.phase == "decode" and x.precision.startswith("q4_k")) for c in (r, pure)]
    assert decode[0].ceiling < decode[1].ceiling  # the mix's Q5_K/Q6_K tensors read more bytes per token


def test_an_iq4_xs_file_type_is_priced_as_its_type_and_says_what_its_mix_raises(tmp_path):
    """llama-bench names a file by llama.cpp's ftype name; IQ4_XS's is 'IQ4_XS - 4.25 bpw'. Its rows are priced
    as iq4_xs (136 bytes per 256 weights, the check's ceiling the estimate's), and the input says which tensors
    llama.cpp's IQ4_XS mix raises to Q5_K, which the single type does not price."""
    runs = json.loads(JSON.read_text())
    for run in runs:
        run["model_type"] = run["model_type"].replace("Q4_0", "IQ4_XS - 4.25 bpw")
    path = tmp_path / "iq4_xs.json"
    path.write_text(json.dumps(runs))
    r = roofline.check(from_file=str(path), **LLAMA)
    assert [x.precision for x in r.rates] == ["q8_0", "q8_0", "iq4_xs", "iq4_xs", "q4_k", "q4_k"]
    (note,) = [i.detail for i in r.measured_from.inputs if i.what == "precision" and i.value == "iq4_xs"]
    assert "IQ4_XS - 4.25 bpw" in note and "Q5_K in attn_v" in note
    row = next(x for x in r.rates if x.precision == "iq4_xs" and x.phase == "decode")
    e = roofline.estimate(**LLAMA, precision="iq4_xs", baseline="iq4_xs", phase="decode", context=row.context, cores=2,
                          instance_cores=2, kv_dtype="fp16", quantize_lm_head=True, stack="none")
    assert row.ceiling == pytest.approx(e.precisions["iq4_xs"].throughput_per_s, rel=1e-12)


@pytest.mark.parametrize("ftype, precision", [("IQ2_XXS - 2.0625 bpw", "iq2_xxs"), ("IQ1_M - 1.75 bpw", "iq1_m"),
                                              ("IQ3_S - 3.4375 bpw", "iq3_s"), ("IQ2_M - 2.7 bpw", "iq2_s"),
                                              ("IQ3_XS - 3.3 bpw", "iq3_s"), ("IQ3_S mix - 3.66 bpw", "iq3_s")])
def test_an_i_quant_file_type_is_priced_as_its_type_and_says_what_its_mix_raises(tmp_path, ftype, precision):
    """llama-bench's name of an i-quant file (llama_model_ftype_name in src/llama-model-loader.cpp at 0c1e570) prices
    its rows as that type, and the input names the tensors llama.cpp's mix of that name raises."""
    runs = json.loads(JSON.read_text())
    for run in runs:
        run["model_type"] = run["model_type"].replace("Q4_0", ftype)
    path = tmp_path / f"{precision}.json"
    path.write_text(json.dumps(runs))
    r = roofline.check(from_file=str(path), **LLAMA)
    assert precision in [x.precision for x in r.rates]
    (note,) = [i.detail for i in r.measured_from.inputs if i.what == "precision" and i.value == precision]
    assert ftype in note and "in the output matrix" in note


def test_an_f16_and_bf16_llama_bench_file_is_read_and_its_bf16_decode_flagged():
    """llama-bench's F16 and BF16 files of Llama-3.2-1B on the Zen 5 guest (validation/results, its README row):
    both file types are priced (F16 as llama.cpp runs it, FP32 FMA after conversion; BF16 on the BF16 path), and
    BF16's generation, 25.9 tokens/s, reads the weights at 64 GB/s, above the 63.8 GB/s of the platform file's
    probe of 2026-12-06 (the guest's DRAM read 76.4 GB/s in its probe of the same session): the answer says it is
    above the bound and names what to suspect, exit 0."""
    path = REPO / "validation" / "results" / "zen5-2vcpu-r3-llama-bench-llama-3.2-1b-f16-bf16.json"
    proc = run_cli("check", "--from", str(path), "--cpu", "zen5-2vcpu-r3", "--model", "llama-3.2-1b", "--json")
    assert proc.returncode == 0, proc.stderr
    rates = {(r["what"], r["precision"]): r for r in json.loads(proc.stdout)["rates"]}
    assert set(rates) == {("pp512", "f16"), ("tg128", "f16"), ("pp512", "bf16"), ("tg128", "bf16")}
    assert rates["tg128", "bf16"]["measured"] > rates["tg128", "bf16"]["upper_bound"]
    assert all(r["measured"] <= r["upper_bound"] for k, r in rates.items() if k != ("tg128", "bf16"))
    text = run_cli("check", "--from", str(path), "--cpu", "zen5-2vcpu-r3", "--model", "llama-3.2-1b").stdout
    assert "above the bound" in text and "tg128 bf16" in text
