"""A decode step over a batch: what the kernels' cost structure makes of one more sequence.

A decode step streams each weight matrix once for all its sequences; what grows with the batch is the per-row work
(dot products, unpacking where the kernel redoes it per row) and the KV reads. So a step's time never falls as the
batch grows and never more than doubles when it doubles (subadditive, but for a working set that leaves a cache level
on the way), at the ceiling and in the realistic estimate, for every stack; and realistic >= attainable >= bound.
One exception is llama.cpp's own: a repacked type runs a GEMV per row below 4 rows and a GEMM of 4 rows from 4 on
(``forward_mul_mat_one_chunk`` in ggml-cpu/repack.cpp), so 3 sequences cost more than 4, and that GEMM takes 16 rows at a
time, then 4 ("anr = nr - nr%16"), so 16 sequences may cost less than 12; doubling a whole group of 4 never costs
less. And from 8 rows the other k-quants run the tiled matmul (``ggml-cpu/tiled`` at 0c1e570), which unpacks each tile
once: from 4 to 8 sequences a step may more than double where that unpacking outweighs the per-row dot products (q6_K
on an AVX2 core), so llama.cpp's batches are doubled from 8 on.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import roofline
from roofline.calc.kernel_cycles import call_cycles
from roofline.catalog.kernels import load_kernel_table
from roofline.spec.kernels import Kernel

CPUS = ("genoa", "spr", "zen5-2vcpu", "icx", "milan", "xeon-e5-2683v4", "gnr")
GGUF = ("q4_0", "q4_k_m", "q8_0", "q6_k", "q5_0", "q4_1", "iq4_xs")
TORCH = ("bf16", "int8-weight-only", "int4-weight-only")


@functools.lru_cache(maxsize=None)
def step(cpu: str, precision: str, batch: int, stack: str | None) -> tuple[float, float, float]:
    """(bound, attainable, realistic) seconds of one decode step of Llama-3.1-8B on one socket, one instance."""
    cores = int(roofline.catalog.load_platform(cpu).cores_per_socket.value)
    r = roofline.estimate("llama-3.1-8b", cpu, precision=precision, baseline=precision, phase="decode",
                          batch=batch, context=512, sockets=1, instance_cores=cores,
                          **({"stack": stack} if stack else {}))
    p = r.precisions[precision]
    return p.bound_step_time_s, p.step_time_s, p.realistic_step_time_s


cases = st.one_of(st.tuples(st.sampled_from(CPUS), st.sampled_from(GGUF), st.just(None)),
                  st.tuples(st.sampled_from(CPUS), st.sampled_from(("bf16", "f16")), st.just("llama.cpp")),
                  st.tuples(st.sampled_from(CPUS), st.sampled_from(TORCH), st.sampled_from(("torch-inductor", "openvino"))))


@settings(max_examples=30, deadline=None)
@given(cases, st.integers(0, 24))
@example(("milan", "int8-weight-only", "torch-inductor"), 0)  # a one-row call bound by its (emulated BF16) arithmetic
def test_decode_step_monotone_and_subadditive_in_the_batch(case, b):
    cpu, precision, stack = case
    # llama.cpp (a GGUF type's engine): one row, or whole groups of 8 rows, doubled (module docstring: 3 rows of a
    # repacked type run 3 GEMVs, 4 rows one GEMM); the others from one row on. A GEMV (one row) is its own kernel and
    # class; two rows never cost more than two GEMVs
    b = (1 if b == 0 else 8 * (1 + (b - 1) % 12)) if stack in (None, "llama.cpp") else b + 1  # 1, 8 to 96; 1 to 25
    one, two = step(cpu, precision, b, stack), step(cpu, precision, 2 * b, stack)
    for k in range(3):  # bound, attainable, realistic
        assert one[k] <= two[k] * (1 + 1e-9), (case, b, k, one, two)
        # activations or KV leaving a cache level may add a little more than double: 1% at most
        assert two[k] <= 2 * one[k] * 1.01, (case, b, k, one, two)


def test_three_sequences_of_a_repacked_type_cost_more_than_four():
    """q4_0 is repacked on every AVX2 CPU: 3 rows run 3 GEMVs, 4 rows one GEMM of 4 (the table's gemv and gemm4
    cycles, 2.73 and 1.157 per 32 weights per row on Zen 5), so on the 2-vCPU Zen 5 guest, where the step's
    arithmetic outweighs its weight stream, the step of 3 takes longer than that of 4; q8_0 (llamafile's tiles of
    up to 4 rows at 0c1e570, no repacking) is monotone there."""
    q40 = {b: step("zen5-2vcpu", "q4_0", b, None)[2] for b in (2, 3, 4)}
    assert q40[3] > q40[4] and q40[3] > q40[2]
    q80 = [step("zen5-2vcpu", "q8_0", b, None)[2] for b in (2, 3, 4)]
    assert q80 == sorted(q80)


@settings(max_examples=20, deadline=None)
@given(cases, st.integers(1, 48))
def test_realistic_above_attainable_above_bound(case, b):
    bound, attainable, realistic = step(*case[:2], b, case[2])
    assert bound <= attainable * (1 + 1e-9) and attainable <= realistic * (1 + 1e-9)


def test_one_more_user_costs_little_on_a_96_core_socket():
    """The issue's loop: Llama-3.1-8B Q4_K_M on one Genoa socket, 96 cores in one instance: a second user adds
    per-row work, not another pass over the weights (at most twice one user's step, and growing with the batch); and
    on the records of a 96-core Genoa (the AWS m7a runs of llama-batched-bench), the step from one sequence to two
    grows as measured, within 0.25 of the measured ratio."""
    times = {b: step("genoa", "q4_k_m", b, None)[2] for b in (1, 2, 8, 32)}
    assert times[2] <= 2 * times[1]
    assert times[1] < times[2] <= times[8] <= times[32]
    from roofline.catalog.records import load_records
    from roofline.catalog.stacks import load_stack
    from roofline.fidelity.accuracy import stack_figures
    from roofline.fidelity.fit import params_of, predict

    prof = load_stack("llama.cpp")
    q = params_of(prof)
    recs = [r for r in load_records() if r.id.startswith("llamacpp-batched-ampere-aws-m7a-")]
    assert len(recs) == 4
    for rec in recs:
        figs = {f.batch: f for f in stack_figures([rec], prof)[0] if f.label.startswith("S_TG")}
        measured = (2 / figs[2].measured) / (1 / figs[1].measured)
        model = (2 / predict(figs[2], q)) / (1 / predict(figs[1], q))
        assert abs(model - measured) < 0.25, (rec.id, measured, model)


@pytest.mark.parametrize("kernel", list(Kernel))
def test_call_cycles_by_hand(kernel):
    """The kernel families' cycles against their formulas (calc/kernel_cycles.py) on round entries."""
    c = {"vec_dot": 5.0, "gemv": 4.0, "gemm4": 2.0, "gemm16": 1.5, "sgemm1": 4.5, "sgemm2": 3.0, "sgemm3": 2.8,
         "sgemm4": 2.5, "tiled": 1.0, "tiled_unpack": 8.0}
    m = np.array([1, 2, 3, 4, 5, 7, 8, 17, 35])
    cycles, label = call_cycles(kernel, c, m)
    want = {Kernel.VEC_DOT: [5 * x for x in m],
            # below 4 rows a GEMV each; 17 = 16 + 1, 35 = 32 + 0 x 4 + 3
            Kernel.REPACK: [4, 8, 12, 8, 8 + 4, 8 + 12, 16, 24 + 4, 48 + 12],
            # one row: vec_dot; else tiles of 4, the rest one tile of r rows (r x its per-row cycles)
            Kernel.SGEMM: [5, 6, 3 * 2.8, 10, 10 + 4.5, 10 + 3 * 2.8, 20, 40 + 4.5, 80 + 3 * 2.8],
            # below 8 rows vec_dot; else the tile unpacked once, then microtiles of 16 rows: 8 -> 16, 17 -> 32, 35 -> 48
            Kernel.TILED: [5, 10, 15, 20, 25, 35, 8 + 16, 8 + 32, 8 + 48]}[kernel]
    np.testing.assert_allclose(cycles, want)
    assert label[0] in ("vec_dot", "gemv")


def test_every_platform_core_has_cycles_or_an_alias():
    """A catalog CPU whose core the llama.cpp table does not know would be priced from the ceiling alone."""
    table = load_kernel_table("llama.cpp")
    from roofline.catalog import all_platforms

    cores = {p.core for p in all_platforms()} - {""}
    assert {c for c in cores if table.core_cycles(c) is None} == set()


def test_f16_gguf_streams_two_bytes_a_weight_on_llama_cpp_s_fp32_path():
    """llama.cpp's F16 type: priced by the GGUF engine's profile (KV cache f16 by default), each weight two bytes, so
    at the ceiling a memory-bound decode step takes BF16's time; its multiply-accumulates run on the FP32 path."""
    r = roofline.estimate("llama-3.1-8b", "genoa", precision="f16,bf16", baseline="bf16", phase="decode", batch=1,
                          context=512, sockets=1, instance_cores=96)
    f16, bf16 = r.precisions["f16"], r.precisions["bf16"]
    assert f16.stack == "llama.cpp" and bf16.stack == "torch-inductor"
    assert f16.step_time_s == pytest.approx(bf16.step_time_s, rel=0.02)
    assert f16.compute_dtype == "fp32" and f16.compute_path.startswith("fp32")
    assert f16.weight_bytes == pytest.approx(bf16.weight_bytes)
    def f16_step(**kv):
        return roofline.estimate("llama-3.1-8b", "genoa", precision="f16", baseline="f16", phase="decode", batch=4,
                                 context=8192, sockets=1, instance_cores=96, **kv).precisions["f16"].step_time_s

    assert f16_step() == f16_step(kv_dtype="fp16") < f16_step(kv_dtype="fp32")


def test_a_shared_kv_buffer_scores_every_sequence_s_cells_by_hand():
    """A decode step of B = 4 sequences at depth 1,000 over one KV buffer (llama.cpp's unified cache): each query
    scores all 4,000 cells, so 4 times the scores and their flops, the keys and values still read once."""
    from roofline.calc.ops import attention

    kw = dict(batch=4, q_len=1, k_len=1000, heads=32, kv_heads=8, head_dim=128, layers=2, causal=False, cached=True,
              softmax_ops=5.0)
    own, shared = attention(**kw), attention(**kw, shared_kv=4)
    assert own.flops == 2 * 4.0 * 4 * 32 * 1 * 1000 * 128  # 4 B h q k d per layer
    assert shared.flops == 4 * own.flops and shared.vector_flops == 4 * own.vector_flops
    assert shared.kv_elements == own.kv_elements == 2 * 2.0 * 4 * 1000 * 8 * 128


def test_the_span_of_a_shared_buffer_by_hand():
    """``kv_span``: B with a prompt per sequence; with one shared prompt of P = 128 tokens and TG = 128 (mean own
    depth 64 past it), (128 + B x 64) / (128 + 64); a prefill of B prompts, (B + 1) / 2; none after the rule's date,
    at B = 1 or with flash attention."""
    import dataclasses

    from roofline.fidelity.figures import kv_span
    from roofline.spec.record import Measurement, Record, RecordPlatform
    from roofline.spec.stack import SharedKvRule
    from roofline.spec.vocab import AttentionForm

    rule = SharedKvRule(before="2025-07-09")
    m = Measurement(kind="tokens_per_s", precision="q4_0", value=10.0, phase="decode", batch=8, seq_len=128,
                    context=192)
    r = Record(description="d", source="s", stack="llama.cpp", platform=RecordPlatform(name="genoa"),
               model="llama-3.2-1b", date="2025-01-10", measurements=(m,))
    assert kv_span(r, m, rule) == 8.0
    assert kv_span(dataclasses.replace(r, shared_prompt=True), m, rule) == pytest.approx((128 + 8 * 64) / 192)
    assert kv_span(dataclasses.replace(r, date="2025-08-01"), m, rule) == 1.0
    assert kv_span(r, dataclasses.replace(m, batch=1), rule) == 1.0 and kv_span(r, m, None) == 1.0
    # flash attention skips the cells its mask hides: the other sequences' cost no scores
    assert kv_span(r, m, rule, AttentionForm.FUSED) == 1.0
    # B = 8 prompts prefilled one after another: the i-th sees i prompts' cells, (1 + ... + 8) / 8 = 4.5 on average
    prefill = dataclasses.replace(m, phase="prefill", context=0)
    assert kv_span(r, prefill, rule) == 4.5 == sum(range(1, 9)) / 8
    assert kv_span(r, dataclasses.replace(prefill, batch=1), rule) == 1.0
    assert SharedKvRule().holds(None) and not rule.holds(None)


def test_a_latency_is_one_instance_s_call_whatever_runs_on_the_other_socket():
    """A request's time (TTFT, TPOT) on one of two instances, one per socket (the SGLang blog's llama.cpp baseline on a
    2 x 128-core Xeon 6980P): a step's time is the platform's over its instances, one request's is one instance's call,
    so the figure is the same as on the socket alone, at the ceiling and with the fitted profile."""
    import dataclasses
    from pathlib import Path

    from roofline.catalog.records import load_record
    from roofline.catalog.stacks import load_stack
    from roofline.fidelity.accuracy import stack_figures
    from roofline.fidelity.fit import params_of, predict

    rec = load_record(Path("validation/records/corpus/llamacpp-baseline-xeon6980p-deepseek-r1-distill-llama-70b-int8.toml"))
    one = dataclasses.replace(rec, record=dataclasses.replace(
        rec.record, platform=dataclasses.replace(rec.record.platform, sockets=1)))
    prof = load_stack("llama.cpp")
    two_figs, one_figs = stack_figures([rec], prof)[0], stack_figures([one], prof)[0]
    assert [f.steps[0].parts.instances.max() for f in two_figs] == [2.0, 2.0]
    for two_f, one_f in zip(two_figs, one_figs):
        for q in (None, params_of(prof)):
            assert predict(two_f, q) == pytest.approx(predict(one_f, q), rel=1e-9)
