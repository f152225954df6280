"""Cold start of `roofline estimate --brief` and `--json` against the floor `python -c "import numpy, pydantic, rich"`.

Each runs as a fresh process, interleaved with the floor (A B A B ...), so a slow spell of the
machine hits both; the figure is the median of the pair-by-pair ratios. Target: ratio <= 1.5.
Both run with Python's bytecode cache on, as an installed package has it (PYTHONDONTWRITEBYTECODE,
where set, is cleared for them: without it every start would compile the tool's source while the
floor's libraries come precompiled).

    python tests/benchmarks/bench_cold_start.py [--runs 30]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def wall(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, cwd="/", env=ENV)
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=30)
    args = ap.parse_args()
    exe = shutil.which("roofline")
    if exe is None:
        sys.exit("roofline is not on PATH: pip install -e . first")
    floor = [sys.executable, "-c", "import numpy, pydantic, rich"]
    print("floor  python -c 'import numpy, pydantic, rich'")
    for flag in ("--brief", "--json"):
        tool = [exe, "estimate", "--model", "bert-large", "--cpu", "icx", flag]
        for _ in range(3):  # warm the page cache, .pyc files and the validated-spec cache
            wall(floor), wall(tool)
        a, b = [], []
        for _ in range(args.runs):
            b.append(wall(floor))
            a.append(wall(tool))
        ratios = sorted(x / y for x, y in zip(a, b))
        q1, q3 = ratios[len(ratios) // 4], ratios[(3 * len(ratios)) // 4]
        print(f"tool   roofline estimate --model bert-large --cpu icx {flag}: median {1e3 * statistics.median(a):6.1f} ms "
              f"(floor {1e3 * statistics.median(b):6.1f} ms); ratio, median of {args.runs} interleaved pairs: "
              f"{statistics.median(ratios):.2f} (quartiles {q1:.2f}-{q3:.2f}; target <= 1.5)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
