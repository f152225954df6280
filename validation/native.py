"""The probe's native kernels (``native/membench.c``): the core clock and STREAM-style bandwidths.

Python and torch reductions are poor bandwidth benchmarks (a torch sum read the LLC of a 16-vCPU
Emerald Rapids guest at 175 GB/s, where a GEMM on LLC-resident weights read 276 GB/s with 4 threads),
so the probe measures the way STREAM does: compiled loops, every thread on its own part of the
arrays, the best of repeated runs. The C file is compiled on first use with the system C compiler
(``cc -O3 -march=native -fopenmp``) into the roofline cache, keyed by the source and the compiler,
and loaded with ctypes; without a compiler the probe falls back to torch and says so.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

SOURCE = Path(__file__).resolve().parent / "native" / "membench.c"
FLAGS = ("-O3", "-march=native", "-ffast-math", "-fopenmp", "-shared", "-fPIC")


class NativeUnavailable(RuntimeError):
    """No C compiler, or the kernels did not build: the probe falls back to torch."""


def _compiler() -> str | None:
    for cc in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if cc and shutil.which(cc):
            return cc
    return None


def load(cache: Path) -> ctypes.CDLL:
    """Build (once per source and compiler) and load the kernels."""
    cc = _compiler()
    if cc is None:
        raise NativeUnavailable("no C compiler (cc, gcc or clang) on PATH")
    version = subprocess.run([cc, "--version"], capture_output=True, text=True).stdout.splitlines()[:1]
    key = hashlib.sha256(SOURCE.read_bytes() + " ".join([cc, *FLAGS, *version]).encode()).hexdigest()[:16]
    lib = cache / "native" / f"membench-{key}.so"
    if not lib.is_file():
        lib.parent.mkdir(parents=True, exist_ok=True)
        tmp = lib.with_suffix(f".{os.getpid()}.so")
        proc = subprocess.run([cc, *FLAGS, "-o", str(tmp), str(SOURCE)], capture_output=True, text=True)
        if proc.returncode != 0:
            raise NativeUnavailable(f"{cc} could not build {SOURCE.name}: {(proc.stderr.strip().splitlines() or [''])[-1]}")
        os.replace(tmp, lib)
    so = ctypes.CDLL(str(lib))
    f32p, size, i32, f64 = ctypes.POINTER(ctypes.c_float), ctypes.c_size_t, ctypes.c_int, ctypes.c_double
    so.clock_chain.argtypes, so.clock_chain.restype = [ctypes.c_uint64, i32], f64
    so.init_arrays.argtypes, so.init_arrays.restype = [f32p, f32p, f32p, size, i32], None
    so.read_bw.argtypes, so.read_bw.restype = [f32p, size, i32, i32, ctypes.POINTER(f64)], f64
    so.copy_bw.argtypes, so.copy_bw.restype = [f32p, f32p, size, i32, i32], f64
    so.triad_bw.argtypes, so.triad_bw.restype = [f32p, f32p, f32p, size, i32, i32], f64
    return so


def core_clock_hz(so: ctypes.CDLL, threads: int, seconds: float = 0.2) -> float:
    """The clock of the slowest of ``threads`` cores while all run a dependent multiply chain (best of 3)."""
    n = 1_000_000
    while True:
        t0 = time.perf_counter()
        so.clock_chain(n, threads)
        if time.perf_counter() - t0 > seconds / 4 or n > 1 << 40:
            break
        n *= 4
    return max(so.clock_chain(n, threads) for _ in range(3))


@dataclass(frozen=True)
class Bandwidth:
    working_set_bytes: int
    threads: int
    read: float
    """bytes/s"""
    copy: float
    triad: float

    @property
    def best(self) -> float:
        """what the hardware delivered: the fastest of the three kernels"""
        return max(self.read, self.copy, self.triad)

    def describe(self) -> str:
        return (f"read {self.read / 1e9:.1f}, copy {self.copy / 1e9:.1f}, triad {self.triad / 1e9:.1f} GB/s over "
                f"{self.working_set_bytes / 2**20:g} MiB with {self.threads} threads")


def bandwidth(so: ctypes.CDLL, working_set_bytes: int, threads: int, min_seconds: float = 0.05) -> Bandwidth:
    """STREAM's read, copy and triad on three float32 arrays that together span ``working_set_bytes``;
    each the best repetition of enough repetitions to run ``min_seconds``."""
    n = max(4 * 64 * threads, (working_set_bytes // 12) // (4 * threads) * (4 * threads))
    a, b, c = (np.empty(n, dtype=np.float32) for _ in range(3))
    ptr = lambda x: x.ctypes.data_as(ctypes.POINTER(ctypes.c_float))  # noqa: E731
    so.init_arrays(ptr(a), ptr(b), ptr(c), n, threads)
    sink = ctypes.c_double()
    one = so.read_bw(ptr(a), n, 3, threads, ctypes.byref(sink))  # the best of 3: the first wakes the threads
    reps = int(min(10_000, max(3, min_seconds / max(one, 1e-7))))
    read = 4 * n / so.read_bw(ptr(a), n, reps, threads, ctypes.byref(sink))
    copy = 8 * n / so.copy_bw(ptr(b), ptr(a), n, reps, threads)
    triad = 12 * n / so.triad_bw(ptr(a), ptr(b), ptr(c), n, reps, threads)
    return Bandwidth(12 * n, threads, read, copy, triad)


class ClockReader:
    """The cores' clock now (Hz): a short dependent multiply chain on each of ``threads`` threads, about
    ``window_s`` long, the better of two runs (what the contention canary compares with the probe's)."""

    def __init__(self, so: ctypes.CDLL, threads: int, window_s: float = 0.005):
        n = 100_000
        while True:
            t0 = time.perf_counter()
            so.clock_chain(n, threads)
            if time.perf_counter() - t0 > window_s or n > 1 << 34:
                break
            n *= 2
        self.so, self.threads, self.n = so, threads, n

    def __call__(self) -> float:
        return max(self.so.clock_chain(self.n, self.threads) for _ in range(2))
