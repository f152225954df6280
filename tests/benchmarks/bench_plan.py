"""Speed of `roofline plan` over 3 CPUs and all their layouts (icx, spr, gnr: 6 + 7 + 8 layouts), service
tables and simulations included: an encoder in both scenarios (fixed and lognormal lengths) and a decoder
in both scenarios, in-process, best of ``--repeats``.

    python tests/benchmarks/bench_plan.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import time

from roofline.capacity import PlanOptions, plan
from roofline.capacity.decoder import _Decoder
from roofline.capacity.encoder import _Tables
from roofline.capacity.options import resolve
from roofline.catalog import load_model, load_platform
from roofline.catalog.stacks import load_stack
from roofline.serving.request_lengths import fixed_lengths, lognormal_lengths

CPUS = ("icx", "spr", "gnr")
CASES = {
    "bert-large offline, 256 tokens": ("bert-large", "int8-static", dict(lengths=fixed_lengths(256))),
    "bert-large server p99 100 ms, 256 tokens": ("bert-large", "int8-static",
                                                 dict(lengths=fixed_lengths(256), p99_s=0.1)),
    "bert-large server p99 100 ms, lognormal mean 200": ("bert-large", "int8-static",
                                                         dict(lengths=lognormal_lengths(200, 0.5, 1, 512), p99_s=0.1)),
    "llama-3.2-1b offline, prompt 512, output 128": ("llama-3.2-1b", "int8-weight-only",
                                                     dict(lengths=fixed_lengths(512), output_len=128)),
    "llama-3.2-1b server TTFT 1 s TPOT 40 ms": ("llama-3.2-1b", "int8-weight-only",
                                                dict(lengths=fixed_lengths(512), output_len=128, ttft_s=1.0,
                                                     tpot_s=0.04)),
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    platforms = [load_platform(c) for c in CPUS]
    stack = load_stack("torch-inductor")
    for label, (name, precision, kw) in CASES.items():
        model = load_model(name)
        opts = PlanOptions(stack=stack, **kw)
        total, tables = [], []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            o = resolve(model, opts, len(platforms))
            (_Decoder if o.phase == "decode" else _Tables)(platforms, model, precision, o)
            t1 = time.perf_counter()
            plan(platforms, model, precision, opts)
            tables.append(t1 - t0)
            total.append(time.perf_counter() - t1)
        print(f"{label}: plan {min(total):.2f} s, of which service tables {min(tables):.2f} s "
              f"(best of {args.repeats}; all: {', '.join(f'{t:.2f}' for t in total)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
