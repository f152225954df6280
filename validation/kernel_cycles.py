"""The cycles llama.cpp's CPU kernels take on this host, measured: a kernel table's entries for its core.

``native/ggml_kernels.c`` times one MUL_MAT through ggml's CPU backend (the library llama-cpp-python installs,
the ``llamacpp`` extra) as llama.cpp runs it: the weights repacked where the CPU's repacking buffer takes the type,
else in host memory, on weights that stay in the caches, so the time is the kernel's. From calls of ``M`` activation
rows (seconds ``t(M)`` of an ``N x K`` weight) on ``threads`` cores at the clock ``f``, cycles per 32 weights of one
weight row per activation row (:mod:`roofline.spec.kernels`):

- ``vec_dot``: ``t(1)``, not repacked; ``gemv``: ``t(1)`` repacked; ``gemm4``, ``gemm16``: ``t(4) / 4``, ``t(16) / 16``
  repacked; ``sgemm2`` .. ``sgemm4``: ``t(r) / r`` not repacked, ``sgemm1``: ``t(5) - t(4)``;
- ``tiled``: ``(t(64) - t(32)) / 32``, ``tiled_unpack``: ``t(32) - 32 tiled``;

each as ``t f threads / (N K / 32)``. ``python -m roofline.validation.kernel_cycles --ghz F`` prints the entries
as a kernel table's ``[cycles.<core>.types]`` lines.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import subprocess
import sys
from pathlib import Path

from roofline.spec.kernels import Kernel

SOURCE = Path(__file__).resolve().parent / "native" / "ggml_kernels.c"
#: per type, the kernels llama.cpp's x86 build (0c1e570) runs it with (platforms/kernels/llama.cpp.toml)
FAMILIES: dict[str, tuple[Kernel, ...]] = {
    "q8_0": (Kernel.SGEMM,), "q4_0": (Kernel.REPACK, Kernel.SGEMM), "q4_1": (), "q5_0": (Kernel.SGEMM,),
    "q5_1": (), "iq4_nl": (Kernel.REPACK, Kernel.SGEMM), "q2_K": (Kernel.REPACK, Kernel.TILED),
    "q3_K": (Kernel.TILED,), "q4_K": (Kernel.REPACK, Kernel.TILED), "q5_K": (Kernel.TILED,),
    "q6_K": (Kernel.TILED,), "iq4_xs": (Kernel.TILED,), "mxfp4": (Kernel.REPACK,),
    "iq1_s": (Kernel.TILED,), "iq1_m": (Kernel.TILED,), "iq2_xxs": (Kernel.TILED,), "iq2_xs": (Kernel.TILED,),
    "iq2_s": (Kernel.TILED,), "iq3_xxs": (Kernel.TILED,), "iq3_s": (Kernel.TILED,),
}


def build(cache: Path) -> Path:
    """Compile the benchmark against the installed llama-cpp-python (its headers and libraries)."""
    import llama_cpp

    lib = Path(llama_cpp.__file__).resolve().parent / "lib"
    include = lib.parent.parent / "include"
    key = hashlib.sha256(SOURCE.read_bytes() + str(lib).encode()).hexdigest()[:16]
    exe = cache / f"ggml_kernels-{key}"
    if not exe.is_file():
        cache.mkdir(parents=True, exist_ok=True)
        subprocess.run([os.environ.get("CC", "cc"), "-O2", str(SOURCE), f"-I{include}", f"-L{lib}",
                        f"-Wl,-rpath,{lib}", "-lggml", "-lggml-base", "-lggml-cpu", "-o", str(exe)], check=True)
    return exe


#: MUL_MATs of the same weights in one timed graph: the graph's own overhead spread over them
CALLS = 8


def seconds(exe: Path, t: str, n: int, k: int, m: int, threads: int, reps: int, repack: bool) -> tuple[float, str]:
    out = subprocess.run([str(exe), t, str(n), str(k), str(m), str(threads), str(reps), str(int(repack)), str(CALLS)],
                         capture_output=True, text=True, check=True).stdout.split()
    return float(out[-1]), out[-2]


def measure(exe: Path, t: str, n: int, k: int, threads: int, reps: int, rounds: int) -> dict[str, float]:
    """Seconds per call of each (M, repacked) the entries need, the median of ``rounds`` interleaved rounds."""
    fam = FAMILIES.get(t, ())
    points = [(1, False)]
    if Kernel.REPACK in fam:
        points += [(1, True), (4, True), (16, True)]
    if Kernel.SGEMM in fam:
        points += [(2, False), (3, False), (4, False), (5, False)]
    if Kernel.TILED in fam:
        points += [(32, False), (64, False)]
    runs: dict[tuple[int, bool], list[float]] = {p: [] for p in points}
    bufs: dict[tuple[int, bool], str] = {}
    for _ in range(rounds):
        for m, rp in points:
            s, buf = seconds(exe, t, n, k, m, threads, reps, rp)
            runs[m, rp].append(s)
            bufs[m, rp] = buf
    med = {p: statistics.median(v) for p, v in runs.items()}
    out = {"vec_dot": med[1, False]}
    if Kernel.REPACK in fam and "REPACK" in bufs[1, True]:
        out.update(gemv=med[1, True], gemm4=med[4, True] / 4, gemm16=med[16, True] / 16)
    if Kernel.SGEMM in fam:
        out.update(sgemm2=med[2, False] / 2, sgemm3=med[3, False] / 3, sgemm4=med[4, False] / 4,
                   sgemm1=med[5, False] - med[4, False])
    if Kernel.TILED in fam:
        per_row = (med[64, False] - med[32, False]) / 32
        out.update(tiled=per_row, tiled_unpack=max(med[32, False] - 32 * per_row, 0.0))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ghz", type=float, required=True, help="the cores' clock while they run, GHz")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    p.add_argument("--n", type=int, default=2048)
    p.add_argument("--k", type=int, default=1024)
    p.add_argument("--reps", type=int, default=40)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--types", default=",".join(FAMILIES))
    a = p.parse_args(argv)
    from roofline.catalog.cache import cache_dir

    exe = build(cache_dir() / "native")
    blocks = a.n * a.k / 32
    for t in a.types.split(","):
        s = measure(exe, t, a.n, a.k, a.threads, a.reps, a.rounds)
        cyc = {e: round(v * a.ghz * 1e9 * a.threads / blocks, 3) for e, v in s.items()}
        print(f"{t} = {{ " + ", ".join(f"{e} = {v}" for e, v in cyc.items()) + " }", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
