"""``roofline plot``."""

from __future__ import annotations

import argparse

from roofline.catalog import find_file, load_model_file, load_platform_file
from roofline.cli.estimate_cmd import names
from roofline.catalog.reports import load_report
from roofline.errors import UserError
from roofline.model.estimate import estimate
from roofline.files.writing import replacing


def run(args: argparse.Namespace) -> int:
    from roofline.report.plot import check_chart_path, measured_points, plot_roofline

    check_chart_path(args.output)
    platform_path = find_file("platforms", args.cpu)
    model = load_model_file(find_file("models", args.model))
    precisions = names(args.precision, "--precision", "precision") if args.precision else None
    result = estimate(load_platform_file(platform_path), model, precisions=precisions,
                      baseline=args.baseline, batch=args.batch, seq_len=args.seq_len, phase=args.phase,
                      context=args.context, bandwidth=args.bandwidth, memory_model=args.memory_model, cores=args.cores,
                      instance_cores=args.instance_cores, platform_file=str(platform_path))
    measured = None
    if args.measured:
        measured = measured_points(result, load_report(args.measured, "--measured"))
        if not measured:
            raise UserError(f"--measured {args.measured}: no shape of that report matches this estimate "
                            f"(model, batch x sequence and precisions must be the same)")
    with replacing(args.output, force=args.force) as path:  # drawn to a temporary file, then renamed
        counts = plot_roofline(result, path, measured)
    print(f"wrote {args.output}: {counts['predicted']} predicted points"
          + (f", {counts['measured']} measured" if measured else ""))
    return 0
