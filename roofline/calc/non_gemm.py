"""The non-GEMM work of a transformer forward pass, and its roofline time.

A stated model, not a measurement: each operation reads its inputs and writes
its outputs once at DRAM bandwidth, and attention is one fused
scaled-dot-product kernel (flash attention, as Inductor emits on CPU) whose
score and context matmuls run on the mode's matmul path. Framework overhead,
layout copies and kernel launch costs are not modelled, so this is a lower
bound on the non-GEMM time and an upper bound on the GEMM share ``f``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dataclasses import dataclass

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

#: vector flops per element (rough, for the compute side of memory-bound ops)
_LAYERNORM_FLOPS = 8.0
_GELU_FLOPS = 12.0
_SOFTMAX_FLOPS = 5.0


@dataclass(frozen=True)
class NonGemmOps:
    """Non-GEMM operations per forward pass.

    ``elements``: activation elements read plus written (bytes = elements x the mode's element size);
    ``matmul``: True where the flops run on a matmul path (attention), False for vector work.
    """

    names: tuple[str, ...]
    flops: np.ndarray
    elements: np.ndarray
    matmul: np.ndarray
    kv_cache: np.ndarray | None = None
    """True where the elements are KV-cache entries (their size is the KV dtype's)"""

    def nbytes(self, act_bytes: float, kv_bytes: float) -> np.ndarray:
        if self.kv_cache is None:
            return self.elements * act_bytes
        kv = self.kv_cache.reshape(self.kv_cache.shape + (1,) * (self.elements.ndim - 1))
        return np.where(kv, self.elements * kv_bytes, self.elements * act_bytes)


def transformer_non_gemm(
    *, batch: int, seq_len: int, hidden: int, intermediate: int, layers: int,
    heads: int, kv_heads: int, head_dim: int, gated_mlp: bool = False, causal: bool = False,
) -> NonGemmOps:
    """Attention, layer norms, the MLP activation, residual adds and embeddings.

    Per layer, with ``T = batch x seq_len`` tokens:

    - attention (fused SDPA): ``4 B h S^2 d`` matmul flops plus ``5 B h S^2`` softmax flops
      (half of both when causal); moves Q, K, V and the context: ``T d (2 h + 2 kv)`` elements
    - 2 layer norms: ``2 T H`` elements each
    - MLP activation (GeLU, or SiLU x up for a gated MLP): ``2 T I`` elements (``3 T I`` gated)
    - 2 residual adds: ``3 T H`` elements each
    - embeddings (once): gather and add three tables, then a layer norm: ``6 T H`` elements
    """
    batch, seq_len = np.asarray(batch, dtype=float), np.asarray(seq_len, dtype=float)  # scalars or arrays
    t = batch * seq_len
    h, kv, d = heads, kv_heads, head_dim
    scores = batch * h * seq_len * seq_len * (0.5 if causal else 1.0)
    act_el = (3.0 if gated_mlp else 2.0) * t * intermediate
    names = ("attention", "layer_norm", "mlp_activation", "residual_add", "embeddings")
    flops = [
        layers * (4.0 * scores * d + _SOFTMAX_FLOPS * scores),
        layers * 2 * _LAYERNORM_FLOPS * t * hidden,
        layers * _GELU_FLOPS * t * intermediate,
        layers * 2 * t * hidden,
        (3 + _LAYERNORM_FLOPS) * t * hidden,
    ]
    elements = [
        layers * t * d * (2 * h + 2 * kv),
        layers * 2 * 2 * t * hidden,
        layers * act_el,
        layers * 2 * 3 * t * hidden,
        6 * t * hidden,
    ]
    matmul = np.array([True, False, False, False, False])
    return NonGemmOps(names, _rows(flops), _rows(elements), matmul)


def decode_non_gemm(
    *, batch: int, context: int, hidden: int, intermediate: int, layers: int,
    heads: int, kv_heads: int, head_dim: int, gated_mlp: bool = True,
) -> NonGemmOps:
    """The non-GEMM work of generating one token per sequence, with ``context`` tokens cached.

    Per layer, ``T = batch`` new tokens:

    - attention over the cache: ``4 B h d C`` matmul flops and ``5 B h C`` softmax flops; reads
      the cached K and V, ``2 B kv d C`` KV-cache elements (grouped-query attention: kv heads)
    - 2 norms ``2 T H`` elements each, the MLP activation ``3 T I`` (``2 T I`` ungated),
      2 residual adds ``3 T H`` each; once: the embedding row and the final norm ``4 T H``
    """
    t = np.asarray(batch, dtype=float)  # scalars or arrays
    h, kv, d, c = heads, kv_heads, head_dim, np.asarray(context, dtype=float)
    act_el = (3.0 if gated_mlp else 2.0) * t * intermediate
    names = ("attention", "layer_norm", "mlp_activation", "residual_add", "embeddings")
    flops = [
        layers * (4.0 * t * h * d * c + _SOFTMAX_FLOPS * t * h * c),
        layers * 2 * _LAYERNORM_FLOPS * t * hidden,
        layers * _GELU_FLOPS * t * intermediate,
        layers * 2 * t * hidden,
        (1 + _LAYERNORM_FLOPS) * t * hidden,
    ]
    elements = [
        layers * 2.0 * t * kv * d * c,
        layers * 2 * 2 * t * hidden,
        layers * act_el,
        layers * 2 * 3 * t * hidden,
        4 * t * hidden,
    ]
    matmul = np.array([True, False, False, False, False])
    kv_cache = np.array([True, False, False, False, False])
    return NonGemmOps(names, _rows(flops), _rows(elements), matmul, kv_cache)


def _rows(values: list) -> np.ndarray:
    """One row per op; with array inputs (a sweep) each row is that op over the sweep."""
    arrays = np.broadcast_arrays(*[np.asarray(v, dtype=float) for v in values])
    return np.stack(arrays)


def op_roofline(ops: NonGemmOps, matmul_peak: ArrayLike, vector_peak: ArrayLike, act_bytes: float, kv_bytes: float,
                bandwidth: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Roofline times of each operation, ``(t_compute, t_memory)``: ``F / P`` (attention on the matmul
    path, the rest on the vector path) and ``D / B``; the op takes ``max(t_compute, t_memory)``."""
    mask = ops.matmul.reshape(ops.matmul.shape + (1,) * (ops.flops.ndim - 1))
    peak = np.where(mask, matmul_peak, vector_peak)
    return ops.flops / peak, ops.nbytes(act_bytes, kv_bytes) / bandwidth
