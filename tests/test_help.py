"""`roofline --help` says what the tool answers; every command's help ends with examples that work."""

from __future__ import annotations

import shlex

import pytest
from clitools import REPO, run_cli

from roofline.cli import COMMANDS as TABLE
from roofline.cli import command_module, parser_for

pytestmark = pytest.mark.slow  # the file takes seconds: out of the fast stage (pytest -m "not slow")

COMMANDS = sorted(TABLE)
#: examples that need torch, a report or a chart library, or that measure: parsed, not run
PARSED_ONLY = ("probe", "validate", "plot", "report.json", "-o ")


def _examples(command: str) -> list[str]:
    """The command's examples as shell lines (a trailing backslash continues a line)."""
    text = parser_for(command).format_help()
    lines = text.split("examples:\n", 1)[1].splitlines()
    out: list[str] = []
    for line in lines:
        if out and out[-1].endswith("\\"):
            out[-1] = out[-1][:-1] + line.strip()
        elif line.strip():
            out.append(line.strip())
    return out


def test_the_program_help_is_for_users():
    proc = run_cli("--help", env={"COLUMNS": "100"})
    assert proc.returncode == 0
    text = proc.stdout
    assert "thin command line" not in text
    assert "How fast can a transformer run on a server CPU" in text and "<command> --help" in text
    for command in COMMANDS:
        assert f"    {command}" in text


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_examples_that_parse(command):
    examples = _examples(command)
    assert examples, f"roofline {command} --help has no examples"
    module = command_module(command)
    listed = module.EXAMPLES[command] if isinstance(module.EXAMPLES, dict) else module.EXAMPLES
    assert examples[0].startswith(listed[0].rstrip(" \\"))  # the module's own examples, as help prints them
    for example in examples:
        argv = shlex.split(example)
        assert argv[:2] == ["roofline", command], example
        parser_for(command).parse_args(argv[2:])  # exits on a flag the command does not have


@pytest.mark.parametrize("example", [e for c in COMMANDS for e in _examples(c)
                                     if not any(x in e for x in PARSED_ONLY)])
def test_the_cheap_examples_run(example):
    proc = run_cli(*shlex.split(example)[1:], env={"COLUMNS": "100"}, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout


def test_help_fits_80_columns():
    for command in ["--help", *COMMANDS]:
        proc = run_cli(*([command, "--help"] if command != "--help" else ["--help"]), env={"COLUMNS": "80"})
        assert proc.returncode == 0
        assert max(len(line) for line in proc.stdout.splitlines()) <= 80, command
