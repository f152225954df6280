"""Which compute path a precision runs on, and its peak."""

from __future__ import annotations

from dataclasses import dataclass

from roofline.calc.roofline import compute_peak
from roofline.spec.platform import Platform


@dataclass(frozen=True)
class PathChoice:
    name: str
    dtype: str
    native: bool  # False: the platform has no path for the wanted dtype; this is the FP32 fallback
    peak: float  # ops/s on the sockets used
    note: str = ""


def path_peak(platform: Platform, path: str, sockets: int) -> float:
    p = platform.compute[path]
    return float(
        compute_peak(sockets, platform.cores_per_socket.value, platform.frequency_hz(path), p.ops_per_cycle.value)
    )


def choose_path(platform: Platform, dtype: str, sockets: int) -> PathChoice:
    """The fastest path for ``dtype``; without one (BF16 on Ice Lake), the fastest FP32 path.

    PyTorch's BF16 autocast on a CPU without native BF16 converts to FP32 and
    computes there (the reference paper, on Ice Lake), so the fallback keeps
    BF16 storage but FP32 compute.
    """
    names = platform.paths_for(dtype)
    native = bool(names)
    if not native:
        names = platform.paths_for("fp32")
    best = max(names, key=lambda n: path_peak(platform, n, sockets))
    note = "" if native else (
        f"no native {dtype.upper()} path on {platform.name}: {dtype.upper()} data, GEMMs computed on {best} "
        f"(as PyTorch autocast does without native support)"
    )
    return PathChoice(best, platform.compute[best].dtype, native, path_peak(platform, best, sockets), note)


def non_gemm_peaks(platform: Platform, mode: str, sockets: int) -> tuple[str, float, float]:
    """``(activation dtype, matmul peak, vector peak)`` of the non-GEMM work in a mode: fp32 runs
    everything on the FP32 paths; amp-bf16 keeps BF16 activations and runs attention on the BF16
    path where native; vector math is FP32 in both."""
    act = "fp32" if mode == "fp32" else "bf16"
    return act, choose_path(platform, act, sockets).peak, choose_path(platform, "fp32", sockets).peak
