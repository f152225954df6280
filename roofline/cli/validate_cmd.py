"""``roofline validate``: real compiled kernels against the predicted ceilings (needs the validate extra)."""

from __future__ import annotations

import argparse
import sys

from roofline.cli.emit import emit
from roofline.cli.progress import progress_reporter
from roofline.errors import UserError


def run(args: argparse.Namespace) -> int:
    from roofline.catalog import find_file, load_model_file, load_platform_file

    if getattr(args, "engine", "torch") == "llama.cpp":
        return run_llamacpp(args)
    for flag in ("precision", "pp", "tg", "reps", "gguf_dir"):
        if getattr(args, flag, None):
            raise UserError(f"--{flag.replace('_', '-')}: a llama.cpp option (add --engine llama.cpp)")
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


def run_llamacpp(args: argparse.Namespace) -> int:
    """``validate --engine llama.cpp``: GGUF files with random weights, llama.cpp's pp and tg rates."""
    import shlex
    import sys

    from roofline.validation.llamacpp import DEFAULT_PRECISIONS, LlamaCppOptions, require_llama_cpp, run_llamacpp as run

    require_llama_cpp()
    for flag in ("seq_len", "rounds", "max_autotune", "pt2e", "reprobe", "skip_shapes", "skip_end_to_end", "decode"):
        if getattr(args, flag, None):
            raise UserError(f"--{flag.replace('_', '-')}: a torch-engine option (not with --engine llama.cpp)")
    precisions = [p for v in (args.precision or [",".join(DEFAULT_PRECISIONS)]) for p in v.split(",") if p]
    quick = args.quick
    options = LlamaCppOptions(
        model=args.model, cpu=args.cpu, precisions=precisions, threads=args.threads, layers=args.layers,
        pp=args.pp or (64 if quick else 512), tg=args.tg or (16 if quick else 128), reps=args.reps or (2 if quick else 5),
        gguf_dir=args.gguf_dir, keep_gguf=args.keep_gguf,
        command="roofline " + " ".join(shlex.quote(a) for a in sys.argv[1:]),
    )
    from roofline.validation.llamacpp_report import render_llamacpp

    with progress_reporter(f"validate {args.model} on llama.cpp") as progress:
        result = run(options, progress)
    return emit(result, args, lambda: render_llamacpp(result))
