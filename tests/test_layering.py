"""The layering rules: the core never imports torch; `estimate --json` stays light."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from clitools import REPO

PROBE = """
import contextlib, io, sys
from roofline.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    assert main(["estimate", "--model", "bert-large", "--cpu", "icx", "--json"]) == 0
heavy = ("torch", "torchao", "matplotlib", "rich.console", "pydantic.main")
print(" ".join(sorted(m for m in sys.modules if m in heavy or m.split(".")[0] in ("torch", "torchao"))))
"""


def _loaded_after_estimate(env) -> set[str]:
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, cwd="/", check=True)
    return set(out.stdout.split())


def test_estimate_json_imports_no_torch_and_no_pydantic_when_cached(tmp_path):
    import os

    env = {**os.environ, "ROOFLINE_CACHE_DIR": str(tmp_path)}
    first = _loaded_after_estimate(env)  # validates the spec files: pydantic, no torch
    assert "pydantic.main" in first and not first & {"torch", "torchao"}
    second = _loaded_after_estimate(env)  # served from the validated cache
    assert second == set(), second


def test_core_source_never_imports_torch():
    offenders = []
    for path in (REPO / "roofline").rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            if any(n.split(".")[0] in ("torch", "torchao") for n in names):
                offenders.append(f"{path.relative_to(REPO)}:{node.lineno}")
            if any(n.startswith("roofline.validation") for n in names) and "cli" not in path.parts:
                offenders.append(f"{path.relative_to(REPO)}:{node.lineno} (core imports validation)")
    assert not offenders, offenders


def test_calculators_import_only_numpy():
    for path in (REPO / "roofline" / "calc").glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                top = node.module.split(".")[0]
                assert top in ("__future__", "typing", "dataclasses", "numpy", "roofline"), (path, node.module)
                if top == "roofline":
                    assert node.module.startswith("roofline.calc"), (path, node.module)
            if isinstance(node, ast.Import):
                assert all(a.name in ("numpy",) for a in node.names), (path, [a.name for a in node.names])


def test_no_generic_top_level_packages():
    """Everything installs under `roofline`: nothing generic like `models` at the top of site-packages."""
    text = (REPO / "pyproject.toml").read_text()
    import tomllib

    packages = tomllib.loads(text)["tool"]["setuptools"]["packages"]
    assert packages and all(p == "roofline" or p.startswith("roofline.") for p in packages)
    dirs = tomllib.loads(text)["tool"]["setuptools"]["package-dir"]
    assert set(dirs) <= set(packages), "a package-dir maps a package that is not installed"
    for target in dirs.values():
        assert (REPO / target).is_dir(), target


def test_validation_imports_torch_at_the_top_and_defines_no_classes_in_functions():
    """validation/ only runs with torch: it imports torch at module level (torch_env, which gives the
    one-line 'needs torch' error, and the optional llama.cpp engine are the exceptions) and defines its
    modules as module-level classes, not inside functions or static methods."""
    lazy_ok = {"torch_env.py", "llamacpp.py", "llamacpp_report.py", "gguf_writer.py", "host.py", "native.py"}
    offenders = []
    for path in (REPO / "validation").glob("*.py"):
        tree = ast.parse(path.read_text())
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.ClassDef):
                    offenders.append(f"{path.name}:{node.lineno} class {node.name} inside {fn.name}()")
                if path.name not in lazy_ok and isinstance(node, ast.Import) and any(
                        a.name.split(".")[0] == "torch" for a in node.names):
                    offenders.append(f"{path.name}:{node.lineno} import torch inside {fn.name}()")
    assert not offenders, offenders


#: the packages of roofline from the bottom up: a module imports from its own layer and the ones below,
#: never above (lazy imports inside functions count too). ``roofline`` itself is the facade of the API.
LAYERS = (
    ("errors", "units", "files", "version"),  # the base: errors, units, the one reader and writer, the version
    ("calc",),                       # pure formulas
    ("spec",),                       # what the user describes
    ("results",),                    # the JSON contract of each command
    ("report", "schema"),            # the printed answer; the JSON schemas, from the result types
    ("catalog",),                    # finding and loading spec files, records, stack profiles
    ("serving",),                    # the queueing simulators
    ("model",),                      # the step pipeline, the realistic model, estimate, sweep
    ("capacity",),                   # the capacity plan
    ("fidelity",),                   # records' figures, the stack fit, accuracy, calibrate, check
    ("arguments",),                  # every command's arguments, defined once
    ("api", ""),                     # the Python API, and the package facade (roofline/__init__)
    ("cli", "__main__"),             # the command line over the API
)


def _layer(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "roofline":
        return None
    name = parts[1] if len(parts) > 1 else ""
    if name == "validation":
        return None
    return next(i for i, names in enumerate(LAYERS) if name in names)


def _module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_every_module_imports_only_its_layer_and_below():
    """The layer order of roofline/__init__.py, checked for every import of every module."""
    offenders, seen = [], set()
    for path in sorted((REPO / "roofline").rglob("*.py")):
        name = _module_name(path)
        mine = _layer(name)
        assert mine is not None, f"{name}: not in a layer of LAYERS"
        seen.add(mine)
        for node in ast.walk(ast.parse(path.read_text())):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module]
            for t in targets:
                theirs = _layer(t)
                if theirs is not None and theirs > mine:
                    offenders.append(f"{name}:{node.lineno} imports {t} ({LAYERS[theirs][0]} is above {LAYERS[mine][0]})")
    assert not offenders, "\n".join(offenders)
    assert seen == set(range(len(LAYERS))), "a layer with no module"


def test_validation_imports_the_core_never_the_cli():
    offenders = []
    for path in sorted((REPO / "validation").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(("roofline.cli", "roofline.api")):
                offenders.append(f"{path.name}:{node.lineno} {node.module}")
    assert not offenders, offenders


def test_the_layer_rule_is_the_documented_one():
    """roofline/__init__.py's docstring lists the layers in this order."""
    import roofline

    doc = roofline.__doc__
    positions = [doc.index(f"``roofline.{names[0]}``") for names in LAYERS[1:-2] if names[0]]
    assert positions == sorted(positions)
