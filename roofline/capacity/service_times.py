"""Service times of one instance under each layout of a CPU, from the realistic model and the
ceiling: the tables the serving simulations (:mod:`roofline.serving`) take.

**Layouts.** On each socket ``N`` instances of ``C`` cores, ``C`` from :func:`layouts`, sharing one
copy of the weights per socket; the rest of the socket is busy
(:func:`~roofline.model.resources.make_layout` with ``socket_busy``: a planned server is loaded, so
its cores run at the all-core clock whatever the layout).

**One step per grid point, every layout at once.** For each point of a grid of steps (``b``
requests of ``s`` tokens; a decode step of ``b`` sequences with ``c`` tokens of context each), the
step pipeline (:func:`~roofline.model.build.build_steps`) runs once with the layouts on its leading
axis, the realistic model (:mod:`roofline.model.realistic`, with the stack profile's efficiencies;
without a profile the ceiling plus the priced terms) priced for all of them at once. The step evaluator's time is the step
amortised over the platform (every instance running one step); one instance's service time is that
times the instances on the platform. Both the realistic time and the ceiling are kept.

**Grids.** Batch sizes ``1..16`` exactly, then about 25% apart up to the largest, which is always a
point (:func:`batch_sizes`); the tables are linear in between (the step time is a sum of
``max(compute, memory)`` terms, convex in the batch, so the line between two points lies above it: a
little pessimistic). A batch of ``T`` tokens made of requests of unequal lengths is priced as ``b``
requests of ``s`` tokens (:func:`packed`): ``b = max(1, round(T / r), ceil(T / L_max))``,
``s = ceil(T / b)``, ``r`` the mean length; its GEMMs see ``M = b s ~ T`` rows, its attention that of
``b`` requests of about the mean length (a packed batch of unequal lengths does a little more
attention work than that). The grid's token counts are the ``b s`` evaluated, so the table is exact
at its points.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from roofline.errors import UserError
from roofline.model.build import CeilingSpec, LayoutSpec, StepOptions, build_steps
from roofline.model.efficiency import NO_EFFICIENCIES, EfficiencySource
from roofline.model.layout import make_layout
from roofline.model.step import BOUNDS
from roofline.model.workload import make_workload
from roofline.results.estimate import ErrorBand
from roofline.spec.model import ModelSpec
from roofline.spec.platform import Platform
from roofline.spec.vocab import Phase

#: batch sizes up to this are all grid points
EXACT_BATCHES = 16
#: beyond them, consecutive grid points are at most this ratio apart
BATCH_RATIO = 1.25


def layouts(cores: int, instance_cores: int | None = None) -> list[int]:
    """Cores per instance: powers of two up to the socket, and the whole socket (``instance_cores``: that one)."""
    if instance_cores is not None:
        if not 1 <= instance_cores <= cores:
            raise UserError(f"--instance-cores {instance_cores}: an instance has 1 to {cores} cores (the cores used "
                            "per socket)")
        return [instance_cores]
    out = [c for c in (2**i for i in range(16)) if c <= cores]
    return out + ([cores] if out[-1] != cores else [])


def batch_sizes(top: int) -> np.ndarray:
    """``1..min(top, 16)``, then geometric steps of at most 25% up to ``top`` (included)."""
    top = max(int(top), 1)
    out = list(range(1, min(top, EXACT_BATCHES) + 1))
    while out[-1] < top:
        out.append(min(top, max(out[-1] + 1, math.floor(out[-1] * BATCH_RATIO))))
    return np.array(out, dtype=np.int64)


def packed(tokens: int, mean_len: float, longest: int) -> tuple[int, int]:
    """``(b, s)``: a batch of ``tokens`` tokens priced as ``b`` requests of ``s`` tokens (module docstring)."""
    b = max(1, round(tokens / mean_len), math.ceil(tokens / longest))
    return b, math.ceil(tokens / b)


def token_grid(lo: int, hi: int, mean_len: float, longest: int, points: int = 40) -> list[tuple[int, int]]:
    """``(b, s)`` steps whose token counts ``b s`` span ``lo..hi``: ``points`` geometric token counts,
    the mean length and its multiples (batch sizes of :func:`batch_sizes`), each mapped by :func:`packed`."""
    ref = max(1, round(mean_len))
    wanted = {lo, hi, min(max(ref, lo), hi)}
    wanted |= {int(round(t)) for t in np.geomspace(lo, hi, points)} if hi > lo else set()
    wanted |= {int(k * ref) for k in batch_sizes(max(1, hi // ref)) if lo <= k * ref <= hi}
    steps = {}
    for t in sorted(wanted):
        b, s = packed(t, mean_len, longest)
        steps.setdefault(b * s, (b, s))
    return [steps[k] for k in sorted(steps)]


@dataclass(frozen=True)
class StepPoint:
    """One step of the grid: ``batch`` requests of ``seq_len`` tokens, or (decode) ``batch`` sequences
    with ``context`` tokens of KV cache each."""

    batch: int
    seq_len: int
    context: int = 0


@dataclass(frozen=True)
class StepTimes:
    """One instance's seconds per grid point under each layout: arrays ``(L, G)``."""

    instance_cores: np.ndarray
    """(L,) cores per instance"""
    instances_per_socket: np.ndarray
    """(L,)"""
    sockets: int
    realistic_s: np.ndarray
    """the realistic model's time of the step on one instance"""
    ceiling_s: np.ndarray
    """the ceiling of the same"""
    time_split: np.ndarray
    """(L, G, 4): the ceiling's seconds on one instance in operations bound by compute, L2, LLC, DRAM"""
    weights_llc_resident: bool
    stack: str | None
    """the profile the realistic time used (None: no profile, or a calibration instead)"""
    error_band: ErrorBand | None = None
    """the realistic times' error band and the compute path class it is of (its first grid point's:
    :meth:`~roofline.model.efficiency.EfficiencySource.error_band`; None: no profile's accuracy)"""
    tensor_parallel: int = 1
    """ranks the one instance of every core is split over (its ``instance_cores`` are each socket's share, its
    ``instances_per_socket`` 1); 1: instances within a socket"""

    @property
    def instances_per_server(self) -> np.ndarray:
        if self.tensor_parallel > 1:  # one instance over every socket
            return np.ones_like(self.instances_per_socket)
        return self.instances_per_socket * self.sockets

    def bound(self, g: int = 0) -> list[str]:
        """What bounds most of grid point ``g``'s ceiling, per layout."""
        return [BOUNDS[int(i)].value for i in np.argmax(self.time_split[:, g], axis=-1)]


def step_times(platform: Platform, model: ModelSpec, precision: str, phase: Phase, points: Sequence[StepPoint], *,
               cores: int | None = None, ceiling: CeilingSpec = CeilingSpec(), kv_dtype: str | None = None,
               source: EfficiencySource = NO_EFFICIENCIES, instance_cores: int | None = None,
               tensor_parallel: int = 1) -> StepTimes:
    """The realistic and ceiling service times of every grid point under every layout (module docstring);
    ``tensor_parallel``: the one layout of one instance of every core of every socket, split over that many ranks."""
    cores = int(platform.cores_per_socket.value) if cores is None else cores
    split = tensor_parallel > 1
    sizes = np.array([float(cores)] if split else layouts(cores, instance_cores), dtype=float)
    layout = (LayoutSpec(cores=cores, socket_busy=True, tensor_parallel=tensor_parallel) if split else
              LayoutSpec(cores=cores, instance_cores=sizes, socket_busy=True))
    n_l, n_g = sizes.size, len(points)
    real, ceil = np.empty((n_l, n_g)), np.empty((n_l, n_g))
    by_bound = np.empty((n_l, n_g, len(BOUNDS)))
    resident, total, band = False, None, None
    for g, pt in enumerate(points):
        context = int(pt.context) if phase is Phase.DECODE else None
        work = make_workload(model, phase, int(pt.batch), int(pt.seq_len), context)
        steps = build_steps(platform, work, [precision], layout=layout, ceiling=ceiling, source=source,
                            options=StepOptions(kv_dtype=kv_dtype))
        s, res = steps[0], steps.res
        if g == 0:
            band = source.error_band(res, s.recipe, one_row=work.tokens <= 1)
        total = np.asarray(res.layout.total_instances, dtype=float)
        resident = resident or (bool(np.any(s.step.fits_llc)) and res.b_llc is not None)
        by_bound[:, g] = s.step.time_by_bound() * np.atleast_1d(total)[:, None]
        real[:, g] = np.atleast_1d(s.times.total_s * total)
        ceil[:, g] = np.atleast_1d(s.parts.ceiling_s * total)
    for name, t in (("realistic", real), ("ceiling", ceil)):
        if not (np.all(np.isfinite(t)) and np.all(t > 0)):
            raise UserError(f"{model.name} on {platform.name}: a {name} service time is not a positive finite "
                            "number of seconds (the model or the lengths are too large for this arithmetic)")
    if split:
        per_socket, n_sockets = np.ones(1), int(platform.sockets.known_value)
    else:
        lay = make_layout(platform, cores=cores, instance_cores=sizes, socket_busy=True)
        per_socket, n_sockets = np.asarray(lay.instances, dtype=float), int(lay.sockets)
    return StepTimes(instance_cores=sizes, instances_per_socket=per_socket, sockets=n_sockets, realistic_s=real,
                     ceiling_s=ceil, time_split=by_bound, weights_llc_resident=resident, stack=source.stack_name,
                     error_band=band, tensor_parallel=tensor_parallel)


def by_batch(times: np.ndarray, grid: np.ndarray, top: int) -> np.ndarray:
    """``(L, top)``: times at every batch ``1..top`` from times at the grid's batch sizes (linear between)."""
    b = np.arange(1, top + 1, dtype=float)
    return np.stack([np.interp(b, grid.astype(float), row) for row in np.atleast_2d(times)])
