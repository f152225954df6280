"""A graph's thread barriers: rounds of atomic updates of one shared cache line.

A spin barrier (ggml's ``ggml_barrier``, libgomp's ``omp barrier``) has each of ``n`` threads add to one counter.
Each add takes the line from the core that held it last, so one round costs ``n t_line``: ``t_line`` the core-to-core
transfer latency. An engine that ends each node of its graph with one (llama.cpp's CPU backend) pays ``r`` rounds per
transformer layer whatever the step's size: on 2 cores they are noise, on 96 they can match the weights' stream of a
small model.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike


def barrier_seconds(layers: ArrayLike, rounds_per_layer: float, threads: ArrayLike,
                    line_s: ArrayLike) -> np.ndarray:
    """``T_b = L r n t_line`` for ``n >= 2`` threads, 0 for one (a barrier over one thread returns at once:
    ggml_barrier's ``if (n_threads == 1) return;``): ``L`` layers per step, ``r`` rounds per layer (a stack's count of
    its graph's barriers and shared counters), ``n`` threads, ``t_line`` seconds per line transfer."""
    n = np.asarray(threads, dtype=float)
    return (np.asarray(layers, dtype=float) * rounds_per_layer * np.where(n >= 2, n, 0.0)
            * np.asarray(line_s, dtype=float))
