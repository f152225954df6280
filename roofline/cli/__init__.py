"""The thin command line: parse flags, call the engine, print a report or JSON.

Each command's module is imported only when that command runs, so
``roofline estimate`` never imports torch (or rich, with ``--json``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from roofline import __version__
from roofline.errors import EXIT_USER_ERROR, UserError


DESCRIPTION = """\
How fast can a transformer run on a server CPU in a precision, what bounds it (compute, L2, LLC or
DRAM), what end-to-end speedup INT8 or INT4 can possibly give, how fast it will really run, and how
many servers a load needs. Ceilings come from the platform's datasheet and the model's
hyper-parameters in milliseconds; `probe` and `validate` measure the host and run the real kernels.

  roofline estimate --model bert-large --cpu icx
  roofline plan --model bert-large --cpu spr,gnr --precision int8-static --target-rps 5000
  roofline <command> --help     flags and an example for each command"""


class _Parser(argparse.ArgumentParser):
    """argparse, with usage errors on one line and exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"{self.prog}: error: {message} (see {self.prog} --help)\n")
        raise SystemExit(EXIT_USER_ERROR)


def _positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"{v} must be at least 1")
    return v


def _number(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if v != v or v in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"'{text}' is not a finite number")
    return v


def _add_json(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--json", nargs="?", const="-", metavar="FILE",
        help="write the result as JSON to FILE (whole or not at all), or to stdout without FILE",
    )


PHASES = ("forward", "prefill", "decode")


def _add_workload(p: argparse.ArgumentParser, batch_help: str = "sequences per step (default 1)",
                  instance_cores: bool = True) -> None:
    """The workload and bandwidth flags shared by estimate, plan and plot."""
    p.add_argument("--batch", type=_positive_int, default=1, help=batch_help)
    p.add_argument("--seq-len", type=_positive_int, default=256, help="tokens per request, or the prompt length "
                   "for prefill (default 256)")
    p.add_argument("--phase", choices=PHASES, help="forward (encoders, the default), prefill (decoders, the "
                   "default) or decode")
    p.add_argument("--context", type=int, help="decode: tokens already in the KV cache (default 1024)")
    p.add_argument("--bandwidth", choices=("measured", "theoretical"), default="measured",
                   help="bandwidth figures to use: the measured ones where the platform file has them (default), or "
                   "the theoretical (datasheet) ones")
    _add_layout(p, instance_cores)


def _add_layout(p: argparse.ArgumentParser, instance_cores: bool = True) -> None:
    """The memory model and the cores used, shared by estimate, sweep, plan, plot and check."""
    p.add_argument("--memory-model", choices=("levels", "paper"), default="levels",
                   help="levels (default): each tensor priced at the cache level that holds it (L2, LLC, DRAM), at "
                   "the highest clock the busy cores allow; paper: the reference paper's pricing (X, Y and non-GEMM "
                   "work from DRAM, weights from the LLC when they fit) at the nominal clock")
    p.add_argument("--cores", type=_positive_int, help="cores used per socket (default: all; a VM or a partial "
                   "socket is this flag)")
    if instance_cores:
        p.add_argument("--instance-cores", type=_positive_int, help="cores per instance (default 4, the reference "
                       "paper's, or the largest divisor of the cores used below 4); instances share one copy of "
                       "the weights per LLC domain")


def _add_stack(p: argparse.ArgumentParser) -> None:
    p.add_argument("--stack", default="torch-inductor", help="the software-stack profile the realistic estimate "
                   "uses (platforms/stacks; default torch-inductor: torchao + Inductor), a profile path, or none")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="roofline", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"roofline {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    est = sub.add_parser(
        "estimate", help="roofline ceilings of a model's GEMMs on a CPU, and the end-to-end Amdahl ceiling",
        description="Roofline ceilings of a model's GEMMs on a CPU, per precision, and the end-to-end Amdahl "
        "ceiling. Whole-platform throughput (all sockets, all instances together).",
    )
    est.add_argument("--model", required=True, help="catalog name (roofline models) or a config.json / .toml path")
    est.add_argument("--cpu", required=True, help="catalog name (roofline platforms) or a platform .toml path")
    est.add_argument(
        "--precision", action="append", metavar="NAME",
        help="repeat or comma-separate; default: fp32, bf16 where native, int8-static "
        "(fp32, bf16, int8-dynamic, int8-static, int8-mixed-bf16, int8-weight-only, int4-weight-only, w4a8)",
    )
    est.add_argument("--baseline", help="precision the speedups are relative to (default: fp32; bf16 for "
                     "decoders on platforms with native BF16)")
    _add_workload(est)
    est.add_argument("--group-size", type=_positive_int, help="group size of per-group INT4 recipes (default 128)")
    est.add_argument("--kv-dtype", choices=("fp32", "bf16", "fp16", "int8"),
                     help="KV-cache element type (default: the activation dtype)")
    est.add_argument("--quantize-lm-head", action="store_true", help="decoders: quantize the lm_head too")
    est.add_argument("--brief", action="store_true", help="only the headline tables (decode step, speedups)")
    est.add_argument("--calibration", help="a `roofline calibrate` file of this host: kernel efficiencies and "
                     "dispatch for the realistic estimate (instead of the stack profile)")
    _add_stack(est)
    est.add_argument("--sockets", type=_positive_int, help="sockets used (default: all the platform has)")
    est.add_argument("--separate-qkv", action="store_true", help="q, k and v as three GEMMs instead of one fused")
    est.add_argument("--f-gemm", type=_number, help="override f_GEMM, the GEMM share of the baseline's time")
    est.add_argument("--gemm-speedup", type=_number, help="override the GEMM speedup s")
    est.add_argument("--non-gemm-speedup", type=_number, help="override the non-GEMM speedup s_non")
    _add_json(est)
    est.set_defaults(handler="roofline.cli.estimate_cmd:run")

    fp = sub.add_parser(
        "footprint", help="bytes of a model's tensors before and after quantization, per tensor group",
        description="Bytes per tensor group (projections, embeddings, lm_head, norms, biases, scales/zero points) "
        "in the base dtype and after quantizing under an explicit policy: the projections are quantized; "
        "embeddings, norms and biases stay in the base dtype; tied embeddings are counted once.",
    )
    fp.add_argument("--model", required=True, help="catalog name or config.json / .toml path")
    fp.add_argument("--precision", required=True, help="e.g. int8-weight-only, int4-weight-only, int8-dynamic, w4a8")
    fp.add_argument("--base-dtype", choices=("fp32", "bf16", "fp16"),
                    help="dtype of the unquantized model (default: bf16 for decoders, fp32 for encoders)")
    fp.add_argument("--group-size", type=_positive_int, help="group size of per-group INT4 recipes (default 128)")
    fp.add_argument("--quantize-lm-head", action="store_true", help="quantize the lm_head too")
    fp.add_argument("--quantize-embeddings", action="store_true", help="quantize the embedding table too")
    fp.add_argument("--count-tied-lm-head-copy", action="store_true",
                    help="count a separate lm_head copy for tied embeddings (a runtime that unties them)")
    fp.add_argument("--mib", action="store_true", help="tables in MiB (2^20 bytes) instead of MB (10^6)")
    _add_json(fp)
    fp.set_defaults(handler="roofline.cli.footprint_cmd:run")

    pl = sub.add_parser(
        "plan", help="instance layouts, servers needed and cost for a load, per CPU",
        description="Capacity planning: on each socket N instances of C cores (C = 1, 2, 4, ... up to the socket), "
        "weights shared per socket, bandwidth shared by the instances. Per layout the roofline latency, "
        "throughput per instance, socket and server, and what bounds it; the best layout per CPU, the servers "
        "needed for the load at the planned utilization, and the cost per million requests.",
    )
    pl.add_argument("--model", required=True)
    pl.add_argument("--cpu", required=True, action="append", help="one or more, comma-separated or repeated")
    pl.add_argument("--precision", default="int8-static")
    pl.add_argument("--target-rps", type=_number, help="load to serve, requests per second")
    pl.add_argument("--p99-ms", type=_number, help="latency target; the roofline latency (no queueing) must meet it")
    pl.add_argument("--price-per-hour", action="append", help="per server, one per CPU, comma-separated")
    pl.add_argument("--utilization", type=_number, default=0.7, help="planned utilization of a server (default 0.7)")
    _add_workload(pl, batch_help="requests per instance call (default 1)", instance_cores=False)
    pl.add_argument("--best-only", action="store_true", help="only the summary table")
    _add_json(pl)
    pl.set_defaults(handler="roofline.cli.plan_cmd:run")

    sw = sub.add_parser(
        "sweep", help="a grid of models x CPUs x precisions x batch x sequence, one row per point (CSV or JSON lines)",
        description="Evaluate a grid with the vectorised core and write one row per point: step and GEMM time, "
        "throughput, aggregate GEMM ops/s, what bounds it, weight bytes, LLC residency. Lists are "
        "comma-separated; integer axes also take start:stop[:step] (stop included).",
    )
    sw.add_argument("--model", required=True, action="append")
    sw.add_argument("--cpu", required=True, action="append")
    sw.add_argument("--precision", action="append", help="default fp32,int8-static")
    sw.add_argument("--batch", action="append", help="e.g. 1,2,4 or 1:64 (default 1)")
    sw.add_argument("--seq-len", action="append", help="e.g. 128,256 or 64:512:64 (default 256)")
    sw.add_argument("--phase", choices=PHASES)
    sw.add_argument("--context", type=int, help="decode: tokens in the KV cache")
    sw.add_argument("--bandwidth", choices=("measured", "theoretical"), default="measured")
    _add_layout(sw)
    sw.add_argument("-o", "--output", help="file (.csv, .jsonl) or - for stdout (default)")
    sw.add_argument("--format", choices=("csv", "jsonl"), help="default: from the file name, else csv")
    sw.set_defaults(handler="roofline.cli.sweep_cmd:run")

    po = sub.add_parser(
        "plot", help="the log-log roofline chart of a model's GEMMs on a CPU (SVG or PNG; the plot extra)",
        description="Log-log roofline: DRAM and LLC slopes, a ceiling per compute path, each GEMM shape as a "
        "point per precision, and with --measured the points a validate report measured beside their "
        "predictions. Needs matplotlib: pip install 'roofline[plot]'.",
    )
    po.add_argument("--model", required=True)
    po.add_argument("--cpu", required=True)
    po.add_argument("--precision", action="append")
    po.add_argument("--baseline")
    _add_workload(po)
    po.add_argument("--measured", metavar="REPORT.json", help="a `roofline validate --json` report to draw beside")
    po.add_argument("-o", "--output", required=True, help="chart file, .svg or .png")
    po.set_defaults(handler="roofline.cli.plot_cmd:run")

    ck = sub.add_parser(
        "check", help="measured speedups beside their ceilings, the gap split into named overhead terms",
        description="Put measured speedups (typed, or from a validate report) beside the GEMM and end-to-end "
        "ceilings (the paper's Table 14) and the realistic estimate (the ceiling plus named overhead terms, "
        "each priced by the roofline: activation quantization, smoothing, u8 compensation, unfused post-ops, "
        "dispatch; with a calibration, kernel and non-GEMM efficiency), and attribute the missing part.",
    )
    ck.add_argument("--model")
    ck.add_argument("--cpu")
    ck.add_argument("--precision", help="e.g. int8-static")
    ck.add_argument("--baseline", default="fp32")
    ck.add_argument("--throughput-speedup", type=_number, help="measured end-to-end speedup over the baseline")
    ck.add_argument("--linear-speedup", type=_number, help="measured linear-block speedup over the baseline")
    ck.add_argument("--report", help="a `roofline validate --json` report instead of typed speedups")
    ck.add_argument("--calibration", help="a file written by `roofline calibrate` (or its name in platforms/calibration)")
    _add_stack(ck)
    ck.add_argument("--batch", type=_positive_int, default=1)
    ck.add_argument("--seq-len", type=_positive_int, default=256)
    ck.add_argument("--memory-model", choices=("levels", "paper"), default="levels",
                    help="the ceiling's memory model (paper: the reference paper's, for its Table 14)")
    ck.add_argument("--f-gemm", type=_number)
    ck.add_argument("--gemm-speedup", type=_number)
    ck.add_argument("--non-gemm-speedup", type=_number)
    _add_json(ck)
    ck.set_defaults(handler="roofline.cli.check_cmd:check")

    cal = sub.add_parser(
        "calibrate", help="fit a platform's kernel efficiencies and dispatch costs from validate reports",
        description="Fit a calibration (GEMM efficiency per precision in the model and alone, quantization and "
        "non-GEMM efficiency, dispatch costs) from one or more validate reports of one host (several pool: the "
        "geometric mean), each value with the reports it came from. Stored beside the platform files, never over "
        "their datasheet numbers.",
    )
    cal.add_argument("report", nargs="*", help="`roofline validate --json` reports, all from the same host")
    cal.add_argument("--records", nargs="*", metavar="PATH", help="fit a software-stack profile instead, from "
                     "measurement records (files or folders; default: the built-in records)")
    cal.add_argument("--stack", default="torch-inductor", help="with --records: the stack whose profile to fit "
                     "(default torch-inductor)")
    cal.add_argument("--cpu", help="the measured platform of the reports (default: the file the first report names)")
    cal.add_argument("--model", help="check that the reports are for this model")
    cal.add_argument("-o", "--output", required=True, help="calibration (or stack profile) TOML to write")
    cal.set_defaults(handler="roofline.cli.check_cmd:calibrate")

    acc = sub.add_parser(
        "accuracy", help="every measurement record against the ceiling and the realistic estimate",
        description="Compare every measurement record (validation/records) with its ceiling and with the realistic "
        "estimate of its software stack, that stack's profile refitted without the record's platform "
        "(leave-one-platform-out: the error to expect on an unseen CPU). Counts ceiling violations (must be 0).",
        epilog="example: roofline accuracy --plot accuracy.png",
    )
    acc.add_argument("--records", nargs="*", metavar="PATH", help="record files or folders (default: the built-in)")
    acc.add_argument("--plot", metavar="FILE", help="predicted vs measured chart (.svg or .png; the plot extra)")
    acc.add_argument("--brief", action="store_true", help="only the summary")
    _add_json(acc)
    acc.set_defaults(handler="roofline.cli.accuracy_cmd:run")

    for kind in ("platforms", "models"):
        p = sub.add_parser(kind, help=f"list the {kind} catalog, or show one entry ({kind} show NAME)")
        p.add_argument("action", nargs="?", choices=("list", "show"), default="list")
        p.add_argument("name", nargs="?", help="name, alias or file path (with show)")
        _add_json(p)
        p.set_defaults(handler=f"roofline.cli.catalog_cmd:{kind}")

    probe = sub.add_parser(
        "probe", help="measure this host (bandwidths, GEMM peaks) and write it as a platform spec",
        description="Measure this host: DRAM and LLC read bandwidth, FP32/BF16/INT8 GEMM peaks on the fastest "
        "real path, and write a platform TOML in the catalog's schema (every number 'measured'). Needs the "
        "validate extra (torch).",
    )
    probe.add_argument("-o", "--output", metavar="FILE", help="where to write the platform TOML (it is also "
                       "cached as the host probe that `validate --cpu host` uses)")
    probe.add_argument("--threads", type=_positive_int, help="threads to measure with (default: all cores)")
    probe.add_argument("--name", default="host", help="platform name in the file (default: host)")
    probe.add_argument("--quick", action="store_true", help="smaller arrays and GEMMs (seconds, less precise)")
    _add_json(probe)
    probe.set_defaults(handler="roofline.cli.probe_cmd:run")

    val = sub.add_parser(
        "validate", help="run the real compiled FP32/BF16/INT8 kernels and compare them with the ceilings",
        description="Per-shape kernels and a compiled encoder (random weights) in FP32, BF16, INT8 dynamic and "
        "INT8 static SmoothQuant (torchao, Inductor with freezing), checked against float64, timed, and "
        "compared with the roofline ceilings of the measured host and of its datasheet. Needs the validate extra.",
    )
    val.add_argument("--model", required=True, help="catalog name or config.json path (encoders: kernels and the "
                     "end-to-end encoder; decoders: prefill and decode kernels)")
    val.add_argument("--cpu", default="host", help="host (this machine's probe, cached; default), a saved probe "
                     "TOML, or a catalog name to predict with")
    val.add_argument("--threads", type=_positive_int, help="threads (default: all cores)")
    val.add_argument("--quick", action="store_true", help="2 layers, sequence 128, 3 timing rounds: minutes on a laptop")
    val.add_argument("--batch", type=_positive_int, default=1)
    val.add_argument("--seq-len", type=_positive_int, help="default 256 (128 with --quick)")
    val.add_argument("--layers", type=_positive_int, help="encoder layers to build (default: the model's; 2 with --quick)")
    val.add_argument("--rounds", type=_positive_int, help="interleaved timing rounds (default 5; 3 with --quick)")
    val.add_argument("--max-autotune", action="store_true", help="let Inductor's C++ GEMM templates compete "
                     "(slower compiles)")
    val.add_argument("--pt2e", action="store_true", help="also run PT2E + X86InductorQuantizer static INT8")
    val.add_argument("--reprobe", action="store_true", help="measure the host again instead of using the cached probe")
    val.add_argument("--skip-shapes", action="store_true", help="only the end-to-end encoder")
    val.add_argument("--skip-end-to-end", action="store_true", help="only the per-shape kernels")
    val.add_argument("--decode", action="store_true", help="also the decode-shaped weight-only GEMMs (M = 1..8) "
                     "against the DRAM bandwidth (on by default for decoders)")
    eng = val.add_argument_group("llama.cpp engine (--engine llama.cpp; the llamacpp extra)")
    eng.add_argument("--engine", choices=("torch", "llama.cpp"), default="torch",
                     help="torch: compiled torchao kernels (default); llama.cpp: write the model as GGUF files "
                     "with random weights and measure llama.cpp's prompt and generation rates against the "
                     "prefill and decode ceilings")
    eng.add_argument("--precision", action="append", metavar="TYPE",
                     help="llama.cpp: GGUF types to write, repeat or comma-separate (default q8_0,q4_0,q4_k)")
    eng.add_argument("--pp", type=_positive_int, help="llama.cpp: prompt tokens of the pp test (default 512; 64 "
                     "with --quick)")
    eng.add_argument("--tg", type=_positive_int, help="llama.cpp: generated tokens of the tg test (default 128; 16 "
                     "with --quick)")
    eng.add_argument("--reps", type=_positive_int, help="llama.cpp: repetitions of each test (default 5; 2 with "
                     "--quick)")
    eng.add_argument("--gguf-dir", help="llama.cpp: folder for the GGUF files (default: a temporary one)")
    eng.add_argument("--keep-gguf", action="store_true", help="llama.cpp: keep the GGUF files")
    _add_json(val)
    val.set_defaults(handler="roofline.cli.validate_cmd:run")

    sch = sub.add_parser("schema", help="print the JSON Schema of a command's --json output")
    sch.add_argument("which", choices=("estimate", "validate", "validate-llamacpp", "footprint", "plan", "check"))
    sch.set_defaults(handler="roofline.cli.catalog_cmd:schema")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return EXIT_USER_ERROR
    module, func = args.handler.split(":")
    try:
        import importlib

        return int(getattr(importlib.import_module(module), func)(args) or 0)
    except UserError as e:
        sys.stderr.write(f"roofline {args.command}: error: {e}\n")
        return e.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return 130
    except BrokenPipeError:
        return 0
