"""``roofline accuracy``: every measurement record against the ceiling and the realistic estimate."""

from __future__ import annotations

import argparse

from roofline import arguments as A
from roofline.cli import flags
from roofline.cli.emit import emit_with_chart

DESCRIPTION = ("Compare every measurement record (validation/records) with its ceiling and with the realistic estimate "
               "of its software stack, that stack's profile refitted without the record's platform "
               "(leave-one-platform-out: the error to expect on an unseen CPU). Counts ceiling violations (must be 0).")
EXAMPLES = ["roofline accuracy --brief", "roofline accuracy --brief --worst 5", "roofline accuracy --plot accuracy.png",
            "roofline accuracy --gate validation/accuracy-gate.toml"]


def parser(name: str) -> argparse.ArgumentParser:
    p = flags.command_parser(name, DESCRIPTION, EXAMPLES)
    flags.add(p, A.ACCURACY)
    flags.add(p, A.ACCURACY_VIEW)
    p.add_argument("--plot", metavar="FILE", help="predicted vs measured chart (.svg or .png; the plot extra)")
    p.add_argument("--gate", metavar="FILE", help="fail (exit 1) where a stack or group does worse than the committed "
                   "summary FILE: its median |error| more than 2 points up, its band coverage more than 10 points "
                   "further from half, or more ceiling violations")
    p.add_argument("--write-gate", metavar="FILE", help="write this run's summary as the gate FILE (with --reason)")
    p.add_argument("--reason", help="why the gate's summary changes (with --write-gate)")
    flags.add_html(p)
    flags.add_outputs(p)
    return p


def run(args: argparse.Namespace) -> int:
    from roofline.api import accuracy

    result = accuracy(**flags.values(A.ACCURACY, args))
    if args.gate or args.write_gate:
        return _gate(result, args)

    def render():
        from roofline.report.accuracy_tables import render_accuracy

        return render_accuracy(result, brief=args.brief, worst=args.worst)

    def draw(result, path):
        from roofline.report.plot import plot_accuracy

        plot_accuracy(result, path)

    def page(result, command):
        from roofline.catalog.records import load_records
        from roofline.files.reading import shown_path
        from roofline.report.html import accuracy_page

        records = [(x.id, shown_path(x.path), x.record.source) for x in load_records(args.records or None)]
        return accuracy_page(result, command, records)

    return emit_with_chart(result, args, render, draw, page)


def _gate(result, args: argparse.Namespace) -> int:
    from roofline.catalog.cache import load_validated
    from roofline.catalog.write import spec_toml
    from roofline.errors import UserError
    from roofline.fidelity.gate import Gate, failures, gate_of
    from roofline.files.reading import parse_toml
    from roofline.files.writing import write_text

    if args.write_gate:
        if not (args.reason or "").strip():
            raise UserError("--write-gate: give --reason TEXT (why the summary changes)")
        gate = gate_of(result, args.reason.strip())
        write_text(args.write_gate, spec_toml(gate, header="roofline accuracy --write-gate " + args.write_gate),
                   force=True)
        print(f"written: {args.write_gate}: {len(gate.rows)} stacks and groups, {gate.violations} violations")
        return 0
    from pathlib import Path

    committed = load_validated(Gate, Path(args.gate), lambda raw: parse_toml(raw, args.gate))
    bad = failures(committed, gate_of(result, ""))
    for line in bad:
        print(f"gate: {line}")
    print(f"accuracy gate {args.gate}: " + (f"{len(bad)} failure(s)" if bad else "holds"))
    return 1 if bad else 0
