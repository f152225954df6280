"""``roofline platforms`` and ``roofline models``: the two catalogs, listed or one entry shown."""

from __future__ import annotations

import argparse
import sys

from roofline import arguments as A
from roofline.cli import flags
from roofline.cli.emit import emit
from roofline.errors import UserError, printable

EXAMPLES = {"platforms": ["roofline platforms", "roofline platforms show gnr"],
            "models": ["roofline models", "roofline models show bert-large"]}


def parser(name: str) -> argparse.ArgumentParser:
    p = flags.command_parser(name, f"List the {name} catalog, or show one entry with every number and its source.",
                             EXAMPLES[name])
    flags.add(p, A.CATALOG)
    flags.add_outputs(p)
    return p


def argv(args: list[str]) -> list[str]:
    """`roofline models --json list`: ``--json`` takes an optional FILE, so argparse would read the action
    word as the file name; the action words are never taken as one (write to ``./list`` for that)."""
    out = list(args)
    for i, a in enumerate(out[:-1]):
        if a == "--json" and out[i + 1] in ("list", "show"):
            out[i] = "--json=-"
    return out


def run(args: argparse.Namespace) -> int:
    from roofline.catalog import catalog_listing, find_file, load_model_file, load_platform_file
    from roofline.report import catalog_tables as tables

    kind = args.command
    a = flags.values(A.CATALOG, args)
    if a.action == "show":
        if not a.name:
            raise UserError(f"{kind} show needs a NAME (see `roofline {kind}`)")
        load = load_platform_file if kind == "platforms" else load_model_file
        item = load(find_file(kind, a.name))
        render = tables.render_platform if kind == "platforms" else tables.render_model
        return emit(item, args, lambda: render(item, brief=args.brief))
    items, skipped = catalog_listing(kind)
    for path, why in skipped:  # one line each, on stderr: the listing itself stays clean JSON or tables
        line = f"roofline {kind}: warning: skipped {path}: {why.removeprefix(printable(str(path)) + ': ')}"
        sys.stderr.write(printable(line, keep_newlines=False) + "\n")
    render = tables.platform_list if kind == "platforms" else tables.model_list
    return emit(items, args, lambda: render(items, brief=args.brief))
