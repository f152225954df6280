"""The layering rules: the core never imports torch; `estimate --json` stays light."""

from __future__ import annotations

import ast
import subprocess
import sys

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
