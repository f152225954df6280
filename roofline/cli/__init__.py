"""The thin command line: parse flags, call the engine, print a report or JSON.

Each command's module is imported only when that command runs, so
``roofline estimate`` never imports torch (or rich, with ``--json``).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import textwrap
from collections.abc import Sequence

from roofline import __version__
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


#: each command's examples, shown at the end of its --help (tests/test_help.py runs the cheap ones)
EXAMPLES = {
    "estimate": ["roofline estimate --model bert-large --cpu icx",
                 "roofline estimate --model bert-large --cpu gnr --memory-model paper",
                 "roofline estimate --model llama-3.2-3b --cpu spr --phase decode --brief",
                 "roofline estimate --model meta-llama/Llama-3.2-1B --cpu genoa --json"],
    "footprint": ["roofline footprint --model qwen3-0.6b --precision int8-weight-only",
                  "roofline footprint --model mixtral-8x7b --precision q4_k_m --brief"],
    "plan": ["roofline plan --model bert-large --cpu spr,gnr --target-rps 5000",
             "roofline plan --model bert-large --cpu spr,gnr --p99-ms 100 --brief \\",
             "    --target-rps 20000",
             "roofline plan --model bert-base --cpu icx --scenario offline --seq-len-mean 96",
             "roofline plan --model llama-3.2-1b --cpu gnr --precision int8-weight-only \\",
             "    --prompt-len 512 --output-len 128 --ttft-ms 2000 --tpot-ms 100"],
    "sweep": ["roofline sweep --model bert-base --cpu icx,spr --batch 1:64 -o grid.csv"],
    "plot": ["roofline plot --model bert-large --cpu gnr -o roofline.svg"],
    "check": ["roofline check --model bert-large --cpu gnr --precision int8-static \\",
              "    --throughput-speedup 5.82 --linear-speedup 8.7",
              "roofline check --report report.json --calibration my-host.toml"],
    "calibrate": ["roofline calibrate report.json -o my-host.toml",
                  "roofline calibrate --records -o torch-inductor.toml"],
    "accuracy": ["roofline accuracy --brief", "roofline accuracy --plot accuracy.png"],
    "platforms": ["roofline platforms", "roofline platforms show gnr"],
    "models": ["roofline models", "roofline models show bert-large"],
    "probe": ["roofline probe -o host.toml"],
    "validate": ["roofline validate --model bert-base --quick",
                 "roofline validate --model bert-large --cpu host --json report.json"],
    "schema": ["roofline schema estimate"],
}


class _Formatter(argparse.HelpFormatter):
    """argparse's formatter, keeping an epilog of examples line by line."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith("examples:"):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


class _Parser(argparse.ArgumentParser):
    """argparse, with usage errors on one line and exit code 2."""

    #: set by the Python API: a bad value raises UserError instead of printing and exiting
    raise_errors = False

    def error(self, message: str) -> None:  # type: ignore[override]
        if self.raise_errors:
            raise UserError(message)
        sys.stderr.write(f"{self.prog}: error: {message} (see {self.prog} --help)\n")
        raise SystemExit(EXIT_USER_ERROR)

    def _get_values(self, action, arg_strings):  # type: ignore[override]
        # `--f-gemm=--`: argparse drops the '--' and hands the flag an empty list, never calling its type
        if arg_strings == ["--"] and action.nargs in (None, argparse.OPTIONAL):
            self.error(f"argument {'/'.join(action.option_strings) or action.dest}: '--' is not a value")
        return super()._get_values(action, arg_strings)


# ------------------------------------------------------------------ flag values, each with a stated range

#: the largest grid `roofline sweep` evaluates: more points is a typo, not a study
MAX_SWEEP_POINTS = 100_000_000
MAX_BATCH = 1_000_000
MAX_TOKENS = 1 << 27
"""sequence lengths and contexts: the largest max_position_embeddings a model file may give"""
SPEEDUP = (1e-3, 1e4)


def _fmt(v: float) -> str:
    return f"{int(v):,}" if float(v).is_integer() and abs(v) < 1e15 else f"{v:g}"


def _int_value(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None


def _range_error(text: str, lo: float, hi: float, what: str) -> argparse.ArgumentTypeError:
    return argparse.ArgumentTypeError(f"{text} is out of range: {what + ', ' if what else ''}{_fmt(lo)} to {_fmt(hi)}")


def _int_in(lo: int, hi: int, what: str = ""):
    """A whole number in [lo, hi]."""
    def parse(text: str) -> int:
        v = _int_value(text)
        if not lo <= v <= hi:
            raise _range_error(text, lo, hi, what)
        return v

    return parse


def _float_value(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if not math.isfinite(v):
        raise argparse.ArgumentTypeError(f"'{text}' is not a finite number")
    return v


def _float_in(lo: float, hi: float, what: str = ""):
    """A finite number in [lo, hi]."""
    def parse(text: str) -> float:
        v = _float_value(text)
        if not lo <= v <= hi:
            raise _range_error(text, lo, hi, what)
        return v

    return parse


def _float_list_in(lo: float, hi: float):
    """Comma-separated finite numbers, each in [lo, hi]."""
    one = _float_in(lo, hi)

    def parse(text: str) -> list[float]:
        items = [t.strip() for t in text.split(",") if t.strip()]
        if not items:
            raise argparse.ArgumentTypeError(f"'{text}' holds no number")
        return [one(t) for t in items]

    return parse


def _int_axis(lo: int, hi: int):
    """A sweep axis: comma-separated whole numbers or start:stop[:step] ranges (stop included), each
    value in [lo, hi]; ranges stay lazy (their size is checked before anything is built)."""
    one = _int_in(lo, hi)

    def parse(text: str) -> list[range]:
        out = []
        for item in (t.strip() for t in text.split(",")):
            if not item:
                continue
            if ":" not in item:
                v = one(item)
                out.append(range(v, v + 1))
                continue
            parts = item.split(":")
            if len(parts) not in (2, 3):
                raise argparse.ArgumentTypeError(f"'{item}' is not start:stop[:step]")
            try:
                start, stop, step = (int(parts[0]), int(parts[1]), int(parts[2]) if len(parts) > 2 else 1)
            except ValueError:
                raise argparse.ArgumentTypeError(f"'{item}' is not start:stop[:step]") from None
            if step == 0:
                raise argparse.ArgumentTypeError(f"'{item}': the step must not be 0")
            r = range(start, stop + (1 if step > 0 else -1), step)
            if not r:
                raise argparse.ArgumentTypeError(f"'{item}' holds no value (a step of {step} never reaches {stop})")
            for v in (r[0], r[-1]):
                one(str(v))
            out.append(r)
        if not out:
            raise argparse.ArgumentTypeError(f"'{text}' holds no value")
        return out

    return parse


BATCH = _int_in(1, MAX_BATCH)
TOKENS = _int_in(1, MAX_TOKENS)
CONTEXT = _int_in(0, MAX_TOKENS)
GROUP_SIZE = _int_in(1, 1 << 16)
SOCKETS = _int_in(1, 64)
THREADS = _int_in(1, 4096)
CORES = _int_in(1, 4096)
FRACTION = _float_in(0.0, 1.0, "a fraction of time")
A_SPEEDUP = _float_in(*SPEEDUP, "a speedup is a positive number")
SLO_MS = _float_in(1e-6, 1e9, "milliseconds")


def _add_json(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--json", nargs="?", const="-", metavar="FILE",
        help="write the result as JSON to FILE (whole or not at all), or to stdout without FILE",
    )


def _add_brief(p: argparse.ArgumentParser) -> None:
    p.add_argument("--brief", action="store_true", help="only the headline: the answer in a few lines, no tables")


def _add_force(p: argparse.ArgumentParser) -> None:
    p.add_argument("--force", action="store_true", help="replace an output file even if it is read-only")


PHASES = ("forward", "prefill", "decode")


def _add_workload(p: argparse.ArgumentParser,
                  batch_help: str = f"sequences per step, 1 to {MAX_BATCH:,} (default 1)",
                  instance_cores: bool = True) -> None:
    """The workload and bandwidth flags shared by estimate, plan and plot."""
    p.add_argument("--batch", type=BATCH, default=1, help=batch_help)
    p.add_argument("--seq-len", type=TOKENS, default=256, help="tokens per request, or the prompt length "
                   f"for prefill, 1 to {MAX_TOKENS:,} (default 256)")
    p.add_argument("--phase", choices=PHASES, help="forward (encoders, the default), prefill (decoders, the "
                   "default) or decode")
    p.add_argument("--context", type=CONTEXT, help=f"decode: tokens already in the KV cache, 0 to {MAX_TOKENS:,} "
                   "(default 1024)")
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
    p.add_argument("--cores", type=CORES, help="cores used per socket, 1 to 4,096 (default: all; a VM or a partial "
                   "socket is this flag)")
    if instance_cores:
        p.add_argument("--instance-cores", type=CORES, help="cores per instance, 1 to 4,096 (default 4, the reference "
                       "paper's, or the largest divisor of the cores used below 4); instances share one copy of "
                       "the weights per LLC domain")


def _add_calibration(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--calibration", help=f"a `roofline calibrate` file (or its name in platforms/calibration): {what}")
    p.add_argument("--calibration-any-platform", action="store_true",
                   help="apply a calibration fitted on another platform (the result says so)")


def _add_stack(p: argparse.ArgumentParser) -> None:
    p.add_argument("--stack", default="torch-inductor", help="the software-stack profile the realistic estimate "
                   "uses (platforms/stacks; default torch-inductor: torchao + Inductor), a profile path, or none")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="roofline", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"roofline {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    est = sub.add_parser(
        "estimate", help="what bounds a model on a CPU per precision, its latency and throughput, the GEMM and "
        "end-to-end speedups: ceiling and realistic",
        description="First the answer, in a few lines (--brief: only those): what bounds each precision, one "
        "instance's latency and the whole platform's throughput, the GEMM speedup, the end-to-end (Amdahl) ceiling "
        "and the realistic estimate of a software stack with its measured error. Then the tables behind it: compute "
        "paths, the roofline of every GEMM, LLC residency, the Amdahl inputs and their sources, the inputs that are "
        "not datasheet or measured facts, and what the estimate leaves out.",
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
    est.add_argument("--group-size", type=GROUP_SIZE,
                     help="group size of per-group INT4 recipes, 1 to 65,536 (default 128)")
    est.add_argument("--kv-dtype", choices=("fp32", "bf16", "fp16", "int8"),
                     help="KV-cache element type (default: the activation dtype)")
    est.add_argument("--quantize-lm-head", action="store_true", help="decoders: quantize the lm_head too")
    _add_brief(est)
    _add_calibration(est, "the host's kernel efficiencies and dispatch for the realistic estimate (instead of the "
                     "stack profile)")
    _add_stack(est)
    est.add_argument("--sockets", type=SOCKETS, help="sockets used, 1 to 64 (default: all the platform has)")
    est.add_argument("--separate-qkv", action="store_true", help="q, k and v as three GEMMs instead of one fused")
    est.add_argument("--f-gemm", type=FRACTION, help="override f_GEMM, the GEMM share of the baseline's time (0 to 1)")
    est.add_argument("--gemm-speedup", type=A_SPEEDUP, help="override the GEMM speedup s (0.001 to 10,000)")
    est.add_argument("--non-gemm-speedup", type=A_SPEEDUP, help="override the non-GEMM speedup s_non (0.001 to 10,000)")
    _add_json(est)
    _add_force(est)
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
    fp.add_argument("--group-size", type=GROUP_SIZE,
                    help="group size of per-group INT4 recipes, 1 to 65,536 (default 128)")
    fp.add_argument("--quantize-lm-head", action="store_true", help="quantize the lm_head too")
    fp.add_argument("--quantize-embeddings", action="store_true", help="quantize the embedding table too")
    fp.add_argument("--count-tied-lm-head-copy", action="store_true",
                    help="count a separate lm_head copy for tied embeddings (a runtime that unties them)")
    fp.add_argument("--mib", action="store_true", help="tables in MiB (2^20 bytes) instead of MB (10^6)")
    _add_brief(fp)
    _add_json(fp)
    _add_force(fp)
    fp.set_defaults(handler="roofline.cli.footprint_cmd:run")

    pl = sub.add_parser(
        "plan", help="requests per second per server under an SLO, servers needed and cost, per CPU",
        description=(
        "Capacity planning: on each socket N instances of C cores (C = 1, 2, 4, ... up to the socket), "
        "weights shared per socket. Per layout one instance's service time of every batch from the realistic "
        "model (the ceiling beside it), then a simulation of the scenario: offline (the most throughput per server, "
        "batching free up to --max-batch-tokens) or server (Poisson arrivals, dynamic batching; the highest rate "
        "whose p99 latency meets --p99-ms). Decoders are served with continuous batching (TTFT, TPOT, the KV cache "
        "capping the running batch). The best layout per CPU, the servers a load needs, the cost, and the "
        "latency-vs-load curve. See docs/capacity-planning.md."),
    )
    pl.add_argument("--model", required=True)
    pl.add_argument("--cpu", required=True, action="append", help="one or more, comma-separated or repeated")
    pl.add_argument("--precision", default="int8-static")
    pl.add_argument("--scenario", choices=("offline", "server"), help="offline: the most throughput per server; "
                    "server: Poisson arrivals, the highest rate meeting the SLO (default: server when an SLO is "
                    "given, else offline)")
    pl.add_argument("--target-rps", type=_float_in(1e-6, 1e12, "requests per second"),
                    help="load to serve, requests per second (1e-6 to 1e12)")
    pl.add_argument("--p99-ms", type=SLO_MS, help="server scenario: the p99 latency (queueing, batching wait, "
                    "service) each request must meet, ms (1e-6 to 1e9)")
    pl.add_argument("--price-per-hour", action="append", type=_float_list_in(0, 1e7),
                    help="per server, one per CPU, comma-separated (0 to 1e7 each)")
    pl.add_argument("--utilization", type=_float_in(0.01, 1, "a fraction"), default=1.0,
                    help="run servers at this fraction of the scenario's rate, 0.01 to 1 (default 1: the server "
                    "scenario's rate already leaves the headroom queueing needs; lower it for peaks or failures)")
    lens = pl.add_argument_group("request lengths (tokens; for decoders, of the prompt)")
    lens.add_argument("--seq-len", "--prompt-len", dest="seq_len", type=TOKENS,
                      help=f"every request this long, 1 to {MAX_TOKENS:,} (default 256)")
    lens.add_argument("--seq-len-mean", type=_float_in(1, MAX_TOKENS, "tokens"),
                      help="lengths drawn from a distribution with this mean (--seq-len-dist), 1 to "
                      f"{MAX_TOKENS:,}")
    lens.add_argument("--seq-len-dist", choices=("lognormal",), help="with --seq-len-mean: lognormal (the default), "
                      "truncated to [1, 4 x mean] (and the model's positions) and rounded to whole tokens, its mean "
                      "exactly --seq-len-mean")
    lens.add_argument("--seq-len-sigma", type=_float_in(0.01, 4, "the standard deviation of ln(length)"),
                      help="the lognormal's sigma, the standard deviation of ln(length), 0.01 to 4 (default 0.5: "
                      "a coefficient of variation of about 0.53)")
    lens.add_argument("--seq-len-histogram", metavar="FILE", help="lengths from a histogram file: one 'LENGTH WEIGHT' "
                      "line per bin ('#' comments; weights are normalised)")
    bat = pl.add_argument_group("batching")
    bat.add_argument("--max-batch-tokens", type=_int_in(1, 1 << 20, "tokens"), default=2048,
                     help="tokens per batch at most (encoders: requests of one batch; decoders: prompt tokens of "
                     "one prefill step, one prompt always fits), 1 to 1,048,576 (default 2,048)")
    bat.add_argument("--max-wait-ms", type=_float_in(0, 1e7, "milliseconds"), default=0.0,
                     help="encoders: the longest the oldest waiting request waits for its batch to fill, 0 to 1e7 ms "
                     "(default 0: an instance that frees up takes whatever is waiting)")
    dec = pl.add_argument_group("decoders (continuous batching)")
    dec.add_argument("--output-len", type=TOKENS, help=f"output tokens per request, 1 to {MAX_TOKENS:,} (default 128)")
    dec.add_argument("--ttft-ms", type=SLO_MS, help="server scenario: p99 time to first token, ms (1e-6 to 1e9)")
    dec.add_argument("--tpot-ms", type=SLO_MS, help="server scenario: p99 time per output token, ms (1e-6 to 1e9)")
    dec.add_argument("--memory-gb", type=_float_in(0.01, 1e8, "GB"),
                     help="DRAM per server, GB, 0.01 to 1e8 (default: the platform file's dram.capacity_gb x sockets); "
                     "what the weights leave caps the KV cache")
    dec.add_argument("--max-sequences", type=_int_in(1, 4096, "sequences"),
                     help="running sequences per instance at most, 1 to 4,096 (default 256; the KV cache may cap it "
                     "lower)")
    dec.add_argument("--kv-dtype", choices=("fp32", "bf16", "fp16", "int8"),
                     help="KV-cache element type (default: the activation dtype)")
    pl.add_argument("--phase", choices=PHASES, help="forward (encoders, the default), decode (decoders, the default: "
                    "continuous batching) or prefill (a decoder's prompts alone, batched like an encoder's requests)")
    pl.add_argument("--bandwidth", choices=("measured", "theoretical"), default="measured",
                    help="bandwidth figures to use: the measured ones where the platform file has them (default), or "
                    "the theoretical (datasheet) ones")
    _add_layout(pl, instance_cores=False)
    _add_calibration(pl, "the measured host's efficiencies for the realistic service times (instead of the stack "
                     "profile)")
    _add_stack(pl)
    pl.add_argument("--seed", type=_int_in(0, 2**32 - 1), default=0,
                    help="the simulation's random seed, 0 to 4,294,967,295 (default 0)")
    pl.add_argument("--plot", metavar="FILE", help="p99 against offered load for each CPU's best layout, with the "
                    "SLO line (.svg or .png; the plot extra)")
    pl.add_argument("--best-only", action="store_true", help="the summary table, not every layout's")
    _add_brief(pl)
    _add_json(pl)
    _add_force(pl)
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
    sw.add_argument("--batch", action="append", type=_int_axis(1, MAX_BATCH),
                    help=f"e.g. 1,2,4 or 1:64 or 64:1:-8, values 1 to {MAX_BATCH:,} (default 1)")
    sw.add_argument("--seq-len", action="append", type=_int_axis(1, MAX_TOKENS),
                    help=f"e.g. 128,256 or 64:512:64, values 1 to {MAX_TOKENS:,} (default 256)")
    sw.add_argument("--phase", choices=PHASES)
    sw.add_argument("--context", type=CONTEXT, help=f"decode: tokens in the KV cache, 0 to {MAX_TOKENS:,}")
    sw.add_argument("--bandwidth", choices=("measured", "theoretical"), default="measured")
    _add_layout(sw)
    sw.add_argument("-o", "--output", help="file (.csv, .jsonl) or - for stdout (default)")
    sw.add_argument("--format", choices=("csv", "jsonl"), help="default: from the file name, else csv")
    _add_force(sw)
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
    _add_force(po)
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
    ck.add_argument("--baseline", help="the precision the measured speedup is over (default fp32; decode: bf16 where native)")
    ck.add_argument("--throughput-speedup", type=A_SPEEDUP, help="measured end-to-end speedup over the baseline "
                    "(0.001 to 10,000)")
    ck.add_argument("--linear-speedup", type=A_SPEEDUP, help="measured linear-block speedup over the baseline "
                    "(0.001 to 10,000)")
    ck.add_argument("--report", help="a `roofline validate --json` report instead of typed speedups")
    _add_calibration(ck, "the host's efficiencies for the realistic estimate (instead of the stack profile)")
    _add_stack(ck)
    ck.add_argument("--batch", type=BATCH, default=1, help=f"1 to {MAX_BATCH:,} (default 1)")
    ck.add_argument("--seq-len", type=TOKENS, default=256, help=f"1 to {MAX_TOKENS:,} (default 256)")
    ck.add_argument("--memory-model", choices=("levels", "paper"), default="levels",
                    help="the ceiling's memory model (paper: the reference paper's, for its Table 14)")
    ck.add_argument("--f-gemm", type=FRACTION, help="override f_GEMM (0 to 1)")
    ck.add_argument("--gemm-speedup", type=A_SPEEDUP, help="override s_GEMM (0.001 to 10,000)")
    ck.add_argument("--non-gemm-speedup", type=A_SPEEDUP, help="override s_non (0.001 to 10,000)")
    dec = ck.add_argument_group("decode (--phase decode: tokens/s of an LLM engine)")
    dec.add_argument("--phase", choices=("forward", "decode"), default="forward",
                     help="decode: the throughput speedup is tokens/s over the baseline's, one token per sequence")
    dec.add_argument("--context", type=CONTEXT, help="decode: tokens in the KV cache (default 1024)")
    dec.add_argument("--engine-ops-per-cycle", type=_float_in(0.01, 65536, "ops per cycle per core"),
                     help="decode: the engine's matmul rate per core when it does not use the vector or matrix "
                     "units (scalar code: 2)")
    dec.add_argument("--dequant", choices=("fused", "unfused"), default="fused",
                     help="decode: unfused: weights dequantized on the vector units before the multiply, not under "
                     "the memory stream")
    dec.add_argument("--widen-weights", action="store_true",
                     help="decode: the engine widens quantized weights to a float copy it writes and reads back")
    dec.add_argument("--engine-kv-dtype", choices=("fp32", "bf16", "fp16", "int8"),
                     help="decode: the engine's KV-cache element type (default: the ceiling's)")
    _add_brief(ck)
    _add_json(ck)
    _add_force(ck)
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
    _add_force(cal)
    cal.set_defaults(handler="roofline.cli.check_cmd:calibrate")

    acc = sub.add_parser(
        "accuracy", help="every measurement record against the ceiling and the realistic estimate",
        description="Compare every measurement record (validation/records) with its ceiling and with the realistic "
        "estimate of its software stack, that stack's profile refitted without the record's platform "
        "(leave-one-platform-out: the error to expect on an unseen CPU). Counts ceiling violations (must be 0).",
    )
    acc.add_argument("--records", nargs="*", metavar="PATH", help="record files or folders (default: the built-in)")
    acc.add_argument("--plot", metavar="FILE", help="predicted vs measured chart (.svg or .png; the plot extra)")
    _add_brief(acc)
    _add_json(acc)
    _add_force(acc)
    acc.set_defaults(handler="roofline.cli.accuracy_cmd:run")

    for kind in ("platforms", "models"):
        p = sub.add_parser(kind, help=f"list the {kind} catalog, or show one entry ({kind} show NAME)")
        p.add_argument("action", nargs="?", choices=("list", "show"), default="list")
        p.add_argument("name", nargs="?", help="name, alias or file path (with show)")
        _add_brief(p)
        _add_json(p)
        _add_force(p)
        p.set_defaults(handler=f"roofline.cli.catalog_cmd:{kind}")

    probe = sub.add_parser(
        "probe", help="measure this host (bandwidths, GEMM peaks) and write it as a platform spec",
        description="Measure this host: DRAM and LLC read bandwidth, FP32/BF16/INT8 GEMM peaks on the fastest "
        "real path, and write a platform TOML in the catalog's schema (every number 'measured'). Needs the "
        "validate extra (torch).",
    )
    probe.add_argument("-o", "--output", metavar="FILE", help="where to write the platform TOML (it is also "
                       "cached as the host probe that `validate --cpu host` uses)")
    probe.add_argument("--threads", type=THREADS, help="threads to measure with, 1 to 4,096 (default: all cores)")
    probe.add_argument("--name", default="host", help="platform name in the file (default: host)")
    probe.add_argument("--quick", action="store_true", help="smaller arrays and GEMMs (seconds, less precise)")
    _add_json(probe)
    _add_force(probe)
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
    val.add_argument("--threads", type=THREADS, help="threads, 1 to 4,096 (default: all cores)")
    val.add_argument("--quick", action="store_true", help="2 layers, sequence 128, 3 timing rounds: minutes on a laptop")
    val.add_argument("--batch", type=BATCH, default=1, help=f"1 to {MAX_BATCH:,} (default 1)")
    val.add_argument("--seq-len", type=TOKENS, help="default 256 (128 with --quick)")
    val.add_argument("--layers", type=_int_in(1, 10_000), help="encoder layers to build, 1 to 10,000 (default: the "
                     "model's; 2 with --quick)")
    val.add_argument("--rounds", type=_int_in(1, 1000), help="interleaved timing rounds, 1 to 1,000 (default 5; 3 with "
                     "--quick)")
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
    eng.add_argument("--pp", type=_int_in(1, 1 << 20), help="llama.cpp: prompt tokens of the pp test, 1 to 2^20 "
                     "(default 512; 64 with --quick)")
    eng.add_argument("--tg", type=_int_in(1, 1 << 20), help="llama.cpp: generated tokens of the tg test, 1 to 2^20 "
                     "(default 128; 16 with --quick)")
    eng.add_argument("--reps", type=_int_in(1, 1000), help="llama.cpp: repetitions of each test, 1 to 1,000 "
                     "(default 5; 2 with --quick)")
    eng.add_argument("--gguf-dir", help="llama.cpp: folder for the GGUF files (default: a temporary one)")
    eng.add_argument("--keep-gguf", action="store_true", help="llama.cpp: keep the GGUF files")
    _add_json(val)
    _add_force(val)
    val.set_defaults(handler="roofline.cli.validate_cmd:run")

    sch = sub.add_parser("schema", help="print the JSON Schema of a command's --json output")
    schemas = ("estimate", "validate", "validate-llamacpp", "footprint", "plan", "check")
    sch.add_argument("which", metavar="COMMAND", choices=schemas, help=", ".join(schemas))
    sch.set_defaults(handler="roofline.cli.catalog_cmd:schema")
    parser.commands = sub.choices  # type: ignore[attr-defined]  # the Python API parses one command's flags
    for name, p in sub.choices.items():
        p.formatter_class = _Formatter
        if p.epilog is None and name in EXAMPLES:
            p.epilog = "examples:\n" + "\n".join(f"  {line}" for line in EXAMPLES[name])
    return parser


def _catalog_argv(argv: list[str]) -> list[str]:
    """`roofline models --json list`: ``--json`` takes an optional FILE, so argparse would read the action
    word as the file name; the action words are never taken as one (write to ``./list`` for that)."""
    if not argv or argv[0] not in ("models", "platforms"):
        return argv
    out = list(argv)
    for i, a in enumerate(out[:-1]):
        if a == "--json" and out[i + 1] in ("list", "show"):
            out[i] = "--json=-"
    return out


def _check_outputs(args: argparse.Namespace) -> None:
    """Refuse an output path that cannot be written before any work is done."""
    for value in (getattr(args, "json", None), getattr(args, "output", None), getattr(args, "plot", None)):
        if value is not None and value != "-":
            from roofline.files.writing import check_target

            check_target(value, force=getattr(args, "force", False))


def main(argv: Sequence[str] | None = None) -> int:
    for stream in ("stdout", "stderr"):
        if getattr(sys, stream) is None:  # a closed descriptor (`>&-`): what goes there is dropped, as print() does
            setattr(sys, stream, open(os.devnull, "w", encoding="utf-8"))
    parser = build_parser()
    args = parser.parse_args(_catalog_argv(list(sys.argv[1:] if argv is None else argv)))
    if not getattr(args, "handler", None):
        parser.print_help()
        return EXIT_USER_ERROR
    module, func = args.handler.split(":")
    try:
        import importlib

        _check_outputs(args)
        return int(getattr(importlib.import_module(module), func)(args) or 0)
    except UserError as e:
        sys.stderr.write(f"roofline {args.command}: error: {e}\n")
        return e.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return 130
    except BrokenPipeError:
        return 0
