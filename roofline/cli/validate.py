"""``roofline validate``: real compiled kernels against the predicted ceilings (needs the validate extra)."""

from __future__ import annotations

import argparse
import sys
import time

from roofline import arguments as A
from roofline.cli import flags
from roofline.cli.emit import emit
from roofline.errors import UserError

DESCRIPTION = ("Per-shape kernels and a compiled encoder (random weights) in FP32, BF16, INT8 dynamic and INT8 static "
               "SmoothQuant (torchao, Inductor with freezing), checked against float64, timed, and compared with the "
               "roofline ceilings of the measured host and of its datasheet. Needs the validate extra.")
EXAMPLES = ["roofline validate --model bert-base --quick",
            "roofline validate --model bert-large --cpu host --json report.json"]
#: the flags of each engine only
LLAMACPP_ONLY = ("precision", "pp", "tg", "reps", "gguf_dir", "parallel", "depth", "flash_attention")
TORCH_ONLY = ("seq_len", "rounds", "max_autotune", "pt2e", "reprobe", "skip_shapes", "skip_end_to_end", "decode")


def parser(name: str) -> argparse.ArgumentParser:
    p = flags.command_parser(name, DESCRIPTION, EXAMPLES)
    flags.add(p, A.VALIDATE)
    flags.add_outputs(p, brief=False)
    return p


def run(args: argparse.Namespace) -> int:
    from roofline.catalog import find_file, load_model_file, load_platform_file

    a = flags.values(A.VALIDATE, args)
    if a.engine == "llama.cpp":
        return run_llamacpp(args, a)
    for flag in LLAMACPP_ONLY:
        if a.get(flag):
            raise UserError(f"--{flag.replace('_', '-')}: a llama.cpp option (add --engine llama.cpp)")
    from roofline.validation.torch_env import require_torchao

    # the user's own input first: a misspelt model or CPU is reported before a missing torch
    load_model_file(find_file("models", a.model))
    if a.cpu != "host":
        load_platform_file(find_file("platforms", a.cpu))
    require_torchao()
    from roofline.cli.progress import progress_reporter
    from roofline.validation.report import render_validate
    from roofline.validation.run import ValidateOptions, run_validate

    options = ValidateOptions(
        model=a.model, cpu=a.cpu, threads=a.threads, quick=a.quick, batch=a.batch, seq_len=a.seq_len, layers=a.layers,
        rounds=a.rounds, max_autotune=a.max_autotune, pt2e=a.pt2e, reprobe=a.reprobe, skip_shapes=a.skip_shapes,
        skip_end_to_end=a.skip_end_to_end, decode=True if a.decode else None,
    )
    started = time.monotonic()
    with progress_reporter(f"validate {a.model}") as progress:
        result = run_validate(options, progress)
    sys.stderr.write(f"roofline validate: {time.monotonic() - started:.0f} s on {result.host.cpu_model}\n")
    from roofline.validation.report import contention_line, violation_line

    if result.contention is not None and result.contention.unresolved:
        sys.stderr.write(f"roofline validate: {contention_line(result)}\n")
    violation = violation_line(result)
    if violation:
        sys.stderr.write(f"roofline validate: {violation}\n")
    return emit(result, args, lambda: render_validate(result))


def run_llamacpp(args: argparse.Namespace, a) -> int:
    """``validate --engine llama.cpp``: GGUF files with random weights, llama.cpp's pp and tg rates."""
    import shlex

    from roofline.validation.llamacpp import DEFAULT_PRECISIONS, LlamaCppOptions, require_llama_cpp
    from roofline.validation.llamacpp import run_llamacpp as run

    require_llama_cpp()
    for flag in TORCH_ONLY:
        if a.get(flag):
            raise UserError(f"--{flag.replace('_', '-')}: a torch-engine option (not with --engine llama.cpp)")
    quick = a.quick
    options = LlamaCppOptions(
        model=a.model, cpu=a.cpu, precisions=a.precision or list(DEFAULT_PRECISIONS), threads=a.threads,
        layers=a.layers, pp=a.pp or (64 if quick else 512), tg=a.tg or (16 if quick else 128),
        reps=a.reps or (2 if quick else 5), gguf_dir=a.gguf_dir, keep_gguf=a.keep_gguf,
        parallel=list(a.parallel or []), depth=a.depth or 0, flash_attention=a.flash_attention == "on",
        command="roofline " + " ".join(shlex.quote(x) for x in sys.argv[1:]),
    )
    from roofline.cli.progress import progress_reporter
    from roofline.validation.llamacpp_report import render_llamacpp

    with progress_reporter(f"validate {a.model} on llama.cpp") as progress:
        result = run(options, progress)
    return emit(result, args, lambda: render_llamacpp(result))
