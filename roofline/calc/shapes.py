"""The GEMMs of a transformer forward pass, derived from its hyper-parameters.

Per layer: the QKV projection, the attention output projection, the FFN up
(gate and up for a gated MLP) and FFN down projections. Attention's own
batched matmuls (scores, context) are not linear layers; they are non-GEMM work
(:mod:`roofline.calc.non_gemm`), as in the reference paper's breakdown.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class GemmList:
    """Distinct GEMM shapes ``(name, M, N, K)`` and how often each runs per forward pass."""

    names: tuple[str, ...]
    m: np.ndarray
    n: np.ndarray
    k: np.ndarray
    count: np.ndarray

    def __len__(self) -> int:
        return len(self.names)


def gemm_list(rows: list[tuple[str, int, int, int, int]]) -> GemmList:
    """Build a GemmList from ``(name, M, N, K, count)`` rows, checking every dimension is positive."""
    for name, *dims in rows:
        if min(dims) <= 0:
            raise ValueError(f"GEMM {name}: dimensions and count must be positive, got {dims}")
    names = tuple(r[0] for r in rows)
    cols = np.array([r[1:] for r in rows], dtype=np.int64).reshape(-1, 4)
    return GemmList(names, cols[:, 0], cols[:, 1], cols[:, 2], cols[:, 3])


def transformer_gemms(
    *,
    tokens: int,
    hidden: int,
    intermediate: int,
    layers: int,
    heads: int,
    kv_heads: int,
    head_dim: int,
    gated_mlp: bool = False,
    fused_qkv: bool = True,
) -> GemmList:
    """Linear layers of ``layers`` transformer blocks on ``M = tokens`` rows.

    - qkv:      ``N = (heads + 2 kv_heads) head_dim``, ``K = hidden`` (or q, k, v apart when not fused)
    - attn_out: ``N = hidden``, ``K = heads head_dim``
    - ffn_up:   ``N = intermediate`` (``2 intermediate`` for a gated MLP: gate and up), ``K = hidden``
    - ffn_down: ``N = hidden``, ``K = intermediate``
    """
    q_out, kv_out = heads * head_dim, kv_heads * head_dim
    rows: list[tuple[str, int, int, int, int]] = []
    if fused_qkv:
        rows.append(("qkv", tokens, q_out + 2 * kv_out, hidden, layers))
    elif kv_out == q_out:
        rows.append(("q/k/v", tokens, q_out, hidden, 3 * layers))
    else:
        rows += [("q", tokens, q_out, hidden, layers), ("k/v", tokens, kv_out, hidden, 2 * layers)]
    rows += [
        ("attn_out", tokens, hidden, q_out, layers),
        ("ffn_up", tokens, (2 if gated_mlp else 1) * intermediate, hidden, layers),
        ("ffn_down", tokens, hidden, intermediate, layers),
    ]
    return gemm_list(rows)
