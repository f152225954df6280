"""Throughput of the vectorised calculators: (shape x precision) roofline evaluations per second.

The calculators the step evaluator composes (``roofline.calc.gemm``: flops, operand bytes, the
compute and memory times) over a random grid of GEMM shapes (M, N, K up to 16k) and four
precisions, weights from the LLC for half of them, then the aggregate per precision
(``roofline.calc.aggregate``). Target: >= 1e6 evaluations/s.

    python tests/benchmarks/bench_grid.py [--shapes 250000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from roofline.calc.aggregate import aggregate_throughput
from roofline.calc.gemm import gemm_flops, gemm_times, operand_bytes


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", type=int, default=250_000)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    m, n, k = (rng.integers(1, 16384, args.shapes) for _ in range(3))
    count = rng.integers(1, 100, args.shapes)
    # fp32, bf16, int8-static, int8-mixed-bf16 on an AMX part
    e_x = np.array([[4.0], [2.0], [1.0], [1.0]])
    e_y = np.array([[4.0], [2.0], [4.0], [2.0]])
    peak = np.array([[32.8e12], [524e12], [1049e12], [1049e12]])
    resident = np.array([[False], [False], [True], [True]])
    evals = e_x.shape[0] * args.shapes
    times = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        flops = gemm_flops(m, n, k)
        d_x, d_w, d_y = operand_bytes(m, n, k, e_x, e_x, e_y)
        t_c, t_m, _, _ = gemm_times(flops, d_x, d_w, d_y, peak, np.where(resident, 2e12, 1e12), 1e12)
        agg = aggregate_throughput(count, flops, flops / np.maximum(t_c, t_m))
        times.append(time.perf_counter() - t0)
    assert agg.shape == (4,) and np.isfinite(agg).all()
    best, median = min(times), float(np.median(times))
    print(f"{evals:,} (shape x precision) evaluations per call; median {median * 1e3:.1f} ms, best {best * 1e3:.1f} ms")
    print(f"evaluations per second: {evals / median:.3g} median, {evals / best:.3g} best (target >= 1e6)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
