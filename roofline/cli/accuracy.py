"""``roofline accuracy``: every measurement record against the ceiling and the realistic estimate."""

from __future__ import annotations

import argparse

from roofline import arguments as A
from roofline.cli import flags
from roofline.cli.emit import emit_with_chart

DESCRIPTION = ("Compare every measurement record (validation/records) with its ceiling and with the realistic estimate "
               "of its software stack, that stack's profile refitted without the record's platform "
               "(leave-one-platform-out: the error to expect on an unseen CPU). Counts ceiling violations (must be 0).")
EXAMPLES = ["roofline accuracy --brief", "roofline accuracy --brief --worst 5", "roofline accuracy --plot accuracy.png"]


def parser(name: str) -> argparse.ArgumentParser:
    p = flags.command_parser(name, DESCRIPTION, EXAMPLES)
    flags.add(p, A.ACCURACY)
    flags.add(p, A.ACCURACY_VIEW)
    p.add_argument("--plot", metavar="FILE", help="predicted vs measured chart (.svg or .png; the plot extra)")
    flags.add_html(p)
    flags.add_outputs(p)
    return p


def run(args: argparse.Namespace) -> int:
    from roofline.api import accuracy

    result = accuracy(**flags.values(A.ACCURACY, args))

    def render():
        from roofline.report.accuracy_tables import render_accuracy

        return render_accuracy(result, brief=args.brief, worst=args.worst)

    def draw(result, path):
        from roofline.report.plot import plot_accuracy

        plot_accuracy(result, path)

    def page(result, command):
        from roofline.catalog.records import load_records
        from roofline.report.html import accuracy_page

        records = [(x.id, str(x.path), x.record.source) for x in load_records(args.records or None)]
        return accuracy_page(result, command, records)

    return emit_with_chart(result, args, render, draw, page)
