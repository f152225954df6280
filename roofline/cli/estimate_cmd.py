"""``roofline estimate``."""

from __future__ import annotations

import argparse

from roofline.catalog import find_file, load_calibration, load_model_file, load_platform_file
from roofline.cli.output import emit
from roofline.errors import UserError
from roofline.estimate.amdahl_inputs import Overrides
from roofline.estimate.engine import estimate


def split_list(values: list[str] | None) -> list[str] | None:
    """``--precision a --precision b,c`` -> ``[a, b, c]``."""
    if not values:
        return None
    return [v.strip() for item in values for v in item.split(",") if v.strip()]


def stack_arg(ref: str | None):
    """``--stack``: a profile by name or path; ``none`` for no profile."""
    if ref is None or ref.lower() == "none":
        return None
    from roofline.catalog.records import load_stack

    return load_stack(ref)


def names(values: list[str] | None, flag: str, what: str) -> list[str]:
    """A list flag that was given: its names, refusing an empty one (``--model ""``)."""
    items = split_list(values)
    if not items:
        raise UserError(f"{flag}: no {what} given (the value is empty); give at least one name")
    return items


def run(args: argparse.Namespace) -> int:
    platform_path = find_file("platforms", args.cpu)
    platform = load_platform_file(platform_path)
    model = load_model_file(find_file("models", args.model))
    result = estimate(
        platform, model,
        precisions=names(args.precision, "--precision", "precision") if args.precision else None,
        baseline=args.baseline,
        batch=args.batch, seq_len=args.seq_len, phase=args.phase, context=args.context,
        sockets=args.sockets, cores=args.cores, instance_cores=args.instance_cores, memory_model=args.memory_model,
        bandwidth=args.bandwidth, fused_qkv=not args.separate_qkv,
        group_size=args.group_size, kv_dtype=args.kv_dtype, quantize_lm_head=args.quantize_lm_head,
        calibration=load_calibration(args.calibration) if args.calibration else None,
        stack=stack_arg(args.stack),
        calibration_name=args.calibration, calibration_any_platform=args.calibration_any_platform,
        overrides=Overrides(args.f_gemm, args.gemm_speedup, args.non_gemm_speedup),
        platform_file=str(platform_path),
    )
    def render():
        from roofline.report.estimate_tables import render_estimate

        return render_estimate(result, brief=args.brief)

    return emit(result, args, render)
