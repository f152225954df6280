"""Refit every stack profile in ``platforms/stacks`` from the committed records, forms chosen anew: one
``roofline calibrate --records`` per stack, the stacks fitted on enough platforms for their own band first (the
others take cross-stack values from them).

    python -m validation.refit_stacks [--only NAME ...]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STACKS = ROOT / "platforms" / "stacks"


def order() -> list[str]:
    """The profiled stacks, those fitted on the most platforms first."""
    from roofline.catalog.stacks import load_stack

    names = sorted(p.stem for p in STACKS.glob("*.toml"))
    platforms = {n: (load_stack(n).accuracy.platforms if load_stack(n).accuracy else 0) for n in names}
    return sorted(names, key=lambda n: (-platforms[n], n))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="+", metavar="NAME", help="refit these stacks only")
    args = ap.parse_args()
    for name in args.only or order():
        start = time.perf_counter()
        flags = [] if name == "torch-inductor" else ["--stack", name]
        cmd = [sys.executable, "-m", "roofline", "calibrate", "--records", *flags, "-o",
               f"platforms/stacks/{name}.toml"]
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        print(f"{name}: {(done.stdout or done.stderr).strip().splitlines()[-1]} ({time.perf_counter() - start:.0f} s)")
        if done.returncode:
            return done.returncode
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
