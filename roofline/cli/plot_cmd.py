"""``roofline plot``."""

from __future__ import annotations

import argparse
import json

from roofline.catalog import find_file, load_model_file, load_platform_file
from roofline.cli.estimate_cmd import split_list
from roofline.errors import UserError
from roofline.estimate.engine import estimate


def run(args: argparse.Namespace) -> int:
    from roofline.report.plot import measured_points, plot_roofline

    platform_path = find_file("platforms", args.cpu)
    model = load_model_file(find_file("models", args.model))
    result = estimate(load_platform_file(platform_path), model, precisions=split_list(args.precision),
                      baseline=args.baseline, batch=args.batch, seq_len=args.seq_len, phase=args.phase,
                      context=args.context, bandwidth=args.bandwidth, memory_model=args.memory_model, cores=args.cores,
                      instance_cores=args.instance_cores, platform_file=str(platform_path))
    measured = None
    if args.measured:
        try:
            with open(args.measured, encoding="utf-8") as f:
                report = json.load(f)
        except (OSError, json.JSONDecodeError) as e:
            raise UserError(f"--measured {args.measured}: cannot read a validate report ({e})") from None
        measured = measured_points(result, report)
        if not measured:
            raise UserError(f"--measured {args.measured}: no shape of that report matches this estimate "
                            f"(model, batch x sequence and precisions must be the same)")
    counts = plot_roofline(result, args.output, measured)
    print(f"wrote {args.output}: {counts['predicted']} predicted points"
          + (f", {counts['measured']} measured" if measured else ""))
    return 0
