"""``roofline plan``."""

from __future__ import annotations

import argparse

from roofline.catalog import find_file, load_model_file, load_platform_file
from roofline.cli.estimate_cmd import split_list
from roofline.cli.output import emit
from roofline.errors import UserError
from roofline.estimate.plan import plan


def _floats(values: list[str] | None, flag: str) -> list[float] | None:
    items = split_list(values)
    if items is None:
        return None
    try:
        return [float(v) for v in items]
    except ValueError:
        raise UserError(f"{flag}: '{','.join(items)}' is not a list of numbers") from None


def run(args: argparse.Namespace) -> int:
    cpus = split_list(args.cpu) or []
    platforms = [load_platform_file(find_file("platforms", c)) for c in cpus]
    model = load_model_file(find_file("models", args.model))
    result = plan(
        platforms, model, args.precision, prices=_floats(args.price_per_hour, "--price-per-hour"),
        target_rps=args.target_rps, latency_s=args.p99_ms / 1e3 if args.p99_ms is not None else None,
        utilization=args.utilization, batch=args.batch, seq_len=args.seq_len, phase=args.phase,
        context=args.context, bandwidth=args.bandwidth, memory_model=args.memory_model, cores=args.cores,
    )
    def render():
        from roofline.report.plan_tables import render_plan

        return render_plan(result, all_layouts=not args.best_only)

    return emit(result, args, render)
