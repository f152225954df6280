"""``roofline check``: measured speedups beside their ceilings, the gap split into named terms."""

from __future__ import annotations

import argparse

from roofline import arguments as A
from roofline.cli import flags
from roofline.cli.emit import emit

DESCRIPTION = ("Put measured speedups (typed, or from a validate report) beside the GEMM and end-to-end ceilings (the "
               "paper's Table 14) and the realistic estimate (the ceiling plus named overhead terms, each priced by the "
               "roofline: activation quantization, smoothing, u8 compensation, unfused post-ops, dispatch; with a "
               "calibration, kernel and non-GEMM efficiency), and attribute the missing part.")
EXAMPLES = ["roofline check --model bert-large --cpu gnr --precision int8-static \\",
            "    --throughput-speedup 5.82 --linear-speedup 8.7",
            "roofline check --report report.json --calibration my-host.toml"]


def parser(name: str) -> argparse.ArgumentParser:
    p = flags.command_parser(name, DESCRIPTION, EXAMPLES)
    flags.add(p, A.CHECK)
    flags.add_outputs(p)
    return p


def run(args: argparse.Namespace) -> int:
    from roofline.api import check

    result = check(**flags.values(A.CHECK, args))

    def render():
        from roofline.report.check_tables import render_check

        return render_check(result, brief=args.brief)

    return emit(result, args, render)
