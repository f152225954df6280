"""``roofline platforms``, ``roofline models`` and ``roofline stacks``: the catalogs, listed or one entry shown."""

from __future__ import annotations

import argparse
import sys

from roofline import arguments as A
from roofline.cli import flags
from roofline.cli.emit import emit
from roofline.errors import UserError, printable

EXAMPLES = {"platforms": ["roofline platforms", "roofline platforms show gnr"],
            "models": ["roofline models", "roofline models show bert-large"],
            "stacks": ["roofline stacks", "roofline stacks show llama.cpp"]}
WHAT = {"platforms": "List the platforms catalog, or show one entry with every number and its source.",
        "models": "List the models catalog, or show one entry with every number and its source.",
        "stacks": "List the stack profiles, or show one profile's values beside the range its fit may give them, "
                  "which sit on a bound (the figures did not pin them down), and the figures and CPUs behind each."}


def parser(name: str) -> argparse.ArgumentParser:
    p = flags.command_parser(name, WHAT[name], EXAMPLES[name])
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
    if kind == "stacks":
        return _stacks(a, args)
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


def _stacks(a, args: argparse.Namespace) -> int:
    from roofline.catalog import search_dirs
    from roofline.catalog.stacks import load_stack, stack_names, stack_path
    from roofline.fidelity.profile_values import stack_values, summarize
    from roofline.files.reading import portable_path
    from roofline.report import stack_tables as tables

    def shown(name: str) -> str:
        """a catalog profile as platforms/stacks/NAME.toml, another file as the user would name it"""
        p = stack_path(name)
        return next((f"{d.name}/stacks/{p.name}" for d in search_dirs("platforms") if p.parent == (d / "stacks").resolve()),
                    portable_path(p))

    if a.action == "show":
        if not a.name:
            raise UserError("stacks show needs a NAME (see `roofline stacks`)")
        values = stack_values(load_stack(a.name), shown(a.name))
        return emit(values, args, lambda: tables.render_stack(values, brief=args.brief))
    items = [summarize(stack_values(load_stack(n), shown(n))) for n in stack_names()]
    return emit(items, args, lambda: tables.stack_list(items, brief=args.brief))
