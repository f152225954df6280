"""``roofline plot``: the log-log roofline chart of a model's GEMMs on a CPU."""

from __future__ import annotations

import argparse

from roofline import arguments as A
from roofline.cli import flags
from roofline.errors import UserError

DESCRIPTION = ("Log-log roofline: DRAM and LLC slopes, a ceiling per compute path, each GEMM shape as a point per "
               "precision, and with --measured the points a validate report measured beside their predictions. Needs "
               "matplotlib: pip install 'roofline[plot]'.")
EXAMPLES = ["roofline plot --model bert-large --cpu gnr -o roofline.svg"]


def parser(name: str) -> argparse.ArgumentParser:
    p = flags.command_parser(name, DESCRIPTION, EXAMPLES)
    flags.add(p, A.PLOT)
    p.add_argument("-o", "--output", required=True, help="chart file, .svg or .png")
    flags.add_outputs(p, json=False, brief=False)
    return p


def run(args: argparse.Namespace) -> int:
    from roofline.api import run_estimate
    from roofline.catalog.reports import load_report
    from roofline.files.writing import replacing
    from roofline.report.plot import check_chart_path, measured_points, plot_roofline

    check_chart_path(args.output)
    a = flags.values(A.PLOT, args)
    result = run_estimate(a)
    measured = None
    if a.measured:
        measured = measured_points(result, load_report(a.measured, "--measured"))
        if not measured:
            raise UserError(f"--measured {a.measured}: no shape of that report matches this estimate "
                            f"(model, batch x sequence and precisions must be the same)")
    with replacing(args.output, force=args.force) as path:  # drawn to a temporary file, then renamed
        counts = plot_roofline(result, path, measured)
    print(f"wrote {args.output}: {counts['predicted']} predicted points"
          + (f", {counts['measured']} measured" if measured else ""))
    return 0
