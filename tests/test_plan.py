"""Capacity plans under load: service tables from the realistic model, the offline and
server scenarios against hand-derived answers, decoders and their KV cap, the CLI contract, the chart."""

from __future__ import annotations

import dataclasses
import json
import math
import xml.etree.ElementTree as ET

import jsonschema
import numpy as np
import pytest
from clitools import run_cli, run_json
from estimates import estimate

from roofline.calc import queueing_closed as qc
from roofline.capacity import PlanOptions, layouts, plan
from roofline.capacity import encoder as plan_dynamic_batching
from roofline.capacity.service_times import StepPoint, StepTimes, batch_sizes, packed, step_times, token_grid
from roofline.catalog import load_model, load_platform
from roofline.catalog.stacks import load_stack
from roofline.errors import UserError
from roofline.model.efficiency import NO_EFFICIENCIES, EfficiencySource
from roofline.model.layout import make_layout
from roofline.model.recipes import cell_recipes, precision_recipe
from roofline.model.resources import Resources
from roofline.model.step import evaluate_step
from roofline.model.workload import make_workload
from roofline.results.estimate import ErrorBand
from roofline.schema import schema_path
from roofline.serving.request_lengths import fixed_lengths, lognormal_lengths
from roofline.serving.sampling import Sampling
from roofline.spec.vocab import Scenario

pytestmark = pytest.mark.slow  # the file takes seconds: out of the fast stage (pytest -m "not slow")

STACK = load_stack("torch-inductor")
WITH_STACK = EfficiencySource(STACK)
QUICK = Sampling(requests=1000, warmup=300, replications=6)


def test_layouts():
    assert layouts(32) == [1, 2, 4, 8, 16, 32]
    assert layouts(56) == [1, 2, 4, 8, 16, 32, 56]
    assert layouts(1) == [1]


# ------------------------------------------------------------------ the grids of the service tables


@pytest.mark.parametrize("top", [1, 5, 16, 17, 100, 4096])
def test_batch_sizes_hold_every_small_batch_and_the_largest(top):
    b = batch_sizes(top)
    assert list(b[:16]) == list(range(1, min(top, 16) + 1))
    assert b[-1] == top and np.all(np.diff(b) >= 1)
    assert np.all(b[1:] / b[:-1] <= 1.25 + 1e-9 + 1 / b[:-1])  # at most 25% apart (rounding: one more)


@pytest.mark.parametrize("tokens, mean, longest", [(1, 128.0, 512), (100, 128.0, 512), (2048, 128.0, 512),
                                                   (700, 400.0, 512), (513, 128.3, 513)])
def test_packed_batches_cover_the_tokens_with_requests_no_longer_than_the_longest(tokens, mean, longest):
    b, s = packed(tokens, mean, longest)
    assert b >= 1 and 1 <= s <= longest
    assert tokens <= b * s < tokens + b  # ceil: at most one token more per request


def test_token_grid_spans_the_batches_exactly_at_its_points():
    steps = token_grid(16, 2048, 256.0, 1024)
    tokens = [b * s for b, s in steps]
    assert tokens == sorted(set(tokens)) and tokens[0] == 16 and tokens[-1] >= 2048
    assert (1, 256) in steps and (8, 256) in steps  # the mean length alone and full batches of it


# ------------------------------------------------------------------ the service tables


def test_a_layouts_point_of_the_vectorised_step_is_the_scalar_step():
    p, m = load_platform("spr"), load_model("bert-large")
    recipe = precision_recipe("int8-static", m)
    work = make_workload(m, "forward", 3, 256, None)
    gemms, lm = work.gemms()
    cells = cell_recipes(recipe, gemms, lm, model=m)
    sizes = np.array(layouts(56), dtype=float)
    kw = dict(ops=work.ops(), non_gemm_mode=recipe.non_gemm_mode, set_count=work.weight_set_counts(gemms))
    every = evaluate_step(Resources(p, make_layout(p, instance_cores=sizes, socket_busy=True)), cells, gemms, **kw)
    for i, c in enumerate(sizes):
        one = evaluate_step(Resources(p, make_layout(p, instance_cores=float(c), socket_busy=True)), cells, gemms, **kw)
        at = every.at(i)
        assert float(at.step_time) == pytest.approx(float(one.step_time), rel=1e-12)
        np.testing.assert_allclose(at.gemm.t_memory, one.gemm.t_memory, rtol=1e-12)
        assert int(at.weight_level) == int(one.weight_level) and float(at.l2_capacity) == float(one.l2_capacity)


@pytest.mark.parametrize("cpu", ["icx", "spr", "gnr", "genoa"])
def test_service_time_of_a_socket_filling_layout_is_the_estimates_instance_latency(cpu):
    """Where the instances fill the socket the busy-socket clock is the estimate's own: one instance's
    service time is the estimate's instance latency, realistic and ceiling, for any batch."""
    p, m = load_platform(cpu), load_model("bert-base")
    t = step_times(p, m, "int8-static", "forward", [StepPoint(1, 128), StepPoint(4, 128)], source=WITH_STACK)
    cores = int(p.cores_per_socket.value)
    for i, c in enumerate(t.instance_cores):
        if cores % c:
            continue
        for g, b in enumerate((1, 4)):
            pr = estimate(p, m, precisions=["int8-static"], baseline="int8-static", batch=b, seq_len=128,
                          instance_cores=int(c), stack=STACK).precisions["int8-static"]
            assert t.ceiling_s[i, g] == pytest.approx(pr.instance_latency_s, rel=1e-9)
            assert t.realistic_s[i, g] == pytest.approx(pr.realistic_instance_latency_s, rel=1e-9)


def test_a_calibration_gives_the_service_times_estimate_gives_with_it():
    """A measured host's calibration replaces the stack profile in the service times as it does in estimate
    (its platform: the probe it was fitted on); the plan names it, and refuses it on another CPU unless
    --calibration-any-platform, which the plan then says."""
    from clitools import REPO

    from roofline.catalog import load_calibration

    probe = str(REPO / "validation" / "results" / "zen4-2vcpu-probe.toml")
    p, m, cal = load_platform(probe), load_model("bert-base"), load_calibration("zen4-2vcpu")
    t = step_times(p, m, "int8-static", "forward", [StepPoint(1, 128), StepPoint(4, 128)],
                   source=EfficiencySource(STACK, cal, "zen4-2vcpu"))
    assert t.stack is None
    for i, c in enumerate(t.instance_cores):
        for g, b in enumerate((1, 4)):
            pr = estimate(p, m, precisions=["int8-static"], baseline="int8-static", batch=b, seq_len=128,
                          instance_cores=int(c), stack=STACK, calibration=cal).precisions["int8-static"]
            assert t.realistic_s[i, g] == pytest.approx(pr.realistic_instance_latency_s, rel=1e-9)
    plain = step_times(p, m, "int8-static", "forward", [StepPoint(1, 128)], source=WITH_STACK)
    assert not np.allclose(plain.realistic_s[:, 0], t.realistic_s[:, 0])
    data = run_json("plan", "--model", "bert-base", "--cpu", probe, "--calibration", "zen4-2vcpu", "--seq-len", "128")
    assert data["calibration"] == "zen4-2vcpu" and data["stack"] is None
    assert any("calibration zen4-2vcpu" in n for n in data["notes"])
    other = run_cli("plan", "--model", "bert-base", "--cpu", "icx", "--calibration", "zen4-2vcpu", "--json")
    assert other.returncode == 2 and "--calibration-any-platform" in other.stderr and "Traceback" not in other.stderr
    anyway = run_json("plan", "--model", "bert-base", "--cpu", "icx", "--calibration", "zen4-2vcpu",
                      "--calibration-any-platform")
    assert anyway["calibration"] == "zen4-2vcpu" and any("icx" in n and "host" in n for n in anyway["notes"])


@pytest.mark.parametrize("model, precision, phase", [("bert-large", "int8-static", "forward"),
                                                      ("bert-base", "fp32", "forward"),
                                                      ("llama-3.2-1b", "int8-weight-only", "decode")])
def test_realistic_service_time_is_never_below_the_ceiling(model, precision, phase):
    m = load_model(model)
    points = [StepPoint(b, 1, 600) for b in (1, 8, 64)] if phase == "decode" else [StepPoint(b, 128) for b in (1, 8)]
    for cpu in ("icx", "gnr", "turin"):
        t = step_times(load_platform(cpu), m, precision, phase, points, source=WITH_STACK)
        assert np.all(t.realistic_s >= t.ceiling_s * (1 - 1e-12))
        none = step_times(load_platform(cpu), m, precision, phase, points)
        assert np.all(none.realistic_s >= none.ceiling_s * (1 - 1e-12)) and np.all(none.realistic_s <= t.realistic_s)


# ------------------------------------------------------------------ hand-built service tables


def fake_step_times(base_s: float, per_request_s: float, cores: int = 4):
    """step_times with a hand-made instance time ``(base + per_request b) x C0 / C`` (ceiling: half),
    instances of C cores on one socket of ``cores`` cores."""
    def fake(platform, model, precision, phase, points, **kw):
        sizes = np.array(layouts(cores), dtype=float)
        b = np.array([p.batch for p in points], dtype=float)
        real = (base_s + per_request_s * b)[None, :] / sizes[:, None]
        split = np.zeros(real.shape + (4,))
        split[..., 0] = real / 2
        source = kw.get("source")
        return StepTimes(instance_cores=sizes, instances_per_socket=np.floor(cores / sizes), sockets=1,
                         realistic_s=real, ceiling_s=real / 2, time_split=split, weights_llc_resident=False,
                         stack=None, error_band=None if source is None or source.band is None else
                         ErrorBand("fake", source.band, 0, 0))
    return fake


def test_offline_plan_is_the_closed_form(monkeypatch):
    """Batches of b requests take ``(a + k b) / C`` on an instance of C cores, N = 4 / C instances:
    every instance always busy on full batches (B = 2048 // 256 = 8) serves ``N B C / (a + k B)`` = 4 B /
    (a + k B) per second whatever the layout, so they all tie and the smallest instance is chosen."""
    monkeypatch.setattr(plan_dynamic_batching, "step_times", fake_step_times(0.04, 0.01))
    r = plan([load_platform("icx")], load_model("bert-base"), "int8-static",
             PlanOptions(lengths=fixed_lengths(256), target_rps=1000, prices=[2.0], sampling=QUICK))
    c = r.cpus[0]
    want = 4 * 8 / (0.04 + 0.01 * 8)
    for x in c.layouts:
        assert x.rps_per_server == pytest.approx(want, rel=1e-12)
        assert x.rps_per_server_ceiling == pytest.approx(2 * want, rel=1e-12)
        assert x.batch_requests == 8 and x.batch_tokens == 8 * 256
        assert x.service_time_s == pytest.approx(0.05 / x.instance_cores)
    assert c.best.instance_cores == 1 and "tie" in c.best_reason
    assert c.servers_needed == math.ceil(1000 / want)
    assert c.cost_per_million_requests == pytest.approx(2.0 / (want * 3600) * 1e6)
    assert c.ceiling.rps_per_server == pytest.approx(2 * want)
    loads = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95)
    assert [p.offered_rps for p in c.curve] == pytest.approx([f * want for f in loads])


def test_server_plan_of_one_instance_is_md1(monkeypatch):
    """One instance serving one request at a time (batches of one: --max-batch-tokens = the length) in
    10 ms: an M/D/1 queue. The highest rate whose p99 latency (wait + 10 ms) meets 50 ms solves
    ``W_0.99(lam) = 40 ms``; the plan's answer lies within its search step and noise of it."""
    monkeypatch.setattr(plan_dynamic_batching, "step_times", fake_step_times(0.0, 0.010, cores=1))
    d, slo = 0.010, 0.050
    lo, hi = 1.0, 1 / d
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if qc.md1_wait_quantile(0.99, mid, d) + d <= slo else (lo, mid)
    exact = 0.5 * (lo + hi)
    r = plan([load_platform("icx")], load_model("bert-base"), "int8-static",
             PlanOptions(lengths=fixed_lengths(256), max_batch_tokens=256, p99_s=slo, cores=1,
                         sampling=Sampling()))
    b = r.cpus[0].best
    assert b.instances_per_server == 1 and b.batch_requests == pytest.approx(1.0)
    assert b.rps_per_server == pytest.approx(exact, rel=0.06)
    assert b.p99_s <= slo and b.p99_ci_s[0] <= b.p99_s <= b.p99_ci_s[1]
    assert b.offline_rps_per_server == pytest.approx(1 / d)
    # the ceiling (5 ms): the same queue twice as fast, so twice the rate
    assert b.rps_per_server_ceiling > 1.8 * b.rps_per_server


def test_server_check_of_one_instance_is_md1(monkeypatch):
    """What an MLPerf Server run is checked against, one layout: one instance serving one request at a time in
    10 ms is an M/D/1 queue, whose sojourn quantiles are the wait's (closed form) plus 10 ms, at each of two
    rates simulated in one call; its offline capacity is 1 / d (its rate under the SLO: the test above)."""
    monkeypatch.setattr(plan_dynamic_batching, "step_times", fake_step_times(0.0, 0.010, cores=1))
    d = 0.010
    o = PlanOptions(lengths=fixed_lengths(256), max_batch_tokens=256, p99_s=0.05, cores=1, instance_cores=1,
                    sampling=Sampling(requests=6_000, warmup=1_000))
    got = plan_dynamic_batching.server_check(load_platform("icx"), load_model("bert-base"), "int8-static", o, 1,
                                             [30.0, 60.0])
    for lam, (p50, p99) in zip((30.0, 60.0), got.latencies_s):
        assert p50 == pytest.approx(float(qc.md1_wait_quantile(0.5, lam, d)) + d, rel=0.03, abs=1e-9)
        assert p99 == pytest.approx(float(qc.md1_wait_quantile(0.99, lam, d)) + d, rel=0.04)
    # at 30/s most requests find the instance idle: the median is the service time alone; at 60/s they wait
    assert got.latencies_s[0][0] == pytest.approx(d, abs=1e-9) and got.latencies_s[1][0] > d + 1e-4
    assert got.offline_rps == pytest.approx(1 / d) and 0 < got.rps < 1 / d
    with pytest.raises(UserError, match="instance_cores"):
        plan_dynamic_batching.server_check(load_platform("icx"), load_model("bert-base"), "int8-static",
                                           dataclasses.replace(o, instance_cores=None), 1, [30.0])


def test_server_check_is_the_plans_own_answer():
    """The check of one layout gives the plan's numbers for that layout, to the last digit (the same tables, the
    same common random numbers), on a real model and stack."""
    p, m = load_platform("spr"), load_model("bert-base")
    o = PlanOptions(lengths=lognormal_lengths(150, 0.5, 16, 384), p99_s=0.05, source=WITH_STACK,
                    sampling=QUICK, instance_cores=4)
    cpu = plan([p], m, "int8-static", o).cpus[0]
    lay = cpu.layouts[0]
    got = plan_dynamic_batching.server_check(p, m, "int8-static", o, 4)
    assert (got.rps, got.offline_rps) == (lay.rps_per_server, lay.offline_rps_per_server) and got.latencies_s == []
    # the plan simulated its layouts' band ends beside them, at the band of the class its GEMMs run on (Sapphire
    # Rapids' INT8: AMX); the check asked for them gives the same two rates
    assert cpu.path_class == "int8-amx" and cpu.service_band == STACK.accuracy.class_band("int8-amx")[0]
    band = plan_dynamic_batching.server_checks([plan_dynamic_batching.ServerCase(p, m, "int8-static", o, 4,
                                                                                 band=cpu.service_band)])[0]
    assert band.rps == got.rps and list(band.rps_band) == lay.rps_per_server_band


def test_a_batch_watermark_closes_the_plans_batches():
    """--batch-watermark-tokens W: every batch closes at the first request that brings it to W tokens, never past
    the cap (Intel's BERT harness: -w 1300 -u 1560). The check of a layout is the plan's answer at it to the last
    digit; a watermark at the cap changes nothing; offline, where every batch is full, a batch holds the watermark
    plus less than one request."""
    p, m = load_platform("spr"), load_model("bert-base")

    def run(p99_s=0.05, **batching):
        o = PlanOptions(lengths=lognormal_lengths(150, 0.5, 16, 384), p99_s=p99_s, source=WITH_STACK, sampling=QUICK,
                        instance_cores=4, max_batch_tokens=2048, **batching)
        return o, plan([p], m, "int8-static", o)

    o, closed = run(batch_watermark_tokens=600)
    lay = closed.cpus[0].layouts[0]
    assert closed.batch_watermark_tokens == 600 and closed.max_batch_tokens == 2048
    got = plan_dynamic_batching.server_check(p, m, "int8-static", o, 4)
    assert (got.rps, got.offline_rps) == (lay.rps_per_server, lay.offline_rps_per_server)
    _, cap = run()
    at_cap = run(batch_watermark_tokens=2048)[1]
    assert at_cap.cpus[0].layouts[0].rps_per_server == cap.cpus[0].layouts[0].rps_per_server
    assert cap.batch_watermark_tokens is None
    # offline, closed at 600 tokens: a batch holds 600 to 600 + 383 (the longest request less one); at the cap,
    # more than 2,048 - 384
    closed_off, cap_off = run(None, batch_watermark_tokens=600)[1], run(None)[1]
    assert 600 <= closed_off.cpus[0].layouts[0].batch_tokens <= 600 + 383 < 2048 - 384
    assert 2048 - 384 < cap_off.cpus[0].layouts[0].batch_tokens <= 2048
    data = run_json("plan", "--model", "bert-base", "--cpu", "spr", "--p99-ms", "50", "--instance-cores", "4",
                    "--seq-len-mean", "150", "--batch-watermark-tokens", "600", "--seed", "0")
    assert data["batch_watermark_tokens"] == 600 and data["max_batch_tokens"] == 2048
    text = run_cli("plan", "--model", "bert-base", "--cpu", "spr", "--instance-cores", "4", "--seq-len-mean", "150",
                   "--batch-watermark-tokens", "600")
    assert text.returncode == 0 and "batches of up to 2,048 tokens, closed at 600" in text.stdout
    for flags, word in ((["--batch-watermark-tokens", "4096"], "--max-batch-tokens"),
                        (["--batch-watermark-tokens", "0"], "--batch-watermark-tokens"),
                        (["--batch-watermark-tokens", "nan"], "--batch-watermark-tokens")):
        bad = run_cli("plan", "--model", "bert-base", "--cpu", "spr", *flags)
        assert bad.returncode == 2 and word in bad.stderr and len(bad.stderr.strip().splitlines()) == 1, bad.stderr
    dec = run_cli("plan", "--model", "llama-3.1-8b", "--cpu", "spr", "--batch-watermark-tokens", "300")
    assert dec.returncode == 2 and "prefill" in dec.stderr


def test_a_stacks_harness_batching_is_the_plans_unless_told_otherwise(tmp_path):
    """A stack profile whose Server records state their harness's batching carries it (intel-mlperf: 1,560 tokens
    at most, closed at 1,300); a plan with that profile batches so, says so and names the profile as the input's
    source, unless given --max-batch-tokens or --batch-watermark-tokens; other profiles keep the default."""
    from roofline.catalog.records import load_records
    from roofline.fidelity.fit import harness_batching

    intel = load_stack("intel-mlperf")
    assert (intel.max_batch_tokens.value, intel.batch_watermark_tokens.value) == (1560, 1300)
    assert STACK.max_batch_tokens is None  # torch-inductor: no Server records
    servers = [r for r in load_records(None) if r.record.stack == "intel-mlperf" and r.record.scenario == "server"
               and r.record.max_batch_tokens is not None]
    assert harness_batching(servers)[0].value == 1560 and harness_batching([]) is None
    odd = dataclasses.replace(servers[0], record=dataclasses.replace(servers[0].record, batch_watermark_tokens=1000))
    assert harness_batching([*servers, odd]) is None  # records that disagree state no one batching
    base = ["plan", "--model", "bert-large", "--cpu", "spr", "--precision", "int8-full", "--seq-len-mean", "172",
            "--instance-cores", "8"]
    own = run_json(*base, "--stack", "intel-mlperf")
    batching = ("max_batch_tokens", "batch_watermark_tokens", "batching_from")
    assert tuple(own[k] for k in batching) == (1560, 1300, "intel-mlperf")
    assert any("batching of the intel-mlperf profile's serving harness" in n for n in own["notes"])
    told = run_json(*base, "--stack", "intel-mlperf", "--max-batch-tokens", "2048")
    assert tuple(told[k] for k in batching) == (2048, None, None)
    assert not any("serving harness" in n for n in told["notes"])
    mark = run_json(*base, "--stack", "intel-mlperf", "--batch-watermark-tokens", "1000")
    assert tuple(mark[k] for k in batching) == (2048, 1000, None)
    other = run_json(*base, "--stack", "torch-inductor")
    assert tuple(other[k] for k in batching) == (2048, None, None)
    page = tmp_path / "plan.html"
    assert run_cli(*base, "--stack", "intel-mlperf", "--html", str(page)).returncode == 0
    assert "intel-mlperf stack profile" in page.read_text()


@pytest.mark.parametrize("edit, word", [
    ("max_batch_tokens = { value = 1560.0", "max_batch_tokens = { value = 1560.5"),
    ("max_batch_tokens = { value = 1560.0", "max_batch_tokens = { value = 0.0"),
    ("batch_watermark_tokens = { value = 1300.0", "batch_watermark_tokens = { value = 2000.0"),
])
def test_a_bad_harness_batching_in_a_profile_is_refused_in_one_line(tmp_path, edit, word):
    from roofline.catalog.stacks import stack_path

    text = stack_path("intel-mlperf").read_text()
    assert edit in text
    bad = tmp_path / "stack.toml"
    bad.write_text(text.replace(edit, word))
    proc = run_cli("plan", "--model", "bert-large", "--cpu", "spr", "--stack", str(bad))
    assert proc.returncode == 2 and "batch" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_a_server_plans_rate_band_is_the_plan_at_the_bands_service_times(monkeypatch):
    """With a stack profile's error band b, the best layout's rate band is its rate with every realistic service
    time (1 + b) times longer and shorter: the rate of a plan whose service times are so, the rate itself between
    them; the servers a load needs at its two ends; nothing offline, nor without a band."""
    b = STACK.accuracy.band
    icx, bert = load_platform("icx"), load_model("bert-base")

    def run(d: float, scenario=Scenario.SERVER, source=WITH_STACK):
        monkeypatch.setattr(plan_dynamic_batching, "step_times", fake_step_times(0.0, d, cores=2))
        return plan([icx], bert, "int8-static", PlanOptions(
            lengths=fixed_lengths(256), max_batch_tokens=1024, p99_s=0.05 if scenario is Scenario.SERVER else None,
            scenario=scenario, cores=2, source=source, target_rps=1000, sampling=QUICK))

    r = run(0.010)
    assert r.service_band == b > 0
    best = r.cpus[0].best
    slower, faster = best.rps_per_server_band
    assert 0 < slower < best.rps_per_server < faster and best in r.cpus[0].layouts
    assert all(x.rps_per_server_band is None for x in r.cpus[0].layouts if x is not best)  # the best layout's alone
    assert best.rps_per_server == run(0.010, source=NO_EFFICIENCIES).cpus[0].best.rps_per_server
    longer = next(x for x in run(0.010 * (1 + b)).cpus[0].layouts if x.instance_cores == best.instance_cores)
    shorter = next(x for x in run(0.010 / (1 + b)).cpus[0].layouts if x.instance_cores == best.instance_cores)
    assert best.rps_per_server_band == pytest.approx([longer.rps_per_server, shorter.rps_per_server], rel=1e-6)
    lo, hi = best.rps_per_server_band
    assert r.cpus[0].servers_needed_band == [math.ceil(1000 / hi), math.ceil(1000 / lo)]
    off = run(0.010, Scenario.OFFLINE)
    assert off.service_band is None and off.cpus[0].best.rps_per_server_band is None
    assert off.cpus[0].servers_needed_band is None
    bare = run(0.010, source=NO_EFFICIENCIES)
    assert bare.service_band is None and bare.cpus[0].best.rps_per_server_band is None


# ------------------------------------------------------------------ real models, both scenarios


@pytest.fixture(scope="module")
def two_scenarios():
    ps, m = [load_platform("icx"), load_platform("gnr")], load_model("bert-base")
    kw = dict(lengths=fixed_lengths(128), source=WITH_STACK, sampling=QUICK)
    return (plan(ps, m, "int8-static", PlanOptions(**kw)),
            plan(ps, m, "int8-static", PlanOptions(p99_s=0.05, **kw)))


def test_offline_is_at_least_the_server_rate_for_every_layout(two_scenarios):
    offline, server = two_scenarios
    assert offline.scenario == "offline" and server.scenario == "server"
    for co, cs in zip(offline.cpus, server.cpus):
        for xo, xs in zip(co.layouts, cs.layouts):
            assert xo.instance_cores == xs.instance_cores
            assert xo.rps_per_server >= xs.rps_per_server
            assert xo.rps_per_server == pytest.approx(xs.offline_rps_per_server, rel=1e-12)


def test_the_realistic_plan_never_beats_the_ceiling_plan(two_scenarios):
    for r in two_scenarios:
        for c in r.cpus:
            for x in c.layouts:
                assert x.service_time_s >= x.service_time_ceiling_s
                assert x.offline_rps_per_server <= x.offline_rps_per_server_ceiling
                # the server search brackets each rate within 1% of its own capacity
                assert x.rps_per_server <= x.rps_per_server_ceiling + 0.01 * x.offline_rps_per_server_ceiling
            assert c.best.rps_per_server <= c.ceiling.rps_per_server * (1 + 0.01)


def test_server_rates_meet_the_slo_and_the_curve_rises(two_scenarios):
    _, server = two_scenarios
    for c in server.cpus:
        assert c.meets and c.best.p99_s <= 0.05 and c.best.meets_latency
        for x in c.layouts:
            if x.rps_per_server > 0:
                assert x.p99_s <= 0.05 and x.bare_p99_s <= 0.05
            else:
                assert x.p99_s is None
        p99 = [p.p99_s for p in c.curve]
        assert p99[-1] > p99[0] and c.curve[-1].utilization > c.curve[0].utilization
        assert any(p.offered_rps == pytest.approx(c.best.rps_per_server) for p in c.curve)


def test_an_slo_below_every_service_time_meets_nothing():
    r = plan([load_platform("icx")], load_model("bert-large"), "int8-static",
             PlanOptions(lengths=fixed_lengths(256), p99_s=0.001, target_rps=100, prices=[1.0], source=WITH_STACK,
                         sampling=QUICK))
    c = r.cpus[0]
    fastest = min(c.layouts, key=lambda x: x.bare_p99_s)
    assert not c.meets and c.best == fastest and c.best.rps_per_server == 0
    assert c.servers_needed is None and c.cost_per_million_requests is None
    assert "no layout meets p99 1 ms" in c.best_reason and f"{fastest.bare_p99_s * 1e3:.3g} ms" in c.best_reason
    assert all(x.meets_latency is False for x in c.layouts)


def test_unequal_lengths_plan():
    r = plan([load_platform("spr")], load_model("bert-base"), "int8-static",
             PlanOptions(lengths=lognormal_lengths(128, 0.5, 1, 512), p99_s=0.2, source=WITH_STACK, sampling=QUICK))
    b = r.cpus[0].best
    assert r.lengths.kind == "lognormal" and r.lengths.mean == pytest.approx(128)
    assert b.rps_per_server > 0 and b.p99_s <= 0.2
    assert 128 * 0.5 < b.batch_tokens / b.batch_requests < 128 * 2  # tokens per request about the mean


# ------------------------------------------------------------------ decoders


def test_decoder_kv_cap_is_the_dram_left_after_the_weights():
    """K per instance = floor((D - W) / (N e T)): D the DRAM per socket, W one copy of the weights
    (footprint), N instances per socket, e the KV bytes per token, T = prompt + output."""
    from roofline.model.footprint import footprint

    m, p = load_model("llama-3.2-1b"), load_platform("spr")
    gb = 40.0  # per server, 2 sockets
    r = plan([p], m, "int8-weight-only", PlanOptions(lengths=fixed_lengths(512), output_len=128, memory_gb=gb,
                                                     max_sequences=4096, sampling=QUICK))
    w = footprint(m, "int8-weight-only").total_bytes
    e = 2 * m.num_hidden_layers * m.kv_heads * m.head_size * 2  # bf16 cache (int8-weight-only keeps BF16 activations)
    c = r.cpus[0]
    assert c.memory.weight_bytes == w and c.memory.kv_bytes_per_token == e
    for x in c.layouts:
        k = math.floor((gb * 1e9 / 2 - w) / (x.instances_per_socket * e * 640))
        assert x.kv_capacity_sequences == max(k, 0)
        assert x.max_concurrent_sequences == min(max(k, 0), 4096)
    capped = plan([p], m, "int8-weight-only", PlanOptions(lengths=fixed_lengths(512), output_len=128, memory_gb=gb,
                                                          max_sequences=8, sampling=QUICK))
    assert all(x.max_concurrent_sequences == min(8, x.kv_capacity_sequences) for x in capped.cpus[0].layouts)
    tiny = plan([p], m, "int8-weight-only", PlanOptions(lengths=fixed_lengths(512), output_len=128, memory_gb=2.0,
                                                        sampling=QUICK))
    t = tiny.cpus[0]
    assert not t.meets and all(x.max_concurrent_sequences == 0 and x.rps_per_server == 0 for x in t.layouts)
    assert "KV cache" in t.best_reason


@pytest.fixture(scope="module")
def decoder_plans():
    ps, m = [load_platform("spr"), load_platform("gnr")], load_model("llama-3.2-1b")
    kw = dict(lengths=fixed_lengths(256), output_len=32, source=WITH_STACK, sampling=QUICK)
    return (plan(ps, m, "int8-weight-only", PlanOptions(**kw)),
            plan(ps, m, "int8-weight-only", PlanOptions(ttft_s=2.0, tpot_s=0.1, **kw)))


def test_decoder_offline_and_server(decoder_plans):
    offline, server = decoder_plans
    assert offline.phase == server.phase == "decode" and server.scenario == "server"
    for co, cs in zip(offline.cpus, server.cpus):
        assert cs.meets
        b = cs.best
        assert b.ttft_p99_s <= 2.0 and b.tpot_p99_s <= 0.1
        assert b.tokens_per_s_per_server == pytest.approx(32 * b.rps_per_server, rel=0.05)
        for xo, xs in zip(co.layouts, cs.layouts):
            assert xo.rps_per_server >= xs.rps_per_server
            assert xo.tokens_per_s_per_server <= xo.tokens_per_s_per_server_ceiling * (1 + 1e-9)
            assert xo.service_time_s >= xo.service_time_ceiling_s
        assert cs.curve and all(p.ttft_p99_s is not None and p.p99_s is None for p in cs.curve)


def test_a_decoder_server_plans_rate_band_is_the_plan_at_the_bands_step_times(monkeypatch, decoder_plans):
    """A decoder's server plan with a stack's band b gives its best layout's rate with every realistic prefill and
    decode step (1 + b) times longer and shorter: the rate of the same layout in a plan whose step times are so;
    the offline plan gives none."""
    from roofline.capacity import decoder
    from roofline.capacity import service_times as st

    offline, server = decoder_plans
    assert server.service_band == STACK.accuracy.band and offline.service_band is None
    assert all(x.rps_per_server_band is None for c in offline.cpus for x in c.layouts)
    # each CPU's band: the profile's, or its figures on the class the CPU's steps run on where that is wider
    band = {c.cpu: c.service_band for c in server.cpus}
    assert all(band[c.cpu] == STACK.accuracy.class_band(c.path_class)[0] for c in server.cpus)
    for c in server.cpus:
        slower, faster = c.best.rps_per_server_band
        assert 0 < slower < c.best.rps_per_server < faster
        assert all(x.rps_per_server_band is None for x in c.layouts if x is not c.best)

    def scaled(longer: bool):
        def step_times(platform, *args, **kw):
            t = st.step_times(platform, *args, **kw)
            k = 1 + band[platform.name]
            return dataclasses.replace(t, realistic_s=t.realistic_s * (k if longer else 1 / k))
        return step_times

    ps, m = [load_platform("spr"), load_platform("gnr")], load_model("llama-3.2-1b")
    kw = dict(lengths=fixed_lengths(256), output_len=32, source=NO_EFFICIENCIES, sampling=QUICK, ttft_s=2.0,
              tpot_s=0.1)
    ends = []
    for longer in (True, False):
        monkeypatch.setattr(decoder, "step_times", scaled(longer))
        ends.append(plan(ps, m, "int8-weight-only", dataclasses.replace(PlanOptions(**kw), source=WITH_STACK)))
    for c, longer, shorter in zip(server.cpus, *(r.cpus for r in ends)):
        i = c.layouts.index(c.best)
        assert c.best.rps_per_server_band == pytest.approx([longer.layouts[i].rps_per_server,
                                                            shorter.layouts[i].rps_per_server], rel=1e-9)


def test_decoder_needs_its_memory():
    p = load_platform("spr")
    import dataclasses

    from roofline.spec.sourced import Sourced

    bare = dataclasses.replace(p, dram=dataclasses.replace(p.dram, capacity_gb=Sourced(unknown="not given")))
    with pytest.raises(UserError, match="dram.capacity_gb.*--memory-gb"):
        plan([bare], load_model("llama-3.2-1b"), "int8-weight-only", PlanOptions(lengths=fixed_lengths(128)))


@pytest.mark.parametrize("opts, match", [
    (dict(p99_s=0.1), "--p99-ms: a decoder's SLOs"),
    (dict(scenario="server"), "--scenario server: give"),
    (dict(scenario="offline", ttft_s=1.0), "--scenario offline has no latency bound"),
    (dict(lengths=fixed_lengths(131000), output_len=128), "positions"),
])
def test_decoder_combinations_refused(opts, match):
    kw = dict(lengths=fixed_lengths(128)) | opts
    with pytest.raises(UserError, match=match):
        plan([load_platform("spr")], load_model("llama-3.2-1b"), "int8-weight-only", PlanOptions(**kw))


@pytest.mark.parametrize("opts, match", [
    (dict(ttft_s=1.0), "--ttft-ms applies to decoder serving"),
    (dict(phase="decode"), "encoder; its only phase is forward"),
    (dict(scenario="server"), "give the latency SLO"),
    (dict(p99_s=0.1, scenario="offline"), "no latency bound"),
    (dict(lengths=fixed_lengths(1), max_batch_tokens=100_000), "at most 4,096 requests"),
    (dict(lengths=fixed_lengths(1000)), "512 positions"),
    (dict(prices=[1.0, 2.0]), "one per CPU"),
    (dict(utilization=0.0), "--utilization"),
    (dict(target_rps=float("nan")), "--target-rps"),
    (dict(p99_s=-1.0), "--p99-ms"),
])
def test_encoder_combinations_refused(opts, match):
    kw = dict(lengths=fixed_lengths(128)) | opts
    with pytest.raises(UserError, match=match):
        plan([load_platform("icx")], load_model("bert-base"), "int8-static", PlanOptions(**kw))


# ------------------------------------------------------------------ the command line


def test_plan_cli_json_contract_and_schema():
    data = run_json("plan", "--model", "bert-base", "--cpu", "icx,gnr", "--p99-ms", "50", "--target-rps", "20000",
                    "--price-per-hour", "1.2,3.9")
    jsonschema.validate(data, json.loads(schema_path("plan").read_text()))
    assert data["schema_version"] == 2 and data["scenario"] == "server" and data["stack"] == "torch-inductor"
    assert data["simulation"]["seed"] == 0 and "95%" in data["simulation"]["confidence"]
    for c in data["cpus"]:
        b = c["best"]
        for key in ("scenario", "instance_cores", "instances_per_socket", "rps_per_server", "p99_s", "service_time_s",
                    "service_time_ceiling_s", "batch_tokens", "rps_per_server_ceiling", "p99_ci_s"):
            assert b[key] is not None, key
        assert c["servers_needed"] == math.ceil(20000 / b["rps_per_server"])
        assert c["cost_per_million_requests"] > 0
        assert all({"offered_rps", "p50_s", "p99_s", "utilization"} <= set(p) for p in c["curve"])
    dec = run_json("plan", "--model", "llama-3.2-1b", "--cpu", "gnr", "--precision", "int8-weight-only",
                   "--prompt-len", "256", "--output-len", "32", "--ttft-ms", "2000", "--tpot-ms", "100",
                   "--target-rps", "100")
    jsonschema.validate(dec, json.loads(schema_path("plan").read_text()))
    b = dec["cpus"][0]["best"]
    for key in ("tokens_per_s_per_server", "ttft_p99_s", "tpot_p99_s", "max_concurrent_sequences"):
        assert b[key] is not None, key
    assert dec["cpus"][0]["servers_needed"] == math.ceil(100 / b["rps_per_server"])


def test_plan_cli_tables_and_the_no_layout_row():
    text = run_cli("plan", "--model", "bert-large", "--cpu", "gnr", "--target-rps", "20000", "--p99-ms", "100").stdout
    assert "Best layout per CPU" in text and "cores" in text and "p99" in text
    proc = run_cli("plan", "--model", "bert-large", "--cpu", "icx", "--p99-ms", "0.5", "--best-only")
    assert proc.returncode == 0, proc.stderr
    assert "none meets it; fastest" in proc.stdout and "no layout meets p99 0.5 ms" in proc.stdout
    bad = run_cli("plan", "--model", "bert-large", "--cpu", "icx,gnr", "--price-per-hour", "1.2")
    assert bad.returncode == 2 and "one per CPU" in bad.stderr


@pytest.mark.parametrize("args, words", [
    (["--target-rps", "0"], "out of range"),
    (["--target-rps", "-5"], "out of range"),
    (["--target-rps", "nan"], "not a finite number"),
    (["--p99-ms", "0"], "out of range"),
    (["--p99-ms", "nan"], "not a finite number"),
    (["--seq-len", "0"], "out of range"),
    (["--seq-len-mean", "-3"], "out of range"),
    (["--seq-len-mean", "nan"], "not a finite number"),
    (["--max-batch-tokens", "0"], "out of range"),
    (["--max-wait-ms", "-1"], "out of range"),
    (["--seq-len", "128", "--seq-len-mean", "100"], "give one way"),
    (["--seq-len-sigma", "0.5"], "give --seq-len-mean"),
    (["--seq-len-histogram", "/no/such/file"], "cannot read"),
    (["--plot", "chart.jpg"], ".svg or .png"),
])
def test_bad_encoder_input_is_one_line(args, words):
    proc = run_cli("plan", "--model", "bert-base", "--cpu", "icx", *args)
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1 and words in proc.stderr, proc.stderr


@pytest.mark.parametrize("args, words", [
    (["--ttft-ms", "0"], "out of range"),
    (["--tpot-ms", "-1"], "out of range"),
    (["--tpot-ms", "nan"], "not a finite number"),
    (["--output-len", "0"], "out of range"),
    (["--prompt-len", "-1"], "out of range"),
    (["--memory-gb", "0"], "out of range"),
    (["--max-sequences", "0"], "out of range"),
])
def test_bad_decoder_input_is_one_line(args, words):
    proc = run_cli("plan", "--model", "llama-3.2-1b", "--cpu", "spr", *args)
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1 and words in proc.stderr, proc.stderr


def test_length_histogram_file(tmp_path):
    good = tmp_path / "lengths.txt"
    good.write_text("# lengths seen\n64 10\n128, 30\n\n256\t10  # a comment\n64 0\n")
    data = run_json("plan", "--model", "bert-base", "--cpu", "icx", "--seq-len-histogram", str(good))
    assert data["lengths"]["kind"] == "histogram" and data["lengths"]["min"] == 64 and data["lengths"]["max"] == 256
    assert data["lengths"]["mean"] == pytest.approx((64 * 10 + 128 * 30 + 256 * 10) / 50)
    for text, words in [("64\n", "line 1"), ("64 1 2\n", "line 1"), ("64.5 1\n", "not a whole number"),
                        ("0 1\n", "not a whole number"), ("64 -1\n", "not a finite number >= 0"),
                        ("64 nan\n", "not a finite number"), ("# nothing\n", "holds no"),
                        ("64 0\n", "every weight is 0"),
                        ("1000 1\n", "positions"), ("64 1e308\n128 1e308\n", "add up")]:
        bad = tmp_path / "bad.txt"
        bad.write_text(text)
        proc = run_cli("plan", "--model", "bert-base", "--cpu", "icx", "--seq-len-histogram", str(bad))
        assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1 and words in proc.stderr, (text, proc.stderr)
    (tmp_path / "bin").write_bytes(b"\xff\xfe\x00")
    proc = run_cli("plan", "--model", "bert-base", "--cpu", "icx", "--seq-len-histogram", str(tmp_path / "bin"))
    assert proc.returncode == 2 and "not UTF-8" in proc.stderr


def test_plot_writes_a_chart(tmp_path):
    pytest.importorskip("matplotlib")
    svg = tmp_path / "plan.svg"
    proc = run_cli("plan", "--model", "bert-base", "--cpu", "icx,gnr", "--p99-ms", "50", "--plot", str(svg))
    assert proc.returncode == 0, proc.stderr
    ids = {e.get("id") for e in ET.parse(svg).getroot().iter() if e.get("id")}
    assert {"curve-icx", "curve-gnr"} <= ids
    assert f"wrote {svg}" in proc.stdout
    png = tmp_path / "plan.png"
    proc = run_cli("plan", "--model", "llama-3.2-1b", "--cpu", "gnr", "--precision", "int8-weight-only",
                   "--prompt-len", "256", "--output-len", "32", "--ttft-ms", "2000", "--tpot-ms", "100",
                   "--plot", str(png), "--json", str(tmp_path / "plan.json"))
    assert proc.returncode == 0, proc.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    png.chmod(0o444)
    proc = run_cli("plan", "--model", "bert-base", "--cpu", "icx", "--plot", str(png))
    assert proc.returncode == 2 and "read-only" in proc.stderr
