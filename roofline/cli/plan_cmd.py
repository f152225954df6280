"""``roofline plan``."""

from __future__ import annotations

import argparse

from roofline.catalog import find_file, load_model_file, load_platform_file
from roofline.cli.estimate_cmd import names
from roofline.cli.output import emit
from roofline.estimate.plan import plan


def run(args: argparse.Namespace) -> int:
    cpus = names(args.cpu, "--cpu", "CPU")
    platforms = [load_platform_file(find_file("platforms", c)) for c in cpus]
    model = load_model_file(find_file("models", args.model))
    prices = [v for group in args.price_per_hour for v in group] if args.price_per_hour else None
    result = plan(
        platforms, model, args.precision, prices=prices,
        target_rps=args.target_rps, latency_s=args.p99_ms / 1e3 if args.p99_ms is not None else None,
        utilization=args.utilization, batch=args.batch, seq_len=args.seq_len, phase=args.phase,
        context=args.context, bandwidth=args.bandwidth, memory_model=args.memory_model, cores=args.cores,
    )
    def render():
        from roofline.report.plan_tables import render_plan

        return render_plan(result, all_layouts=not args.best_only)

    return emit(result, args, render)
