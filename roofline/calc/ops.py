"""The non-GEMM work of a transformer step, one small formula per operation.

In the style of ``torch/utils/flop_counter.py``: each function prices one operation from its
shape and returns an :class:`Op` (flops, the elements it moves, how often it runs per step, and
the working set of one call, which decides the memory level it is priced at). Counting is kept
apart from pricing (:mod:`roofline.model.step`). The per-element op counts are parameters:
their values and sources live in :mod:`roofline.spec.op_costs`.

What the model assumes, stated once: every operation reads its inputs and writes its outputs once
(no re-reads); attention is one fused scaled-dot-product kernel (flash attention, as Inductor emits
on CPU): the scores are never written, its score and context products run on the matmul path, and its
softmax between them on the FP32 vector units (no matrix unit computes an exponential). An engine that
runs it unfused (llama.cpp without flash attention) says so, and its scores go through memory.
Framework overhead, layout copies and launch costs are not modelled, so the non-GEMM time is a
lower bound and the GEMM share ``f`` an upper bound.

All shape arguments broadcast (numpy), so one call prices a whole sweep.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


@dataclass(frozen=True)
class Op:
    """One kind of non-GEMM operation over a step (all its calls)."""

    name: str
    flops: np.ndarray
    """per step, all calls"""
    matmul: bool
    """the flops run on a matmul path (attention's products), else on the vector path"""
    act_elements: np.ndarray
    """activation elements read plus written per step"""
    act_working_set: np.ndarray
    """activation elements one call touches: what must fit a cache level for the call to run from it"""
    kv_elements: np.ndarray | float = 0.0
    """KV-cache elements read per step"""
    kv_working_set: np.ndarray | float = 0.0
    """the whole KV cache (all layers): it persists between steps"""
    vector_flops: np.ndarray | float = 0.0
    """per step: flops of a matmul operation that run on the vector path all the same (attention's softmax:
    no matrix unit computes an exponential)"""
    state_bytes: np.ndarray | float = 0.0
    """bytes of a fixed-size recurrent state read and written per step (linear attention:
    :mod:`roofline.calc.linear_attention`), in the state's own type whatever the KV cache's"""
    state_working_set: np.ndarray | float = 0.0
    """bytes of the whole recurrent state (all layers): it persists between steps"""
    score_bytes: np.ndarray | float = 0.0
    """bytes of attention scores written and read back per step (unfused attention: :func:`attention`)"""
    score_working_set: np.ndarray | float = 0.0
    """bytes of the scores of one call of one layer: what must fit a cache level for them to stay there"""
    comm_bytes: np.ndarray | float = 0.0
    """bytes a tensor-parallel split's all-reduces move per step, every rank's (:func:`tp_allreduce`)"""
    comm_working_set: np.ndarray | float = 0.0
    """bytes of one all-reduce's buffers, every rank's: what must fit a cache level for them to stay there"""


def _f(x: ArrayLike) -> np.ndarray:
    return np.asarray(x, dtype=float)


def attention(*, batch: ArrayLike, q_len: ArrayLike, k_len: ArrayLike, heads: int, kv_heads: int, head_dim: int,
              layers: int, causal: bool, cached: bool, softmax_ops: float, window: float | None = None,
              window_layers: int = 0, prefix: ArrayLike = 0, shared_kv: ArrayLike = 1.0,
              bytes_per_score: float = 0.0) -> Op:
    """Fused scaled-dot-product attention of ``q_len`` queries over ``k_len`` keys, per layer:

    - flops: ``4 B h q k d`` on the matmul path (scores and context), and ``softmax_ops x B h q k`` on
      the vector path (``vector_flops``: the fused kernel's softmax runs on the FP32 vector units between
      its two products, whatever unit runs the products); causal masking halves both when
      the queries are the keys (``q = k``, prefill); a decode query sees every cached key;
    - moved: Q in and the context out, ``2 B q h d``; K and V, ``2 B k kv d`` (grouped-query attention
      reads ``kv`` heads) — fresh activations from the QKV projection (encoder, prefill), or the KV
      cache (``cached``: decode), whose working set is the whole cache of all layers.

    Sliding-window attention (``window`` tokens, in ``window_layers`` of the ``layers``): a query of such a
    layer sees at most the last ``w`` keys, so a decode step scores and reads ``min(k, w)`` cached keys
    (the layer's cache holds no more), and a causal prefill of ``s`` tokens scores ``s w - w^2 / 2`` pairs
    instead of ``s^2 / 2`` once ``s > w`` (it still reads every fresh K and V once).

    A causal prefill of ``s`` tokens after ``p`` cached ones (``prefix``: a prompt at a depth) also scores
    ``s p`` pairs against the cache (``s min(p, w)`` in a windowed layer) and reads those cached keys and
    values once, ``2 B p kv d`` per layer.

    A cache all ``B`` sequences share (``shared_kv = B``: llama.cpp's unified KV buffer) is scored whole by each
    query, the other sequences' cells masked after: ``shared_kv`` times the scores and their flops (a decode step
    ``B x B k``; ``B`` prompts one after another, the ``i``-th over the ``i`` in the buffer: ``shared_kv = (B + 1) / 2``
    on average), the keys and values still read once.

    Unfused attention (``bytes_per_score > 0``; :attr:`~roofline.spec.vocab.AttentionForm.UNFUSED`, llama.cpp without
    flash attention): a KQ matmul computes and writes every score of the cells in view, and the causal mask is applied
    after, in the softmax, so a prefill scores its whole ``q x k`` rectangle, twice the pairs a fused kernel scores;
    the scores then go through memory, ``bytes_per_score`` each (the Op's ``score_bytes``: that times every layer's
    scores), at the level one call's scores of one layer fit (``score_working_set``), ``4 h q k`` bytes in f32 times
    the shared span, times ``B`` for a decode step, whose one call holds every sequence's query.
    """
    if np.any(_f(prefix) > 0):
        return _with_prefix(attention(batch=batch, q_len=q_len, k_len=k_len, heads=heads, kv_heads=kv_heads,
                                      head_dim=head_dim, layers=layers, causal=causal, cached=cached,
                                      softmax_ops=softmax_ops, window=window, window_layers=window_layers,
                                      shared_kv=shared_kv, bytes_per_score=bytes_per_score),
                            _f(batch), _f(q_len), _f(prefix), heads, kv_heads, head_dim, layers, softmax_ops, window,
                            window_layers, _f(shared_kv), bytes_per_score)
    b, q, k, share = _f(batch), _f(q_len), _f(k_len), _f(shared_kv)
    full = layers - (window_layers if window is not None else 0)
    unfused = bytes_per_score > 0
    scores = share * b * heads * q * k * (0.5 if causal and not unfused else 1.0)
    kv_rows = 2.0 * b * k * kv_heads * head_dim
    flops, vector = full * 4.0 * scores * head_dim, full * softmax_ops * scores
    kv_cached = full * kv_rows
    if window is not None and window_layers:
        w = float(window)
        if cached or unfused:
            s_w = b * heads * q * np.minimum(k, w)
        elif causal:
            s_w = b * heads * np.where(k <= w, 0.5 * q * k, q * w - 0.5 * w * w)
        else:
            s_w = b * heads * q * np.minimum(k, w)
        s_w = share * s_w
        flops, vector = flops + window_layers * 4.0 * s_w * head_dim, vector + window_layers * softmax_ops * s_w
        kv_cached = kv_cached + window_layers * 2.0 * b * np.minimum(k, w) * kv_heads * head_dim
    qo = 2.0 * b * q * heads * head_dim
    moved = bytes_per_score * flops / (4.0 * head_dim)  # every layer's scores
    held = 4.0 * heads * q * k * share * (b if cached else 1.0) if unfused else 0.0
    if cached:
        return Op("attention", flops, True, layers * qo, qo, kv_cached, kv_cached, vector, score_bytes=moved,
                  score_working_set=held)
    return Op("attention", flops, True, layers * (qo + kv_rows), qo + kv_rows, vector_flops=vector, score_bytes=moved,
              score_working_set=held)


def _with_prefix(fresh: Op, b: np.ndarray, q: np.ndarray, p: np.ndarray, heads: int, kv_heads: int, head_dim: int,
                 layers: int, softmax_ops: float, window: float | None, window_layers: int,
                 shared_kv: ArrayLike = 1.0, bytes_per_score: float = 0.0) -> Op:
    """A prefill's attention over its own tokens (``fresh``) plus its ``q`` queries against ``p`` cached keys:
    ``4 B h q p' d`` flops and ``softmax x B h q p'`` vector flops per layer, ``p' = min(p, w)`` in a windowed
    layer, and the cached keys and values read once, ``2 B p' kv d`` elements per layer, a working set of the
    whole cache; unfused, those scores go through memory too (``bytes_per_score`` each), one call's of a layer
    ``4 h q (q + p)`` bytes."""
    full = layers - (window_layers if window is not None else 0)
    seen = full * p + (window_layers * np.minimum(p, float(window)) if window is not None and window_layers else 0.0)
    share = _f(shared_kv)
    scores = share * b * heads * q * seen
    cached = 2.0 * b * seen * kv_heads * head_dim
    held = 4.0 * heads * q * (q + p) * share if bytes_per_score > 0 else 0.0
    return Op("attention", fresh.flops + 4.0 * scores * head_dim, True, fresh.act_elements, fresh.act_working_set,
              cached, cached, fresh.vector_flops + softmax_ops * scores,
              score_bytes=fresh.score_bytes + bytes_per_score * scores, score_working_set=held)


def norm(*, tokens: ArrayLike, hidden: int, calls: int, ops_per_element: float, name: str = "norm") -> Op:
    """LayerNorm or RMSNorm over ``tokens x hidden``: reads and writes ``2 T H`` elements per call,
    ``ops_per_element x T H`` flops."""
    t = _f(tokens)
    return Op(name, calls * ops_per_element * t * hidden, False, calls * 2.0 * t * hidden, 2.0 * t * hidden)


def activation(*, tokens: ArrayLike, intermediate: float, layers: int, gated: bool, ops_per_element: float) -> Op:
    """The MLP activation per layer: GeLU reads and writes ``2 T I`` elements; a gated MLP (SiLU(gate) x up)
    reads gate and up and writes one: ``3 T I``. Flops: ``ops_per_element x T I``."""
    t = _f(tokens)
    per_call = (3.0 if gated else 2.0) * t * intermediate
    return Op("mlp_activation", layers * ops_per_element * t * intermediate, False, layers * per_call, per_call)


def residual_add(*, tokens: ArrayLike, hidden: int, calls: int, ops_per_element: float) -> Op:
    """``y = x + r`` over ``T x H``: reads two, writes one: ``3 T H`` elements per call."""
    t = _f(tokens)
    return Op("residual_add", calls * ops_per_element * t * hidden, False, calls * 3.0 * t * hidden, 3.0 * t * hidden)


def embeddings(*, tokens: ArrayLike, hidden: int, tables: int, norm_ops: float) -> Op:
    """The embedding lookup, once per step: gather a row from each of ``tables`` tables, add them and
    (encoders, ``tables > 1``) normalise: ``(tables + 1) T H`` elements plus ``2 T H`` for the norm;
    ``(tables - 1) T H`` adds and ``norm_ops x T H`` flops. Decoders gather one table, no norm."""
    t = _f(tokens)
    if tables == 1:
        return Op("embeddings", 0.0 * t, False, 2.0 * t * hidden, 2.0 * t * hidden)
    elements = (tables + 1 + 2) * t * hidden
    return Op("embeddings", (tables - 1 + norm_ops) * t * hidden, False, elements, elements)


def tp_allreduce(*, tokens: ArrayLike, hidden: int, layers: int, ranks: int, element_bytes: float) -> Op:
    """A tensor-parallel split's all-reduces over ``ranks`` (:mod:`roofline.calc.allreduce`): ``2 L`` per step of
    ``S = tokens x hidden x e`` bytes each; every rank's additions on the vector path and its bytes
    (:func:`~roofline.calc.allreduce.bytes_per_rank`), ``T`` ranks' worth, their working set the ranks' buffers of
    one call (``T S``, at most a chunk each)."""
    from roofline.calc.allreduce import CHUNK_BYTES, PER_LAYER, adds_per_rank, bytes_per_rank

    size = _f(tokens) * hidden * element_bytes
    calls = PER_LAYER * layers * ranks
    return Op("tp_allreduce", calls * adds_per_rank(size, ranks, element_bytes), False, 0.0 * size, 0.0 * size,
              comm_bytes=calls * bytes_per_rank(size, ranks),
              comm_working_set=ranks * np.minimum(size, CHUNK_BYTES))
