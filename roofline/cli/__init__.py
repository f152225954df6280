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
from pathlib import Path

from roofline.errors import EXIT_USER_ERROR, UserError, printable
from roofline.version import __version__

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
    "stacks": ("catalog", "list the stack profiles, or show one's values and whether the figures pinned them down "
               "(stacks show NAME)"),
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


#: the arguments that name files a command reads, with the catalog kind a name of theirs is looked up in
INPUT_ARGS = {"model": "models", "cpu": "platforms", "report": "report", "records": "records",
              "calibration": "calibration", "stack": "stack", "seq_len_histogram": "file", "measured": "file",
              "from_file": "file", "system": "file", "file": "file", "gate": "file"}
#: how an input argument is named in a message, where it is not ``--<name>``
INPUT_LABELS = {"from_file": "--from", "file": "FILE", "system": "--system", "implicit_system": "the system "
                "description beside the summary"}
OUTPUT_FLAGS = {"json": "--json", "output": "-o", "plot": "--plot", "html": "--html", "write_gate": "--write-gate"}
#: an input a command may replace with its output: ``calibrate --records --stack S -o`` refits the profile it
#: read whole before any work (its path rules and description), the documented way to update it; ``accuracy
#: --gate G --write-gate G`` rewrites the gate it compared against
REPLACEABLE = {("calibrate", "-o", "stack"), ("accuracy", "--write-gate", "gate")}
#: the suffix an output's format needs, by command and flag (``--json`` everywhere); a chart's, a page's and a
#: table's own checks are their commands'
OUTPUT_SUFFIXES = {("calibrate", "-o"): (".toml", "TOML"), ("probe", "-o"): (".toml", "TOML"),
                   ("records", "-o"): (".toml", "TOML"), ("accuracy", "--write-gate"): (".toml", "TOML")}
#: suffixes of formats other than JSON: ``--json out.png`` is refused (a name without a suffix, or with one that
#: names no format, is taken as the user's choice)
NOT_JSON = frozenset(".png .svg .pdf .jpg .jpeg .gif .webp .html .htm .toml .csv .tsv .jsonl .ndjson .parquet .txt .md "
                     ".yaml .yml .xml .gguf .safetensors .bin .npy .npz .py .sh .gz .zip .xz .zst .tar".split())


def _check_suffix(command: str, flag: str, value: str) -> None:
    """An output's name names the format it is written in, or names none."""
    suffix = Path(value).suffix.lower()
    if flag == "--json":
        if suffix in NOT_JSON:
            raise UserError(f"--json {value}: the result is written as JSON, not {suffix}; name the file .json")
        return
    want = OUTPUT_SUFFIXES.get((command, flag))
    if want is not None and suffix != want[0]:
        raise UserError(f"{flag} {value}: written as {want[1]}; name the file {want[0]}")


def _implicit_inputs(args: argparse.Namespace) -> list:
    """Files a command reads that no argument names: the MLPerf system description beside a summary given as
    ``--from`` or FILE (when ``--system`` does not name one)."""
    if getattr(args, "system", None):
        return []
    out = []
    for attr in ("from_file", "file"):
        value = getattr(args, attr, None)
        if not isinstance(value, str) or not value:
            continue
        try:
            from roofline.catalog.mlperf_log import is_summary, parse_summary
            from roofline.files.reading import read_bytes

            text = read_bytes(value).decode("utf-8", "replace")
            if not is_summary(text):
                continue
            system = parse_summary(text, value).system_file
            if system is not None:
                out.append(("implicit_system", str(system), os.stat(system)))
        except (UserError, OSError, ValueError):
            continue
    return out


def _check_outputs(args: argparse.Namespace) -> None:
    """Refuse an output path that cannot be written (a device, a FIFO), that is one of the command's own inputs
    (the same file by another path, a link or a hard link; implicit inputs and records under a folder too), or
    whose name names another format than the one written, before any work is done."""
    from roofline.files.writing import check_target

    inputs = None
    for attr, flag in OUTPUT_FLAGS.items():
        value = getattr(args, attr, None)
        if not isinstance(value, str) or value == "-":
            continue
        target = check_target(value, force=getattr(args, "force", False))
        if target.existing is not None and not target.special:
            if inputs is None:
                from roofline.catalog import input_files

                inputs = input_files(args, INPUT_ARGS) + _implicit_inputs(args)
            st = target.existing
            for name, ref, ist in inputs:
                if (args.command, flag, name) in REPLACEABLE:
                    continue
                if (ist.st_dev, ist.st_ino) == (st.st_dev, st.st_ino):
                    label = "the report" if name == "report" and args.command == "calibrate" else \
                        INPUT_LABELS.get(name, f"--{name.replace('_', '-')}")
                    raise UserError(f"{flag} {value}: is also an input of this command ({label} {ref}); writing "
                                    "it would replace what is being read: give another output file")
        if not target.special:
            _check_suffix(args.command, flag, value)
    from roofline.cli.emit import check_chart, check_html

    check_chart(getattr(args, "plot", None))
    check_html(getattr(args, "html", None))


class Terminated(BaseException):
    """SIGTERM, raised where the command is, so that an output being written is removed as on Ctrl-C."""


def _on_sigterm(signum, frame):
    raise Terminated()


def _quiet_stdout() -> None:
    """Point the standard output at /dev/null after it failed (a full disk, a closed pipe), so that the
    interpreter's last flush at exit does not fail again with a traceback-like message."""
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, sys.stdout.fileno())
        os.close(fd)
    except (OSError, ValueError, AttributeError):  # not a real descriptor (a test's StringIO)
        pass


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
    import signal
    import threading

    handler = None
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        handler = signal.signal(signal.SIGTERM, _on_sigterm)
    import shlex

    args.command_line = "roofline " + shlex.join([name, *argv[1:]])
    try:
        _check_outputs(args)
        code = int(module.run(args) or 0)
        sys.stdout.flush()  # a full disk shows here, inside the command, not at the interpreter's exit
        return code
    except UserError as e:
        sys.stderr.write(f"roofline {name}: error: {e}\n")
        return e.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return 130
    except Terminated:
        sys.stderr.write("terminated\n")
        return 143
    except BrokenPipeError:
        _quiet_stdout()
        return 0
    except OSError as e:  # the standard output cannot take the answer: /dev/full, an I/O error
        _quiet_stdout()
        import errno

        what = f"{e.filename}: cannot write" if e.filename else "cannot write the standard output"
        if e.errno == errno.ENAMETOOLONG:  # a name looked up, not a write: say so
            what = f"{e.filename or 'a name'}: too long a name for the file system (at most 255 bytes a part)"
        sys.stderr.write(printable(f"roofline {name}: error: {what} ({e.strerror or e})", keep_newlines=False) + "\n")
        return EXIT_USER_ERROR
    finally:
        if handler is not None:
            signal.signal(signal.SIGTERM, handler)
