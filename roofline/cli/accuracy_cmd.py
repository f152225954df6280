"""``roofline accuracy``."""

from __future__ import annotations

import argparse

from roofline.catalog.records import load_records
from roofline.cli.output import emit
from roofline.results.accuracy import AccuracyResult


def compute(args: argparse.Namespace) -> AccuracyResult:
    from roofline.estimate.accuracy_run import accuracy

    command = "roofline accuracy" + ("".join(f" {p}" for p in args.records) if args.records else "")
    return accuracy(load_records(args.records or None), command)


def run(args: argparse.Namespace) -> int:
    result = compute(args)
    if args.plot:
        from roofline.report.plot import plot_accuracy

        plot_accuracy(result, args.plot)

    def render():
        from roofline.report.accuracy_tables import render_accuracy

        return render_accuracy(result, brief=args.brief)

    return emit(result, args, render)
