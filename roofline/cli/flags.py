"""The command line's flags, built from the argument definitions (:mod:`roofline.arguments`), and the
output flags every command shares (``--json``, ``--brief``, ``--force``, ``-o``)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from roofline import arguments as A
from roofline.errors import EXIT_USER_ERROR, UserError


class Formatter(argparse.HelpFormatter):
    """argparse's formatter, keeping an epilog of examples line by line."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith("examples:"):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


class Parser(argparse.ArgumentParser):
    """argparse, with usage errors on one line and exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"{self.prog}: error: {message} (see {self.prog} --help)\n")
        raise SystemExit(EXIT_USER_ERROR)

    def _get_values(self, action, arg_strings):  # type: ignore[override]
        # `--f-gemm=--`: argparse drops the '--' and hands the flag an empty list, never calling its type
        if arg_strings == ["--"] and action.nargs in (None, argparse.OPTIONAL):
            self.error(f"argument {'/'.join(action.option_strings) or action.dest}: '--' is not a value")
        return super()._get_values(action, arg_strings)


def command_parser(name: str, description: str, examples: list[str]) -> Parser:
    return Parser(prog=f"roofline {name}", description=description, formatter_class=Formatter,
                  epilog="examples:\n" + "\n".join(f"  {line}" for line in examples) if examples else None)


def _text_type(arg: A.Arg):
    """argparse's ``type``: the definition's check of the flag's text, its message argparse's."""
    def parse(text: str) -> Any:
        try:
            return arg.value(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None

    parse.__name__ = arg.name
    return parse


def add(parser: argparse.ArgumentParser, args: A.Command | tuple[A.Arg, ...]) -> None:
    """A flag (or positional) per argument, in order, under its group's heading."""
    groups: dict[str, argparse._ArgumentGroup] = {}
    for arg in args:
        target = parser
        if arg.group:
            target = groups.setdefault(arg.group, parser.add_argument_group(arg.group))
        kw: dict[str, Any] = {"help": arg.help}
        if arg.metavar:
            kw["metavar"] = arg.metavar
        if arg.switch:
            kw["action"] = "store_true"
        elif arg.nargs:
            kw["nargs"] = arg.nargs  # words checked with the rest by the command's definition
        elif arg.many:
            kw["action"] = "append"  # each occurrence a word; split and checked by the command's definition
        else:
            kw["type"] = _text_type(arg)
            choices = getattr(arg.value, "choices", None)
            if choices is not None:
                kw["choices"] = choices
                kw["type"] = None  # argparse names the choices; the definition turns the word into its enum
            if arg.default is not None:
                kw["default"] = arg.default.value if hasattr(arg.default, "value") else arg.default
        if arg.positional:
            target.add_argument(arg.name, **kw)
        else:
            target.add_argument(*arg.option_strings, dest=arg.name, required=arg.required, **kw)


def add_html(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--html", metavar="FILE", help="also write the answer as one self-contained HTML page (the "
                        "headline, the chart, the tables, every input with its source; no network needed)")


def add_outputs(parser: argparse.ArgumentParser, *, json: bool = True, brief: bool = True, force: bool = True) -> None:
    if brief:
        parser.add_argument("--brief", action="store_true", help="only the headline: the answer in a few lines, "
                            "no tables")
    if json:
        parser.add_argument("--json", nargs="?", const="-", metavar="FILE", help="write the result as JSON to FILE "
                            "(whole or not at all), or to stdout without FILE")
    if force:
        parser.add_argument("--force", action="store_true", help="replace an output file even if it is read-only")


def values(command: A.Command, ns: argparse.Namespace):
    """The command's arguments from parsed flags, checked by their definitions (a bad one is a UserError
    naming the flag), as the API's :class:`~roofline.api.Values`."""
    from roofline.api import Values

    given = {a.name: getattr(ns, a.name) for a in command.args if hasattr(ns, a.name)}
    try:
        return Values(command.values(given))
    except A.ArgumentError as e:
        raise UserError(f"argument {'/'.join(e.arg.option_strings) or e.arg.name}: {e.reason}") from None
