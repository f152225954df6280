"""``roofline check``: measured speedups beside their ceilings, the gap split into named terms."""

from __future__ import annotations

import argparse

from roofline import arguments as A
from roofline.cli import flags
from roofline.cli.emit import emit

DESCRIPTION = ("Put measured speedups (typed, or from a validate report) beside the GEMM and end-to-end ceilings (the "
               "paper's Table 14) and the realistic estimate (the ceiling plus named overhead terms, each priced by the "
               "roofline: activation quantization, smoothing, u8 compensation, unfused post-ops, dispatch; with a "
               "calibration, kernel and non-GEMM efficiency), and attribute the missing part. Or put measured rates "
               "beside their ceilings: tokens/s (--tokens-per-s), samples/s of a server (--samples-per-s), or every "
               "test of a llama-bench result or an MLPerf summary (--from FILE; what the file does not state is asked "
               "for by flag, and the answer lists every input with its source).")
EXAMPLES = ["roofline check --model bert-large --cpu gnr --precision int8-static \\",
            "    --throughput-speedup 5.82 --linear-speedup 8.7",
            "roofline check --report report.json --calibration my-host.toml",
            "roofline check --from tests/fixtures/llama-bench/zen5-2vcpu-q4_0-small.jsonl \\",
            "    --cpu tests/fixtures/llama-bench/zen5-2vcpu-probe.toml \\",
            "    --model llama-3.2-1b --brief",
            "roofline check --model bert-large --cpu spr --precision int8-full \\",
            "    --samples-per-s 1357 --batch 8 --seq-len 172 --stack intel-mlperf"]


def parser(name: str) -> argparse.ArgumentParser:
    p = flags.command_parser(name, DESCRIPTION, EXAMPLES)
    flags.add(p, A.CHECK)
    flags.add_html(p)
    flags.add_outputs(p)
    return p


def run(args: argparse.Namespace) -> int:
    from roofline.api import check

    result = check(**flags.values(A.CHECK, args))

    def render():
        from roofline.report.check_tables import render_check

        return render_check(result, brief=args.brief)

    def page(result, command):
        from roofline.report.html import check_page

        return check_page(result, command)

    return emit(result, args, render, page)
