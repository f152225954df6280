"""The decoder plan against MLPerf's LLM runs: each Offline and Server run of Llama 3.1 8B is the plan's
prediction of its own layout (``roofline accuracy``'s ``decoder_runs``), the plan a user gets from ``roofline
plan`` with the record's settings as flags, and a record that cannot be planned is refused in one line."""

from __future__ import annotations

import statistics

import pytest
from clitools import REPO, run_cli, run_json

from roofline.catalog.records import load_records
from roofline.catalog.stacks import load_stack
from roofline.fidelity.decoder_runs import is_decoder_run, predict_decoder_run, run_rate, stated_latencies
from roofline.fidelity.gate import CONCURRENCY_RUNS, DECODER_RUNS, gate_of
from roofline.spec.vocab import FigureKind, Statistic

pytestmark = pytest.mark.slow  # plan simulations: out of the fast stage

OFFLINE = REPO / "validation/records/corpus/mlperf-v6.0-intel-2s-xeon6980p-llama31-8b-offline.toml"
SERVER = REPO / "validation/records/corpus/mlperf-v6.0-intel-2s-xeon6980p-llama31-8b-server.toml"


@pytest.fixture(scope="module")
def runs():
    return {r.id: r for r in load_records() if is_decoder_run(r)}


def test_every_mlperf_llm_run_is_a_decoder_plan_prediction(corpus_accuracy, runs):
    """24 runs (12 Offline, 12 Server) on two CPUs: each measured figure is the record's samples per second, each
    predicted one the plan's rate of the run's layout (instances: the cores used per socket over the cores per
    instance, times the sockets), below the same plan at the ceiling, and none of the runs beats that ceiling."""
    data = run_json("accuracy")
    got = {d["record"]: d for d in data["decoder_runs"] if d["scenario"] != "concurrency"}
    runs = {k: v for k, v in runs.items() if v.record.scenario != "concurrency"}
    assert set(got) == set(runs) and len(got) == 24
    assert {d["scenario"] for d in got.values()} == {"offline", "server"}
    assert {d["platform"] for d in got.values()} == {"gnr", "xeon-6787p"}
    for rid, d in got.items():
        r = runs[rid].record
        assert d["measured"] == run_rate(runs[rid]).value and d["unit"] == "requests/s"
        assert d["instances"] == r.platform.cores // r.platform.instance_cores * r.platform.sockets
        assert (d["instance_cores"], d["max_sequences"], d["priced_by"]) == (r.platform.instance_cores,
                                                                            r.max_sequences, "torch-inductor")
        assert d["error"] == pytest.approx(d["plan"] / d["measured"] - 1)
        assert 0 < d["plan"] <= d["ceiling"] and not d["violation"]
        # a Server run's TTFT and TPOT figures, each against the plan's at the run's own rate; an Offline run has none
        stated = stated_latencies(runs[rid])
        assert len(d["latencies"]) == len(stated) == (4 if r.scenario == "server" else 0)
        for x in d["latencies"]:
            assert x["measured_s"] == stated[FigureKind(x["kind"]), Statistic(x["statistic"])]
            assert x["error"] == pytest.approx(x["plan_s"] / x["measured_s"] - 1) and x["plan_s"] > 0
        if r.scenario == "server":  # the run met its bounds at its rate: loadgen's p99s are within them
            p99 = {x["kind"]: x["measured_s"] for x in d["latencies"] if x["statistic"] == "p99"}
            assert p99["ttft"] <= r.latency_bound_s and p99["tpot"] <= r.tpot_bound_s
    # the gate holds the median |error| of the runs' rates
    gate = gate_of(corpus_accuracy, "")
    assert gate.rows[DECODER_RUNS].median_abs_error == pytest.approx(
        statistics.median(abs(d["error"]) for d in got.values()), rel=1e-3)
    text = run_cli("accuracy", "--brief").stdout
    assert "LLM plan vs MLPerf, 24 runs: rate |error| median" in " ".join(text.split())


def test_a_run_is_planned_as_roofline_plan_plans_its_layout(runs):
    """The record's settings are ``roofline plan``'s flags: the same model, CPU and precision, the run's request
    lengths, output tokens, cores per instance and running sequences, prefill steps of its chunk size."""
    import roofline

    rec = runs[OFFLINE.stem]
    r = rec.record
    got = predict_decoder_run(rec, load_stack("torch-inductor"))
    plan = roofline.plan(r.model, r.platform.name, precision="w4a8", scenario="offline", sockets=r.platform.sockets,
                         seq_len_histogram=str(OFFLINE.parent / r.request_lengths), output_len=r.output_len,
                         instance_cores=r.platform.instance_cores, cores=r.platform.cores,
                         max_sequences=r.max_sequences, max_batch_tokens=r.max_batch_tokens, kv_dtype="bf16",
                         stack="torch-inductor")
    best = plan.cpus[0].best
    assert (best.instance_cores, best.instances_per_server) == (7, 36)
    assert got.rps == pytest.approx(best.rps_per_server, rel=1e-12)
    assert got.ceiling_rps == pytest.approx(best.rps_per_server_ceiling, rel=1e-12)
    assert got.latencies_s == ()  # an Offline run states no latencies


def test_a_server_runs_latencies_grow_with_its_rate(runs):
    """The plan's TTFT and TPOT at a Server run's rate come from one simulation of the run's layout; at a tenth of
    the rate the queue and the running batch are shorter, so neither p99 is longer."""
    rec = runs[SERVER.stem]
    rate = run_rate(rec).value
    low, own = predict_decoder_run(rec, load_stack("torch-inductor"), (rate / 10, rate)).latencies_s
    for kind in (FigureKind.TTFT, FigureKind.TPOT):
        assert 0 < low[kind, Statistic.P99] <= own[kind, Statistic.P99]
        assert low[kind, Statistic.MEAN] <= low[kind, Statistic.P99]


@pytest.mark.parametrize("edit, word", [
    ("max_sequences = 32\n", ""),  # priced_by needs the running cap
    ("max_sequences = 32", "max_sequences = 0"),
    ("max_sequences = 32", "max_sequences = \"32\""),
    ("tpot_bound_s = 0.1", "tpot_bound_s = nan"),
    ("tpot_bound_s = 0.1", "tpot_bound_s = -1"),
    ('priced_by = "torch-inductor"', 'priced_by = "no-such-stack"'),  # refused with the profiles it could name
    ('priced_by = "torch-inductor"', "priced_by = 3"),
])
def test_a_bad_decoder_run_is_refused_in_one_line(tmp_path, edit, word):
    text = SERVER.read_text()
    assert edit in text
    (tmp_path / "lengths").mkdir()
    lengths = SERVER.parent.parent / "lengths" / "mlperf-llama3.1-8b-cnndm-inputs.txt"
    (tmp_path / "lengths" / lengths.name).write_text(lengths.read_text())
    (tmp_path / "corpus").mkdir()
    path = tmp_path / "corpus" / "r.toml"
    path.write_text(text.replace(edit, word))
    proc = run_cli("accuracy", "--records", str(path))
    assert proc.returncode == 2 and ("max_sequences" in proc.stderr or "tpot_bound_s" in proc.stderr
                                     or "priced_by" in proc.stderr), proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr, proc.stderr


def test_a_tpot_bound_belongs_to_a_server_run(tmp_path):
    text = OFFLINE.read_text().replace("max_batch_tokens = 8192\n", "max_batch_tokens = 8192\ntpot_bound_s = 0.1\n")
    path = tmp_path / "r.toml"
    path.write_text(text)
    proc = run_cli("accuracy", "--records", str(path))
    assert proc.returncode == 2 and "tpot_bound_s" in proc.stderr and "server" in proc.stderr, proc.stderr


#: every committed llama-server sweep: (the CPU its records name, the results file)
SWEEPS = [(cpu, path) for cpu in ("zen5-2vcpu-r3", "emr-2vcpu")
          for path in sorted((REPO / "validation/results").glob(f"{cpu}-llama-server-*.jsonl"))]


def test_the_concurrency_records_are_the_committed_sweeps(tmp_path):
    """Each llama-server concurrency record is what ``records_from`` writes from its committed results line: no
    figure typed by hand."""
    from roofline.validation.serving_sweep import records_from

    assert [cpu for cpu, _ in SWEEPS] == ["zen5-2vcpu-r3"] * 3 + ["emr-2vcpu"] * 3
    for cpu, sweep in SWEEPS:
        precision = sweep.stem.split("-")[-4]
        committed = sorted((REPO / "validation/records").glob(f"{cpu}-llama-server-{precision}-c*.toml"))
        assert len(committed) == len(sweep.read_text().splitlines())
        header = committed[0].read_text().split("schema_version")[0]
        written = records_from(sweep, tmp_path, cpu=cpu, model="llama-3.2-1b", precision=precision, stack="llama.cpp",
                               date=_field(committed[0], "date"), engine=_field(committed[0], "engine"), header=header)
        assert sorted(p.name for p in written) == [p.name for p in committed]
        for p in written:
            assert p.read_text().rstrip() == (REPO / "validation/records" / p.name).read_text().rstrip()


def _field(path, key):
    """A record's top-level string ``key``, as its file states it."""
    return next(line.split('"')[1] for line in path.read_text().splitlines() if line.startswith(f"{key} = "))


def test_a_concurrency_run_is_the_plans_concurrency_scenario(corpus_accuracy, runs):
    """A llama-server run of N slots and N clients is ``roofline plan --concurrency N`` of its layout: the output
    tokens per second of the server and the TTFT and TPOT each user sees, priced by the llama.cpp profile refitted
    without the run's CPU (its own records left out); at the ceiling's step times the server is faster."""
    import roofline

    data = run_json("accuracy")
    got = {d["record"]: d for d in data["decoder_runs"] if d["scenario"] == "concurrency"}
    assert len(got) == 26 and {d["priced_by"] for d in got.values()} == {"llama.cpp"}
    for rid, d in got.items():
        r = runs[rid].record
        assert d["concurrency"] == r.concurrency == r.max_sequences and d["unit"] == "output tokens/s"
        assert d["measured"] == run_rate(runs[rid]).value and 0 < d["plan"] < d["ceiling"] and not d["violation"]
        assert {(x["kind"], x["statistic"]) for x in d["latencies"]} == {("ttft", "mean"), ("tpot", "mean")}
    # with the committed profile (fitted with the run's CPU), the same numbers as the plan command's
    rec = runs["zen5-2vcpu-r3-llama-server-q4_0-c4"]
    mine = predict_decoder_run(rec, load_stack("llama.cpp"))
    plan = roofline.plan("llama-3.2-1b", "zen5-2vcpu-r3", precision="q4_0", concurrency=[4], seq_len=128,
                         output_len=64, instance_cores=2, cores=2, max_sequences=4, kv_dtype="fp16", stack="llama.cpp")
    (point,) = plan.cpus[0].users
    assert mine.rps == pytest.approx(point.tokens_per_s_per_server, rel=1e-9)
    lat = mine.latencies_s[0]
    assert (lat[FigureKind.TTFT, Statistic.MEAN], lat[FigureKind.TPOT, Statistic.MEAN]) == pytest.approx(
        (point.ttft_s, point.tpot_s), rel=1e-9)
    gate = gate_of(corpus_accuracy, "")
    assert gate.rows[CONCURRENCY_RUNS].figures == 26
