"""`roofline sweep` throughput: points per second on a grid of about a million points.

10 models x 8 CPUs x 5 precisions x 50 batches x 50 sequence lengths = 1,000,000 points, each
the roofline of all of a model's GEMMs plus its non-GEMM work. Evaluation only (no I/O), then
the same with rows formatted as CSV into memory. It prints two ratios: the memory-level model's
rate over the paper model's (``--memory-model paper``, timed alternately in the same run: what pricing
each tensor at its level costs), and over the rate recorded before the step evaluator was consolidated
(:data:`BEFORE`: a different run, so only meaningful on the same CPU and a quiet machine).

    python tests/benchmarks/bench_sweep.py
"""

from __future__ import annotations

import csv
import io
import time

from roofline.catalog import all_models, all_platforms
from roofline.model.build import CeilingSpec
from roofline.model.sweep import COLUMNS, sweep

#: points/s of the evaluation before the step evaluator was consolidated (median of two runs of this
#: script on a 2-vCPU AMD EPYC Zen 4 KVM guest, family 25 model 17; the paper memory model was the only one)
BEFORE = 1.45e6


def main() -> int:
    models = [m for m in all_models() if m.family == "encoder"][:5] + [m for m in all_models() if m.family == "decoder"][:5]
    platforms = all_platforms()[:8]
    precisions = ["fp32", "bf16", "int8-dynamic", "int8-static", "int8-mixed-bf16"]
    batches, seqs = list(range(1, 51)), list(range(8, 409, 8))
    runs: dict[str, list[float]] = {"levels": [], "paper": []}
    for _ in range(3):  # alternately, so that a drift in the machine's speed hits both
        for model in runs:
            t0 = time.perf_counter()
            planes = list(sweep(platforms, models, precisions, batches, seqs, ceiling=CeilingSpec(memory_model=model)))
            runs[model].append(time.perf_counter() - t0)
    planes = list(sweep(platforms, models, precisions, batches, seqs))
    t_eval, t_paper = (sorted(runs[k])[1] for k in ("levels", "paper"))  # the medians
    points = sum(len(p) for p in planes)
    buf = io.StringIO()
    t0 = time.perf_counter()
    w = csv.DictWriter(buf, fieldnames=COLUMNS)
    for p in planes[:40]:  # CSV formatting is per row: time a slice and scale
        w.writerows(p.rows())
    t_csv = (time.perf_counter() - t0) * len(planes) / 40
    print(f"{len(models)} models x {len(platforms)} CPUs x {len(precisions)} precisions x {len(batches)} batches x "
          f"{len(seqs)} sequence lengths = {points:,} points")
    print(f"evaluation (median of 3): {t_eval:.2f} s, {points / t_eval:.3g} points/s; paper memory model "
          f"{points / t_paper:.3g} points/s")
    print(f"ratio, memory-level over paper model: {t_paper / t_eval:.2f}; over the rate before the consolidation "
          f"({BEFORE:.3g} points/s, see BEFORE): {points / t_eval / BEFORE:.2f}")
    print(f"with CSV rows (formatting extrapolated from 40 of {len(planes)} planes): {t_eval + t_csv:.1f} s, "
          f"{points / (t_eval + t_csv):.3g} points/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
