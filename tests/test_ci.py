"""CI runs the README's own install line and test command, checked against the README; the install line
installs what the tests need."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys

import pytest
from clitools import REPO

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib


def _reader():
    spec = importlib.util.spec_from_file_location("readme_block", REPO / ".ci" / "readme_block.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_ci_runs_the_readme_install_line_and_test_command():
    readme = (REPO / "README.md").read_text()
    install = readme.split("## Install\n", 1)[1].split("```\n", 2)[1].rstrip("\n")
    tests = readme.split("## Tests\n", 1)[1].split("```\n", 2)[1].rstrip("\n")
    assert install == "python3 -m venv .venv && . .venv/bin/activate\npip install -e '.[dev,validate]'"
    assert tests == "pytest"
    for heading, body in (("Install", install), ("Tests", tests)):
        printed = subprocess.run([sys.executable, str(REPO / ".ci" / "readme_block.py"), heading],
                                 capture_output=True, text=True, check=True).stdout
        assert printed == body + "\n"
    run = (REPO / ".ci" / "run").read_text()
    # CI writes the two out as commands of its own, and stops unless they are still the README's blocks
    assert f'install="{install}"' in run and f'tests="{tests}"' in run
    assert 'python3 .ci/readme_block.py "$section"' in run and "for section in Install Tests" in run
    commands = [line for line in run.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    for line in (*install.splitlines(), tests):
        assert line in commands, f"CI does not run the README's line {line!r}"
    runs = [c for c in commands if re.search(r"\bpip\b.*\binstall\b|^\s*pytest\b", c)
            and "=" not in c.split()[0] and not c.endswith('"')]  # not the lines of the two strings above
    assert runs == [install.splitlines()[1], tests], "CI installs and tests only with the README's lines"


def test_the_block_reader_takes_the_first_block_of_its_section_only():
    block = _reader().block
    text = "# t\n## Install\ntext\n```\na\nb\n```\n```\nc\n```\n## Tests\n```sh\npytest -q\n```\n"
    assert block(text, "Install") == "a\nb" and block(text, "Tests") == "pytest -q"
    with pytest.raises(SystemExit, match="no '## Usage' section"):
        block(text, "Usage")
    with pytest.raises(SystemExit, match="no fenced block under '## Tests'"):
        block("## Tests\nno block\n## Next\n```\nx\n```\n", "Tests")


def test_the_install_line_brings_every_extra_the_tests_import():
    """`dev` carries `plot` (the chart tests): the README's `.[dev,validate]` is all a fresh machine needs."""
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    project = pyproject["project"]
    extras = project["optional-dependencies"]
    assert "roofline[plot]" in extras["dev"]
    installed = set(re.search(r"\.\[([\w,]+)\]", (REPO / "README.md").read_text()).group(1).split(","))
    assert installed == {"dev", "validate"}
    needed = {"matplotlib", "pytest", "hypothesis", "jsonschema", "gguf", "torch", "torchao"}
    addopts = pyproject["tool"]["pytest"]["ini_options"]["addopts"]
    if "-n" in addopts.split():  # the README's bare `pytest` spreads the files over the cores: xdist must be there
        needed.add("pytest-xdist")
    names = {re.split(r"[<>=\[; ]", d)[0] for e in installed for d in extras[e]}
    names |= {re.split(r"[<>=\[; ]", d)[0] for d in extras["plot"]}
    assert needed <= names, needed - names
