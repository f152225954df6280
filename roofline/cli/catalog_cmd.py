"""``roofline platforms``, ``roofline models`` and ``roofline schema``."""

from __future__ import annotations

import argparse
import sys

from roofline.catalog import all_models, all_platforms, find_file, load_model_file, load_platform_file
from roofline.cli.output import print_rich, write_json
from roofline.errors import UserError


def platforms(args: argparse.Namespace) -> int:
    if args.action == "show":
        if not args.name:
            raise UserError("platforms show needs a NAME (see `roofline platforms`)")
        plat = load_platform_file(find_file("platforms", args.name))
        if args.json:
            write_json(plat, args.json)
            return 0
        from roofline.report.catalog_tables import render_platform

        print_rich(render_platform(plat))
        return 0
    items = all_platforms()
    if args.json:
        write_json(items, args.json)
        return 0
    from roofline.report.catalog_tables import platform_list

    print_rich(platform_list(items))
    return 0


def models(args: argparse.Namespace) -> int:
    if args.action == "show":
        if not args.name:
            raise UserError("models show needs a NAME (see `roofline models`)")
        model = load_model_file(find_file("models", args.name))
        if args.json:
            write_json(model, args.json)
            return 0
        from roofline.report.catalog_tables import render_model

        print_rich(render_model(model))
        return 0
    items = all_models()
    if args.json:
        write_json(items, args.json)
        return 0
    from roofline.report.catalog_tables import model_list

    print_rich(model_list(items))
    return 0


def schema(args: argparse.Namespace) -> int:
    from roofline.schema import schema_text

    sys.stdout.write(schema_text(args.which))
    return 0
