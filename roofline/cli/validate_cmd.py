"""``roofline validate``: real compiled kernels against the predicted ceilings (needs the validate extra)."""

from __future__ import annotations

import argparse
import sys

from roofline.cli.output import emit
from roofline.cli.progress import progress_reporter


def run(args: argparse.Namespace) -> int:
    from roofline.catalog import find_file, load_model_file, load_platform_file
    from roofline.validation.torch_env import require_torchao

    # the user's own input first: a misspelt model or CPU is reported before a missing torch
    load_model_file(find_file("models", args.model))
    if args.cpu != "host":
        load_platform_file(find_file("platforms", args.cpu))
    require_torchao()
    from roofline.validation.report import render_validate
    from roofline.validation.run import ValidateOptions, run_validate

    options = ValidateOptions(
        model=args.model, cpu=args.cpu, threads=args.threads, quick=args.quick, batch=args.batch,
        seq_len=args.seq_len, layers=args.layers, rounds=args.rounds, max_autotune=args.max_autotune,
        pt2e=args.pt2e, reprobe=args.reprobe, skip_shapes=args.skip_shapes, skip_end_to_end=args.skip_end_to_end,
        decode=True if args.decode else None,
    )
    with progress_reporter(f"validate {args.model}") as progress:
        result = run_validate(options, progress)
    if result.contention is not None and result.contention.unresolved:
        from roofline.validation.report import contention_line

        sys.stderr.write(f"roofline validate: {contention_line(result)}\n")
    return emit(result, args, lambda: render_validate(result))
