"""The instance layout: on each socket, ``instances`` instances of ``instance_cores`` cores, pinned to
disjoint cores, sharing one copy of the weights per LLC domain (the reference paper's deployment).
Every array broadcasts over a leading layout axis (``plan`` evaluates all layouts in one call).

One process may also span every socket used (``instance_cores = sockets x cores``: llama.cpp run with all the
cores of a two-socket machine): one instance, ``1 / sockets`` of it on each socket, its pages spread over the
sockets' memory (:class:`~roofline.model.resources.Resources` caps its memory at the link between them).

Or one model may be split over ``T`` ranks (``tensor_parallel``: SGLang's ``--tp``, one rank per socket or per
sub-NUMA domain): one instance of all the cores used, each rank on ``1 / T`` of them with its share of every weight
in its own domain's memory (no link between sockets to cross for weights), the ranks summing their partial outputs
twice a layer (:mod:`roofline.calc.allreduce`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from roofline.errors import UserError
from roofline.spec.platform import Platform

#: cores per instance when the user gives none: the reference paper's 4-core instances
DEFAULT_INSTANCE_CORES = 4


@dataclass(frozen=True)
class Layout:
    """``instances`` instances of ``instance_cores`` cores on each of ``sockets`` sockets."""

    sockets: int
    instance_cores: np.ndarray
    instances: np.ndarray
    """per socket"""
    busy_cores: np.ndarray
    """cores per socket the turbo rule counts as busy (the cores used, or the whole socket when the
    rest of it is assumed busy with other work)"""
    tensor_parallel: int = 1
    """ranks the one instance's model is split over (1: not split)"""

    @property
    def active_cores(self) -> np.ndarray:
        """cores per socket running instances"""
        return self.instance_cores * self.instances

    @property
    def total_instances(self) -> np.ndarray:
        return self.instances * self.sockets

    @property
    def spans_sockets(self) -> bool:
        """one instance over several sockets (its threads and pages on each)"""
        return bool(np.any(self.instances < 1))

    @property
    def rank_cores(self) -> np.ndarray:
        """cores per process: an instance's, or a tensor-parallel rank's"""
        return self.instance_cores / self.tensor_parallel if self.tensor_parallel > 1 else self.instance_cores


def default_instance_cores(cores: int) -> int:
    """The reference paper's 4-core instances, or the largest instance below 4 cores that divides the
    cores used (so that no core idles): 2 cores -> one instance of 2, 6 -> two of 3."""
    return max(c for c in range(1, min(DEFAULT_INSTANCE_CORES, cores) + 1) if cores % c == 0)


def make_layout(platform: Platform, *, sockets: int | None = None, cores: int | None = None,
                instance_cores: int | np.ndarray | None = None, socket_busy: bool = False,
                tensor_parallel: int = 1) -> Layout:
    """Check the layout flags against the platform and fill in the defaults: every socket, every core,
    instances of ``min(4, cores)`` cores. ``instance_cores`` may be an array (one layout per entry).
    ``tensor_parallel``: one instance of every core used, split over that many ranks (module docstring)."""
    n_sockets = int(platform.sockets.known_value)
    per_socket = int(platform.cores_per_socket.known_value)
    sockets = n_sockets if sockets is None else sockets
    if not 1 <= sockets <= n_sockets:
        raise UserError(f"--sockets {sockets}: {platform.name} has {n_sockets} socket(s)")
    cores = per_socket if cores is None else cores
    if not 1 <= cores <= per_socket:
        raise UserError(f"--cores {cores}: {platform.name} has {per_socket} cores per socket; use 1 to {per_socket}")
    if tensor_parallel != 1:
        _check_split(platform, sockets, cores, instance_cores, tensor_parallel)
        instance_cores = sockets * cores
    c = np.asarray(default_instance_cores(cores) if instance_cores is None else instance_cores, dtype=float)
    spanning = sockets > 1 and c.ndim == 0 and float(c) == sockets * cores
    if not spanning and (np.any(c < 1) or np.any(c > cores)):
        bad = int(np.max(c)) if np.any(c > cores) else int(np.min(c))
        across = f", or {sockets * cores}: one process over all {sockets} sockets" if sockets > 1 else ""
        raise UserError(f"--instance-cores {bad}: an instance has 1 to {cores} cores (the cores used per socket)"
                        f"{across}")
    n = np.asarray(cores / c) if spanning else np.floor(cores / c)
    busy = np.full_like(c, per_socket if socket_busy else 0.0)
    busy = np.where(socket_busy, busy, n * c)
    return Layout(sockets, c, n, busy, tensor_parallel)


def _check_split(platform: Platform, sockets: int, cores: int, instance_cores: int | np.ndarray | None,
                 ranks: int) -> None:
    """A tensor-parallel split is one instance of every core used, each rank on one socket: ``T`` a multiple of the
    sockets, its ranks sharing each socket's cores (SGLang's ``SGLANG_CPU_OMP_THREADS_BIND`` ranges: 43, 43 and 42
    of a 128-core socket for three ranks; a rank's threads are the mean, ``cores / (T / sockets)``)."""
    import numbers

    if isinstance(ranks, bool) or not isinstance(ranks, numbers.Integral) or not 1 <= ranks <= 1024:
        raise UserError(f"--tensor-parallel {ranks}: ranks the model is split over, a whole number from 1")
    if instance_cores is not None and (np.ndim(instance_cores) or float(instance_cores) != sockets * cores):
        raise UserError(f"--tensor-parallel {ranks}: the split runs one instance of all {sockets * cores} cores used; "
                        f"drop --instance-cores (or give {sockets * cores})")
    if ranks % sockets or ranks // sockets > cores:
        raise UserError(f"--tensor-parallel {ranks}: each rank runs on one socket's cores (SGLang binds each to its own "
                        f"range): give a multiple of the {sockets} socket(s) used, at most one rank per core (e.g. "
                        f"{sockets}, one rank per socket)")
