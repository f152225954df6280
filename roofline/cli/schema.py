"""``roofline schema``: the JSON Schema of a command's ``--json``."""

from __future__ import annotations

import argparse
import sys

from roofline import arguments as A
from roofline.cli import flags

EXAMPLES = ["roofline schema estimate"]


def parser(name: str) -> argparse.ArgumentParser:
    p = flags.command_parser(name, "Print the JSON Schema of a command's --json output.", EXAMPLES)
    flags.add(p, A.SCHEMA)
    return p


def run(args: argparse.Namespace) -> int:
    from roofline.schema import schema_text

    sys.stdout.write(schema_text(flags.values(A.SCHEMA, args).which))
    return 0
