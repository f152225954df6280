"""`roofline sweep` throughput: points per second on a grid of about a million points.

10 models x 8 CPUs x 5 precisions x 50 batches x 50 sequence lengths = 1,000,000 points, each
the roofline of all of a model's GEMMs plus its non-GEMM work. Evaluation only (no I/O), then
the same with rows formatted as CSV into memory.

    python tests/benchmarks/bench_sweep.py
"""

from __future__ import annotations

import csv
import io
import time

from roofline.catalog import all_models, all_platforms
from roofline.estimate.sweep import COLUMNS, sweep


def main() -> int:
    models = [m for m in all_models() if m.family == "encoder"][:5] + [m for m in all_models() if m.family == "decoder"][:5]
    platforms = all_platforms()[:8]
    precisions = ["fp32", "bf16", "int8-dynamic", "int8-static", "int8-mixed-bf16"]
    batches, seqs = list(range(1, 51)), list(range(8, 409, 8))
    t0 = time.perf_counter()
    planes = list(sweep(platforms, models, precisions, batches, seqs))
    t_eval = time.perf_counter() - t0
    points = sum(len(p) for p in planes)
    buf = io.StringIO()
    t0 = time.perf_counter()
    w = csv.DictWriter(buf, fieldnames=COLUMNS)
    for p in planes[:40]:  # CSV formatting is per row: time a slice and scale
        w.writerows(p.rows())
    t_csv = (time.perf_counter() - t0) * len(planes) / 40
    print(f"{len(models)} models x {len(platforms)} CPUs x {len(precisions)} precisions x {len(batches)} batches x "
          f"{len(seqs)} sequence lengths = {points:,} points")
    print(f"evaluation: {t_eval:.2f} s, {points / t_eval:.3g} points/s")
    print(f"with CSV rows (formatting extrapolated from 40 of {len(planes)} planes): {t_eval + t_csv:.1f} s, "
          f"{points / (t_eval + t_csv):.3g} points/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
