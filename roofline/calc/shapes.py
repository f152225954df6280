"""The GEMMs of a transformer forward pass, derived from its hyper-parameters.

Per layer: the QKV projection, the attention output projection, the FFN up
(gate and up for a gated MLP) and FFN down projections. Attention's own
batched matmuls (scores, context) are not linear layers; they are non-GEMM work
(:mod:`roofline.calc.non_gemm`), as in the reference paper's breakdown.

A mixture-of-experts layer (:func:`moe_gemms`) replaces the FFN with a router, the routed
experts the step's tokens activate, and optional shared experts. Expert rows have a fractional
``M`` and ``count``: averages over uniform routing (:func:`expected_distinct_experts`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class GemmList:
    """Distinct GEMM shapes ``(name, M, N, K)`` and how often each runs per forward pass.

    ``m`` and ``count`` are floats: a mixture of experts runs an expected (fractional) number of
    distinct experts, each on an average (fractional) number of rows. ``n`` and ``k`` are whole.
    """

    names: tuple[str, ...]
    m: np.ndarray
    n: np.ndarray
    k: np.ndarray
    count: np.ndarray

    def __len__(self) -> int:
        return len(self.names)


Row = tuple[str, "float | np.ndarray", int, int, "float | np.ndarray"]
"""a GEMM row: name, M (rows of activations), N, K, calls (M and the calls may be arrays over a grid)"""


def gemm_list(rows: list[Row]) -> GemmList:
    """Build a GemmList from ``(name, M, N, K, count)`` rows, checking every dimension is positive."""
    for name, *dims in rows:
        if min(dims) <= 0:
            raise ValueError(f"GEMM {name}: dimensions and count must be positive, got {dims}")
    names = tuple(r[0] for r in rows)
    cols = np.array([r[1:] for r in rows], dtype=float).reshape(-1, 4)
    return GemmList(names, cols[:, 0], cols[:, 1].astype(np.int64), cols[:, 2].astype(np.int64), cols[:, 3])


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
    rows: list[Row] = []
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


def expected_distinct_experts(experts: int, top_k: int, tokens: float | np.ndarray) -> float | np.ndarray:
    """Expected number of distinct experts a layer runs for ``b = tokens`` routed tokens.

    ``D = E (1 - (1 - k/E)^b)``. Assumption: uniform routing, each token's top-k an independent,
    uniformly drawn set of k of the E experts (so one expert is missed by a token with probability
    ``1 - k/E``). Real routers are skewed, which lowers D at small batches. ``D = k`` at one token,
    ``D -> E`` as tokens grow. ``tokens`` may be an array (a sweep's points).
    """
    if not 1 <= top_k <= experts:
        raise ValueError(f"top_k {top_k}: between 1 and experts {experts}")
    d = experts * (1.0 - (1.0 - top_k / experts) ** np.asarray(tokens, dtype=float))
    return float(d) if np.ndim(d) == 0 else d


def moe_gemms(
    *,
    tokens: int,
    hidden: int,
    moe_layers: int,
    experts: int,
    top_k: int,
    expert_intermediate: int,
    shared_intermediate: int = 0,
    shared_gate: bool = False,
    gated_mlp: bool = True,
    distinct_experts: float | None = None,
) -> list[Row]:
    """GEMM rows of ``moe_layers`` mixture-of-experts MLPs on ``tokens`` routed tokens.

    - router:      ``M = tokens``, ``N = E`` (``+ 1`` for a shared expert's sigmoid gate), ``K = hidden``
    - expert_up:   ``M = tokens k / D``, ``N = e`` (``2 e`` gated), ``K = hidden``, ``count = layers x D``
    - expert_down: ``M = tokens k / D``, ``N = hidden``, ``K = e``, ``count = layers x D``
    - shared_up / shared_down: a dense MLP of the shared width ``s`` on all ``tokens``

    ``D`` = distinct experts per layer (:func:`expected_distinct_experts` under uniform routing, or
    ``distinct_experts`` when measured). Each token runs its own k experts only, so the expert
    GEMMs do ``2 tokens k N K`` flops per layer in total, whatever D; they read ``D`` experts'
    weights. Decode at batch 1 reads k experts, prefill on many tokens all E.
    """
    d = expected_distinct_experts(experts, top_k, tokens) if distinct_experts is None else distinct_experts
    if not 0 < d <= experts:
        raise ValueError(f"distinct experts {d}: between 0 and {experts}")
    m_expert = tokens * top_k / d
    up = (2 if gated_mlp else 1)
    rows: list[Row] = [
        ("router", tokens, experts + int(shared_gate), hidden, moe_layers),
        ("expert_up", m_expert, up * expert_intermediate, hidden, moe_layers * d),
        ("expert_down", m_expert, hidden, expert_intermediate, moe_layers * d),
    ]
    if shared_intermediate:
        rows += [("shared_up", tokens, up * shared_intermediate, hidden, moe_layers),
                 ("shared_down", tokens, hidden, shared_intermediate, moe_layers)]
    return rows


def decoder_gemms(
    *,
    tokens: int,
    hidden: int,
    intermediate: int,
    layers: int,
    heads: int,
    kv_heads: int,
    head_dim: int,
    gated_mlp: bool = True,
    fused_qkv: bool = True,
    moe_layers: int = 0,
    experts: int = 0,
    top_k: int = 0,
    expert_intermediate: int = 0,
    shared_intermediate: int = 0,
    shared_gate: bool = False,
    distinct_experts: float | None = None,
) -> GemmList:
    """:func:`transformer_gemms` with ``moe_layers`` of the ``layers`` replacing their dense MLP
    (``ffn_up``, ``ffn_down``, run by the ``layers - moe_layers`` dense layers) by :func:`moe_gemms`.
    Without MoE layers it is exactly :func:`transformer_gemms`."""
    base = transformer_gemms(tokens=tokens, hidden=hidden, intermediate=intermediate, layers=layers, heads=heads,
                             kv_heads=kv_heads, head_dim=head_dim, gated_mlp=gated_mlp, fused_qkv=fused_qkv)
    if not moe_layers:
        return base
    dense = layers - moe_layers
    rows: list[Row] = []
    for name, m, n, k, c in zip(base.names, base.m, base.n, base.k, base.count):
        if name in ("ffn_up", "ffn_down"):
            if dense:
                rows.append((name, float(m), int(n), int(k), float(c) / layers * dense))
        else:
            rows.append((name, float(m), int(n), int(k), float(c)))
    rows += moe_gemms(tokens=tokens, hidden=hidden, moe_layers=moe_layers, experts=experts, top_k=top_k,
                      expert_intermediate=expert_intermediate, shared_intermediate=shared_intermediate,
                      shared_gate=shared_gate, gated_mlp=gated_mlp, distinct_experts=distinct_experts)
    return gemm_list(rows)
