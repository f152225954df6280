"""What the two serving simulators share: the rows they simulate side by side (every scenario x rate x
replication), the replications' arrival streams laid end to end, the row compaction of their loops,
and the statistics pooled over replications."""

from __future__ import annotations

import numpy as np

from roofline.serving.sampling import quantiles, replication_half_width

#: a simulation loop drops its finished rows once the running ones fall below this fraction of its arrays
COMPACT = 0.7


def row_layout(n_scen: int, n_rates: int, reps: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(s, g, r)`` of every row: row ``(s G + g) R + r`` is scenario ``s`` at rate ``g``, replication ``r``."""
    s = np.repeat(np.arange(n_scen), n_rates * reps)
    g = np.tile(np.repeat(np.arange(n_rates), reps), n_scen)
    r = np.tile(np.arange(reps), n_scen * n_rates)
    return s, g, r


def flat_streams(u: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """The replications' arrival streams ``u`` (R, N) end to end: ``(offset, flat times, last index)``, each
    replication's times shifted by ``offset x`` its index, and for every request the flat index of its
    replication's last one."""
    reps, total = u.shape
    off_u = float(u[:, -1].max()) + 1.0
    uf = (u + off_u * np.arange(reps)[:, None]).ravel()
    rep_last = np.repeat(np.arange(reps) * total + total - 1, total)
    return off_u, uf, rep_last


def pooled(rows: list[np.ndarray], cells: int, reps: int, keep: bool = False
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """Per (scenario, rate) cell: ``(p50, p99, mean, samples)`` of its replications' values pooled (``rows``:
    one array per row, the cell's ``reps`` rows in a run); ``samples`` (``keep``) the pooled values."""
    p50, p99, mean = np.empty(cells), np.empty(cells), np.empty(cells)
    samples = np.empty(cells, dtype=object) if keep else None
    for j in range(cells):
        seg = np.concatenate(rows[j * reps:(j + 1) * reps])
        p50[j], p99[j] = quantiles(seg, (0.5, 0.99))
        mean[j] = seg.mean()
        if keep:
            samples[j] = seg
    return p50, p99, mean, samples


def p99_interval(p99: np.ndarray, per_replication_p99: np.ndarray) -> np.ndarray:
    """``(..., 2)``: the pooled p99 plus and minus the half-width of the replications' own p99 (95%)."""
    hw = replication_half_width(per_replication_p99)
    return np.stack([p99 - hw, p99 + hw], axis=-1)
