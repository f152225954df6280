"""oneDNN's quantized linear on s8 and on u8 activations, the same weights and shapes, on this host.

Run alone (nothing else busy): ``python validation/results/zen3-2vcpu-int8-s8-vs-u8.py``. Each figure is the
median of 15 timed calls after 2 warm-up calls, the u8 and s8 calls alternating (so that a drift of the guest's
speed falls on both alike), 2 threads; activations are 7-bit (``reduce_range``: u8 in [0, 127]
with zero point 64, s8 in [-64, 63]) as on a CPU without VNNI; weights s8 per-channel, output FP32, the call
``torch.ops.onednn.qlinear_pointwise`` that torch-inductor's compiled INT8 linears make (the validate reports'
``qlinear(s8)`` / ``qlinear(u8)`` kernels). ``extra``: the s8 call's time over the u8 call's.
"""

import platform
import statistics
import time

import torch

THREADS = 2
CALLS = 15
SHAPES = [(M, N, K) for M in (64, 256, 1024) for N, K in ((1024, 1024), (4096, 1024), (1024, 4096), (2048, 2048))]


def kernel(M: int, N: int, K: int, signed: bool):
    g = torch.Generator().manual_seed(0)
    w = torch.randint(-127, 128, (N, K), dtype=torch.int8, generator=g)
    if signed:
        x, zp = torch.randint(-64, 64, (M, K), dtype=torch.int8, generator=g), 0
    else:
        x, zp = torch.randint(0, 128, (M, K), dtype=torch.int16, generator=g).to(torch.uint8), 64
    packed = torch.ops.onednn.qlinear_prepack(w, [M, K])
    scales, zeros = torch.ones(N), torch.zeros(N, dtype=torch.int64)
    return lambda: torch.ops.onednn.qlinear_pointwise(x, 1.0, zp, packed, scales, zeros, None, 1.0, 0,
                                                      torch.float32, "none", [], "")


def median_ms(M: int, N: int, K: int) -> tuple[float, float]:
    """(u8, s8): each call's median time, ms, the two calls alternating"""
    calls = (kernel(M, N, K, False), kernel(M, N, K, True))
    times: tuple[list[float], list[float]] = ([], [])
    for i in range(2 + CALLS):
        for call, out in zip(calls, times):
            t0 = time.perf_counter()
            call()
            if i >= 2:
                out.append(time.perf_counter() - t0)
    return statistics.median(times[0]) * 1e3, statistics.median(times[1]) * 1e3


def main() -> None:
    torch.set_num_threads(THREADS)
    model = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name")), "?")
    print(f"host: {model} ({platform.machine()}), {THREADS} threads; torch {torch.__version__}")
    print("M      N     K     weights(M)  u8 ms   s8 ms   extra ms  u8 Gops/s  s8 Gops/s")
    for M, N, K in SHAPES:
        u8, s8 = median_ms(M, N, K)
        ops = 2 * M * N * K / 1e6
        print(f"{M:<6} {N:<5} {K:<5} {N * K / 1e6:<11.2f} {u8:<7.2f} {s8:<7.2f} {s8 - u8:<9.2f} {ops / u8:<10.0f} "
              f"{ops / s8:.0f}")


if __name__ == "__main__":
    main()
