"""``roofline estimate``: what bounds a model on a CPU per precision, the speedups, ceiling and realistic."""

from __future__ import annotations

import argparse

from roofline import arguments as A
from roofline.cli import flags
from roofline.cli.emit import emit

DESCRIPTION = ("First the answer, in a few lines (--brief: only those): what bounds each precision, one instance's "
               "latency and the whole platform's throughput, the GEMM speedup, the end-to-end (Amdahl) ceiling and the "
               "realistic estimate of a software stack with its measured error. Then the tables behind it: compute "
               "paths, the roofline of every GEMM, LLC residency, the Amdahl inputs and their sources, the inputs that "
               "are not datasheet or measured facts, and what the estimate leaves out.")
EXAMPLES = ["roofline estimate --model bert-large --cpu icx",
            "roofline estimate --model bert-large --cpu gnr --memory-model paper",
            "roofline estimate --model llama-3.2-3b --cpu spr --phase decode --brief",
            "roofline estimate --model meta-llama/Llama-3.2-1B --cpu genoa --json"]


def parser(name: str) -> argparse.ArgumentParser:
    p = flags.command_parser(name, DESCRIPTION, EXAMPLES)
    flags.add(p, A.ESTIMATE)
    flags.add_html(p)
    flags.add_outputs(p)
    return p


def run(args: argparse.Namespace) -> int:
    from roofline.api import run_estimate

    result = run_estimate(flags.values(A.ESTIMATE, args))

    def render():
        if args.brief:  # the headline alone: plain data, printed without rich where it can be
            from roofline.report.estimate_headline import headline

            return headline(result)
        from roofline.report.estimate_tables import render_estimate

        return render_estimate(result)

    def page(result, command):
        from roofline.report.html import estimate_page

        return estimate_page(result, command)

    return emit(result, args, render, page)
