"""Per-tensor GGUF type mixes: llama.cpp's Q4_K_M rule, and the types stored in a .gguf file, as
one recipe per GEMM row.

**Q4_K_M** (llama.cpp ``src/llama-quant.cpp``, ``llama_tensor_get_type_impl`` for
``LLAMA_FTYPE_MOSTLY_Q4_K_M``, default type Q4_K, no imatrix, no overrides; Falcon's own branch
is not modelled; read in the llama.cpp that llama-cpp-python 0.3.36 vendors, commit 0c1e570. Older
llama.cpp gave Mixtral's expert ffn_down Q4_K throughout, so its early Q4_K_M files are ~2 GB
smaller than this rule's):

- ``output.weight`` (and ``token_embd.weight`` when the embeddings are tied): Q6_K;
- ``attn_v`` (and a fused ``attn_qkv``): Q6_K in the layers where ``use_more_bits(i, n)``, else
  Q4_K; Q5_K instead of Q4_K in llama.cpp's 70B type (an 80-layer dense Llama);
  Q8_0 in every layer of an 8-expert model;
- ``attn_k``: Q8_0 in an 8-expert model, else Q4_K; ``attn_output``: Q5_K in an 8-expert model,
  else Q4_K;
- ``ffn_down`` (dense, routed ``_exps`` and shared ``_shexp``): Q6_K where ``use_more_bits(i, n)``,
  else Q4_K;
- everything else that is quantized (attn_q, ffn_gate, ffn_up, their _exps/_shexp, an untied
  token_embd): Q4_K;
- not quantized: norms, biases, the router ``ffn_gate_inp`` (F32);
- a tensor whose row length (K) is not a multiple of 256 falls back (``tensor_type_fallback``):
  Q4_K -> Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0 (Qwen1.5-MoE's experts of 1408).

``use_more_bits(i, n) = i < n/8 or i >= 7n/8 or (i - n/8) % 3 == 2`` (integer division), over the
``n`` layers: the first and last eighth of the layers and every third one between.

**Q4_K_S** (``LLAMA_FTYPE_MOSTLY_Q4_K_S``, default type Q4_K, the same function and commit): as Q4_K_M
for ``output.weight`` (Q6_K), the 70B type's attn_v (Q5_K) and an 8-expert model's attn_v, attn_k (Q8_0)
and attn_output (Q5_K); otherwise ``attn_v`` is Q5_K in the first 4 layers (``i_attention_wv < 4``) and
``ffn_down`` Q5_K in the first eighth of the layers (``i_layer < n/8``), everything else Q4_K.

**Q2_K_S** (``LLAMA_FTYPE_MOSTLY_Q2_K_S``, default type Q2_K): ``output.weight`` Q6_K; ``attn_v`` Q4_K
where 4 or more query heads share a KV head (``n_gqa() >= 4``), else Q2_K, and Q5_K in the 70B type;
an 8-expert model's attn_v and attn_k Q8_0; ``ffn_down`` Q4_K in the first eighth of the layers;
everything else Q2_K (its attn_output stays Q2_K, 8 experts or not). A row length that is not a multiple
of 256 takes ``tensor_type_fallback``'s type: Q2_K -> Q4_0.

**A GEMM row** of the estimate (``qkv``, ``ffn_down``, ``expert_up``, ...) gathers tensors of
several layers and roles, which may have different types. Its recipe here is their
element-weighted average: bytes per weight (so the row's weight bytes, and hence its memory
time, are exact), dequantization ops and activation bytes per element; the rescale granularity
is the most common type's. The compute side is therefore an average, the memory side exact.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from roofline.errors import UserError
from roofline.spec.gguf_types import BLOCKS, FLOAT_BYTES, VEC_DOT_TYPE, BlockFormat, block_recipe_fields
from roofline.spec.model import ModelSpec, StoredTensor
from roofline.spec.precision import RECIPES, PrecisionRecipe, StorageDtype
from roofline.spec.vocab import NonGemmMode

#: llama.cpp tensor roles (``blk.N.<role>.weight``) of each GEMM row of the estimate.
ROW_ROLES: dict[str, tuple[str, ...]] = {
    "qkv": ("attn_q", "attn_k", "attn_v", "attn_qkv"),
    "q/k/v": ("attn_q", "attn_k", "attn_v", "attn_qkv"),
    "q": ("attn_q",),
    "k/v": ("attn_k", "attn_v"),
    "attn_out": ("attn_output",),
    # multi-head latent attention (llama.cpp's deepseek2 tensors; attn_k_b / attn_v_b since ggml-org/llama.cpp#12801,
    # attn_kv_b in files converted before it)
    "q_a": ("attn_q_a",),
    "q_b": ("attn_q_b",),
    "kv_a": ("attn_kv_a_mqa",),
    "kv_b": ("attn_k_b", "attn_v_b", "attn_kv_b"),
    "k_absorb": ("attn_k_b", "attn_kv_b"),
    "v_absorb": ("attn_v_b", "attn_kv_b"),
    # linear attention (Qwen3-Next's Gated DeltaNet: llama.cpp's ssm_* tensors, names assumed)
    "lin_qkvz": ("ssm_in",),
    "lin_ba": ("ssm_ba",),
    "lin_out": ("ssm_out",),
    "ffn_up": ("ffn_gate", "ffn_up"),
    "ffn_down": ("ffn_down",),
    "router": ("ffn_gate_inp",),
    "expert_up": ("ffn_gate_exps", "ffn_up_exps"),
    "expert_down": ("ffn_down_exps",),
    "shared_up": ("ffn_gate_shexp", "ffn_up_shexp"),
    "shared_down": ("ffn_down_shexp",),
    "lm_head": ("output",),
}


@dataclass(frozen=True)
class TensorType:
    """One weight tensor with its GGML type."""

    name: str
    role: str
    layer: int | None
    elements: int
    cols: int
    """K: the row length, which a block must divide"""
    type: str
    bytes: float


def use_more_bits(i_layer: int, n_layers: int) -> bool:
    """llama.cpp's ``use_more_bits`` (integer division, as in C++ for non-negative operands)."""
    return i_layer < n_layers // 8 or i_layer >= 7 * n_layers // 8 or (i_layer - n_layers // 8) % 3 == 2


_FALLBACK = {"q2_K": "q4_0", "q4_K": "q5_0", "q5_K": "q5_1", "q6_K": "q8_0"}


@dataclass(frozen=True)
class MixRule:
    """One llama.cpp k-quant mix: the branches of ``llama_tensor_get_type_impl`` for its file type that differ
    from the others' (the module docstring); the shared ones are in :func:`mix_type`."""

    default: str
    """the type of every quantized tensor no branch raises"""
    attn_v: Callable[[int, int, ModelSpec], str]
    """``attn_v``'s type in layer ``i`` of ``n`` (before the 70B type's and the 8-expert model's raises)"""
    ffn_down: Callable[[int, int], str | None]
    """``ffn_down``'s type in layer ``i`` of ``n`` (None: the default)"""
    attn_output_8_experts: str | None
    """``attn_output``'s type in an 8-expert model (None: the default)"""


def _gqa4(model: ModelSpec) -> bool:
    """``n_gqa() >= 4``: four or more query heads share a KV head."""
    return model.num_attention_heads >= 4 * model.kv_heads


MIXES: dict[str, MixRule] = {
    "q4_k_m": MixRule("q4_K", lambda i, n, m: "q6_K" if use_more_bits(i, n) else "q4_K",
                      lambda i, n: "q6_K" if use_more_bits(i, n) else None, "q5_K"),
    "q4_k_s": MixRule("q4_K", lambda i, n, m: "q5_K" if i < 4 else "q4_K",
                      lambda i, n: "q5_K" if i < n // 8 else None, "q5_K"),
    "q2_k_s": MixRule("q2_K", lambda i, n, m: "q4_K" if _gqa4(m) else "q2_K",
                      lambda i, n: "q4_K" if i < n // 8 else None, None),
}


def mix_type(rule: MixRule, role: str, layer: int | None, cols: int, model: ModelSpec) -> str:
    """The GGML type a llama.cpp k-quant mix gives a tensor: the router F32; the output (and a tied token_embd)
    Q6_K; attn_v by the mix, raised from Q3_K/Q4_K to Q5_K in llama.cpp's 70B type (an 80-layer dense model) and
    to Q8_0 with attn_k in an 8-expert model; attn_output and ffn_down by the mix; then the fallback of a type
    whose block does not divide the row length."""
    n_expert, n = model.num_experts or 0, model.num_hidden_layers
    if role == "ffn_gate_inp":
        return "f32"
    if role == "output" or (role == "token_embd" and model.tie_word_embeddings):
        return _output_type(cols)
    t = rule.default
    if role in ("attn_v", "attn_qkv"):
        assert layer is not None  # a layer's tensor
        t = rule.attn_v(layer, n, model)
        if n == 80 and not model.is_moe and t in ("q3_K", "q4_K"):  # llama.cpp's LLM_TYPE_70B
            t = "q5_K"
        if n_expert == 8:
            t = "q8_0"
    elif role == "attn_k" and n_expert == 8:
        t = "q8_0"
    elif role == "attn_output" and n_expert == 8:
        t = rule.attn_output_8_experts or t
    elif role.startswith("ffn_down"):
        assert layer is not None  # a layer's tensor
        t = rule.ffn_down(layer, n) or t
    return _fallback(t, cols)


def _fallback(t: str, cols: int) -> str:
    """``tensor_type_fallback``: a type whose block does not divide the row length ``cols`` gives way."""
    return _FALLBACK.get(t, t) if cols % BLOCKS[t].weights_per_block else t


def _output_type(cols: int) -> str:
    """The k-quant mixes' ``output.weight`` (and a tied ``token_embd``): Q6_K, Q8_0 if 256 does not divide K."""
    return "q6_K" if cols % 256 == 0 else "q8_0"


def q4_k_m_type(role: str, layer: int | None, cols: int, model: ModelSpec) -> str:
    """The GGML type llama.cpp's Q4_K_M gives a tensor (module docstring)."""
    return mix_type(MIXES["q4_k_m"], role, layer, cols, model)


def q4_k_s_type(role: str, layer: int | None, cols: int, model: ModelSpec) -> str:
    """The GGML type llama.cpp's Q4_K_S gives a tensor (module docstring)."""
    return mix_type(MIXES["q4_k_s"], role, layer, cols, model)


def q2_k_s_type(role: str, layer: int | None, cols: int, model: ModelSpec) -> str:
    """The GGML type llama.cpp's Q2_K_S gives a tensor (module docstring)."""
    return mix_type(MIXES["q2_k_s"], role, layer, cols, model)



class _AddTensor(Protocol):
    """Records one weight matrix of a layer: ``rows x cols`` elements, ``copies`` times (the experts)."""

    def __call__(self, role: str, rows: int, cols: int, copies: int = 1) -> None: ...


def model_tensors(model: ModelSpec) -> list[tuple[str, str, int | None, int, int]]:
    """The weight matrices of a decoder as llama.cpp names them: ``(name, role, layer, elements, K)``;
    an expert tensor holds all its layer's experts (GGUF stores them as one 3-D tensor)."""
    h, hd = model.hidden_size, model.head_size
    q_out, kv_out = model.num_attention_heads * hd, model.kv_heads * hd
    dense = set(model.dense_layers) if model.is_moe else set(range(model.num_hidden_layers))
    linear = set(model.linear_attention_layers)
    out: list[tuple[str, str, int | None, int, int]] = [("token_embd.weight", "token_embd", None, model.vocab_size * h, h)]
    for i in range(model.num_hidden_layers):
        def add(role: str, rows: int, cols: int, copies: int = 1, i: int = i) -> None:
            out.append((f"blk.{i}.{role}.weight", role, i, rows * cols * copies, cols))
        if model.is_mla:
            _add_mla(add, model)
        elif i in linear:
            _add_linear(add, model)
        else:
            add("attn_q", (2 if model.attention_output_gate else 1) * q_out, h)
            add("attn_k", kv_out, h)
            add("attn_v", kv_out, h)
            add("attn_output", h, q_out)
        if i in dense:
            if model.gated_mlp:
                add("ffn_gate", model.intermediate_size, h)
            add("ffn_up", model.intermediate_size, h)
            add("ffn_down", h, model.intermediate_size)
            continue
        e, n_exp = model.expert_intermediate, model.num_experts
        assert n_exp is not None  # a layer not dense: a mixture of experts
        add("ffn_gate_inp", n_exp, h)
        if model.gated_mlp:
            add("ffn_gate_exps", e, h, n_exp)
        add("ffn_up_exps", e, h, n_exp)
        add("ffn_down_exps", h, e, n_exp)
        s = model.shared_expert_intermediate_size
        if s:
            if model.gated_mlp:
                add("ffn_gate_shexp", s, h)
            add("ffn_up_shexp", s, h)
            add("ffn_down_shexp", h, s)
    if not model.tie_word_embeddings:
        out.append(("output.weight", "output", None, model.vocab_size * h, h))
    return out


def _add_linear(add: _AddTensor, model: ModelSpec) -> None:
    """A Gated DeltaNet layer's matrices as llama.cpp's qwen3next names them (``ssm_in``: in_proj_qkvz, ``ssm_ba``:
    in_proj_ba, ``ssm_out``: out_proj; assumed from its LLM_TENSOR_SSM_* names); a mix gives them its default type
    (llama.cpp's own branches for them, if any, are not modelled: assumed)."""
    h, hk, hv = model.hidden_size, model.linear_num_key_heads, model.linear_num_value_heads
    dk, dv = model.linear_key_head_dim, model.linear_value_head_dim
    assert hk is not None and hv is not None and dk is not None and dv is not None  # validated with the layers
    add("ssm_in", 2 * hk * dk + 2 * hv * dv, h)
    add("ssm_ba", 2 * hv, h)
    add("ssm_out", h, hv * dv)


def _add_mla(add: _AddTensor, model: ModelSpec) -> None:
    """Multi-head latent attention's tensors as llama.cpp's deepseek2 converter writes them since
    ggml-org/llama.cpp#12801: ``attn_q_a`` and ``attn_q_b`` (or ``attn_q``), ``attn_kv_a_mqa``, ``attn_k_b``
    (per head ``W_UK``, rows of ``qk_nope``: its K), ``attn_v_b`` (per head ``W_UV``, rows of ``kv_lora_rank``),
    ``attn_output``. A mix gives them its default type (then the fallback of a row length the block does not
    divide: ``attn_k_b``'s 128); llama.cpp's own branches for these tensors, if any, are not modelled (assumed)."""
    h, heads, c, r = model.hidden_size, model.num_attention_heads, model.kv_lora_rank, model.qk_rope_head_dim
    n, v = model.qk_nope_head_dim, model.v_head_dim
    assert c is not None and r is not None and n is not None and v is not None  # validated with kv_lora_rank
    if model.q_lora_rank:
        add("attn_q_a", model.q_lora_rank, h)
        add("attn_q_b", heads * (n + r), model.q_lora_rank)
    else:
        add("attn_q", heads * (n + r), h)
    add("attn_kv_a_mqa", c + r, h)
    add("attn_k_b", c, n, heads)
    add("attn_v_b", v, c, heads)
    add("attn_output", h, heads * v)


def tensor_types(precision: str, model: ModelSpec) -> list[TensorType]:
    """Every weight matrix with its type under ``precision``: a mix (``q4_k_m``, ``q4_k_s``, ``q2_k_s``) by
    llama.cpp's rule, ``gguf`` as stored in the file the model was read from, or a single-type precision
    (``q4_k``) for all."""
    if precision == "mxfp4":
        return mxfp4_tensor_types(model)
    if precision == "gguf":
        if not model.gguf_tensors:
            raise UserError(f"--precision gguf: the weight types stored in a .gguf file; {model.name} was not read "
                            "from one (give --model FILE.gguf)")
        return [_stored(t) for t in model.gguf_tensors if _role(t.name) is not None]
    out = []
    single = RECIPES.get(precision)
    rule = MIXES.get(precision)
    if rule is None and (single is None or single.block is None):
        raise UserError(f"--precision {precision}: not a GGUF type or mix ({', '.join(MIXES)}, gguf, "
                        f"{', '.join(n for n, r in RECIPES.items() if r.block)})")
    for name, role, layer, elements, cols in model_tensors(model):
        if rule is not None:
            t = mix_type(rule, role, layer, cols, model)
        else:
            assert single is not None and single.block is not None  # a block recipe (checked above)
            t = "f32" if role == "ffn_gate_inp" else single.block.name
        out.append(TensorType(name, role, layer, elements, cols, t, elements * _bytes_per_weight(t)))
    return out


#: the MXFP4 mix: the type of the routed experts, and of every other weight matrix (as gpt-oss ships: its
#: config.json's quantization_config ``quant_method: mxfp4`` leaves attention, router, embeddings and lm_head out)
MXFP4_EXPERTS, MXFP4_REST = "mxfp4", "bf16"


def mxfp4_tensor_types(model: ModelSpec) -> list[TensorType]:
    """Every weight matrix under the ``mxfp4`` mix: the routed experts (``*_exps``) in MXFP4 (``block_mxfp4``: 32
    E2M1 values and one E8M0 scale byte, 4.25 bits per weight), everything else in BF16; refused for a model without
    routed experts (nothing would be MXFP4)."""
    if not model.is_moe:
        raise UserError(f"--precision mxfp4: MXFP4 routed experts, the rest BF16 (as gpt-oss ships); {model.name} has "
                        "no experts (give a GGUF type, e.g. q4_k_m, or bf16)")
    out = []
    for name, role, layer, elements, cols in model_tensors(model):
        t = MXFP4_EXPERTS if role.endswith("_exps") else MXFP4_REST
        out.append(TensorType(name, role, layer, elements, cols, t, elements * _bytes_per_weight(t)))
    return out


def cell_recipes(precision: str, gemm_names: Sequence[str], *, model: ModelSpec,
                 quantize_lm_head: bool = True) -> list[PrecisionRecipe] | None:
    """One recipe per GEMM row (``gemm_names`` as the workload lists them) for a per-tensor mix.

    - ``q4_k_m``, ``q4_k_s``, ``q2_k_s``: llama.cpp's rule of that mix on ``model``;
    - ``gguf``: the types stored in the .gguf file ``model`` was read from;
    - anything else (one recipe for every row, e.g. ``q4_k``, ``int8-dynamic``): None, and the
      estimate's own rule applies (the lm_head unquantized unless asked).

    A row whose tensors have different types gets their element-weighted average (module
    docstring): exact weight bytes, so exact memory time. ``quantize_lm_head=False`` keeps the
    lm_head in F16 (llama-quantize ``--leave-output-tensor`` on an F16 source); for ``gguf`` the file
    decides.
    """
    if precision not in MIXES and precision not in ("gguf", "mxfp4"):
        return None
    tensors = tensor_types(precision, model)
    by_role: dict[str, list[TensorType]] = {}
    for t in tensors:
        by_role.setdefault(t.role, []).append(t)
    if "output" not in by_role and "token_embd" in by_role:  # tied: the lm_head reads the embedding table
        by_role["output"] = by_role["token_embd"]
    out = []
    for name in gemm_names:
        roles = ROW_ROLES.get(name)
        if roles is None:
            raise ValueError(f"GEMM row {name!r}: no GGUF tensor role known for it")
        members = [t for r in roles for t in by_role.get(r, [])]
        if not members:
            raise UserError(f"{model.name}: no GGUF tensor for the {name} GEMM (looked for {', '.join(roles)})")
        if name == "lm_head" and not quantize_lm_head and precision not in ("gguf", "mxfp4"):
            members = [dataclasses.replace(t, type="f16", bytes=t.elements * 2.0) for t in members]
        out.append(average_recipe(f"{precision}:{name}", members))
    return out


# ------------------------------------------------------------------ recipes of types and averages


def type_recipe(type_name: str, name: str | None = None) -> PrecisionRecipe:
    """The llama.cpp x86 recipe of one GGML type (a block type, or a float type f32/f16/bf16)."""
    if type_name in FLOAT_BYTES:
        dtypes: dict[str, StorageDtype] = {"f32": "fp32", "f16": "fp16", "bf16": "bf16"}
        dtype = dtypes[type_name]
        return PrecisionRecipe(
            name=name or f"gguf-{type_name}",
            description=f"llama.cpp {type_name} weights: activations converted to {type_name} (vec_dot_type), "
                        f"FMA in {'BF16 dot products' if dtype == 'bf16' else 'FP32'}, FP32 output",
            compute_dtype="bf16" if dtype == "bf16" else "fp32", x_dtype=dtype, w_dtype=dtype, y_dtype="fp32",
            non_gemm_mode=NonGemmMode.FP32)
    b = BLOCKS.get(type_name)
    if b is None:
        raise UserError(f"GGML type {type_name}: not priced by this tool (known: "
                        f"{', '.join([*BLOCKS, *FLOAT_BYTES])})")
    a = BLOCKS[VEC_DOT_TYPE.get(type_name, "q8_0")]
    return PrecisionRecipe(**block_recipe_fields(name or type_name, b, a, f"llama.cpp {type_name} (GGUF)"))


def average_recipe(name: str, tensors: Sequence[TensorType]) -> PrecisionRecipe:
    """One recipe for tensors of possibly different types: their element-weighted average."""
    total = float(sum(t.elements for t in tensors))
    shares: dict[str, float] = {}
    for t in tensors:
        shares[t.type] = shares.get(t.type, 0.0) + t.elements / total
    exact = {t.type for t in tensors}
    if len(exact) == 1 and all(_known(t.type) for t in tensors):
        return dataclasses.replace(type_recipe(tensors[0].type), name=name)
    label = " + ".join(f"{k} {v:.0%}" for k, v in sorted(shares.items(), key=lambda kv: -kv[1]))
    bytes_pw = sum(t.bytes for t in tensors) / total
    quant_pw = sum(t.elements * _quant_bytes_per_weight(t) for t in tensors) / total
    ops = sum(t.elements * _dequant_ops(t.type) for t in tensors) / total
    x_pw = sum(t.elements * _activation_bytes(t.type) for t in tensors) / total
    main = max(shares, key=shares.__getitem__)
    group = BLOCKS[main].scale_group if main in BLOCKS else 32
    block = BlockFormat(name=label, ggml_type=-1, weights_per_block=256, bytes_per_block=256 * bytes_pw,
                        quant_bytes_per_block=256 * min(quant_pw, bytes_pw), scale_group=group,
                        layout=f"element-weighted mix of {label}", source="roofline.spec.gguf_mix.average_recipe",
                        dequant_ops_per_weight=ops)
    x_block = BlockFormat(name="q8 activations", ggml_type=-1, weights_per_block=256, bytes_per_block=256 * x_pw,
                          quant_bytes_per_block=256.0, scale_group=256, layout="q8_0/q8_K activations, weighted",
                          source="roofline.spec.gguf_mix.average_recipe")
    return PrecisionRecipe(**{**block_recipe_fields(name, block, x_block, f"llama.cpp mix of {label} (GGUF)"),
                              "w_dtype": "int4" if bytes_pw < 0.75 else "int8"})


def _known(type_name: str) -> bool:
    return type_name in BLOCKS or type_name in FLOAT_BYTES


def unpriced_types(model: ModelSpec) -> dict[str, float]:
    """The GGML types of ``model``'s stored weight matrices (a .gguf file's) whose layout this tool does not know,
    each with its share of the matrices' weights: priced at their bytes as stored, their unpacking not counted."""
    matrices = [t for t in model.gguf_tensors or () if _role(t.name) is not None]
    total = sum(t.elements for t in matrices)
    out: dict[str, float] = {}
    for t in matrices:
        if not _known(t.type):
            out[t.type] = out.get(t.type, 0.0) + t.elements / total
    return out


def _bytes_per_weight(type_name: str) -> float:
    if type_name in FLOAT_BYTES:
        return FLOAT_BYTES[type_name]
    return BLOCKS[type_name].bytes_per_weight


def _quant_bytes_per_weight(t: TensorType) -> float:
    if t.type in BLOCKS:
        return BLOCKS[t.type].quant_bytes_per_weight
    return t.bytes / t.elements  # float types and blocks this tool does not know: all bytes are values


def _dequant_ops(type_name: str) -> float:
    return BLOCKS[type_name].dequant_ops_per_weight if type_name in BLOCKS else 0.0


def _activation_bytes(type_name: str) -> float:
    if type_name in FLOAT_BYTES:
        return FLOAT_BYTES[type_name]
    return BLOCKS[VEC_DOT_TYPE.get(type_name, "q8_0")].bytes_per_weight


# ------------------------------------------------------------------ tensors stored in a file

_BLK = re.compile(r"^blk\.(\d+)\.([a-z_]+)\.weight$")


def _role(name: str) -> str | None:
    if name in ("token_embd.weight", "output.weight"):
        return name.removesuffix(".weight")
    m = _BLK.match(name)
    if m and not m.group(2).endswith("_norm"):
        return m.group(2)
    return None


def _stored(t: StoredTensor) -> TensorType:
    m = _BLK.match(t.name)
    cols = t.shape[0] if t.shape else 0
    return TensorType(t.name, _role(t.name) or "", int(m.group(1)) if m else None, t.elements, cols, t.type,
                      float(t.nbytes))
