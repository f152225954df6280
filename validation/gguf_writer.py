"""Write a llama-architecture GGUF file with random weights in chosen GGML block types.

No quantizer runs: random bytes in a block layout are valid weights once the block's FP16 scale
fields hold sane finite values, so a file of hundreds of MB is written in seconds. Each block
type's scale and min fields (``ggml-common.h``) are set so that the weights have a standard
deviation near ``1/sqrt(K)`` (activations stay bounded through the layers; the values never
matter for speed, but NaNs and denormals could). Norms are ones (F32), the router F32.

The tokenizer is a minimal SentencePiece-style ("llama") vocabulary: ``<unk> <s> </s>``, the 256
byte tokens, then placeholder pieces up to the model's vocabulary size; llama.cpp needs one to
load the file, and the benchmark feeds token ids, never text.

Needs only ``gguf`` and numpy (the ``gguf`` extra, also in ``dev``); no torch, no llama.cpp.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from roofline.errors import UserError
from roofline.spec.gguf_mix import TensorType, model_tensors, tensor_types
from roofline.spec.gguf_types import BLOCKS, LLAMA_CPP, RECIPE_TYPES
from roofline.spec.model import ModelSpec

#: per block type: (byte offset of each FP16 field, its value per unit 1/sqrt(K)) -- the weights are
#: d*q (q8_0: q in [-128, 127], std ~74), d*(q-8) (q4_0: std ~4.6), d*(q-16) (q5_0: ~9.2),
#: d*q + m (q4_1, q5_1), d*sc*q - dmin*m (q4_K, q5_K: 6-bit sc, m ~31; q2_K: 4-bit sc and m ~7.5, q ~1.1),
#: d*(sc-32)*q (q3_K: q in -4..3, ~2.3), d*(sc-32)*(q-32) (q6_K: int8 sc ~74, ~18.5), d*table[q] (iq4_nl) and
#: d*(sc-32)*table[q] (iq4_xs): kvalues_iq4nl's 16 values, ~68
_SCALES: dict[str, tuple[tuple[int, float], ...]] = {
    "q8_0": ((0, 1 / 74),),
    "q4_0": ((0, 1 / 4.6),),
    "q4_1": ((0, 1 / 4.6), (2, -7.5 / 4.6)),
    "iq4_nl": ((0, 1 / 68),),
    "q2_K": ((80, 1 / (7.5 * 1.1)), (82, 1.5 / (7.5 * 1.1))),
    "q3_K": ((108, 1 / (18.5 * 2.3)),),
    "iq4_xs": ((0, 1 / (18.5 * 68)),),
    "q5_0": ((0, 1 / 9.2),),
    "q5_1": ((0, 1 / 9.2), (2, -15.5 / 9.2)),
    "q4_K": ((0, 1 / (31 * 4.6)), (2, 7.5 / (31 * 4.6))),
    "q5_K": ((0, 1 / (31 * 9.2)), (2, 15.5 / (31 * 9.2))),
    "q6_K": ((208, 1 / (74 * 18.5)),),
    # the i-quants: d (ggml_half) first; each weight is d x a block scale (about 8 to 16) x a grid value (ggml-common.h)
    "iq1_s": ((0, 1 / 6),),
    "iq2_xxs": ((0, 1 / 50),),
    "iq2_xs": ((0, 1 / 50),),
    "iq2_s": ((0, 1 / 50),),
    "iq3_xxs": ((0, 1 / 120),),
    "iq3_s": ((0, 1 / 128),),
    "iq1_m": (),  # its scale: _IQ1_M_SCALES
}
#: block_iq1_m has no d: its fp16 scale is the top nibbles of the four uint16 of ``scales`` (iq1m_scale_t), at this
#: offset, and each weight is it x (2 x a 3-bit scale + 1) x a grid value of -1, 0 or 1
_IQ1_M_SCALES = (48, 1 / 6)

#: gguf.LlamaFileType of a single-type file (informational: llama.cpp reads each tensor's own type)
_FILE_TYPE = {"q8_0": "MOSTLY_Q8_0", "q4_0": "MOSTLY_Q4_0", "q4_1": "MOSTLY_Q4_1", "q5_0": "MOSTLY_Q5_0",
              "q5_1": "MOSTLY_Q5_1",
              "iq4_nl": "MOSTLY_IQ4_NL", "q2_K": "MOSTLY_Q2_K", "q3_K": "MOSTLY_Q3_K_S", "q4_K": "MOSTLY_Q4_K_S",
              "iq4_xs": "MOSTLY_IQ4_XS", "q5_K": "MOSTLY_Q5_K_S", "q6_K": "MOSTLY_Q6_K", "q4_k_m": "MOSTLY_Q4_K_M",
              "iq1_s": "MOSTLY_IQ1_S", "iq1_m": "MOSTLY_IQ1_M", "iq2_xxs": "MOSTLY_IQ2_XXS", "iq2_xs": "MOSTLY_IQ2_XS",
              "iq2_s": "MOSTLY_IQ2_S", "iq3_xxs": "MOSTLY_IQ3_XXS", "iq3_s": "MOSTLY_IQ3_S",
              "f16": "MOSTLY_F16", "bf16": "MOSTLY_BF16"}
#: the float types a file may hold every weight matrix in (llama.cpp's convert writes them), 2 bytes a weight
FLOATS = ("f16", "bf16")


@dataclass(frozen=True)
class WrittenGguf:
    path: str
    precision: str
    tensors: list[TensorType]
    """the weight matrices and their types (norms not listed)"""
    nbytes: int
    """size of the file"""
    seconds: float


def check_writable(model: ModelSpec) -> None:
    """The writer emits llama.cpp's ``llama`` architecture: a dense or all-MoE decoder, RMSNorm, no
    biases, no q/k norms, no shared experts (those need their own architecture's tensors)."""
    problems = [what for what, bad in (
        ("an encoder", model.family != "decoder"), ("q/k norms", model.qk_norm),
        ("attention biases", model.attention_bias), ("MLP biases", model.mlp_bias),
        ("a non-gated MLP", not model.gated_mlp), ("shared experts", model.shared_expert_intermediate_size > 0),
        ("dense layers among MoE layers", bool(model.dense_layers)),
    ) if bad]
    if problems:
        raise UserError(f"{model.name}: the GGUF writer makes llama-architecture files; this model has "
                        f"{', '.join(problems)} (pick a Llama-style model, e.g. llama-3.2-1b, or give a config.json)")


def _tokens(vocab: int) -> tuple[list[str], list[float], list[int]]:
    special = ["<unk>", "<s>", "</s>"]
    tokens = special + [f"<0x{b:02X}>" for b in range(256)]
    if vocab < len(tokens) + 1:
        raise UserError(f"vocab_size {vocab}: the GGUF writer needs at least {len(tokens) + 1} tokens")
    tokens += [f"\u2581t{i}" for i in range(vocab - len(tokens))]
    types = [2, 3, 3] + [6] * 256 + [1] * (vocab - 259)
    scores = [0.0] * 259 + [-float(i) for i in range(vocab - 259)]
    return tokens, scores, types


def write_random_gguf(path: str | Path, model: ModelSpec, precision: str = "q8_0", *, seed: int = 0) -> WrittenGguf:
    """Write ``model`` with random weights: every weight matrix in ``precision``'s GGML type (``q8_0``,
    ``q4_0``, ``q4_k``, ...; token_embd and output too), or per tensor by llama.cpp's ``q4_k_m``
    rule. Streams one tensor at a time (memory: the largest tensor)."""
    import gguf

    check_writable(model)
    block = BLOCKS.get(RECIPE_TYPES.get(precision, ""))
    if block is not None and block.engine != LLAMA_CPP:
        raise UserError(f"--precision {precision}: {block.engine}'s own type; the writer makes the types the gguf "
                        "package knows (llama.cpp's)")
    t0 = time.perf_counter()
    if precision in FLOATS:  # every weight matrix in the float type: the tensors of a single-type file, 2 bytes each
        types = [dataclasses.replace(t, type=precision, bytes=t.elements * 2.0) for t in tensor_types("q8_0", model)]
    else:
        types = tensor_types(precision, model)
    by_name = {t.name: t for t in types}
    rng = np.random.default_rng(seed)
    m = model
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name(f"{m.name} (random weights, {precision})")
    w.add_block_count(m.num_hidden_layers)
    w.add_context_length(m.max_position_embeddings)
    w.add_embedding_length(m.hidden_size)
    w.add_feed_forward_length(m.expert_intermediate if m.is_moe else m.intermediate_size)
    w.add_head_count(m.num_attention_heads)
    w.add_head_count_kv(m.kv_heads)
    w.add_key_length(m.head_size)
    w.add_value_length(m.head_size)
    w.add_rope_dimension_count(m.head_size)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_freq_base(10000.0)
    w.add_vocab_size(m.vocab_size)
    first_type = next(t.type for t in types if t.role == "attn_q")
    ftype = _FILE_TYPE.get("q4_k_m" if precision == "q4_k_m" else first_type)
    if ftype:
        w.add_file_type(int(getattr(gguf.LlamaFileType, ftype)))
    if m.is_moe:
        w.add_expert_count(m.num_experts)
        w.add_expert_used_count(m.num_experts_per_tok)
    tokens, scores, token_types = _tokens(m.vocab_size)
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(token_types)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_unk_token_id(0)

    plan = _plan(m, by_name)
    for name, shape, t in plan:
        if t == "f32":
            n = int(np.prod(shape))
            w.add_tensor_info(name, shape, np.dtype(np.float32), n * 4)
        elif t in FLOATS:
            *lead, k = shape
            byte_shape = (*lead, k * 2)
            w.add_tensor_info(name, byte_shape, np.dtype(np.uint8), int(np.prod(byte_shape)),
                              raw_dtype=getattr(gguf.GGMLQuantizationType, t.upper()))
        else:
            b = BLOCKS[t]
            *lead, k = shape
            if k % b.weights_per_block:
                raise UserError(f"{name}: row length {k} is not a multiple of {t}'s block of {b.weights_per_block}")
            byte_shape = (*lead, k // b.weights_per_block * int(b.bytes_per_block))
            w.add_tensor_info(name, byte_shape, np.dtype(np.uint8), int(np.prod(byte_shape)),
                              raw_dtype=getattr(gguf.GGMLQuantizationType, t.upper()))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    for name, shape, t in plan:
        w.write_tensor_data(_data(rng, shape, t, role=name))
    w.close()
    return WrittenGguf(path=str(path), precision=precision, tensors=types, nbytes=Path(path).stat().st_size,
                       seconds=time.perf_counter() - t0)


def _plan(m: ModelSpec, by_name: dict[str, TensorType]) -> list[tuple[str, tuple[int, ...], str]]:
    """``(name, numpy shape, type)`` of every tensor in file order; 2-D shapes are ``(N, K)``, experts ``(E, N, K)``."""
    h = m.hidden_size
    out: list[tuple[str, tuple[int, ...], str]] = []
    for name, role, layer, elements, cols in model_tensors(m):
        rows = elements // cols
        shape = (m.num_experts, rows // m.num_experts, cols) if role.endswith("_exps") else (rows, cols)
        if role == "attn_q":
            out.append((f"blk.{layer}.attn_norm.weight", (h,), "f32"))
        if role in ("ffn_gate", "ffn_gate_inp"):
            out.append((f"blk.{layer}.ffn_norm.weight", (h,), "f32"))
        if role == "output":
            out.append(("output_norm.weight", (h,), "f32"))
        out.append((name, shape, by_name[name].type))
    if m.tie_word_embeddings:
        out.append(("output_norm.weight", (h,), "f32"))
    return out


def _data(rng: np.random.Generator, shape: tuple[int, ...], t: str, role: str) -> np.ndarray:
    if t in FLOATS:  # N(0, 1 / K) weights, as bytes: F16 as numpy stores it, BF16 the top half of each F32
        x = (rng.standard_normal(shape, dtype=np.float32) / np.sqrt(shape[-1])).astype(np.float32)
        half = x.astype(np.float16).view(np.uint16) if t == "f16" else (x.view(np.uint32) >> 16).astype(np.uint16)
        return half.view(np.uint8).reshape(*shape[:-1], shape[-1] * 2)
    if t == "f32":
        if "norm" in role:
            return np.ones(shape, dtype=np.float32)
        return (rng.standard_normal(shape, dtype=np.float32) / np.sqrt(shape[-1])).astype(np.float32)
    b = BLOCKS[t]
    *lead, k = shape
    nblocks = int(np.prod(lead)) * (k // b.weights_per_block)
    raw = np.frombuffer(rng.bytes(nblocks * int(b.bytes_per_block)), dtype=np.uint8).copy()
    blocks = raw.reshape(nblocks, int(b.bytes_per_block))
    if t == "iq1_m":
        offset, per_unit = _IQ1_M_SCALES
        bits = int(np.float16(per_unit / np.sqrt(k)).view(np.uint16))
        sc = blocks[:, offset:offset + 8].copy().view("<u2")
        for i in range(4):
            sc[:, i] = (sc[:, i] & 0x0FFF) | (((bits >> (4 * i)) & 0xF) << 12)
        blocks[:, offset:offset + 8] = sc.view(np.uint8)
    for offset, per_unit in _SCALES[t]:
        value = np.frombuffer(np.float16(per_unit / np.sqrt(k)).tobytes(), dtype=np.uint8)
        blocks[:, offset:offset + 2] = value
    return raw.reshape(*lead, k // b.weights_per_block * int(b.bytes_per_block))
