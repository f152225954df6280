"""``roofline plan``."""

from __future__ import annotations

import argparse
import math

from roofline.cli.estimate_cmd import calibration_arg, model_arg, names, platform_arg, stack_arg
from roofline.cli.emit import emit
from roofline.errors import UserError
from roofline.capacity import PlanOptions, plan
from roofline.capacity.options import DEFAULT_OUTPUT_LEN
from roofline.results.plan import PlanResult
from roofline.serving.request_lengths import RequestLengths, fixed_lengths, histogram_lengths, lognormal_lengths
from roofline.spec.model import ModelSpec
from roofline.spec.platform import Platform

DEFAULT_SEQ_LEN = 256


def request_lengths(args: argparse.Namespace, model: ModelSpec) -> RequestLengths:
    """``--seq-len`` (fixed), ``--seq-len-mean`` (a truncated lognormal) or ``--seq-len-histogram FILE``."""
    given = [f for f, v in (("--seq-len", args.seq_len), ("--seq-len-mean", args.seq_len_mean),
                            ("--seq-len-histogram", args.seq_len_histogram)) if v is not None]
    if len(given) > 1:
        raise UserError(f"{given[0]} and {given[1]}: give one way of stating the request lengths")
    if args.seq_len_mean is None and (args.seq_len_dist or args.seq_len_sigma is not None):
        raise UserError(f"{'--seq-len-dist' if args.seq_len_dist else '--seq-len-sigma'} shapes the distribution of "
                        "--seq-len-mean; give --seq-len-mean")
    if args.seq_len_histogram is not None:
        from roofline.catalog.length_histogram import read_length_histogram

        lengths, weights = read_length_histogram(args.seq_len_histogram, max_length=model.max_position_embeddings)
        return histogram_lengths(lengths, weights)
    if args.seq_len_mean is not None:
        room = model.max_position_embeddings  # a decoder's prompt leaves room for the output
        if model.family == "decoder" and args.phase in (None, "decode"):
            room -= DEFAULT_OUTPUT_LEN if args.output_len is None else args.output_len
        hi = min(math.ceil(4 * args.seq_len_mean), room)
        if not args.seq_len_mean < hi:
            raise UserError(f"--seq-len-mean {args.seq_len_mean:g}: must be below {hi:,} tokens ({model.name}'s "
                            f"{model.max_position_embeddings:,} positions, less any output; the lognormal is "
                            "truncated there)")
        if not args.seq_len_mean > 1:
            raise UserError(f"--seq-len-mean {args.seq_len_mean:g}: a distribution of lengths needs a mean above 1 "
                            "token; use --seq-len 1")
        sigma = 0.5 if args.seq_len_sigma is None else args.seq_len_sigma
        return lognormal_lengths(args.seq_len_mean, sigma, 1, hi)
    return fixed_lengths(DEFAULT_SEQ_LEN if args.seq_len is None else args.seq_len)


def platforms_arg(value) -> list[Platform]:
    """``--cpu``: names, aliases or files, comma-separated or repeated (or Platform objects)."""
    out: list[Platform] = []
    for item in value if isinstance(value, list) else [value]:
        if isinstance(item, str):
            out += [platform_arg(c)[0] for c in names([item], "--cpu", "CPU")]
        else:
            out.append(platform_arg(item)[0])
    if not out:
        raise UserError("--cpu: no CPU given; give at least one name")
    return out


def compute(args: argparse.Namespace) -> PlanResult:
    """The plan the parsed flags ask for (what ``--json`` prints)."""
    platforms = platforms_arg(args.cpu)
    model = model_arg(args.model)
    prices = [v for group in args.price_per_hour for v in group] if args.price_per_hour else None
    ms = lambda v: None if v is None else v / 1e3  # noqa: E731
    calibration, calibration_name = calibration_arg(args.calibration)
    options = PlanOptions(
        lengths=request_lengths(args, model), scenario=args.scenario, phase=args.phase,
        max_batch_tokens=args.max_batch_tokens, max_wait_s=args.max_wait_ms / 1e3, p99_s=ms(args.p99_ms),
        ttft_s=ms(args.ttft_ms), tpot_s=ms(args.tpot_ms), target_rps=args.target_rps, utilization=args.utilization,
        prices=prices, output_len=args.output_len, memory_gb=args.memory_gb, max_sequences=args.max_sequences,
        kv_dtype=args.kv_dtype, stack=stack_arg(args.stack), cores=args.cores, memory_model=args.memory_model,
        bandwidth=args.bandwidth, seed=args.seed, calibration=calibration, calibration_name=calibration_name,
        calibration_any_platform=args.calibration_any_platform,
    )
    return plan(platforms, model, args.precision, options)


def run(args: argparse.Namespace) -> int:
    if args.plot:  # its target was checked before any work (cli._check_outputs); its format here
        from roofline.report.plan_chart import check_chart_path

        check_chart_path(args.plot, "--plot")
    result = compute(args)
    if args.plot:
        from roofline.files.writing import replacing
        from roofline.report.plan_chart import plot_plan

        with replacing(args.plot, force=args.force) as path:  # drawn to a temporary file, then renamed
            plot_plan(result, path)

    def render():
        from roofline.report.plan_tables import render_plan

        return render_plan(result, all_layouts=not args.best_only, brief=args.brief)

    code = emit(result, args, render)
    if args.plot and args.json != "-":
        print(f"wrote {args.plot}")
    return code
