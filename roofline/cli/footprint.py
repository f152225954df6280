"""``roofline footprint``: bytes per tensor group before and after quantizing."""

from __future__ import annotations

import argparse

from roofline import arguments as A
from roofline.cli import flags
from roofline.cli.emit import emit

DESCRIPTION = ("Bytes per tensor group (projections, embeddings, lm_head, norms, biases, scales/zero points) in the "
               "base dtype and after quantizing under an explicit policy: the projections are quantized; embeddings, "
               "norms and biases stay in the base dtype; tied embeddings are counted once.")
EXAMPLES = ["roofline footprint --model qwen3-0.6b --precision int8-weight-only",
            "roofline footprint --model mixtral-8x7b --precision q4_k_m --brief"]


def parser(name: str) -> argparse.ArgumentParser:
    p = flags.command_parser(name, DESCRIPTION, EXAMPLES)
    flags.add(p, A.FOOTPRINT)
    p.add_argument("--mib", action="store_true", help="tables in MiB (2^20 bytes) instead of MB (10^6)")
    flags.add_outputs(p)
    return p


def run(args: argparse.Namespace) -> int:
    from roofline.api import footprint

    result = footprint(**flags.values(A.FOOTPRINT, args))

    def render():
        from roofline.report.footprint_tables import render_footprint

        return render_footprint(result, mib=args.mib, brief=args.brief)

    return emit(result, args, render)
