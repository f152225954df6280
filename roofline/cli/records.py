"""``roofline records add FILE``: a benchmark's result (llama-bench, llama-batched-bench, MLPerf, vllm bench serve,
SGLang bench_serving, GuideLLM, OpenVINO benchmark_app) as a measurement record."""

from __future__ import annotations

import argparse
import sys

from roofline import arguments as A
from roofline.cli import flags

DESCRIPTION = ("Write a measurement file as a measurement record (validation/records/*.toml): a llama-bench result "
               "(-o json, jsonl, csv, or its markdown table), a llama-batched-bench table or jsonl, an MLPerf "
               "mlperf_log_summary.txt (with its system description), a vllm bench serve JSON, an SGLang "
               "bench_serving JSONL, a GuideLLM JSON report or an OpenVINO benchmark_app report. What the file states "
               "is taken from it; what it does not is asked for by flag (--cpu; "
               "--model when the file names the model only by a path) or written as assumed, each field with a "
               "comment saying which. roofline accuracy --records reads it; roofline calibrate --records fits on it.")
EXAMPLES = ["roofline records add tests/fixtures/llama-bench/zen5-2vcpu-llama-3.2-1b.json \\",
            "    --cpu tests/fixtures/llama-bench/zen5-2vcpu-probe.toml \\",
            "    --model llama-3.2-1b",
            "roofline records add mlperf_log_summary.txt --system systems/SYSTEM.json \\",
            "    -o validation/records/mlperf-my-system-bert99-offline.toml"]


def parser(name: str) -> argparse.ArgumentParser:
    p = flags.command_parser(name, DESCRIPTION, EXAMPLES)
    flags.add(p, A.RECORDS)
    p.add_argument("-o", "--output", metavar="FILE", help="the record file to write (.toml; default: print it)")
    flags.add_outputs(p, json=False, brief=False)
    return p


def run(args: argparse.Namespace) -> int:
    from roofline.api import records_add
    from roofline.errors import UserError

    if args.output and args.output != "-" and not args.output.endswith(".toml"):
        raise UserError(f"-o {args.output}: a record is a .toml file")
    values = flags.values(A.RECORDS, args)
    measured, text = records_add(**{k: v for k, v in values.items() if k != "action"})
    if not args.output or args.output == "-":
        sys.stdout.write(text)
        return 0
    from roofline.files.writing import write_text

    write_text(args.output, text, force=args.force)
    from roofline.errors import printable

    r = measured.record
    n = len(r.measurements)
    print(printable(f"records add: {n} measurement{'s' if n != 1 else ''} of {r.model} on {measured.platform.name} "
                    f"({r.stack}) written to {args.output}; roofline accuracy --records {args.output}",
                    keep_newlines=False))
    return 0
