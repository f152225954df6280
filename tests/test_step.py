"""The step evaluator and the realistic model: a hand derivation of the memory-level ceiling, the paper
model as a special case, and properties over the catalogs (hypothesis)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from estimates import estimate, evaluate
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st
from oracles import gemm_roofline

from roofline.calc.shapes import gemm_list
from roofline.catalog import all_models, all_platforms, load_model, load_platform
from roofline.model.layout import make_layout
from roofline.model.resources import Resources
from roofline.model.step import evaluate_step
from roofline.spec.platform import L2, ComputePath, Dram, Llc, Platform
from roofline.spec.precision import RECIPES, get_recipe
from roofline.spec.sourced import Sourced


def _v(x: float) -> Sourced:
    return Sourced(value=x, kind="assumed", source="test")


def toy(**kw) -> Platform:
    """1 socket of 4 cores; nominal 1 GHz, all-core turbo 2 GHz, single-core boost 3 GHz; FP32 32 ops/cycle;
    L2 1 MiB per core read at 32 B/cycle; LLC 8 MiB at 100 GB/s; DRAM 10 GB/s."""
    base = dict(
        name="toy", description="toy", vendor="test", microarchitecture="test", isa=("avx2",),
        sockets=_v(1), cores_per_socket=_v(4), frequency_ghz={"avx2": _v(1.0)},
        all_core_turbo_ghz={"avx2": _v(2.0)}, max_turbo_ghz={"avx2": _v(3.0)},
        compute={"fp32-avx2": ComputePath("fp32", "avx2", _v(32)), "int8-avx2": ComputePath("int8", "avx2", _v(64))},
        dram=Dram(measured_gb_per_s=_v(10.0)), llc=Llc(size_mib=_v(8), read_gb_per_s=_v(100.0)),
        l2=L2(size_kib=_v(1024), read_bytes_per_cycle=_v(32)),
    )
    return Platform(**{**base, **kw})


def test_memory_levels_by_hand():
    """One FP32 GEMM 64 x 256 x 256 on one instance of all 4 cores, at the bound (all busy: the 2 GHz
    all-core turbo). X + Y = 4 (64 x 256 + 64 x 256) = 128 KiB and W = 256 KiB both fit the instance's
    4 MiB of L2, read at 4 cores x 32 B x 2 GHz = 256 GB/s; the peak is 4 x 2 GHz x 32 = 256 Gops/s."""
    p = toy()
    res = Resources(p, make_layout(p, instance_cores=4), ceiling="bound")
    g = gemm_list([("g", 64, 256, 256, 1)])
    step = evaluate_step(res, [RECIPES["fp32"]], g)
    flops = 2 * 64 * 256 * 256
    assert step.gemm.t_compute[0] == pytest.approx(flops / 256e9)
    assert step.gemm.t_memory[0] == pytest.approx((128 + 256) * 1024 / 256e9)
    assert step.memory_levels["weights"] == "L2" and step.memory_levels["activations"] == "L2"
    # with 2 of the 4 cores used: the 3 GHz boost, half the L2 capacity and bandwidth of the cores
    res2 = Resources(p, make_layout(p, cores=2, instance_cores=2), ceiling="bound")
    step2 = evaluate_step(res2, [RECIPES["fp32"]], g)
    assert step2.gemm.t_compute[0] == pytest.approx(flops / (2 * 3e9 * 32))
    assert step2.gemm.t_memory[0] == pytest.approx((128 + 256) * 1024 / (2 * 32 * 3e9))
    # a weight set of 32 MiB fits neither L2 nor the 8 MiB LLC: DRAM (and binds); X + Y still from L2
    big = gemm_list([("g", 16, 4096, 2048, 1)])
    s3 = evaluate_step(res, [RECIPES["fp32"]], big)
    d_w, d_xy = 4 * 4096 * 2048, 4 * (16 * 2048 + 16 * 4096)
    assert s3.memory_levels["weights"] == "DRAM" and s3.memory_levels["activations"] == "L2"
    assert s3.gemm.t_memory[0] == pytest.approx(d_w / 10e9 + d_xy / 256e9)
    assert s3.gemm.bound[0] == 3  # DRAM
    # the attainable ceiling: all 4 cores busy run at the 1 GHz nominal clock (peak 128 Gops/s, L2 128 GB/s);
    # 2 busy cores a third of the way down from the 3 GHz boost to it, 3 - (3 - 1)(2 - 1)/(4 - 1) = 7/3 GHz (the
    # bound: the boost); DRAM is the measured 10 GB/s in both ceilings
    att = Resources(p, make_layout(p, instance_cores=4))
    s4 = evaluate_step(att, [RECIPES["fp32"]], g)
    assert s4.gemm.t_compute[0] == pytest.approx(flops / 128e9)
    assert s4.gemm.t_memory[0] == pytest.approx((128 + 256) * 1024 / 128e9)
    s5 = evaluate_step(Resources(p, make_layout(p, cores=2, instance_cores=2)), [RECIPES["fp32"]], g)
    assert s5.gemm.t_compute[0] == pytest.approx(flops / (2 * 7 / 3 * 1e9 * 32))
    assert s5.gemm.t_compute[0] > step2.gemm.t_compute[0]
    assert evaluate_step(att, [RECIPES["fp32"]], big).gemm.t_memory[0] == pytest.approx(d_w / 10e9 + d_xy / 128e9)


def test_the_attainable_dram_bandwidth_is_stream_class():
    """Without a measured figure the attainable ceiling takes the theoretical bandwidth times the sourced STREAM
    fraction (0.78), the bound the theoretical one; a measured figure is the attainable one."""
    from roofline.spec.ceiling_inputs import STREAM_FRACTION

    p = toy(dram=Dram(theoretical_gb_per_s=_v(20.0)))
    lay = make_layout(p, instance_cores=4)
    assert Resources(p, lay).b_dram == pytest.approx(20e9 * STREAM_FRACTION.value)
    assert Resources(p, lay, ceiling="bound").b_dram == pytest.approx(20e9)
    assert Resources(p, lay).used["stream_fraction"].source is STREAM_FRACTION
    both = toy(dram=Dram(theoretical_gb_per_s=_v(20.0), measured_gb_per_s=_v(15.0)))
    assert Resources(both, lay).b_dram == pytest.approx(15e9)
    assert Resources(both, lay, ceiling="bound").b_dram == pytest.approx(20e9)
    # an explicit choice of figures wins over the ceiling's own
    assert Resources(both, lay, bandwidth="theoretical").b_dram == pytest.approx(20e9)
    assert Resources(both, lay, "paper").b_dram == pytest.approx(15e9)


def test_paper_model_is_the_papers_formula():
    """In the paper model the step evaluator gives min(P, AI x B_eff) exactly (gnr, INT8 weights resident)."""
    p = load_platform("gnr")
    res = Resources(p, make_layout(p), "paper")
    g = gemm_list([("qkv", 256, 3072, 1024, 24), ("ffn_up", 256, 4096, 1024, 24)])
    r = get_recipe("int8-static")
    step = evaluate_step(res, [r, r], g)
    assert bool(step.fits_llc)
    w_meta = 4.0 * g.n  # per-channel FP32 scales
    x_meta = 4.0
    paper = gemm_roofline(g.m, g.n, g.k, 1, 1, 4, res.path("int8").peak, p.dram_bytes_per_s(2), p.llc_bytes_per_s(2),
                          True, x_meta=x_meta, w_meta=w_meta)
    assert np.allclose(step.gemm.time, paper.time, rtol=1e-12)
    assert np.allclose(step.gemm.bandwidth, paper.bandwidth, rtol=1e-12)


def test_clock_follows_the_busy_cores():
    p = load_platform("genoa")
    full = Resources(p, make_layout(p), ceiling="bound")
    few = Resources(p, make_layout(p, cores=2), ceiling="bound")
    paper = Resources(p, make_layout(p), "paper")
    assert full.clock("avx512") == 3.55e9 and few.clock("avx512") == 3.7e9 and paper.clock("avx512") == 3.55e9
    assert Resources(p, make_layout(p)).clock("avx512") == 3.55e9  # attainable: AMD's all-core boost, nominal
    # ICX publishes no all-core turbo: the single-core boost bounds every core count; the attainable ceiling
    # of a busy socket is the base clock, of fewer cores a clock sliding from the boost at one to it at all 32:
    # 8 busy, 3.4 - (3.4 - 2.6) x 7/31 GHz; 31 busy, one idle, 3.4 - 0.8 x 30/31, next to the base clock
    icx = load_platform("icx")
    assert Resources(icx, make_layout(icx), ceiling="bound").clock("avx512") == 3.4e9
    assert Resources(icx, make_layout(icx)).clock("avx512") == 2.6e9
    assert Resources(icx, make_layout(icx, cores=8)).clock("avx512") == pytest.approx((3.4 - 0.8 * 7 / 31) * 1e9)
    assert Resources(icx, make_layout(icx, cores=31)).clock("avx512") == pytest.approx((3.4 - 0.8 * 30 / 31) * 1e9)
    assert Resources(icx, make_layout(icx, cores=1)).clock("avx512") == 3.4e9
    assert Resources(icx, make_layout(icx, cores=8), ceiling="bound").clock("avx512") == 3.4e9
    assert Resources(icx, make_layout(icx), "paper").clock("avx512") == 2.6e9


@pytest.mark.parametrize("name", sorted(p.name for p in all_platforms() if not p.shared_host))
def test_the_attainable_clock_slides_down_with_the_busy_cores(name):
    """On every whole-machine platform and ISA class the attainable clock never rises as cores get busy, runs from
    the single-core boost at one core to the nominal all-core clock at all of them with no jump when the last
    core turns busy (a step of at most (f_1 - f_N)/(N - 1)), and never exceeds the bound's clock."""
    p = load_platform(name)
    n = int(p.cores_per_socket.value)
    busy = np.arange(1, n + 1)
    for isa in p.frequency_ghz:
        att = np.array([Resources(p, make_layout(p, cores=int(c), instance_cores=1)).clock(isa) for c in busy])
        bound = np.array([Resources(p, make_layout(p, cores=int(c), instance_cores=1), ceiling="bound").clock(isa)
                          for c in busy])
        f1 = max(p.max_turbo_ghz.get(isa, p.frequency_ghz[isa]).value, p.frequency_ghz[isa].value) * 1e9
        fn = p.frequency_ghz[isa].value * 1e9
        assert att[0] == pytest.approx(f1) and att[-1] == pytest.approx(fn)
        assert np.all(np.diff(att) <= 1e-3) and np.all(att <= bound * (1 + 1e-12))
        if n > 1:
            assert np.max(-np.diff(att)) <= (f1 - fn) / (n - 1) * (1 + 1e-9) + 1e-3


def test_a_guests_few_busy_cores_get_no_boost_in_the_attainable_ceiling():
    """A guest's idle vCPUs say nothing of the host's other cores: on a shared host 1 of the toy's 4 cores busy
    runs at the 1 GHz all-core clock in the attainable ceiling (3 GHz on a whole machine); the bound still
    allows the 3 GHz boost, and the whole socket busy is the same either way."""
    whole, guest = toy(), toy(shared_host="a KVM guest (test)")
    clock = lambda p, cores, ceiling="attainable": Resources(p, make_layout(p, cores=cores), ceiling=ceiling).clock("avx2")  # noqa: E731
    assert clock(whole, 1) == 3e9 and clock(guest, 1) == 1e9
    assert clock(guest, 1, "bound") == clock(whole, 1, "bound") == 3e9
    assert clock(guest, 4) == clock(whole, 4) == 1e9 and clock(guest, 4, "bound") == clock(whole, 4, "bound") == 2e9
    assert load_platform("emr-16vcpu").shared_host and not load_platform("emr").shared_host


def test_estimate_states_the_level_of_each_tensor_class():
    r = estimate(load_platform("gnr"), load_model("bert-large"), batch=4, seq_len=384)
    assert r.memory_model == "levels"
    for p in r.precisions.values():
        assert set(p.levels) == {"weights", "activations", "non_gemm", "kv_cache"}
        assert p.levels["activations"] in ("L2", "LLC", "DRAM") and p.levels["kv_cache"] == "none"
        assert all(set(g.levels) == {"weights", "activations"} for g in p.gemms)
    assert r.precisions["int8-static"].levels["weights"] == "LLC"  # 303 MB of INT8 weights fit 504 MiB
    assert r.precisions["fp32"].levels["weights"] == "DRAM"


# ----------------------------------------------------------------- properties over the catalogs

PLATFORMS = {p.name: p for p in all_platforms()}
MODELS = {m.name: m for m in all_models()}
ENCODERS = [n for n, m in MODELS.items() if m.family == "encoder"]


def _step_times(platform, model, precision, **kw) -> tuple[float, float]:
    ev = evaluate(platform, model, precisions=[precision], baseline=precision, **kw)
    e = ev.evaluated[0]
    return float(e.step.step_time), ev.realistic[0].realistic_s


workloads = st.fixed_dictionaries({
    "cpu": st.sampled_from(sorted(PLATFORMS)), "model": st.sampled_from(ENCODERS),
    "precision": st.sampled_from(["fp32", "bf16", "int8-dynamic", "int8-static", "int8-mixed-bf16"]),
    "batch": st.integers(1, 16), "seq_len": st.sampled_from([16, 64, 128, 256, 384, 512]),
    "cores_share": st.floats(0.01, 1.0),
})


def _cores(platform, share):
    return max(1, int(round(share * platform.cores_per_socket.value)))


@settings(max_examples=60, deadline=None)
@given(w=workloads)
def test_levels_ceiling_bounds_the_paper_ceiling(w):
    """Pricing tensors where they live, at the highest clock and the theoretical bandwidth (the bound), can only
    make a step faster than the paper model and than the attainable ceiling."""
    p, m = PLATFORMS[w["cpu"]], MODELS[w["model"]]
    kw = dict(batch=w["batch"], seq_len=w["seq_len"], cores=_cores(p, w["cores_share"]))
    levels, _ = _step_times(p, m, w["precision"], ceiling="bound", **kw)
    attainable, _ = _step_times(p, m, w["precision"], **kw)
    paper, _ = _step_times(p, m, w["precision"], memory_model="paper", **kw)
    assert levels <= paper * (1 + 1e-12) and levels <= attainable * (1 + 1e-12)


def _scaled(p: Platform, what: str, factor: float) -> Platform:
    f = lambda s: dataclasses.replace(s, value=s.value * factor) if s.known else s  # noqa: E731
    if what == "dram":
        return dataclasses.replace(p, dram=dataclasses.replace(p.dram, measured_gb_per_s=f(p.dram.measured_gb_per_s),
                                                             theoretical_gb_per_s=f(p.dram.theoretical_gb_per_s)))
    if what == "llc_bw":
        return dataclasses.replace(p, llc=dataclasses.replace(p.llc, read_gb_per_s=f(p.llc.read_gb_per_s)))
    if what == "llc_size":
        return dataclasses.replace(p, llc=dataclasses.replace(p.llc, size_mib=f(p.llc.size_mib)))
    if what == "l2_size":
        return dataclasses.replace(p, l2=dataclasses.replace(p.l2, size_kib=f(p.l2.size_kib)))
    return dataclasses.replace(p, l2=dataclasses.replace(p.l2, read_bytes_per_cycle=f(p.l2.read_bytes_per_cycle)))


@settings(max_examples=60, deadline=None)
@given(w=workloads, what=st.sampled_from(["dram", "llc_bw", "llc_size", "l2_size", "l2_bw"]),
       factor=st.floats(1.0, 64.0))
def test_times_are_monotone_in_every_bandwidth_and_capacity(w, what, factor):
    p, m = PLATFORMS[w["cpu"]], MODELS[w["model"]]
    kw = dict(batch=w["batch"], seq_len=w["seq_len"], cores=_cores(p, w["cores_share"]))
    try:
        faster = _scaled(p, what, factor)
    except ValueError:  # e.g. DRAM scaled past the LLC: not a physical platform
        assume(False)
    before, _ = _step_times(p, m, w["precision"], **kw)
    after, _ = _step_times(faster, m, w["precision"], **kw)
    assert after <= before * (1 + 1e-12)


@settings(max_examples=40, deadline=None)
@given(w=workloads)
def test_a_tensor_that_fits_a_level_is_never_priced_below_its_bandwidth(w):
    """Each GEMM's X and Y, when they fit one instance's L2 (or LLC share), cost at most their bytes over that
    level's bandwidth; the weights likewise for their level."""
    p, m = PLATFORMS[w["cpu"]], MODELS[w["model"]]
    ev = evaluate(p, m, precisions=[w["precision"]], baseline=w["precision"], batch=w["batch"], seq_len=w["seq_len"],
                  cores=_cores(p, w["cores_share"]))
    res, step = ev.res, ev.evaluated[0].step
    b_l2, b_llc, b_dram = (float(x) for x in res.bandwidths())
    g = step.gemm
    xy = g.d_x + g.d_y
    l2_cap, llc_cap = float(step.l2_capacity), float(step.llc_capacity)
    for j in range(len(xy)):
        bw = b_l2 if (l2_cap > 0 and xy[j] <= l2_cap) else b_llc if (llc_cap > 0 and xy[j] <= llc_cap) else b_dram
        w_bw = {0: b_l2, 1: b_llc, 2: b_dram}[int(step.weight_level)]
        assert g.t_memory[j] <= (xy[j] / bw + g.d_w[j] / w_bw) * (1 + 1e-12)
        assert bw >= b_dram and w_bw >= b_dram


CALIBRATION = None


def _calibration():
    global CALIBRATION
    if CALIBRATION is None:
        from roofline.catalog import load_calibration

        CALIBRATION = load_calibration("zen4-2vcpu")
    return CALIBRATION


@settings(max_examples=40, deadline=None)
@given(w=workloads, calibrated=st.booleans())
def test_realistic_never_beats_the_ceiling(w, calibrated):
    p, m = PLATFORMS[w["cpu"]], MODELS[w["model"]]
    kw = dict(batch=w["batch"], seq_len=w["seq_len"], cores=_cores(p, w["cores_share"]))
    ceiling, realistic = _step_times(p, m, w["precision"], calibration=_calibration() if calibrated else None,
                                     calibration_any_platform=True, **kw)
    assert realistic >= ceiling
    if not calibrated and w["precision"] in ("fp32", "bf16"):  # nothing fitted, and no term applies
        assert realistic == ceiling


def test_estimate_and_check_give_the_same_realistic_speedup():
    """Both go through the one realistic model: same model, CPU, precision, baseline, workload, calibration."""
    from clitools import REPO

    from roofline.catalog import load_calibration, load_platform_file
    from roofline.fidelity.check import check_typed
    from roofline.model.efficiency import EfficiencySource

    host = load_platform_file(str(REPO / "validation" / "results" / "zen4-2vcpu-probe.toml"))
    cal = load_calibration("zen4-2vcpu")
    for precision in ("int8-static", "int8-dynamic", "bf16"):
        est = estimate(host, load_model("bert-base"), precisions=[precision], baseline="fp32", calibration=cal)
        chk = check_typed(host, load_model("bert-base"), precision, "fp32", throughput_speedup=2.0,
                          source=EfficiencySource(calibration=cal))
        assert chk.comparisons[0].rows[0].realistic == pytest.approx(est.speedups[0].realistic, rel=5e-3)
        assert est.speedups[0].realistic != pytest.approx(est.speedups[0].end_to_end_ceiling, rel=1e-3)


@example(cpu="icx", model="llama-3.2-1b", precision="q4_k", batch=3, context=1, stack="llama.cpp")  # 12 vs 16 rows
@settings(max_examples=30, deadline=None)
@given(cpu=st.sampled_from(sorted(PLATFORMS)), model=st.sampled_from(["llama-3.2-1b", "qwen3-0.6b", "llama-3.1-8b"]),
       precision=st.sampled_from(["q4_0", "q4_k", "q8_0", "int4-weight-only", "int8-dynamic", "w4a8", "bf16"]),
       batch=st.integers(1, 15), context=st.sampled_from([1, 128, 2048]),
       stack=st.sampled_from(["torch-inductor", "llama.cpp"]))
def test_realistic_decode_step_never_shrinks_with_more_rows(cpu, model, precision, batch, context, stack):
    """One more sequence in the batch adds rows: the step cannot take less time. The stack's shape term
    slows the multiply-accumulates of a short GEMM, not its per-weight dequantization, and llama.cpp's one-row
    class (a GEMV kernel slower than its GEMM) floors the rows of two or more (a GEMM of one row priced slower
    than one of two rows would be this defect). llama.cpp's repacked types run a GEMV per row below 4 rows, and from
    4 a GEMM over 16 rows at a time, then 4 (repack.cpp: "anr = nr - nr%16"), cheaper per row over 16 (Ice Lake's
    Q4_K: 1.162 against 1.645 cycles), so 16 rows may take less than 12: its steps grow by whole groups of 16."""
    from roofline.catalog.stacks import load_stack

    kw = dict(phase="decode", context=context, stack=load_stack(stack))
    step = 16 if stack == "llama.cpp" else 1
    one = _step_times(PLATFORMS[cpu], load_model(model), precision, batch=batch * step, **kw)
    two = _step_times(PLATFORMS[cpu], load_model(model), precision, batch=(batch + 1) * step, **kw)
    assert two[0] >= one[0] * (1 - 1e-12)
    assert two[1] >= one[1] * (1 - 1e-9)


def test_int8_full_runs_the_mlp_activation_in_the_gemm_epilogue():
    """int8-full (Intel's MLPerf BERT: one ``linear_gelu`` kernel) keeps the GeLU's ops and moves no bytes
    for it; int8-static runs it as a pass of its own over the 1,376 x 4,096 intermediate."""
    ev = evaluate(load_platform("spr"), load_model("bert-large"), precisions=["int8-static", "int8-full"],
                  batch=8, seq_len=172, instance_cores=4)
    by = {e.recipe.name: e.step.ops for e in ev.evaluated}
    act = {name: ops.names.index("mlp_activation") for name, ops in by.items()}
    full, static = by["int8-full"], by["int8-static"]
    assert full.t_memory[..., act["int8-full"]] == 0 < static.t_memory[..., act["int8-static"]]
    assert full.t_compute[..., act["int8-full"]] == pytest.approx(static.t_compute[..., act["int8-static"]])
    assert full.t_compute[..., act["int8-full"]] > 0


def test_dispatch_is_paid_per_call_of_each_instance():
    """A step's times are one instance's call over the instances sharing the platform (amortised); dispatch is paid
    by each instance per call, so it counts ``(call + launches x per_op) / instances`` in the step, and one
    instance's call pays it whole: by hand, 1 ms per call and 10 us per GEMM launch, on 1-, 4- and 8-core
    instances of a 56-core socket x 2."""
    from roofline.model.realistic import Efficiency, realistic_times
    e = Efficiency(call_s=1e-3, per_op_s=1e-5, fitted=frozenset({"call_s"}))
    for cores in (1, 4, 8):
        ev = evaluate(load_platform("spr"), load_model("bert-large"), precisions=["int8-full"], batch=8,
                      seq_len=172, instance_cores=cores)
        parts = ev.evaluated[0].parts
        n = float(ev.res.layout.total_instances)
        assert n == 2 * (56 // cores) and float(parts.instances[0]) == n
        launches = float(parts.launches[0])
        assert launches == 24 * 4  # four linears in each of 24 layers
        t = realistic_times(parts, e.rows(parts))
        assert float(t.dispatch_s[0]) * n == pytest.approx(1e-3 + launches * 1e-5, rel=1e-12)


def test_attention_softmax_runs_on_the_vector_units_whatever_runs_the_products():
    """One layer, one head of d = 64 over q = k = 128 (not causal), on the toy at the bound (4 cores at the 2 GHz
    all-core turbo) with a BF16 matrix path of 512 ops/cycle: the products' 4 q k d flops run on that path, the
    softmax's 11 q k on the FP32 vector units (32 ops/cycle), in every mode; in FP32 both run on the vector units."""
    from roofline.calc import ops as op
    from roofline.model.step import evaluate_ops
    from roofline.spec.op_costs import cost
    from roofline.spec.vocab import NonGemmMode

    p = toy(compute={"fp32-avx2": ComputePath("fp32", "avx2", _v(32)), "int8-avx2": ComputePath("int8", "avx2", _v(64)),
                     "bf16-amx": ComputePath("bf16", "avx2", _v(512))})
    res = Resources(p, make_layout(p, instance_cores=4), ceiling="bound")
    q = k = 128
    att = op.attention(batch=1, q_len=q, k_len=k, heads=1, kv_heads=1, head_dim=64, layers=1, causal=False,
                       cached=False, softmax_ops=cost("softmax_ops_per_score"))
    assert cost("softmax_ops_per_score") == 11.0
    assert float(att.flops) == 4 * q * k * 64 and float(att.vector_flops) == 11 * q * k
    core_hz = 4 * 2e9
    bf16 = evaluate_ops(res, [att], NonGemmMode.AMP_BF16, None, res.llc_capacity(), ())
    assert float(bf16.t_compute[0]) == pytest.approx(4 * q * k * 64 / (core_hz * 512) + 11 * q * k / (core_hz * 32))
    fp32 = evaluate_ops(res, [att], NonGemmMode.FP32, None, res.llc_capacity(), ())
    assert float(fp32.t_compute[0]) == pytest.approx((4 * 64 + 11) * q * k / (core_hz * 32))


def test_a_pass_out_of_l2_runs_at_its_levels_bandwidth_share_not_at_l2s():
    """BERT-large FP32 on Ice Lake, 16 instances of 4 cores, 256 tokens: the GeLU's 4 MiB pass spills out of the
    instance's L2 while the norms and residual adds stay in it. Each whole pass at the other efficiency prices
    the GeLU at eta_other of its level's ceiling; with a pass memory efficiency, each pass takes
    ``max(t_c / eta_other, t_m / eta_pass)``, by hand from the ceiling's own per-pass times."""
    from roofline.model.realistic import Efficiency, realistic_times

    ev = evaluate(load_platform("icx"), load_model("bert-large"), precisions=["fp32"], batch=1, seq_len=256,
                  instance_cores=4)
    e = ev.evaluated[0]
    ops = e.step.ops
    gelu = ops.names.index("mlp_activation")
    levels = np.asarray(ops.act_level).reshape(-1, len(ops.names))[0]
    assert levels[gelu] > levels[ops.names.index("residual_add")]  # the GeLU's pass lies beyond L2, the adds' in it
    parts = e.parts
    whole = Efficiency(other=0.05)
    split = Efficiency(other=0.05, pass_memory=0.8)
    t_c, t_m = (np.asarray(t).reshape(-1, len(ops.names))[0] * ~ops.matmul for t in (ops.t_compute, ops.t_memory))
    got_whole = float(realistic_times(parts, whole.rows(parts)).other_s[0])
    got_split = float(realistic_times(parts, split.rows(parts)).other_s[0])
    assert got_whole == pytest.approx(float(np.maximum(t_c, t_m).sum()) / 0.05)
    assert got_split == pytest.approx(float(np.maximum(t_c / 0.05, t_m / 0.8).sum()))
    assert got_split < got_whole


@settings(max_examples=40, deadline=None)
@given(w=workloads)
def test_a_stack_profile_never_beats_the_ceiling_in_either_form_of_the_passes(w):
    """The shipped torch-inductor profile (its passes' memory time at the memory efficiency) and the same profile
    with each whole pass at the other efficiency: both realistic times are at least the attainable ceiling."""
    import dataclasses

    from roofline.catalog.stacks import load_stack

    shipped = load_stack("torch-inductor")
    assert shipped.pass_memory_efficiency is not None
    whole = dataclasses.replace(shipped, pass_memory_efficiency=None, quantization_efficiency=None)
    p, m = PLATFORMS[w["cpu"]], MODELS[w["model"]]
    kw = dict(batch=w["batch"], seq_len=w["seq_len"], cores=_cores(p, w["cores_share"]))
    for stack in (shipped, whole):
        ceiling, realistic = _step_times(p, m, w["precision"], stack=stack, **kw)
        assert realistic >= ceiling * (1 - 1e-12)


@settings(max_examples=60, deadline=None)
@given(many=st.floats(0.01, 1.0), one=st.floats(0.01, 1.0), w1=st.floats(1e3, 1e9), half=st.floats(0.0, 1e8),
       rows=st.lists(st.integers(1, 4096), min_size=2, max_size=6, unique=True))
def test_a_call_of_more_rows_never_computes_faster_than_one_row(many, one, w1, half, rows):
    """:func:`one_row_floor`: a call of one row runs at the one-row class's efficiency, with no shape term (a GEMV
    has no output tiles to fill); a call of ``M`` rows (work ``W = M w1`` per core) at the many-row class's shaped
    efficiency, floored so that its multiply-accumulates' time ``M / eta(M)`` never falls below one row's
    ``1 / eta(1)``; by hand, ``eta(1) = one``, ``eta(M) = min(shaped(many, M w1), M one)``, the time grows with M
    whichever class is faster, and the extra work runs at ``min(many, one)``."""
    from roofline.model.efficiency import one_row_floor, shaped

    m = np.array(sorted(rows), dtype=float)
    eta, shape, extra, gemv = one_row_floor(np.full(m.shape, many), np.full(m.shape, one), m, m * w1, half)
    s_many, s = shaped(np.full(m.shape, many), m * w1, half)
    expect = np.where(m <= 1, one, np.minimum(s_many, m * one))
    assert eta == pytest.approx(expect, rel=1e-12)
    assert shape == pytest.approx(np.where(m <= 1, 1.0, s), rel=1e-12)
    # the dequantization (the same weights at any M) never runs faster than in the one-row call
    assert extra == pytest.approx(np.where(m <= 1, one, min(many, one)), rel=1e-12)
    # a one-row call of the same shape runs at the one-row class's efficiency, whatever M (the bound t(M) <= M t(1))
    assert gemv == pytest.approx(np.full(m.shape, one), rel=1e-12)
    t = m / eta
    assert np.all(np.diff(t) >= -1e-9 * t[1:])
    assert np.all(t >= 1.0 / one * (1 - 1e-12))
    # no one-row value (NaN), or rows of unknown count (inf): the many-row class alone (one row: without its shape)
    alone, _, x, gemv = one_row_floor(np.full(m.shape, many), np.full(m.shape, np.nan), m, m * w1, half)
    assert alone == pytest.approx(np.where(m <= 1, many, s_many), rel=1e-12)
    assert x == pytest.approx(np.full(m.shape, many), rel=1e-12) and gemv == pytest.approx(x, rel=1e-12)
    inf, _, _, _ = one_row_floor(np.array([many]), np.array([one]), np.array([np.inf]), np.array([w1]), half)
    assert inf == pytest.approx(shaped(np.array([many]), np.array([w1]), half)[0], rel=1e-12)
