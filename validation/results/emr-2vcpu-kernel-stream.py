"""llama.cpp's MUL_MAT on weights four times the guest's 260 MiB L3, on the 2-vCPU Emerald Rapids guest: how much
of each kernel's weight stream adds to its arithmetic (the kernel table's serial share). Each call timed by
validation/native/ggml_kernels.c (2 calls of the same weight per graph, 5 graphs, the median), 2 threads:
q8_0 through vec_dot (1 row) and llamafile's sgemm (2 rows), q4_0 and q4_K repacked (gemv at 1 row, gemm at 4).
Beside each time: C, the same kernel with its weights in the caches (the kernel table's emeraldrapids cycles at
the probe's 2.959 GHz on 2 cores), and the weights over the cores' own read bandwidth (2 x 15.73 GB/s) and over
the socket's (29.0 GB/s, platforms/emr-2vcpu.toml). The share solves T = max(C + s D/B_cores, D/B_socket).

    python validation/results/emr-2vcpu-kernel-stream.py
"""

import sys
from pathlib import Path

import tomllib
from roofline.validation.kernel_cycles import build, seconds

ROOT = Path(__file__).resolve().parents[2]
K = int(sys.argv[1]) if len(sys.argv) > 1 else 2048  # the weights' row length (Llama-3.2-1B: 2,048 and 8,192)
GHZ, THREADS, B_CORES, B_SOCKET = 2.959, 2, 2 * 15.73e9, 29.0e9
BYTES_PER_WEIGHT = {"q8_0": 34 / 32, "q4_0": 18 / 32, "q4_K": 144 / 256}
TABLE = tomllib.loads((ROOT / "platforms/kernels/llama.cpp.toml").read_text())["cycles"]["emeraldrapids"]["types"]
CASES = (("q8_0", False, 1, "vec_dot", 1), ("q8_0", False, 2, "sgemm2", 2), ("q4_0", True, 1, "gemv", 1),
         ("q4_0", True, 4, "gemm4", 4), ("q4_K", True, 1, "gemv", 1), ("q4_K", True, 4, "gemm4", 4))

exe = build(Path.home() / ".cache" / "roofline" / "kernels")
for t, repack, m, entry, rows in CASES:
    k = K
    n = int(4 * 272.6e6 / (k * BYTES_PER_WEIGHT[t]))  # four times the L3
    n -= n % 256
    s, _ = seconds(exe, t, n, k, m, THREADS, 5, repack)
    d = n * k * BYTES_PER_WEIGHT[t]
    c = TABLE[t][entry] * rows * n * k / 32 / (THREADS * GHZ * 1e9)
    share = (s - c) / (d / B_CORES)
    print(f"{t:5} {'repacked' if repack else 'plain':8} M={m} {entry:7} N={n} K={k} {d / 1e6:6.0f} MB  T {s * 1e3:7.2f} ms"
          f"  C {c * 1e3:7.2f}  D/B_cores {d / B_CORES * 1e3:6.2f}  D/B_socket {d / B_SOCKET * 1e3:6.2f}"
          f"  {d / s / 1e9:5.1f} GB/s  share {share:5.2f}", flush=True)
