"""``roofline sweep``: CSV or JSON lines, one row per (model, CPU, precision, batch, sequence).

Everything is checked before the output is opened: the names, every axis, the grid's size and each
model's workload limits. Rows stream into a temporary file beside the target, which replaces it only
when the last row is written: an error or an interrupt leaves an existing file as it was.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import signal
import sys

from roofline import arguments as A
from roofline.cli import flags

DESCRIPTION = ("Evaluate a grid with the vectorised core and write one row per point: step and GEMM time, "
               "throughput, aggregate GEMM ops/s, what bounds it, weight bytes, LLC residency. Lists are "
               "comma-separated; integer axes also take start:stop[:step] (stop included).")
EXAMPLES = ["roofline sweep --model bert-base --cpu icx,spr --batch 1:64 -o grid.csv"]


def parser(name: str) -> argparse.ArgumentParser:
    p = flags.command_parser(name, DESCRIPTION, EXAMPLES)
    flags.add(p, A.SWEEP)
    p.add_argument("-o", "--output", help="file (.csv, .jsonl) or - for stdout (default)")
    p.add_argument("--format", choices=("csv", "jsonl"), help="default: from the file name, else csv")
    flags.add_outputs(p, json=False, brief=False)
    return p


def run(args: argparse.Namespace) -> int:
    from roofline.api import sweep_grid
    from roofline.model.build import CeilingSpec, LayoutSpec
    from roofline.model.sweep import COLUMNS, sweep

    a = flags.values(A.SWEEP, args)
    models, platforms, precisions, batches, seqs = sweep_grid(a)
    fmt = args.format or ("jsonl" if args.output and args.output.endswith((".jsonl", ".json")) else "csv")
    planes = sweep(platforms, models, precisions, batches, seqs, phase=a.phase, context=a.context,
                   ceiling=CeilingSpec(memory_model=a.memory_model, bandwidth=a.bandwidth, ceiling=a.ceiling),
                   layout=LayoutSpec(cores=a.cores, instance_cores=a.instance_cores))
    if args.output and args.output != "-":
        from roofline.files.writing import open_text

        target = open_text(args.output, force=args.force, newline="")
    else:
        target = contextlib.nullcontext(sys.stdout)
    rows = 0
    with target as out, _interrupt_between_rows() as interrupted:
        if fmt == "csv":
            writer = csv.DictWriter(out, fieldnames=COLUMNS)
            writer.writeheader()
        for p in planes:
            for row in p.rows():
                if interrupted:
                    raise KeyboardInterrupt
                if fmt == "csv":
                    writer.writerow(row)
                else:
                    out.write(json.dumps(row, allow_nan=False) + "\n")
                rows += 1
    if args.output and args.output != "-":  # the rows went to a file: say what is in it
        axes = [(len(models), "model", "models"), (len(platforms), "CPU", "CPUs"),
                (len(precisions), "precision", "precisions"), (len(batches), "batch", "batches"),
                (len(seqs), "sequence length", "sequence lengths")]
        grid = " x ".join(f"{n} {one if n == 1 else many}" for n, one, many in axes)
        print(f"sweep: {rows:,} rows ({grid}) written to {args.output} ({fmt})")
    return 0


@contextlib.contextmanager
def _interrupt_between_rows():
    """SIGINT while rows stream: the handler raises KeyboardInterrupt as Python's does, and notes it, and
    the row loop raises it again if it was lost (a KeyboardInterrupt raised from inside C code that clears
    errors is: a sweep interrupted in the test suite ran on, SIGINT caught, writing rows for a minute). An
    ignored SIGINT (a background job) stays ignored."""
    noted: list[bool] = []
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield noted
        return

    def handler(signum, frame):
        noted.append(True)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield noted
    finally:
        signal.signal(signal.SIGINT, previous)
