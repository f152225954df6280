"""``roofline sweep``: CSV or JSON lines, one row per (model, CPU, precision, batch, sequence)."""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

from roofline.catalog import find_file, load_model_file, load_platform_file
from roofline.cli.estimate_cmd import split_list
from roofline.errors import UserError
from roofline.estimate.sweep import COLUMNS, sweep


def _ints(values: list[str] | None, flag: str, default: list[int]) -> list[int]:
    items = split_list(values)
    if not items:
        return default
    out = []
    for item in items:
        if ":" in item:  # start:stop[:step], stop inclusive
            parts = item.split(":")
            try:
                start, stop, step = (int(parts[0]), int(parts[1]), int(parts[2]) if len(parts) > 2 else 1)
            except (ValueError, IndexError):
                raise UserError(f"{flag}: '{item}' is not start:stop[:step]") from None
            out += list(range(start, stop + 1, step))
        else:
            try:
                out.append(int(item))
            except ValueError:
                raise UserError(f"{flag}: '{item}' is not a whole number") from None
    if not out or min(out) < 1:
        raise UserError(f"{flag}: values must be whole numbers of at least 1")
    return out


def run(args: argparse.Namespace) -> int:
    models = [load_model_file(find_file("models", m)) for m in split_list(args.model) or []]
    platforms = [load_platform_file(find_file("platforms", c)) for c in split_list(args.cpu) or []]
    precisions = split_list(args.precision) or ["fp32", "int8-static"]
    batches = _ints(args.batch, "--batch", [1])
    seqs = _ints(args.seq_len, "--seq-len", [256])
    fmt = args.format or ("jsonl" if args.output and args.output.endswith((".jsonl", ".json")) else "csv")
    planes = sweep(platforms, models, precisions, batches, seqs, phase=args.phase, context=args.context,
                   bandwidth=args.bandwidth, memory_model=args.memory_model, cores=args.cores,
                   instance_cores=args.instance_cores)
    out = open(args.output, "w", newline="", encoding="utf-8") if args.output and args.output != "-" else sys.stdout
    try:
        if fmt == "csv":
            writer = csv.DictWriter(out, fieldnames=COLUMNS)
            writer.writeheader()
            for p in planes:
                writer.writerows(p.rows())
        else:
            for p in planes:
                for row in p.rows():
                    out.write(json.dumps(row, allow_nan=False) + "\n")
    except UserError:
        if out is not sys.stdout:
            out.close()
            Path(args.output).unlink(missing_ok=True)
        raise
    finally:
        if out is not sys.stdout:
            out.close()
    return 0
