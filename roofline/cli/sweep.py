"""``roofline sweep``: CSV, JSON lines or Parquet, one row per (model, CPU, precision, batch, sequence).

Everything is checked before the output is opened: the names, every axis, the grid's size, each model's
workload limits and the output's format (a suffix this command does not write is refused). The table
streams block by block (:mod:`roofline.files.columns`: text made a column at a time) into a temporary file
beside the target, which replaces it only when the last row is written: an error or an interrupt leaves
an existing file as it was.
"""

from __future__ import annotations

import argparse
import contextlib
import signal

from roofline import arguments as A
from roofline.cli import flags

DESCRIPTION = ("Evaluate a grid with the vectorised core and write one row per point: step and GEMM time, "
               "throughput, aggregate GEMM ops/s, what bounds it, weight bytes, LLC residency (CSV, JSON lines, or "
               "Parquet with the parquet extra). Lists are comma-separated; integer axes also take start:stop[:step] "
               "(stop included).")
EXAMPLES = ["roofline sweep --model bert-base --cpu icx,spr --batch 1:64 -o grid.csv",
            "roofline sweep --model bert-base,bert-large --cpu spr --seq-len 32:512:32 \\",
            "    -o grid.parquet"]


def parser(name: str) -> argparse.ArgumentParser:
    p = flags.command_parser(name, DESCRIPTION, EXAMPLES)
    flags.add(p, A.SWEEP)
    p.add_argument("-o", "--output", help="file (.csv, .jsonl, .parquet) or - for stdout (default)")
    p.add_argument("--format", choices=("csv", "jsonl", "parquet"), help="default: from the file name, else csv")
    flags.add_outputs(p, json=False, brief=False)
    return p


def run(args: argparse.Namespace) -> int:
    from roofline.api import sweep_of
    from roofline.files.columns import checked_blocks, table_format, write_table

    fmt = table_format(args.output, args.format)
    table = sweep_of(flags.values(A.SWEEP, args))
    grid = table.grid
    to_file = bool(args.output and args.output != "-")
    with _interrupt_between_blocks() as interrupted:
        def check() -> None:
            if interrupted:
                raise KeyboardInterrupt

        rows = write_table(args.output if to_file else "-", table.schema, checked_blocks(table.blocks(), check), fmt,
                           force=args.force)
    if to_file:  # the rows went to a file: say what is in it
        print(f"sweep: {rows:,} rows ({grid}) written to {args.output} ({fmt})")
    return 0


@contextlib.contextmanager
def _interrupt_between_blocks():
    """SIGINT while rows stream: the handler raises KeyboardInterrupt as Python's does, and notes it, and
    the block loop raises it again if it was lost (a KeyboardInterrupt raised from inside C code that clears
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
