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
import math
import signal
import sys

from roofline.catalog import find_file, load_model_file, load_platform_file
from roofline.cli import MAX_SWEEP_POINTS
from roofline.cli.estimate_cmd import names
from roofline.errors import UserError
from roofline.model.sweep import COLUMNS, sweep
from roofline.model.workload import make_workload
from roofline.spec.precision import get_recipe


def _axis(values: list[list[range]] | None, default: int) -> list[int]:
    """The values of an axis, in the order given (duplicates kept out)."""
    if not values:
        return [default]
    return list(dict.fromkeys(v for ranges in values for r in ranges for v in r))


def _axis_size(values: list[list[range]] | None) -> int:
    return sum(len(r) for ranges in values for r in ranges) if values else 1


def run(args: argparse.Namespace) -> int:
    model_names = names(args.model, "--model", "model")
    cpu_names = names(args.cpu, "--cpu", "CPU")
    precisions = names(args.precision, "--precision", "precision") if args.precision else ["fp32", "int8-static"]
    points = math.prod([len(model_names), len(cpu_names), len(precisions), _axis_size(args.batch),
                        _axis_size(args.seq_len)])
    if points > MAX_SWEEP_POINTS:
        raise UserError(f"the grid has {points:,} points, more than the {MAX_SWEEP_POINTS:,} a sweep evaluates; "
                        "narrow --batch or --seq-len (a step, e.g. 1:4096:64) or split the sweep")
    for p in precisions:
        get_recipe(p)
    models = [load_model_file(find_file("models", m)) for m in model_names]
    platforms = [load_platform_file(find_file("platforms", c)) for c in cpu_names]
    batches, seqs = _axis(args.batch, 1), _axis(args.seq_len, 256)
    for model in models:  # every model's limits (positions, phase, context), on the largest point
        make_workload(model, args.phase, max(batches), max(seqs), args.context)
    fmt = args.format or ("jsonl" if args.output and args.output.endswith((".jsonl", ".json")) else "csv")
    planes = sweep(platforms, models, precisions, batches, seqs, phase=args.phase, context=args.context,
                   bandwidth=args.bandwidth, memory_model=args.memory_model, cores=args.cores,
                   instance_cores=args.instance_cores)
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

