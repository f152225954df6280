"""llama.cpp's MUL_MAT on weights that do not fit the caches: q8_0 and q4_0 through llamafile's sgemm (not
repacked), q4_0 and q4_K repacked (gemv below 4 rows, gemm from 4), q4_K through vec_dot, at M = 1, 2, 3, 4 and 8
activation rows, each timed by validation/native/ggml_kernels.c (8 calls of the same 16,384 x 4,096 weight per
graph, 67 MB in q8_0, twice the 32 MiB L3, so every call streams it from DRAM), 2 threads. Prints the time per call
and the weight bytes over it.

    python validation/results/zen5-2vcpu-r3-kernel-stream.py
"""

from pathlib import Path

from roofline.validation.kernel_cycles import build, seconds

N, K = 16384, 4096
BYTES_PER_WEIGHT = {"q8_0": 34 / 32, "q4_0": 18 / 32, "q4_K": 144 / 256}

exe = build(Path.home() / ".cache" / "roofline" / "kernels")
for t, repack in (("q8_0", False), ("q4_0", False), ("q4_0", True), ("q4_K", True), ("q4_K", False)):
    for m in (1, 2, 3, 4, 8):
        s, _ = seconds(exe, t, N, K, m, 2, 10, repack)
        print(f"{t:5} {'repacked' if repack else 'plain':8} M={m}  {s * 1e3:6.2f} ms  "
              f"{N * K * BYTES_PER_WEIGHT[t] / 1e9 / s:5.1f} GB/s")
