"""The instance layout: on each socket, ``instances`` instances of ``instance_cores`` cores, pinned to
disjoint cores, sharing one copy of the weights per LLC domain (the reference paper's deployment).
Every array broadcasts over a leading layout axis (``plan`` evaluates all layouts in one call).

One process may also span every socket used (``instance_cores = sockets x cores``: llama.cpp run with all the
cores of a two-socket machine): one instance, ``1 / sockets`` of it on each socket, its pages spread over the
sockets' memory (:class:`~roofline.model.resources.Resources` caps its memory at the link between them)."""

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


def default_instance_cores(cores: int) -> int:
    """The reference paper's 4-core instances, or the largest instance below 4 cores that divides the
    cores used (so that no core idles): 2 cores -> one instance of 2, 6 -> two of 3."""
    return max(c for c in range(1, min(DEFAULT_INSTANCE_CORES, cores) + 1) if cores % c == 0)


def make_layout(platform: Platform, *, sockets: int | None = None, cores: int | None = None,
                instance_cores: int | np.ndarray | None = None, socket_busy: bool = False) -> Layout:
    """Check the layout flags against the platform and fill in the defaults: every socket, every core,
    instances of ``min(4, cores)`` cores. ``instance_cores`` may be an array (one layout per entry)."""
    n_sockets = int(platform.sockets.known_value)
    per_socket = int(platform.cores_per_socket.known_value)
    sockets = n_sockets if sockets is None else sockets
    if not 1 <= sockets <= n_sockets:
        raise UserError(f"--sockets {sockets}: {platform.name} has {n_sockets} socket(s)")
    cores = per_socket if cores is None else cores
    if not 1 <= cores <= per_socket:
        raise UserError(f"--cores {cores}: {platform.name} has {per_socket} cores per socket; use 1 to {per_socket}")
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
    return Layout(sockets, c, n, busy)
