"""``roofline platforms``, ``roofline models`` and ``roofline schema``."""

from __future__ import annotations

import argparse
import sys

from roofline.catalog import catalog_listing, find_file, load_model_file, load_platform_file
from roofline.cli.emit import emit
from roofline.errors import UserError


def _catalog(kind: str, args: argparse.Namespace) -> int:
    """`roofline platforms|models [list|show NAME]`."""
    from roofline.report import catalog_tables as tables

    if args.action == "show":
        if not args.name:
            raise UserError(f"{kind} show needs a NAME (see `roofline {kind}`)")
        load = load_platform_file if kind == "platforms" else load_model_file
        item = load(find_file(kind, args.name))
        render = tables.render_platform if kind == "platforms" else tables.render_model
        return emit(item, args, lambda: render(item, brief=args.brief))
    items, skipped = catalog_listing(kind)
    for path, why in skipped:  # one line each, on stderr: the listing itself stays clean JSON or tables
        sys.stderr.write(f"roofline {kind}: warning: skipped {path}: {why.removeprefix(str(path) + ': ')}\n")
    render = tables.platform_list if kind == "platforms" else tables.model_list
    return emit(items, args, lambda: render(items, brief=args.brief))


def platforms(args: argparse.Namespace) -> int:
    return _catalog("platforms", args)


def models(args: argparse.Namespace) -> int:
    return _catalog("models", args)


def schema(args: argparse.Namespace) -> int:
    from roofline.schema import schema_text

    sys.stdout.write(schema_text(args.which))
    return 0
