"""``roofline footprint``: the bytes of a model's tensors, before and after quantization.

Tensor groups, from the architecture alone:

- attention projections: q, k, v (GQA: k and v use the key-value heads), o; per layer. Multi-head latent
  attention: q_a and q_b (or one q), kv_a (``kv_a_proj_with_mqa``), kv_b, o (:func:`_mla_tensors`)
- MLP projections: up and down (and gate for a gated MLP); per layer (per dense layer of a mixture of experts)
- expert projections (mixture of experts): every routed expert of every MoE layer, all counted
- shared experts: the always-active expert(s) of each MoE layer (Qwen2-MoE, DeepSeek)
- routers: the router of each MoE layer (and a shared expert's gate); kept in the base dtype, as
  llama.cpp keeps ``ffn_gate_inp`` unquantized
- embeddings: the token table (plus learned positions and token types for encoders)
- lm_head: decoders with untied embeddings have their own; a tied one is the embedding table,
  counted once (``count_tied_lm_head_copy`` counts a separate copy, as a runtime that unties it does)
- norms: LayerNorm weight and bias (encoders) or RMSNorm weight (decoders, plus q/k norms)
- biases: of the projections
- scales / zero points: the quantization metadata of every quantized tensor
- linear attention projections (Qwen3-Next's Gated DeltaNet layers): ``in_proj_qkvz``, ``in_proj_ba``,
  ``out_proj`` per linear layer (:mod:`roofline.calc.linear_attention`); their 1-D tensors (the convolution's
  ``C x K`` weights, ``dt_bias``, ``A_log``, the gated norm) counted with the norms, in the base dtype; softmax
  attention's projections then count the full-attention layers only (their ``q_proj`` doubled by an output gate)
- multi-token prediction (DeepSeek-V3 ``num_nextn_predict_layers``): each such layer's ``eh_proj``, attention,
  MoE MLP and norms (it shares the embeddings and the lm_head); in the total, not in the active parameters,
  since a step does not run it

Policy: the projections are quantized by default; embeddings, norms and biases stay in the
base dtype; the lm_head is quantized only when asked. Task heads (pooler, classifier) are not
counted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from roofline.calc.gemm import weight_meta_bytes
from roofline.errors import UserError
from roofline.results.footprint import FootprintGroup, FootprintResult
from roofline.spec.model import ModelSpec
from roofline.spec.precision import MIX_NAMES, PrecisionRecipe, get_recipe
from roofline.units import DTYPE_BYTES

if TYPE_CHECKING:
    from roofline.spec.gguf_mix import TensorType


@dataclass(frozen=True)
class _Tensor:
    rows: int  # N (output features)
    cols: int  # K (input features)
    count: int


def _groups(m: ModelSpec, count_tied_copy: bool) -> dict[str, list[_Tensor]]:
    h, layers = m.hidden_size, m.attention_layers
    q_out, kv_out = m.num_attention_heads * m.head_size, m.kv_heads * m.head_size
    gate = 2 if m.attention_output_gate else 1
    attn = (_mla_tensors(m, layers) if m.is_mla else
            [_Tensor(gate * q_out, h, layers), _Tensor(kv_out, h, 2 * layers), _Tensor(h, q_out, layers)])
    up = 2 if m.gated_mlp else 1
    dense = m.dense_mlp_layers
    mlp = [_Tensor(m.intermediate_size, h, up * dense), _Tensor(h, m.intermediate_size, dense)] if dense else []
    experts, shared, routers = _moe_tensors(m, m.num_experts or 0)
    emb = [_Tensor(m.vocab_size, h, 1)]
    if m.family == "encoder":
        emb.append(_Tensor(m.max_position_embeddings, h, 1))
        if m.type_vocab_size:
            emb.append(_Tensor(m.type_vocab_size, h, 1))
    lm_head = []
    if m.family == "decoder" and (not m.tie_word_embeddings or count_tied_copy):
        lm_head = [_Tensor(m.vocab_size, h, 1)]
    return {"attention projections": attn, LINEAR_GROUP: _linear_tensors(m), "MLP projections": mlp, "expert projections": experts,
            "shared experts": shared, "routers": routers, "embeddings": emb, "lm_head": lm_head,
            MTP_GROUP: _mtp_tensors(m)}


#: the footprint group of the multi-token prediction layers (counted in the total, not in a step)
MTP_GROUP = "multi-token prediction"
#: the footprint group of the linear-attention layers' projections
LINEAR_GROUP = "linear attention projections"


def _linear_tensors(m: ModelSpec) -> list[_Tensor]:
    """The linear-attention layers' matrices (:mod:`roofline.calc.linear_attention`): ``in_proj_qkvz``
    ``(2 h_k d_k + 2 h_v d_v, H)``, ``in_proj_ba`` ``(2 h_v, H)``, ``out_proj`` ``(H, h_v d_v)``."""
    n = len(m.linear_attention_layers)
    if not n:
        return []
    h, hk, hv, dk, dv = (m.hidden_size, m.linear_num_key_heads, m.linear_num_value_heads, m.linear_key_head_dim,
                         m.linear_value_head_dim)
    assert hk is not None and hv is not None and dk is not None and dv is not None  # validated with the layers
    return [_Tensor(2 * hk * dk + 2 * hv * dv, h, n), _Tensor(2 * hv, h, n), _Tensor(h, hv * dv, n)]


def _linear_vectors(m: ModelSpec) -> tuple[int, int]:
    """(tensors, parameters) of the linear-attention layers' 1-D tensors: the depthwise convolution ``C x K``,
    ``dt_bias`` and ``A_log`` (``h_v`` each) and the gated RMSNorm (``d_v``), per layer."""
    n = len(m.linear_attention_layers)
    if not n:
        return 0, 0
    from roofline.calc.linear_attention import conv_channels

    hk, hv, dk, dv = m.linear_num_key_heads, m.linear_num_value_heads, m.linear_key_head_dim, m.linear_value_head_dim
    kernel = m.linear_conv_kernel_dim
    # validated with the layers
    assert hk is not None and hv is not None and dk is not None and dv is not None and kernel is not None
    c = conv_channels(hk, hv, dk, dv)
    return 4 * n, n * (c * kernel + 2 * hv + dv)


def _mla_tensors(m: ModelSpec, layers: int) -> list[_Tensor]:
    """Multi-head latent attention's matrices over ``layers`` layers: ``q_a`` ``(c_q, H)`` and ``q_b``
    ``(h (n + r), c_q)``, or ``q`` ``(h (n + r), H)``; ``kv_a`` ``(c + r, H)``; ``kv_b`` ``(h (n + v), c)``;
    ``o`` ``(H, h v)`` (:mod:`roofline.calc.mla`'s notation)."""
    h, heads, c, r = m.hidden_size, m.num_attention_heads, m.kv_lora_rank, m.qk_rope_head_dim
    n, v = m.qk_nope_head_dim, m.v_head_dim
    assert c is not None and r is not None and n is not None and v is not None  # validated with kv_lora_rank
    q = ([_Tensor(m.q_lora_rank, h, layers), _Tensor(heads * (n + r), m.q_lora_rank, layers)] if m.q_lora_rank
         else [_Tensor(heads * (n + r), h, layers)])
    return q + [_Tensor(c + r, h, layers), _Tensor(heads * (n + v), c, layers), _Tensor(h, heads * v, layers)]


def _mtp_tensors(m: ModelSpec) -> list[_Tensor]:
    """The multi-token prediction layers' parameters: per layer ``eh_proj`` ``(H, 2H)``, the attention of a layer,
    an MoE MLP (every expert, the shared ones and the router; a dense MLP without experts), and its norms (enorm,
    hnorm, the two of the block, the final ``shared_head.norm``, and multi-head latent attention's two) as
    ``(width, 1)`` vectors, priced with the group's matrices (a few thousand parameters); the embeddings and the
    lm_head are the main model's."""
    k = m.nextn_predict_layers
    if not k:
        return []
    h = m.hidden_size
    out = [_Tensor(h, 2 * h, k)]
    out += _mla_tensors(m, k) if m.is_mla else [
        _Tensor(m.num_attention_heads * m.head_size, h, k), _Tensor(m.kv_heads * m.head_size, h, 2 * k),
        _Tensor(h, m.num_attention_heads * m.head_size, k)]
    up = 2 if m.gated_mlp else 1
    if m.is_moe:
        e, s = m.expert_intermediate, m.shared_expert_intermediate_size
        assert m.num_experts is not None  # is_moe
        out += [_Tensor(e, h, up * m.num_experts * k), _Tensor(h, e, m.num_experts * k),
                _Tensor(m.num_experts + int(m.shared_expert_gate), h, k)]
        if s:
            out += [_Tensor(s, h, up * k), _Tensor(h, s, k)]
    else:
        out += [_Tensor(m.intermediate_size, h, up * k), _Tensor(h, m.intermediate_size, k)]
    out.append(_Tensor(h, 1, 5 * k))
    if m.is_mla:
        assert m.kv_lora_rank is not None  # is_mla
        out += [_Tensor(m.kv_lora_rank, 1, k)] + ([_Tensor(m.q_lora_rank, 1, k)] if m.q_lora_rank else [])
    return out


def _moe_tensors(m: ModelSpec, experts: int) -> tuple[list[_Tensor], list[_Tensor], list[_Tensor]]:
    """(routed experts, shared experts, routers) of the MoE layers; ``experts`` routed experts each."""
    if not m.is_moe:
        return [], [], []
    assert m.num_experts is not None  # is_moe
    h, n, up = m.hidden_size, m.moe_layers, 2 if m.gated_mlp else 1
    e = m.expert_intermediate
    routed = [_Tensor(e, h, up * experts * n), _Tensor(h, e, experts * n)] if experts else []
    s = m.shared_expert_intermediate_size
    shared = [_Tensor(s, h, up * n), _Tensor(h, s, n)] if s else []
    routers = [_Tensor(m.num_experts + int(m.shared_expert_gate), h, n)]
    return routed, shared, routers


def active_params(m: ModelSpec) -> int:
    """Parameters one token uses: every parameter except the routed experts it is not sent to,
    ``total - (E - k) x expert x MoE layers``. Embeddings and lm_head are counted, as the published
    "active parameter" figures do (Mixtral-8x7B 12.9B, Qwen3-30B-A3B 3.3B). Dense models: all."""
    total = sum(t.rows * t.cols * t.count for g, ts in _groups(m, False).items() if g != MTP_GROUP for t in ts)
    (_, norm_params), (_, bias_params) = _vector_params(m)
    total += norm_params + bias_params
    if not m.is_moe:
        return total
    assert m.num_experts is not None and m.num_experts_per_tok is not None  # is_moe: given together
    idle, _, _ = _moe_tensors(m, m.num_experts - m.num_experts_per_tok)
    idle_bias = (m.num_experts - m.num_experts_per_tok) * _expert_bias_width(m) * m.moe_layers
    return total - sum(t.rows * t.cols * t.count for t in idle) - idle_bias


def _expert_bias_width(m: ModelSpec) -> int:
    """Bias parameters of one expert (``expert_bias``): its up (and gate) and down projections' outputs."""
    return ((2 if m.gated_mlp else 1) * m.expert_intermediate + m.hidden_size) if m.expert_bias else 0


def _vector_params(m: ModelSpec) -> tuple[tuple[int, int], tuple[int, int]]:
    """((norm tensors, norm params), (bias tensors, bias params))."""
    h, layers = m.hidden_size, m.num_hidden_layers
    q_out, kv_out = m.num_attention_heads * m.head_size, m.kv_heads * m.head_size
    # per layer (2, Gemma 2: 4) and one more: after the embeddings (encoders) or the final one (decoders);
    # a LayerNorm has a weight and a bias, an RMSNorm a weight; decoders may add per-head q/k norms
    norms, per_norm = m.norms_per_layer * layers + 1, 2 if m.layer_norm else 1
    norm_tensors, norm_params = per_norm * norms, per_norm * h * norms
    if m.family == "decoder":
        if m.qk_norm:  # in the softmax-attention layers
            norm_tensors += 2 * m.attention_layers
            norm_params += 2 * m.attention_layers * m.head_size
        lin_tensors, lin_params = _linear_vectors(m)
        norm_tensors, norm_params = norm_tensors + lin_tensors, norm_params + lin_params
        if m.is_mla:  # kv_a_layernorm on the latent, q_a_layernorm on the compressed query
            assert m.kv_lora_rank is not None  # is_mla
            norm_tensors += layers * (1 + int(bool(m.q_lora_rank)))
            norm_params += layers * (m.kv_lora_rank + (m.q_lora_rank or 0))
    bias_tensors = bias_params = 0
    if m.attention_bias:
        o_bias = m.attention_bias if m.o_proj_bias is None else m.o_proj_bias
        bias_tensors += m.attention_layers * (3 + int(o_bias))
        bias_params += m.attention_layers * (q_out + 2 * kv_out + (h if o_bias else 0))
    if m.expert_bias:  # every expert's projections, and the router (gpt-oss)
        # expert_bias is for a mixture of experts; ModelSpec._check_moe returns before refusing it on a dense
        # model, which fails here as it did on None before this assert
        assert m.num_experts is not None
        bias_tensors += m.moe_layers * (2 + int(m.gated_mlp) + 1)
        bias_params += m.moe_layers * (m.num_experts * _expert_bias_width(m) + m.num_experts)
    if m.attention_sinks:  # one logit per head and layer (gpt-oss), counted with the biases
        bias_tensors += layers
        bias_params += layers * m.num_attention_heads
    if m.mlp_bias:  # on the dense MLPs (no MoE model in the catalog has MLP biases)
        up, dense = 2 if m.gated_mlp else 1, m.dense_mlp_layers
        bias_tensors += dense * (up + 1)
        bias_params += dense * (up * m.intermediate_size + h)
    return (norm_tensors, norm_params), (bias_tensors, bias_params)


def bias_params(m: ModelSpec) -> tuple[int, int]:
    """(bias tensors, bias parameters) of the projections."""
    return _vector_params(m)[1]


def weight_params(m: ModelSpec) -> int:
    """Parameters of the weight matrices (every expert counted), without norms and biases and without the
    multi-token prediction layers (no step runs them)."""
    return sum(t.rows * t.cols * t.count for g, ts in _groups(m, False).items() if g != MTP_GROUP for t in ts)


def footprint(model: ModelSpec, precision: str, *, base_dtype: str | None = None, group_size: int | None = None,
              quantize_lm_head: bool = False, quantize_embeddings: bool = False,
              count_tied_lm_head_copy: bool = False) -> FootprintResult:
    base_dtype = base_dtype or ("bf16" if model.family == "decoder" else "fp32")
    if base_dtype not in ("fp32", "bf16", "fp16"):
        raise UserError(f"--base-dtype {base_dtype}: one of fp32, bf16, fp16")
    if precision in MIX_NAMES:
        return _mix_footprint(model, precision, base_dtype)
    recipe = get_recipe(precision, group_size)
    e_base = DTYPE_BYTES[base_dtype]
    quantized_groups = {"attention projections", "MLP projections", "expert projections", "shared experts",
                        MTP_GROUP, LINEAR_GROUP}
    if quantize_lm_head:
        quantized_groups.add("lm_head")
    if quantize_embeddings:
        quantized_groups.add("embeddings")
    if not recipe.quantized:
        quantized_groups = set()

    groups: list[FootprintGroup] = []
    meta_bytes = 0.0
    meta_tensors = 0
    for name, tensors in _groups(model, count_tied_lm_head_copy).items():
        params = sum(t.rows * t.cols * t.count for t in tensors)
        count = sum(t.count for t in tensors)
        if not count:
            continue
        if name in quantized_groups:
            after = params * recipe.e_w
            meta = sum(t.count * float(weight_meta_bytes(t.rows, t.cols, recipe.w_scale, recipe.w_group_size,
                                                         recipe.scale_bytes, recipe.w_zero_point)) for t in tensors)
            meta_bytes += meta
            meta_tensors += count
        else:
            after = params * _stored_bytes(recipe, e_base)
        groups.append(FootprintGroup(name=name, count=count, params=params, bytes_base=params * e_base,
                                     bytes=after, quantized=name in quantized_groups))
    (nt, npar), (bt, bpar) = _vector_params(model)
    groups.append(FootprintGroup(name="norms", count=nt, params=npar, bytes_base=npar * e_base, bytes=npar * e_base,
                                 quantized=False))
    if bt:
        groups.append(FootprintGroup(name="biases", count=bt, params=bpar, bytes_base=bpar * e_base,
                                     bytes=bpar * e_base, quantized=False))
    groups.append(FootprintGroup(name="scales / zero points", count=meta_tensors, params=0, bytes_base=0.0,
                                 bytes=meta_bytes, quantized=False))
    q_base = sum(g.bytes_base for g in groups if g.quantized)
    q_after = sum(g.bytes for g in groups if g.quantized) + meta_bytes
    total_base = sum(g.bytes_base for g in groups)
    total = sum(g.bytes for g in groups)
    return FootprintResult(
        model=model.name, precision=recipe.name, base_dtype=base_dtype,
        policy=_policy(recipe, {g.name for g in groups if g.quantized}, model, count_tied_lm_head_copy),
        groups=groups, params=sum(g.params for g in groups), total_bytes_base=total_base, total_bytes=total,
        quantized_bytes_base=q_base, quantized_bytes=q_after,
        quantized_ratio=q_base / q_after if q_after else 1.0, total_ratio=total_base / total,
        active_params=active_params(model),
    )


def _stored_bytes(recipe: PrecisionRecipe, e_base: float) -> float:
    """Unquantized tensors keep the base dtype, except that an FP32 base under a BF16 recipe is stored in BF16."""
    if recipe.name == "bf16":
        return DTYPE_BYTES["bf16"]
    return e_base


def _policy(recipe: PrecisionRecipe, quantized: set[str], model: ModelSpec, tied_copy: bool) -> str:
    if not quantized:
        return f"nothing quantized ({recipe.name}); every tensor in the base dtype" + (
            " (BF16)" if recipe.name == "bf16" else "")
    if recipe.block is not None:
        b = recipe.block
        return (f"{', '.join(sorted(quantized))} in llama.cpp {b.name} blocks ({b.weights_per_block} weights in "
                f"{b.bytes_per_block:g} bytes, {b.bits_per_weight:g} bits per weight: values "
                f"{recipe.e_w * 8:g} bits, scales and mins under 'scales / zero points'); everything else in the "
                f"base dtype")
    scales = {"per-channel": "per-channel scales", "per-group": f"group-{recipe.w_group_size} scales"}[recipe.w_scale]
    zp = " and zero points" if recipe.w_zero_point else ""
    tied = ""
    if model.family == "decoder":
        tied = ("; lm_head tied to the embeddings, counted once" if model.tie_word_embeddings and not tied_copy
                else "; lm_head counted as its own tensor")
    return (f"{', '.join(sorted(quantized))} in {recipe.w_dtype.upper()} with {scales}{zp} "
            f"({recipe.scale_dtype}); everything else in the base dtype{tied}")


# ------------------------------------------------------------------ llama.cpp per-tensor mixes

_ROLE_GROUP = {"token_embd": "embeddings", "output": "lm_head", "ffn_gate_inp": "routers"}


def _role_group(role: str) -> str:
    if role in _ROLE_GROUP:
        return _ROLE_GROUP[role]
    if role.startswith("attn_"):
        return "attention projections"
    if role.endswith("_exps"):
        return "expert projections"
    if role.endswith("_shexp"):
        return "shared experts"
    return "MLP projections"


def _mix_footprint(model: ModelSpec, precision: str, base_dtype: str) -> FootprintResult:
    """A GGUF per-tensor mix: every weight matrix in its own type (scales and mins inside the
    block bytes), as llama.cpp stores it: embeddings and lm_head included, the router, norms and
    biases in F32 (GGUF keeps 1-D tensors in F32). ``gguf``: the bytes of the file's tensors."""
    from roofline.spec.gguf_mix import tensor_types

    e_base = DTYPE_BYTES[base_dtype]
    tensors = tensor_types(precision, model)
    groups: dict[str, list[TensorType]] = {}
    for t in tensors:
        groups.setdefault(_role_group(t.role), []).append(t)
    out: list[FootprintGroup] = []
    for name in ("attention projections", "MLP projections", "expert projections", "shared experts", "routers",
                 "embeddings", "lm_head"):
        ts = groups.get(name, [])
        if not ts:
            continue
        params = sum(t.elements for t in ts)
        out.append(FootprintGroup(name=name, count=len(ts), params=params, bytes_base=params * e_base,
                                  bytes=float(sum(t.bytes for t in ts)), quantized=any(t.type != "f32" for t in ts)))
    if precision == "gguf":
        rest = [t for t in model.gguf_tensors if not t.name.endswith(".weight") or t.name.endswith("_norm.weight")
                or t.name not in {x.name for x in tensors}]
        params = sum(t.elements for t in rest)
        out.append(FootprintGroup(name="norms and biases", count=len(rest), params=params, bytes_base=params * e_base,
                                  bytes=float(sum(t.nbytes for t in rest)), quantized=False))
    else:
        (nt, npar), (bt, bpar) = _vector_params(model)
        out.append(FootprintGroup(name="norms", count=nt, params=npar, bytes_base=npar * e_base, bytes=npar * 4.0,
                                  quantized=False))
        if bt:
            out.append(FootprintGroup(name="biases", count=bt, params=bpar, bytes_base=bpar * e_base, bytes=bpar * 4.0,
                                      quantized=False))
    types: dict[str, int] = {}
    for t in tensors:
        types[t.type] = types.get(t.type, 0) + t.elements
    total_el = sum(types.values())
    mix = ", ".join(f"{k} {v / total_el:.0%}" for k, v in sorted(types.items(), key=lambda kv: -kv[1]))
    what = {"gguf": "as stored in the file (types: ", "mxfp4": "MXFP4 experts, the rest BF16, as gpt-oss ships (types: "
            }.get(precision, f"llama.cpp's {precision.upper()} rule (types: ") + mix + ")"
    q = [g for g in out if g.quantized]
    q_base, q_after = sum(g.bytes_base for g in q), sum(g.bytes for g in q)
    total_base, total = sum(g.bytes_base for g in out), sum(g.bytes for g in out)
    return FootprintResult(
        model=model.name, precision=precision, base_dtype=base_dtype,
        policy=f"every weight matrix in its GGUF type, {what}; block scales and mins are inside each type's bytes; "
               + ("the router BF16, norms and biases F32" if precision == "mxfp4" else "router, norms and biases in F32")
               + (
                   "; the multi-token prediction layers left out, as llama.cpp's converter leaves them out of the file "
                   "(convert_hf_to_gguf.py skips the layers past num_hidden_layers)" if model.nextn_predict_layers
                   else ""),
        groups=out, params=sum(g.params for g in out), total_bytes_base=total_base, total_bytes=total,
        quantized_bytes_base=q_base, quantized_bytes=q_after, quantized_ratio=q_base / q_after if q_after else 1.0,
        total_ratio=total_base / total, active_params=active_params(model),
    )
