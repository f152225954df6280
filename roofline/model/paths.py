"""Which compute path a precision runs on, and its peak."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from roofline.calc.roofline import compute_peak
from roofline.spec.platform import Platform

#: a clock per ISA class, in Hz (scalar, or an array over a layout axis)
Clock = Callable[[str], "float | np.ndarray"]


@dataclass(frozen=True)
class PathChoice:
    name: str
    dtype: str
    native: bool  # False: the platform has no path for the wanted dtype; this is the FP32 fallback
    peak: float | np.ndarray  # ops/s on the cores used
    note: str = ""


def nominal_clock(platform: Platform) -> Clock:
    """The platform's nominal all-core frequency per ISA class (``frequency_ghz``)."""
    return lambda isa_class: platform.frequency_ghz[isa_class].known_value * 1e9


def path_peak(platform: Platform, path: str, sockets: int, cores: float | np.ndarray | None = None,
              clock: Clock | None = None) -> float | np.ndarray:
    """``P = sockets x cores x f(path) x ops_per_cycle(path)``; by default every core at the nominal clock."""
    p = platform.compute[path]
    cores = platform.cores_per_socket.known_value if cores is None else cores
    f = (clock or nominal_clock(platform))(p.isa_class)
    peak = compute_peak(sockets, cores, f, p.ops_per_cycle.known_value)
    return float(peak) if np.ndim(peak) == 0 else peak


def choose_path(platform: Platform, dtype: str, sockets: int, cores: float | np.ndarray | None = None,
                clock: Clock | None = None) -> PathChoice:
    """The fastest path for ``dtype``; without one (BF16 on Ice Lake), the fastest FP32 path.

    PyTorch's BF16 autocast on a CPU without native BF16 converts to FP32 and
    computes there (the reference paper, on Ice Lake), so the fallback keeps
    BF16 storage but FP32 compute.
    """
    names = platform.paths_for(dtype)
    native = bool(names)
    if not native:
        names = platform.paths_for("fp32")
    peaks = {n: path_peak(platform, n, sockets, cores, clock) for n in names}
    best = max(names, key=lambda n: float(np.max(peaks[n])))
    emulated = platform.emulated_paths(dtype)
    why = f"its {dtype.upper()} path ({', '.join(emulated)}) is emulated" if emulated else f"no native {dtype.upper()} path"
    note = "" if native else (
        f"{why} on {platform.name}: {dtype.upper()} data, GEMMs computed on {best} "
        f"(as PyTorch autocast does without native support)"
    )
    return PathChoice(best, platform.compute[best].dtype, native, peaks[best], note)
