"""A tensor-parallel step's all-reduces, as SGLang's CPU backend runs them through shared memory.

A model split over ``T`` ranks (Megatron's split: the QKV, gate and up projections by their output columns, the
attention output and down projections by their input rows) sums the ranks' partial outputs of each row-split linear:
two all-reduces per layer, of ``S`` bytes each (the step's tokens x the hidden size x the activations' bytes).

``shm_allreduce`` (sgl-kernel ``csrc/cpu/shm.cpp`` at sgl-project/sglang 120affb) has each rank copy its partial sum
into its own shared buffer, publish a flag and wait for every other rank's flag; then

- under 1 MiB (``NAIVE_ALLREDUCE_THRESHOLD``), ``symmetric_naive_all_reduce``: every rank sums all ``T`` buffers
  itself. Per rank: ``S`` read and ``S`` written by the copy, ``T S`` read and ``S`` written by the sum, ``(T + 3) S``
  bytes, and ``(T - 1) S / e`` additions (``e`` bytes an element); one round of flags;
- from 1 MiB, in chunks of up to 32 MiB (``MAX_BUF_SIZE``), ``distributed_naive_reduce``: each rank sums its
  ``1 / T`` slice of every buffer, publishes a second flag, and copies the others' slices: ``2 S + S + S / T + 2 S =
  (5 + 1 / T) S`` bytes and ``(T - 1) S / (T e)`` additions per rank; two rounds of flags.

A round of flags costs a rank ``T - 1`` reads of lines another core wrote (``wait_buffer_state_until_2`` in turn for
each rank): ``(T - 1) t_line``, the line transfer of the cores the ranks run on.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

#: bytes below which every rank sums every buffer (shm.cpp's NAIVE_ALLREDUCE_THRESHOLD)
SYMMETRIC_BELOW = 1 << 20
#: the largest chunk one all-reduce call moves at once (shm.cpp's MAX_BUF_SIZE)
CHUNK_BYTES = 32 << 20
#: all-reduces per transformer layer: the attention output and the MLP's (or experts') down projection
PER_LAYER = 2


def _f(x: ArrayLike) -> np.ndarray:
    return np.asarray(x, dtype=float)


def _chunks(size: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(full chunks, last chunk's bytes)`` of an all-reduce of ``size`` bytes."""
    full = np.floor(size / CHUNK_BYTES)
    return full, size - full * CHUNK_BYTES


def bytes_per_rank(size: ArrayLike, ranks: int) -> np.ndarray:
    """Bytes one rank reads and writes for an all-reduce of ``size`` bytes over ``ranks`` (module docstring):
    ``(T + 3) S`` for a chunk under 1 MiB, ``(5 + 1 / T) S`` for a larger one; 0 for one rank."""
    if ranks <= 1:
        return np.zeros_like(_f(size))
    full, last = _chunks(_f(size))
    small = np.where(last < SYMMETRIC_BELOW, (ranks + 3.0) * last, (5.0 + 1.0 / ranks) * last)
    return full * (5.0 + 1.0 / ranks) * CHUNK_BYTES + small


def adds_per_rank(size: ArrayLike, ranks: int, element_bytes: float) -> np.ndarray:
    """Additions one rank makes: ``(T - 1) S / e`` under 1 MiB, ``(T - 1) S / (T e)`` above."""
    if ranks <= 1:
        return np.zeros_like(_f(size))
    full, last = _chunks(_f(size))
    t = float(ranks)
    small = np.where(last < SYMMETRIC_BELOW, (t - 1.0) * last, (t - 1.0) / t * last)
    return (full * (t - 1.0) / t * CHUNK_BYTES + small) / element_bytes


def flag_rounds(size: ArrayLike) -> np.ndarray:
    """Rounds of flags of one all-reduce: one per chunk under 1 MiB, two per larger chunk."""
    full, last = _chunks(_f(size))
    return 2.0 * full + np.where(last <= 0, 0.0, np.where(last < SYMMETRIC_BELOW, 1.0, 2.0))


def sync_seconds(calls: ArrayLike, size: ArrayLike, ranks: int, line_s: ArrayLike) -> np.ndarray:
    """``T_s = c x rounds(S) x (T - 1) t_line``: the flag waits of ``c`` all-reduces of ``S`` bytes over ``T``
    ranks (0 for one rank)."""
    if ranks <= 1:
        return np.zeros_like(_f(size) * _f(calls))
    return _f(calls) * flag_rounds(size) * (ranks - 1.0) * _f(line_s)
