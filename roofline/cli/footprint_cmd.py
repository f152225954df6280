"""``roofline footprint``."""

from __future__ import annotations

import argparse

from roofline.cli.estimate_cmd import model_arg
from roofline.cli.emit import emit
from roofline.model.footprint import footprint
from roofline.results.footprint import FootprintResult


def compute(args: argparse.Namespace) -> FootprintResult:
    return footprint(model_arg(args.model), args.precision, base_dtype=args.base_dtype, group_size=args.group_size,
                     quantize_lm_head=args.quantize_lm_head, quantize_embeddings=args.quantize_embeddings,
                     count_tied_lm_head_copy=args.count_tied_lm_head_copy)


def run(args: argparse.Namespace) -> int:
    result = compute(args)

    def render():
        from roofline.report.footprint_tables import render_footprint

        return render_footprint(result, mib=args.mib, brief=args.brief)

    return emit(result, args, render)
