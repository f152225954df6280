"""``roofline accuracy``."""

from __future__ import annotations

import argparse

from roofline.catalog.records import load_records
from roofline.cli.emit import emit
from roofline.results.accuracy import AccuracyResult


def compute(args: argparse.Namespace) -> AccuracyResult:
    from roofline.fidelity.accuracy import accuracy

    command = "roofline accuracy" + ("".join(f" {p}" for p in args.records) if args.records else "")
    return accuracy(load_records(args.records or None), command)


def run(args: argparse.Namespace) -> int:
    if args.plot:  # its target was checked before any work (cli._check_outputs); its format here
        from roofline.report.plot import check_chart_path

        check_chart_path(args.plot, "--plot")
    result = compute(args)
    if args.plot:
        from roofline.files.writing import replacing
        from roofline.report.plot import plot_accuracy

        with replacing(args.plot, force=args.force) as path:  # drawn to a temporary file, then renamed
            plot_accuracy(result, path)

    def render():
        from roofline.report.accuracy_tables import render_accuracy

        return render_accuracy(result, brief=args.brief)

    code = emit(result, args, render)
    if args.plot and args.json != "-":
        print(f"wrote {args.plot}")
    return code
