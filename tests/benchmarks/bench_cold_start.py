"""Cold start of `roofline estimate --json` against the floor `python -c "import numpy, pydantic, rich"`.

Both run as fresh processes, interleaved (A B A B ...), so a slow spell of the
machine hits both; the figure is the median of the pair-by-pair ratios.
Target (issue 2): ratio <= 1.5.

    python tests/benchmarks/bench_cold_start.py [--runs 30]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time


def wall(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, cwd="/")
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=30)
    args = ap.parse_args()
    exe = shutil.which("roofline")
    if exe is None:
        sys.exit("roofline is not on PATH: pip install -e . first")
    floor = [sys.executable, "-c", "import numpy, pydantic, rich"]
    tool = [exe, "estimate", "--model", "bert-large", "--cpu", "icx", "--json"]
    for _ in range(3):  # warm the page cache and .pyc files
        wall(floor), wall(tool)
    a, b = [], []
    for _ in range(args.runs):
        b.append(wall(floor))
        a.append(wall(tool))
    ratios = sorted(x / y for x, y in zip(a, b))
    print(f"floor  python -c 'import numpy, pydantic, rich'   median {1e3 * statistics.median(b):6.1f} ms")
    print(f"tool   roofline estimate --model bert-large --cpu icx --json   median {1e3 * statistics.median(a):6.1f} ms")
    q1, q3 = ratios[len(ratios) // 4], ratios[(3 * len(ratios)) // 4]
    print(f"ratio  tool / floor, median of {args.runs} interleaved pairs: {statistics.median(ratios):.2f} "
          f"(quartiles {q1:.2f}-{q3:.2f}; target <= 1.5)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
