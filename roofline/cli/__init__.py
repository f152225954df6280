"""The command line: flags built from the argument definitions, a call of the Python API, the answer
printed or written as JSON.

``main`` parses only the command it is given: each command is one module here (its flags, its
examples and its handler), imported when that command runs, so ``roofline estimate`` never imports
torch (or rich, with ``--json``).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from roofline.version import __version__
from roofline.errors import EXIT_USER_ERROR, UserError

DESCRIPTION = """\
How fast can a transformer run on a server CPU in a given precision, what
bounds it (compute, L2, LLC or DRAM), what end-to-end speedup can INT8 or INT4
possibly give, how fast will it really run, and how many servers does a load
need? The ceilings come from the CPU's spec sheet and the model's
hyper-parameters, in milliseconds; the realistic estimate from measurements of
real software stacks, with its error beside it; `probe` and `validate` measure
this host and run the real kernels. Every command prints its answer first.

  roofline estimate --model bert-large --cpu icx
  roofline plan --model bert-large --cpu spr,gnr --target-rps 5000
  roofline <command> --help       its flags, and examples

From Python: import roofline; roofline.estimate(model="bert-large", cpu="icx")"""

#: every command: the module that holds its flags and its handler, and its one-line help
COMMANDS: dict[str, tuple[str, str]] = {
    "estimate": ("estimate", "what bounds a model on a CPU per precision, its latency and throughput, the GEMM and "
                 "end-to-end speedups: ceiling and realistic"),
    "footprint": ("footprint", "bytes of a model's tensors before and after quantization, per tensor group"),
    "plan": ("plan", "requests per second per server under an SLO, servers needed and cost, per CPU"),
    "sweep": ("sweep", "a grid of models x CPUs x precisions x batch x sequence, one row per point (CSV or JSON "
              "lines)"),
    "plot": ("plot", "the log-log roofline chart of a model's GEMMs on a CPU (SVG or PNG; the plot extra)"),
    "check": ("check", "measured speedups or rates (typed, or --from a llama-bench or MLPerf file) beside their "
              "ceilings, the gap split into named overhead terms"),
    "calibrate": ("calibrate", "fit a platform's kernel efficiencies and dispatch costs from validate reports"),
    "accuracy": ("accuracy", "every measurement record against the ceiling and the realistic estimate"),
    "records": ("records", "write a llama-bench result or an MLPerf summary as a measurement record (records add)"),
    "platforms": ("catalog", "list the platforms catalog, or show one entry (platforms show NAME)"),
    "models": ("catalog", "list the models catalog, or show one entry (models show NAME)"),
    "probe": ("probe", "measure this host (bandwidths, GEMM peaks) and write it as a platform spec"),
    "validate": ("validate", "run the real compiled FP32/BF16/INT8 kernels and compare them with the ceilings"),
    "schema": ("schema", "print the JSON Schema of a command's --json output"),
}


def command_module(name: str):
    return importlib.import_module(f"roofline.cli.{COMMANDS[name][0]}")


def parser_for(name: str) -> argparse.ArgumentParser:
    """The full parser of one command (its flags, its help and examples)."""
    return command_module(name).parser(name)


def program_parser() -> argparse.ArgumentParser:
    """``roofline``: the commands and what each answers (each command's flags are its own parser's)."""
    from roofline.cli.flags import Parser

    parser = Parser(prog="roofline", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"roofline {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for name, (_, help_text) in COMMANDS.items():
        sub.add_parser(name, help=help_text, add_help=False)
    return parser


def _check_outputs(args: argparse.Namespace) -> None:
    """Refuse an output path that cannot be written before any work is done."""
    for value in (getattr(args, "json", None), getattr(args, "output", None), getattr(args, "plot", None),
                  getattr(args, "html", None)):
        if value is not None and value != "-":
            from roofline.files.writing import check_target

            check_target(value, force=getattr(args, "force", False))


def main(argv: Sequence[str] | None = None) -> int:
    for stream in ("stdout", "stderr"):
        if getattr(sys, stream) is None:  # a closed descriptor (`>&-`): what goes there is dropped, as print() does
            setattr(sys, stream, open(os.devnull, "w", encoding="utf-8"))
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in COMMANDS:
        program_parser().parse_args(argv)  # --help, --version, or an unknown command's one-line error
        program_parser().print_help()
        return EXIT_USER_ERROR
    name = argv[0]
    module = command_module(name)
    args = module.parser(name).parse_args(module.argv(argv[1:]) if hasattr(module, "argv") else argv[1:])
    args.command = name
    import shlex

    args.command_line = "roofline " + shlex.join([name, *argv[1:]])
    try:
        _check_outputs(args)
        return int(module.run(args) or 0)
    except UserError as e:
        sys.stderr.write(f"roofline {name}: error: {e}\n")
        return e.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return 130
    except BrokenPipeError:
        return 0
