"""How many sequences fit in the KV cache: the concurrency cap of continuous batching."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


def max_concurrent_sequences(dram_bytes: ArrayLike, weight_bytes: ArrayLike, kv_bytes_per_token: ArrayLike,
                             tokens_per_sequence: ArrayLike, instances: ArrayLike = 1,
                             reserve_bytes: ArrayLike = 0.0) -> np.ndarray:
    """Sequences each instance can hold: ``K = floor((D - W - R) / (N e_kv T))``, 0 if negative.

    ``D``: the DRAM of the memory domain the instances share (a socket); ``W``: the weights, one
    copy per domain; ``R``: memory kept back (activations, the runtime, the OS); ``N``: instances
    sharing the domain; ``e_kv``: KV-cache bytes per token of context (``2 x layers x kv_heads x
    head_dim x bytes``); ``T``: the tokens a sequence holds at most (prompt plus output).
    """
    d, w, e, t, n, r = (np.asarray(x, dtype=float) for x in
                        (dram_bytes, weight_bytes, kv_bytes_per_token, tokens_per_sequence, instances, reserve_bytes))
    return np.maximum(np.floor((d - w - r) / (n * e * t)), 0.0).astype(np.int64)
