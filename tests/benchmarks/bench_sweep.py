"""`roofline sweep` throughput: points per second on a grid of about a million points, evaluated alone and
written to CSV and to Parquet.

10 models x 8 CPUs x 5 precisions x 50 batches x 50 sequence lengths = 1,000,000 points, each the roofline
of all of a model's GEMMs plus its non-GEMM work. First the evaluation alone (no output), the memory-level
model against the paper's (``--memory-model paper``, timed alternately in the same run: what pricing each
tensor at its level costs) and against the rate recorded before the step evaluator was consolidated
(:data:`BEFORE`: a different run, so only meaningful on the same CPU and a quiet machine). Then the whole
sweep as `roofline sweep -o` runs it, evaluated and written to a file (CSV, then Parquet; the text made a
column at a time, :mod:`roofline.files.columns`), each as points/s and as a ratio to the evaluation alone.
The target is 1e6 points/s with output.

    python tests/benchmarks/bench_sweep.py
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from roofline.catalog import all_models, all_platforms
from roofline.model.build import CeilingSpec
from roofline.model.sweep import AxisValues, sweep, sweep_table

#: points/s of the evaluation before the step evaluator was consolidated (median of two runs of this
#: script on a 2-vCPU AMD EPYC Zen 4 KVM guest, family 25 model 17; the paper memory model was the only one)
BEFORE = 1.45e6
TARGET = 1e6


def main() -> int:
    models = [m for m in all_models() if m.family == "encoder"][:5] + [m for m in all_models() if m.family == "decoder"][:5]
    platforms = all_platforms()[:8]
    precisions = ["fp32", "bf16", "int8-dynamic", "int8-static", "int8-mixed-bf16"]
    batches, seqs = list(range(1, 51)), list(range(8, 409, 8))
    runs: dict[str, list[float]] = {"levels": [], "paper": []}
    points = 0
    for _ in range(3):  # alternately, so that a drift in the machine's speed hits both
        for model in runs:
            t0 = time.perf_counter()
            points = sum(len(p) for p in sweep(platforms, models, precisions, batches, seqs,
                                               ceiling=CeilingSpec(memory_model=model)))
            runs[model].append(time.perf_counter() - t0)
    t_eval, t_paper = (sorted(runs[k])[1] for k in ("levels", "paper"))  # the medians
    print(f"{len(models)} models x {len(platforms)} CPUs x {len(precisions)} precisions x {len(batches)} batches x "
          f"{len(seqs)} sequence lengths = {points:,} points")
    print(f"evaluation (median of 3): {t_eval:.2f} s, {points / t_eval:.3g} points/s; paper memory model "
          f"{points / t_paper:.3g} points/s")
    print(f"ratio, memory-level over paper model: {t_paper / t_eval:.2f}; over the rate before the consolidation "
          f"({BEFORE:.3g} points/s, see BEFORE): {points / t_eval / BEFORE:.2f}")
    import pyarrow.parquet  # noqa: F401  (imported before the clock starts, as a long sweep pays it once)

    table = sweep_table(platforms, models, precisions, AxisValues(batches), AxisValues(seqs))
    with tempfile.TemporaryDirectory() as tmp:
        for fmt in ("csv", "parquet"):
            path = Path(tmp) / f"grid.{fmt}"
            t0 = time.perf_counter()
            table.write(str(path))
            t = time.perf_counter() - t0
            rate = points / t
            print(f"evaluated and written to {fmt.upper()}: {t:.2f} s, {rate:.3g} points/s, {path.stat().st_size / 1e6:,.0f} "
                  f"MB; ratio to the evaluation alone {t_eval / t:.2f}; {'meets' if rate >= TARGET else 'below'} the "
                  f"target of {TARGET:.0e} points/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
