"""A stack's measured attention kernels ([[attention_kernels]]): which one runs a step, what it costs against the
ceiling, that the llama.cpp profile holds its committed measurement, and that a prompt at a depth is priced near
the guest's own run of it."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from roofline.validation.llamacpp_attention import (
    HEAD_DIMS,
    LAYERS,
    PROMPT,
    ceiling_ops,
    config,
    kernel_factors,
    summarise,
)

from roofline.catalog import load_model, load_platform
from roofline.catalog.records import load_records
from roofline.catalog.stacks import load_stack
from roofline.model.efficiency import attention_kernel_factors
from roofline.spec.stack import AttentionKernel, attention_kernel
from roofline.spec.vocab import AttentionForm, Phase

ROOT = Path(__file__).resolve().parents[1]
RESULT = ROOT / "validation" / "results" / "zen5-2vcpu-r3-llamacpp-attention.json"
UNFUSED = ROOT / "validation" / "results" / "zen5-2vcpu-r3-llamacpp-attention-unfused.json"
VECTOR = AttentionKernel(name="vector", factor=18.0)
TILED = AttentionKernel(name="tiled", factor=4.6, min_queries=64, since="2026-01-22")


def test_out_of_range_kernels_are_refused():
    for bad in (0.5, float("nan"), float("inf"), 1e300, -3.0):
        with pytest.raises(ValueError, match="attention_kernels.factor"):
            AttentionKernel(name="k", factor=bad)
    with pytest.raises(ValueError, match="attention_kernels.min_queries"):
        AttentionKernel(name="k", factor=2.0, min_queries=0)
    with pytest.raises(ValueError, match="attention_kernels.since"):
        AttentionKernel(name="k", factor=2.0, since="January 2026")


def test_the_kernel_that_runs_a_step():
    kernels = (VECTOR, TILED)
    assert attention_kernel(kernels, 1, None) is VECTOR  # a decode step: one query per sequence
    assert attention_kernel(kernels, 512, None) is TILED  # a prompt, today's build
    assert attention_kernel(kernels, 512, "2026-01-22") is TILED
    assert attention_kernel(kernels, 512, "2025-06-01") is VECTOR  # a build before pull request #19012
    assert attention_kernel(kernels, 63, None) is VECTOR  # fewer queries than a tile
    assert attention_kernel((TILED,), 1, None) is None


def test_the_factors_follow_the_step():
    stack = dataclasses.replace(load_stack("llama.cpp"), attention_kernels=(VECTOR, TILED))
    llama = load_model("llama-3.2-1b")
    fused = AttentionForm.FUSED
    f, name = attention_kernel_factors(stack, llama, Phase.DECODE, 512, fused)
    assert float(f) == 18.0 and name == "vector"
    f, name = attention_kernel_factors(stack, llama, Phase.PREFILL, np.array([32.0, 512.0]), fused)
    assert list(f) == [18.0, 4.6] and name == "vector, tiled"
    f, _ = attention_kernel_factors(stack, llama, Phase.PREFILL, 512, fused, date="2025-01-10")
    assert float(f) == 18.0
    # not priced so: attention unfused, a latent-attention model, a profile without kernels
    for args in ((stack, llama, Phase.PREFILL, 512, AttentionForm.UNFUSED),
                 (stack, load_model("deepseek-v2-lite"), Phase.DECODE, 1, fused),
                 (dataclasses.replace(stack, attention_kernels=()), llama, Phase.DECODE, 1, fused),
                 (None, llama, Phase.DECODE, 1, fused)):
        f, name = attention_kernel_factors(*args)
        assert np.isnan(f).all() and name == ""


def _step(context: int, phase: str):
    from roofline.model.build import LayoutSpec, StepOptions, build_steps
    from roofline.model.efficiency import EfficiencySource
    from roofline.model.workload import make_workload

    stack = load_stack("llama.cpp")
    work = make_workload(load_model("llama-3.2-1b"), phase, 1, 512, context=context)
    steps = build_steps(load_platform("zen5-2vcpu-r3"), work, ["q8_0"], layout=LayoutSpec(sockets=1, cores=2),
                        source=EfficiencySource(stack=stack), options=StepOptions(kv_dtype="fp16"))
    return stack, steps.steps[0]


@pytest.mark.parametrize(("phase", "kernel"), [("prefill", "tiled"), ("decode", "vector")])
def test_attention_is_the_kernel_times_its_arithmetic_by_hand(phase, kernel):
    """sum over the attention ops of max(k x compute at the ceiling, KV reads at the pass memory efficiency)."""
    stack, built = _step(2048, phase)
    k = next(a.factor for a in stack.attention_kernels if a.name == kernel)
    p = built.parts
    assert p.att_kernel is not None and float(p.att_kernel[0]) == k and p.att_kernel_name == kernel
    eta = stack.pass_memory_efficiency.value if stack.pass_memory_efficiency else 1.0
    want = np.maximum(k * p.att_compute_s[0], p.att_memory_s[0] / eta).sum()
    assert float(built.times.attention_s[0]) == pytest.approx(want, rel=1e-12)
    assert float(built.times.attention_s[0]) > k * 0.99 * float(p.att_compute_s[0].sum())


@given(st.floats(1e-10, 1e-7), st.floats(1e-4, 1e-2), st.floats(1e9, 1e13))
def test_the_summary_recovers_a_line_by_hand(per_key_s, base_s, peak):
    """Rows whose seconds grow by ``per_key_s`` a cached key give ops per score = per_key_s / scores x peak."""
    depths = (0, 1024, 2048, 4096)
    rows, ceilings = [], {}
    for dh in HEAD_DIMS:
        for d in depths:
            rows.append({"model_filename": f"attn-d{dh}-q8_0.gguf", "n_gen": 32, "n_prompt": 0, "n_depth": d,
                         "avg_ts": 1.0 / (base_s + per_key_s * d), "stddev_ts": 0.0})
            rows.append({"model_filename": f"attn-d{dh}-q8_0.gguf", "n_gen": 0, "n_prompt": PROMPT, "n_depth": d,
                         "avg_ts": PROMPT / (base_s + PROMPT * per_key_s * d), "stddev_ts": 0.0})
            for phase in ("decode", "prefill"):
                ceilings[(dh, phase, d)] = base_s / 10
    got = summarise(rows, ceilings, peak)
    for dh in HEAD_DIMS:
        heads = config(dh)["num_attention_heads"]
        decode, prefill = got[f"decode-d{dh}"], got[f"prefill-d{dh}"]
        assert decode["ops_per_score"] == pytest.approx(per_key_s / (LAYERS * heads) * peak, rel=1e-6)
        assert prefill["ops_per_score"] == pytest.approx(per_key_s / (LAYERS * heads) * peak, rel=1e-6)
    factors = kernel_factors(got)["decode"]
    each = [per_key_s / (LAYERS * config(dh)["num_attention_heads"]) * peak / ceiling_ops(dh) for dh in HEAD_DIMS]
    assert factors["factor"] == pytest.approx(math.sqrt(each[0] * each[1]), rel=1e-6)


def _recomputed(d: dict) -> dict:
    """a committed run's kernel factors, summarised again from its llama-bench rows and its ceilings"""
    ceilings = {(int(k.split("-d")[1]), v["phase"], p["depth"]): p["ceiling_s"]
                for k, v in d["kernels"].items() for p in v["points"]}
    return kernel_factors(summarise(d["bench"], ceilings, d["fp32_peak_ops_per_s"]))


def test_llama_cpp_holds_its_committed_measurement():
    """The profile's kernels are the committed run's factors (three rounds on the Zen 5 guest, flash attention on)."""
    d = json.loads(RESULT.read_text())
    assert d["cpu"] == "zen5-2vcpu-r3" and d["build_commit"] == "0c1e570" and d["rounds"] >= 3
    assert all("-fa on" in c for c in d["commands"])
    again = _recomputed(d)
    held = {k.name: k for k in load_stack("llama.cpp").attention_kernels}
    assert held["vector"].factor == pytest.approx(again["decode"]["factor"], rel=0.01)
    assert held["tiled"].factor == pytest.approx(again["prefill"]["factor"], rel=0.01)
    assert (held["vector"].min_queries, held["tiled"].min_queries, held["tiled"].since) == (1, 64, "2026-01-22")


@given(st.floats(1.0, 50.0), st.floats(1.0, 500.0))
def test_the_split_recovers_products_and_per_score_work(f, g):
    """Ops per score built as ``f 4 d + g s`` over three head sizes give back ``f`` and ``g`` (least squares, exact
    here), and the per-head factors over the ceiling's ``4 d + s``."""
    s = ceiling_ops(0)
    dims = (64, 128, 256)
    kernels = {f"{ph}-d{dh}": {"ops_per_score": f * 4 * dh + g * s} for ph in ("decode", "prefill") for dh in dims}
    got = kernel_factors(kernels)["decode"]
    assert got["split"]["matmul_factor"] == pytest.approx(f, rel=1e-6)
    assert got["split"]["softmax_factor"] == pytest.approx(g, rel=1e-6)
    assert got["split"]["residual"] < 1e-9
    assert got["per_head_dim"]["128"] == pytest.approx((f * 512 + g * s) / ceiling_ops(128), rel=1e-9)


def test_the_split_holds_the_products_at_the_peak():
    """Products that would come out faster than the FP32 peak (``f < 1``) are held at 1, the rest per score their
    mean: ops 600, 700 and 1,200 at heads of 64, 128 and 256 give ``g s = (344 + 188 + 176) / 3``."""
    kernels = {f"{ph}-d{dh}": {"ops_per_score": ops} for ph in ("decode", "prefill")
               for dh, ops in ((64, 600.0), (128, 700.0), (256, 1200.0))}
    got = kernel_factors(kernels)["prefill"]["split"]
    assert got["matmul_factor"] == 1.0
    assert got["softmax_factor"] * ceiling_ops(0) == pytest.approx((344 + 188 + 176) / 3, rel=1e-12)


def test_the_unfused_run_recomputes_from_its_rows():
    """The committed run of the unfused graph (flash attention off, heads of 64, 128 and 256, the Zen 5 guest): its
    factors are what its rows give, and its cost per score falls with the head, as the flash kernels' does not."""
    d = json.loads(UNFUSED.read_text())
    assert d["cpu"] == "zen5-2vcpu-r3" and d["flash_attention"] is False and d["rounds"] >= 3
    assert all("-fa off" in c for c in d["commands"])
    again = _recomputed(d)
    for phase in ("decode", "prefill"):
        assert again[phase]["factor"] == pytest.approx(d["factors"][phase]["factor"], rel=1e-9)
        assert again[phase]["split"] == pytest.approx(d["factors"][phase]["split"], rel=1e-9)
        each = again[phase]["per_head_dim"]
        assert each["64"] > each["128"] > each["256"]


def test_a_prompt_at_a_depth_is_priced_near_the_guests_run():
    """Llama-3.2-1B in Q8_0 with flash attention on the Zen 5 guest: pp512 139.1 and, after 2,048 tokens, 97.1
    tokens/s (the committed record); the realistic estimate is within 10% of both (the fitted attention efficiency
    of before, 0.08, had put the second at 63, -35%)."""
    import roofline

    rec = next(r for r in load_records() if r.id == "zen5-2vcpu-r3-llamacpp-batched-q8_0-fa-2026-12-07")
    for name, context in (("pp512", 0), ("pp512 @ d2048", 2048)):
        measured = next(m.value for m in rec.measurements if m.name == name)
        r = roofline.estimate(model="llama-3.2-1b", cpu="zen5-2vcpu-r3", precision="q8_0", phase="prefill",
                              seq_len=512, context=context, sockets=1, cores=2, kv_dtype="fp16",
                              quantize_lm_head=True, stack="llama.cpp")
        predicted = 512 / r.precisions["q8_0"].realistic_step_time_s
        assert predicted == pytest.approx(measured, rel=0.10), name
