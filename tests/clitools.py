"""Running the CLI as a user would, from a neutral directory.

``run_cli`` calls the same ``roofline.cli.main`` a ``roofline`` process runs, in this process, with the command's own
argv, working directory, environment and standard streams (pipes, not a terminal, as ``subprocess.run`` with
``capture_output`` gives), its exit code from what it returns or raises, and every cache the catalog keeps in memory
cleared before it: a CLI test pays no interpreter start and no import of its own (about 0.4 s each). ``process=True``
(or a ``timeout``: a test that guards against a hang) runs a real ``python -m roofline`` instead, for what only a
process shows: its imports, signals, closed or odd streams, an environment Python reads at start, a state the test
changed in its own process (a monkeypatched module).
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import subprocess
import sys
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: environment variables read when an interpreter starts, not when a command runs: their tests need a process
PROCESS_ENV = ("PYTHON", "LC_", "LANG")


def run_cli(*args: str, cwd: Path | str = "/", env: dict | None = None, timeout: float | None = None,
            process: bool = False) -> subprocess.CompletedProcess:
    if process or timeout is not None or any(k.startswith(PROCESS_ENV) for k in (env or {})):
        full_env = {**os.environ, **(env or {})}
        return subprocess.run([sys.executable, "-m", "roofline", *args], capture_output=True, text=True, cwd=cwd,
                              env=full_env, timeout=timeout or 600)
    return _in_process(list(args), cwd, env or {})


def _clear_caches() -> None:
    """Every lru_cache of a loaded roofline module: a file rewritten at the same path between two commands is read
    again, as a new process would."""
    for name, module in list(sys.modules.items()):
        if name == "roofline" or name.startswith("roofline."):
            for value in list(vars(module).values()):
                if callable(value) and hasattr(value, "cache_clear") and getattr(value, "__module__", "") == name:
                    value.cache_clear()


def _text(stream: io.TextIOWrapper) -> str:
    stream.flush()
    data = stream.buffer.getvalue()  # type: ignore[attr-defined]
    return data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")


def _in_process(args: list[str], cwd: Path | str, env: dict) -> subprocess.CompletedProcess:
    from roofline.cli import main

    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    saved_env, saved_cwd, saved_argv = dict(os.environ), os.getcwd(), sys.argv
    _clear_caches()
    try:
        os.environ.update({k: str(v) for k, v in env.items()})
        os.chdir(cwd)
        sys.argv = [str(REPO / "roofline" / "__main__.py"), *args]
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(args)
            except SystemExit as e:  # argparse's usage errors, --help, --version
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
                if isinstance(e.code, str):
                    sys.stderr.write(e.code + "\n")
            except BaseException:  # what a process would print and exit 1 with
                traceback.print_exc()
                code = 1
    finally:
        sys.argv = saved_argv
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    return subprocess.CompletedProcess(["roofline", *args], int(code or 0), _text(out), _text(err))


def run_json(*args: str) -> dict:
    proc = run_cli(*args, "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def all_finite(obj) -> bool:
    """Every float in a JSON document (nested dicts and lists) is finite."""
    if isinstance(obj, float):
        return math.isfinite(obj)
    if isinstance(obj, dict):
        return all(all_finite(v) for v in obj.values())
    if isinstance(obj, list):
        return all(all_finite(v) for v in obj)
    return True
