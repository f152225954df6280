"""``roofline estimate``."""

from __future__ import annotations

import argparse

from roofline.catalog import find_file, load_calibration, load_model_file, load_platform_file
from roofline.cli.emit import emit
from roofline.errors import UserError
from roofline.model.amdahl import Overrides
from roofline.model.estimate import estimate
from roofline.results.estimate import EstimateResult
from roofline.spec.calibration import Calibration
from roofline.spec.model import ModelSpec
from roofline.spec.platform import Platform


def split_list(values: list[str] | None) -> list[str] | None:
    """``--precision a --precision b,c`` -> ``[a, b, c]``."""
    if not values:
        return None
    return [v.strip() for item in values for v in item.split(",") if v.strip()]


def stack_arg(ref):
    """``--stack``: a profile by name or path (or a StackProfile); ``none`` for no profile."""
    from roofline.spec.stack import StackProfile

    if ref is None or isinstance(ref, StackProfile):
        return ref
    if ref.lower() == "none":
        return None
    from roofline.catalog.records import load_stack

    return load_stack(ref)


def platform_arg(ref) -> tuple[Platform, str]:
    """``--cpu``: a catalog name, alias or file (or a Platform), and the file it came from."""
    if isinstance(ref, Platform):
        return ref, ""
    path = find_file("platforms", ref)
    return load_platform_file(path), str(path)


def model_arg(ref) -> ModelSpec:
    """``--model``: a catalog name or alias, a file or folder, a Hugging Face id in the local cache (or a ModelSpec)."""
    return ref if isinstance(ref, ModelSpec) else load_model_file(find_file("models", ref))


def calibration_arg(ref) -> tuple[Calibration | None, str | None]:
    """``--calibration``: a file or its name in platforms/calibration (or a Calibration), and its name."""
    if ref is None or isinstance(ref, Calibration):
        return ref, None if ref is None else f"<calibration of {ref.platform}>"
    return load_calibration(ref), ref


def names(values: list[str] | None, flag: str, what: str) -> list[str]:
    """A list flag that was given: its names, refusing an empty one (``--model ""``)."""
    items = split_list(values)
    if not items:
        raise UserError(f"{flag}: no {what} given (the value is empty); give at least one name")
    return items


def compute(args: argparse.Namespace) -> EstimateResult:
    platform, platform_file = platform_arg(args.cpu)
    model = model_arg(args.model)
    calibration, calibration_name = calibration_arg(args.calibration)
    return estimate(
        platform, model,
        precisions=names(args.precision, "--precision", "precision") if args.precision else None,
        baseline=args.baseline,
        batch=args.batch, seq_len=args.seq_len, phase=args.phase, context=args.context,
        sockets=args.sockets, cores=args.cores, instance_cores=args.instance_cores, memory_model=args.memory_model,
        bandwidth=args.bandwidth, fused_qkv=not args.separate_qkv,
        group_size=args.group_size, kv_dtype=args.kv_dtype, quantize_lm_head=args.quantize_lm_head,
        calibration=calibration, stack=stack_arg(args.stack),
        calibration_name=calibration_name, calibration_any_platform=args.calibration_any_platform,
        overrides=Overrides(args.f_gemm, args.gemm_speedup, args.non_gemm_speedup),
        platform_file=platform_file,
    )


def run(args: argparse.Namespace) -> int:
    result = compute(args)

    def render():
        from roofline.report.estimate_tables import render_estimate

        return render_estimate(result, brief=args.brief)

    return emit(result, args, render)
