"""How long `roofline accuracy` takes uncached and the test suite takes, against their targets (10 s and 4 min on
two cores): each as a subprocess on a fresh cache, the ratio to its target printed.

    python tests/benchmarks/speed.py [--no-suite] [--fast]

``--fast`` times the fast stage (``pytest -m "not slow"``, target 60 s) instead of the whole suite. Run it on a
quiet machine: nothing else busy beside it.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TARGETS = {"accuracy": 10.0, "suite": 240.0, "fast stage": 60.0}


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, int]:
    start = time.perf_counter()
    rc = subprocess.run(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    return time.perf_counter() - start, rc


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-suite", action="store_true", help="time `roofline accuracy` only")
    ap.add_argument("--fast", action="store_true", help='time the fast stage, pytest -m "not slow"')
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "ROOFLINE_CACHE_DIR": cache}
        runs = [("accuracy", [sys.executable, "-m", "roofline", "accuracy", "--brief"])]
        if not args.no_suite:
            runs.append(("fast stage", [sys.executable, "-m", "pytest", "-q", "-m", "not slow"]) if args.fast else
                        ("suite", [sys.executable, "-m", "pytest", "-q"]))
        print(f"{'what':<12} {'seconds':>8} {'target':>7} {'ratio':>6}  exit")
        worst = 0
        for name, cmd in runs:
            s, rc = timed(cmd, env)
            print(f"{name:<12} {s:8.1f} {TARGETS[name]:7.0f} {s / TARGETS[name]:6.2f}  {rc}")
            worst = max(worst, rc)
    return worst


if __name__ == "__main__":
    raise SystemExit(main())
