"""Multi-head latent attention (DeepSeek-V2/V3, Kimi-K2): its projections as GEMM rows and its attention in
the two forms engines run (``roofline.spec.mla.MlaForm``: naive or absorbed), one formula each.

Notation: ``B`` sequences, ``q`` new tokens each, ``k`` keys each (a decode step's context), ``h`` heads,
``n = qk_nope_head_dim``, ``r = qk_rope_head_dim``, ``v = v_head_dim``, ``c = kv_lora_rank``,
``c_q = q_lora_rank`` (None: one ``q_proj``), ``H`` the hidden size, ``L`` the layers. The cache holds
``c + r`` elements per token per layer: the latent ``c_kv`` and the shared rotary key ``k_pe``.

Projections per layer (rows ``(name, M, N, K, count)``, ``T = B q`` tokens):

- ``q_a``: ``T, c_q, H`` and ``q_b``: ``T, h (n + r), c_q``; or ``q``: ``T, h (n + r), H``
- ``kv_a``: ``T, c + r, H`` (``kv_a_proj_with_mqa``: the latent and ``k_pe``)
- naive: ``kv_b``: ``B (p + k'), h (n + v), c`` over every cached and new token (decode: the context and the
  new token, ``k' = k + q``; prefill: the prompt and its prefix ``p``);
  absorbed: ``k_absorb`` (``q_nope W_UK``, per head ``T x c x n``) and ``v_absorb`` (``ctx W_UV^T``, per head
  ``T x v x c``), each one batched launch per layer over the heads, as llama.cpp's ``ggml_mul_mat`` of the 3-D
  ``attn_k_b`` / ``attn_v_b``: rows ``T, h c, n`` and ``T, h v, c``, ``L`` calls each. The same weights as ``kv_b``
  applied to the queries only; flops, weights and outputs exact, the X of one head counted (``T n``, ``T c``; the
  heads' own queries are ``h`` times that, small beside the weights)
- ``attn_out``: ``T, H, h v``
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from roofline.calc.ops import Op, _f
from roofline.calc.shapes import GemmList, Row, gemm_list

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

#: the GEMM rows of standard attention that MLA's rows replace
STANDARD_ATTENTION_ROWS = ("qkv", "q/k/v", "q", "k/v", "attn_out")
#: the row whose M is the whole context (the naive form's decompression)
DECOMPRESS_ROW = "kv_b"


def mla_gemms(*, batch: float, q_len: float, k_len: float, hidden: int, layers: int, heads: int,
              q_lora_rank: int | None, kv_lora_rank: int, qk_nope: int, qk_rope: int, v_head: int,
              absorbed: bool) -> list[Row]:
    """MLA's projection rows (module docstring) in the absorbed form, or the naive one; ``k_len``: the keys the
    naive form decompresses per sequence."""
    t = batch * q_len
    qk = qk_nope + qk_rope
    rows: list[Row] = []
    if q_lora_rank:
        rows += [("q_a", t, q_lora_rank, hidden, layers), ("q_b", t, heads * qk, q_lora_rank, layers)]
    else:
        rows.append(("q", t, heads * qk, hidden, layers))
    rows.append(("kv_a", t, kv_lora_rank + qk_rope, hidden, layers))
    if not absorbed:
        rows.append((DECOMPRESS_ROW, batch * k_len, heads * (qk_nope + v_head), kv_lora_rank, layers))
    else:
        rows += [("k_absorb", t, heads * kv_lora_rank, qk_nope, layers),
                 ("v_absorb", t, heads * v_head, kv_lora_rank, layers)]
    rows.append(("attn_out", t, hidden, heads * v_head, layers))
    return rows


def replace_attention_rows(base: GemmList, mla_rows: list[Row]) -> GemmList:
    """``base`` (a decoder's rows) with its standard attention projections replaced by ``mla_rows``."""
    rows = [r for r in mla_rows]
    rows += [(n, float(m), int(nn), int(k), float(c)) for n, m, nn, k, c in
             zip(base.names, base.m, base.n, base.k, base.count) if n not in STANDARD_ATTENTION_ROWS]
    return gemm_list(rows)


def _pairs(b: ArrayLike, q: ArrayLike, k: ArrayLike, causal: bool, prefix: ArrayLike) -> np.ndarray:
    """Query-key pairs per head: ``B q k`` (halved when causal over its own tokens) plus ``B q p`` against a prefix."""
    b_, q_ = np.asarray(b, dtype=float), np.asarray(q, dtype=float)
    return b_ * q_ * np.asarray(k, dtype=float) * (0.5 if causal else 1.0) + b_ * q_ * np.asarray(prefix, dtype=float)


def mla_attention_naive(*, batch: ArrayLike, q_len: ArrayLike, k_len: ArrayLike, heads: int, qk_nope: int,
                        qk_rope: int, v_head: int, layers: int, causal: bool, cached: bool, softmax_ops: float,
                        prefix: ArrayLike = 0) -> Op:
    """The naive form's attention, after ``kv_b`` decompressed K and V (a GEMM row of its own). Per layer, with
    ``P`` query-key pairs per head (``B q k``; causal ``B q k / 2``; plus ``B q p`` against a prefix):

    - flops ``2 h P (n + r)`` (scores) ``+ 2 h P v`` (context) on the matmul path, ``softmax x h P`` on the vector path;
    - activations: Q in ``B q h (n + r)``, the context out ``B q h v``, the decompressed ``K_nope`` and ``V``
      (``kv_b``'s output) in, ``B k' h (n + v)`` with ``k' = k + p`` (decode: the context);
    - cache: ``k_pe``, ``B k' r`` (decode; a prefill reads its prefix's, ``B p r``; its own come with the
      activations). The latent ``c_kv`` is read by ``kv_b``, as its X.
    """
    b, q, k, p = _f(batch), _f(q_len), _f(k_len), _f(prefix)
    pairs = heads * _pairs(b, q, k, causal, p)
    flops = layers * 2.0 * pairs * (qk_nope + qk_rope + v_head)
    vector = layers * softmax_ops * pairs
    keys = k + p
    qo = b * q * heads * (qk_nope + qk_rope + v_head)
    decompressed = b * keys * heads * (qk_nope + v_head)
    cache_rows = b * (keys if cached else p) * qk_rope
    fresh_pe = 0.0 if cached else b * k * qk_rope
    act = qo + decompressed + fresh_pe
    return Op("attention", flops, True, layers * act, act, layers * cache_rows, layers * cache_rows, vector)


def mla_attention_absorbed(*, batch: ArrayLike, q_len: ArrayLike, k_len: ArrayLike, heads: int,
                           kv_lora_rank: int, qk_rope: int, layers: int, causal: bool, cached: bool,
                           softmax_ops: float, prefix: ArrayLike = 0) -> Op:
    """The absorbed form's attention over the latent cache (``W_UK`` and ``W_UV`` are GEMM rows of their own).
    Every head's query is ``[q_nope W_UK, q_pe]``, of ``c + r``; its keys the cache rows ``[c_kv, k_pe]`` and its
    values ``c_kv``, shared by the heads (one KV head, as multi-query attention). Per layer, ``P`` pairs per head
    as in :func:`mla_attention_naive`:

    - flops ``2 h P (c + r)`` (scores) ``+ 2 h P c`` (context) on the matmul path, ``softmax x h P`` on the vector path;
    - activations: the absorbed queries in, ``B q h (c + r)``, the latent context out, ``B q h c``;
    - cache: ``B k' (c + r)``, read once for all heads (decode: the context; a prefill its prefix ``p``, its
      own rows ``B k (c + r)`` coming with the activations).
    """
    b, q, k, p = _f(batch), _f(q_len), _f(k_len), _f(prefix)
    pairs = heads * _pairs(b, q, k, causal, p)
    width = kv_lora_rank + qk_rope
    flops = layers * 2.0 * pairs * (width + kv_lora_rank)
    vector = layers * softmax_ops * pairs
    qo = b * q * heads * (width + kv_lora_rank)
    cache_rows = b * ((k + p) if cached else p) * width
    act = qo + (0.0 if cached else b * k * width)
    return Op("attention", flops, True, layers * act, act, layers * cache_rows, layers * cache_rows, vector)


def mla_attention(absorbed: bool, **kw: Any) -> Op:
    """:func:`mla_attention_absorbed`, or :func:`mla_attention_naive`; ``kw`` carries both forms' arguments (each
    takes its own)."""
    if not absorbed:
        return mla_attention_naive(**{k: v for k, v in kw.items() if k != "kv_lora_rank"})
    return mla_attention_absorbed(**{k: v for k, v in kw.items() if k not in ("qk_nope", "v_head")})


def decompressed_keys(batch: ArrayLike, q_len: ArrayLike, context: ArrayLike, decode: bool) -> np.ndarray:
    """Keys per sequence the naive form's ``kv_b`` decompresses in one step: decode, the context and the new
    token (``context + 1``); prefill, the prompt and its prefix (``seq_len + context``)."""
    return _f(context) + (1.0 if decode else _f(q_len))
