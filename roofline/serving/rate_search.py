"""The highest offered rate that meets a latency SLO, found by a vectorised scan over loads.

Shared by the encoder queue (:mod:`roofline.serving.dynamic_batching`) and the decoder server
(:mod:`roofline.serving.continuous_batching`). Loads are fractions ``x`` of each scenario's offline capacity.

Round 1 simulates every scenario at the loads ``grid``; a scenario's bracket runs from its last
load meeting the SLO before the first that misses it (a pass above a miss does not count: the SLO
must hold at every load up to the answer) to that miss (1, the capacity, if none missed). Each
later round simulates ``len(grid)`` evenly spaced loads strictly inside the bracket. With the
default ``(0.25, 0.5, 0.75, 0.9)`` and three rounds the bracket ends at most 1% of the capacity
wide. The answer is the highest simulated load that met the SLO, with its simulation.

The statistics are frozen dataclasses whose array fields have shape ``(S, G, ...)``; the scan
returns them as ``(S, 1, ...)``, NaN for scenarios with no passing load.
"""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any, Callable

import numpy as np

from roofline.errors import UserError

#: loads (fractions of the offline capacity) of the first round
SEARCH_GRID = (0.25, 0.5, 0.75, 0.9)


def check_grid(grid) -> None:
    g = np.asarray(grid, dtype=float)
    if g.ndim != 1 or g.size == 0 or not np.all((g > 0) & (g < 1)) or not np.all(np.diff(g) > 0):
        raise UserError(f"grid={tuple(np.ravel(g))}: loads must increase strictly inside (0, 1)")


def take_column(stats: Any, idx: np.ndarray) -> Any:
    """Column ``idx[s]`` of every ``(S, G, ...)`` array field, kept as ``(S, 1, ...)``."""
    s = np.arange(idx.size)
    return replace(stats, **{f.name: _map(getattr(stats, f.name), lambda v: v[s, idx][:, None])
                             for f in fields(stats)})


def _map(v, fn):
    return fn(v) if isinstance(v, np.ndarray) else v


def nan_like(stats: Any, n: int) -> Any:
    """``(n, 1, ...)`` NaN arrays shaped like ``stats``' ``(S, G, ...)`` fields (object arrays: None)."""
    def blank(v):
        if v.dtype == object:
            return np.full((n, 1) + v.shape[2:], None, dtype=object)
        return np.full((n, 1) + v.shape[2:], np.nan)
    return replace(stats, **{f.name: _map(getattr(stats, f.name), blank) for f in fields(stats)})


def scatter_rows(into: Any, rows: np.ndarray, new: Any, new_rows: np.ndarray) -> Any:
    """``into`` with its rows ``rows`` replaced by ``new``'s rows ``new_rows`` (same shapes past axis 0)."""
    out = {}
    for f in fields(into):
        a, b = getattr(into, f.name), getattr(new, f.name)
        if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
            a = a.copy()
            a[rows] = b[new_rows]
        out[f.name] = a
    return replace(into, **out)


def scan(simulate: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, Any]], n_scenarios: int,
         feasible: np.ndarray, *, grid: tuple[float, ...] = SEARCH_GRID, rounds: int = 3
         ) -> tuple[np.ndarray, np.ndarray, Any | None]:
    """``simulate(live, x) -> (ok, stats)`` for the scenarios ``live`` (S',) at loads ``x`` (S', G);
    ``ok`` (S', G) says which met the SLO. Only ``feasible`` scenarios are simulated.

    Returns ``(lo, hi, best)``: per scenario the highest load that met the SLO (0 if none), the
    lowest simulated load above it that missed (1 if none), and the stats at ``lo`` as
    ``(S, 1, ...)`` (None if nothing was simulated).
    """
    g = np.asarray(grid, dtype=float)
    lo = np.zeros(n_scenarios)
    hi = np.ones(n_scenarios)
    best = None
    live = np.flatnonzero(feasible)
    for k in range(rounds):
        if live.size == 0:
            break
        if k == 0:
            x = np.broadcast_to(g, (live.size, g.size)).copy()
        else:
            x = lo[live, None] + (hi[live, None] - lo[live, None]) * np.arange(1, g.size + 1) / (g.size + 1)
        ok, stats = simulate(live, x)
        passes = np.cumprod(ok, axis=1).sum(axis=1)  # leading passes
        got = passes > 0
        idx = np.maximum(passes - 1, 0)
        r = np.arange(live.size)
        lo[live] = np.where(got, x[r, idx], lo[live])
        hi[live] = np.where(passes < g.size, x[r, np.minimum(passes, g.size - 1)], hi[live])
        if best is None:
            best = nan_like(stats, n_scenarios)
        best = scatter_rows(best, live[got], take_column(stats, idx), np.flatnonzero(got))
    return lo, hi, best
