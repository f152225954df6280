"""Modelling constants: the vector work each non-GEMM operation and each quantization step costs,
per element. None of them is a datasheet fact; each says where it comes from, and every estimate
that uses one lists it among its ``inputs``.

They shape the compute side of memory-bound work (norms, activations, quantization passes), so
they rarely decide a ceiling; they decide it when a kernel's extra vector work is what binds
(weight-only INT4 dequantization at small M).
"""

from __future__ import annotations

from roofline.spec.sourced import Sourced


def _assumed(value: float, why: str) -> Sourced:
    return Sourced(value=value, kind="assumed", source=why)


#: vector ops per element (or per weight, or per output) of each modelled step, and the bytes an unfused attention
#: moves per score
OP_COSTS: dict[str, Sourced] = {
    "layer_norm_ops_per_element": _assumed(
        8.0, "LayerNorm: mean (1 add), variance (subtract, multiply, add), normalise (subtract, multiply by the "
             "reciprocal root), affine (multiply, add): 8 ops per element"),
    "rms_norm_ops_per_element": _assumed(
        4.0, "RMSNorm: square and sum (2), multiply by the reciprocal root (1), scale (1): 4 ops per element"),
    "gelu_ops_per_element": _assumed(
        12.0, "GeLU (erf form, x/2 (1 + erf(x/sqrt 2))): a 9-op rational erf approximation plus scale, add and "
              "multiply: 12 ops per element"),
    "silu_gated_ops_per_element": _assumed(
        11.0, "SiLU-gated MLP, silu(g) x u per output element: exp by range reduction and a degree-5 "
              "polynomial (7), add, divide, multiply (3), the gate multiply (1): 11 ops"),
    "softmax_ops_per_score": _assumed(
        11.0, "softmax inside fused attention per score: running max (1), subtract (1), exp by range reduction "
              "and a degree-5 polynomial (7, as for SiLU), sum (1), rescale (1): 11 ops, on the FP32 vector units"),
    "residual_add_ops_per_element": _assumed(1.0, "one add per element"),
    "tp_allreduce_bytes_per_element": _assumed(
        2.0, "a tensor-parallel split's all-reduced partial sums in BF16, 2 bytes an element: SGLang's CPU backend "
             "runs its models' hidden states in BF16 (its Xeon blog's runs load every model in bfloat16, the w8a8 "
             "and FP8 ones included: the weights are quantized, the activations between layers are not), and "
             "shm_allreduce sums bf16 buffers as they are (reduce_bf16_buffers, sgl-kernel csrc/cpu/shm.cpp at "
             "sgl-project/sglang 120affb)"),
    "unfused_score_bytes": Sourced(
        value=20.0, kind="derived",
        source="bytes moved per attention score when attention runs unfused, as llama.cpp's graph does without flash "
               "attention (src/llama-graph.cpp, build_attn_mha, at ggml-org/llama.cpp 0c1e570, lines 2688-2732: "
               "kq = ggml_mul_mat(k, q); ggml_soft_max_ext(kq, kq_mask, ...); kqv = ggml_mul_mat(v, kq)): the KQ "
               "matmul writes each score in f32 (4), the softmax reads it and writes a new f32 tensor (8), the KQV "
               "matmul converts that to its vec_dot type, f16 for an f16 cache (reads 4, writes 2; "
               "ggml_compute_forward_mul_mat in ggml-cpu.c) and reads the f16 copy (2): 20 bytes"),
    "quantize_ops_per_element": _assumed(
        4.0, "activation quantization: multiply by the inverse scale, round, clamp, convert: 4 ops per element"),
    "scale_search_ops_per_element": _assumed(
        2.0, "dynamic quantization's scale search: absolute value and running max: 2 ops per element"),
    "compensation_ops_per_output": _assumed(
        1.0, "u8 x s8 kernels: one correction (subtract the weight-sum term) per output element"),
    "int8_dequant_ops_per_weight": _assumed(
        2.0, "W8A16: convert the INT8 weight to BF16 and multiply by its channel scale: 2 ops per weight"),
    "int4_dequant_ops_per_weight": _assumed(
        4.0, "W4A16: unpack the nibble, subtract the zero point, convert, multiply by the group scale: 4 ops "
             "per weight"),
    "int4_unpack_ops_per_weight": _assumed(
        2.0, "W4A8: unpack the nibble and shift it to INT8: 2 ops per weight"),
}



def cost(name: str) -> float:
    """The value of one modelling constant."""
    return float(OP_COSTS[name].known_value)
