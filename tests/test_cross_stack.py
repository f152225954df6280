"""The cross-stack GEMM efficiencies a stack fitted on too few platforms takes for the classes it never fitted."""

from __future__ import annotations

import math

import pytest
from clitools import run_json

from roofline.catalog import builtin_dir
from roofline.catalog.stacks import load_stack
from roofline.fidelity.accuracy import Fitted, cross_stack
from roofline.fidelity.figures import figures
from roofline.fidelity.fit import Params
from roofline.model.efficiency import CROSS, Found, found_value, lookup, takes_cross
from roofline.spec.stack import MIN_PLATFORMS
from roofline.spec.vocab import Phase, ShapeForm

FORWARD = frozenset({Phase.FORWARD})


def test_a_class_takes_its_own_units_then_the_cross_stack_value_then_its_dtype():
    """The order of the fallbacks, by hand: the profile's classes on the same units, the cross-stack value, the
    profile's classes of the same dtype; an emulated class is 1 whatever the cross-stack table holds."""
    table = {"fp32-avx512": 0.64, "int8-amx": 0.9}
    cross = {"int8-avx512": 0.5, "int8-avx2": 0.4, "bf16-amx": 0.2, "bf16-emulated": 0.3}
    assert lookup(table, "int8-avx512", cross)[0] == 0.64  # fp32-avx512 runs on the same units
    assert lookup(table, "bf16-amx", cross)[0] == 0.9  # int8-amx runs on the same units
    value, how = lookup(table, "int8-avx2", cross)
    assert value == 0.4 and CROSS in how
    assert lookup(table, "int8-avx2")[0] == 0.9  # without the table: the mean of the int8 classes
    assert lookup(table, "fp32-avx2", cross)[0] == 0.64  # no cross-stack value: the fp32 classes
    assert lookup(table, "bf16-emulated", cross)[0] == 1.0
    assert lookup(table, "int8-amx", cross)[0] == 0.9  # a fitted class is its own
    # which fallback answered each, and so whether the class takes its cross-stack value
    want = {"int8-avx512": Found.SAME_ISA, "bf16-amx": Found.SAME_ISA, "int8-avx2": Found.CROSS_STACK,
            "fp32-avx2": Found.SAME_DTYPE, "bf16-emulated": Found.EMULATED, "int8-amx": Found.FITTED}
    assert {c: found_value(table, c, cross)[2] for c in want} == want
    assert [c for c in want if takes_cross(table, c, cross)] == ["int8-avx2"]


def test_the_cross_stack_value_is_the_geometric_mean_of_the_stacks_fitted_without_the_left_out_platform():
    """Each well-founded stack lends its profile refitted without the left-out platform (its full one where it has
    no figure there); a stack of other phases, a GGUF type's class and an emulated class lend nothing."""
    a = Fitted(Params(gemm={"int8-amx": 0.5, "bf16-emulated": 0.7}),
               {"spr": Params(gemm={"int8-amx": 0.2}), "gnr": Params(gemm={"int8-amx": 0.4})}, FORWARD)
    b = Fitted(Params(gemm={"int8-amx": 0.8, "fp32-avx2": 0.6}), {"zen4": Params(gemm={"int8-amx": 0.1})},
               FORWARD | {Phase.DECODE})
    c = Fitted(Params(gemm={"int8-amx": 0.99, "q4_0-avx2": 0.5}), {}, frozenset({Phase.DECODE}))
    founded = {"a": a, "b": b, "c": c}
    held_out = cross_stack(founded, "spr", FORWARD)
    assert held_out["int8-amx"].value == pytest.approx(math.sqrt(0.2 * 0.8), rel=1e-3)
    assert "a's 0.2" in held_out["int8-amx"].source and "b's 0.8" in held_out["int8-amx"].source
    assert cross_stack(founded, None, FORWARD)["int8-amx"].value == pytest.approx(math.sqrt(0.5 * 0.8), rel=1e-3)
    assert set(held_out) == {"int8-amx", "fp32-avx2"}
    assert cross_stack(founded, "zen4", frozenset({Phase.DECODE}))["int8-amx"].value == pytest.approx(
        math.sqrt(0.1 * 0.99), rel=1e-3)


def test_a_lender_lends_its_efficiency_at_the_gemms_it_measured(records):
    """By hand: a lender whose only figure is BERT-base's attn_out on the Zen 3 guest (256 x 768 x 768 on 2 cores:
    W = 75,497,472 multiply-accumulates per core, 1.4755 ms on one core at FP32 AVX2's peak) lends its 0.8 times
    its shape term there, W / (W + half): 0.4 with ``half = W`` in work or ``half = 1.4755 ms`` in time, and the 0.8
    itself without a shape term; the source says by how much."""
    (fig,) = [f for r in records if r.id.startswith("zen3-2vcpu-bert-base") for f in figures(r)
              if f.kind == "gemm" and f.precision == "fp32" and f.label.startswith("attn_out")]
    w = 256 * 768 * 768 / 2
    for shape, half in ((ShapeForm.WORK, w), (ShapeForm.TIME, 2 * w / (32 * 3.198e9))):
        lender = Fitted(Params(gemm={"fp32-avx2": 0.8}, work_half=half, shape=shape), {}, FORWARD, [fig])
        lent = cross_stack({"a": lender}, None, FORWARD)["fp32-avx2"]
        assert lent.value == pytest.approx(0.4, rel=1e-3) and "a's 0.8 x 0.5" in lent.source
        assert cross_stack({"a": lender}, "zen3-2vcpu", FORWARD)["fp32-avx2"].value == 0.8  # no figure left to lend at
    flat = Fitted(Params(gemm={"fp32-avx2": 0.8}, shape=ShapeForm.NONE), {}, FORWARD, [fig])
    assert cross_stack({"a": flat}, None, FORWARD)["fp32-avx2"].value == 0.8


def test_a_committed_small_profile_holds_the_well_founded_profiles_mean_for_the_units_it_never_ran(
        corpus_accuracy, records):
    """Every profile fitted on fewer than MIN_PLATFORMS CPUs stores, for each class on units none of its own
    classes run on, the geometric mean of that class over the committed profiles fitted on MIN_PLATFORMS or more
    CPUs with figures of its phases, each times its shape term at the median of its GEMMs of the class and its
    platform factors' geometric mean; a well-founded profile stores none."""
    from roofline.fidelity.accuracy import StackInputs, _fitted, score
    from roofline.fidelity.fit import params_of
    from roofline.spec.stack import typical_factor
    phases = {s.stack: set(s.per_phase or {}) for s in corpus_accuracy.stacks}
    profiles = [load_stack(str(p)) for p in sorted((builtin_dir("platforms") / "stacks").glob("*.toml"))]
    founded = [p for p in profiles if p.accuracy.platforms >= MIN_PLATFORMS]
    small = [p for p in profiles if p.accuracy.platforms < MIN_PLATFORMS]
    assert small and founded
    assert all(not p.cross_stack_gemm_efficiency for p in founded)
    typical = {}
    for f in founded:
        i = StackInputs.of([r for r in records if r.record.stack == f.name and r.record.excluded is None], f.name)
        figs = _fitted(score(i.figs, i.bound, None, None))
        typical[f.name] = Fitted(params_of(f), {}, frozenset(), figs).typical_shape(None)
    for p in small:
        units = {k.split("-", 1)[1] for k in p.gemm_efficiency}
        want = {}
        for f in founded:
            if phases[f.name] & phases[p.name]:
                for k, v in f.gemm_efficiency.items():
                    dtype, isa = k.split("-", 1)
                    if dtype in ("fp32", "bf16", "fp16", "int8") and isa != "emulated" and isa not in units:
                        factor = typical_factor({n: x.value for n, x in f.platform_factors.items()})
                        want.setdefault(k, []).append(min(v.value * typical[f.name].get(k, 1.0) * factor, 1.0))
        assert set(p.cross_stack_gemm_efficiency) == set(want), p.name
        for k, vs in want.items():
            mean = math.exp(sum(math.log(v) for v in vs) / len(vs))
            assert p.cross_stack_gemm_efficiency[k].value == pytest.approx(mean, rel=2e-3), (p.name, k)


def test_an_estimate_lists_the_cross_stack_value_it_took():
    """INC's IPEX profile was fitted on two Xeons (AVX-512, AMX): on the Zen 3 guest (AVX2 only) its FP32 and INT8
    GEMMs take the cross-stack values, which the estimate lists among its inputs with their sources; on Sapphire
    Rapids its own classes answer and none is listed."""
    zen3 = run_json("estimate", "--model", "bert-base", "--cpu", "zen3-2vcpu", "--stack", "inc-ipex",
                    "--precision", "fp32,int8-static")
    listed = {i["what"]: i for i in zen3["inputs"] if ".cross_stack_gemm_efficiency." in i["what"]}
    profile = load_stack("inc-ipex")
    assert set(listed) == {"inc-ipex.cross_stack_gemm_efficiency.fp32-avx2",
                           "inc-ipex.cross_stack_gemm_efficiency.int8-avx2"}
    for what, row in listed.items():
        v = profile.cross_stack_gemm_efficiency[what.rsplit(".", 1)[1]]
        assert float(row["value"]) == v.value and row["source"] == v.source
    spr = run_json("estimate", "--model", "bert-base", "--cpu", "spr", "--stack", "inc-ipex",
                   "--precision", "fp32,int8-static")
    assert not [i for i in spr["inputs"] if ".cross_stack_gemm_efficiency." in i["what"]]


@pytest.fixture(scope="module")
def records():
    from roofline.catalog.records import load_records

    return load_records()


def test_a_class_no_record_ran_on_quotes_no_band_of_its_stack():
    """intel-mlperf's records ran on AMX: an INT8 estimate on Ice Lake (AVX-512 VNNI) quotes no band (its profile
    holds no cross-stack one), and says so, rather than the stack's 5% measured on other classes."""
    import roofline
    from roofline.report.fmt import class_bands

    r = roofline.estimate("bert-large", "icx", precision="int8-full", stack="intel-mlperf")
    band = r.precisions["int8-full"].error_band
    assert band is not None and band.class_figures == 0 and band.realistic_error is None
    assert class_bands({"int8-full": band}, 0.05) == [f"int8-full on {band.path_class}: no record's figure ran on it, "
                                                      "no band"]
