"""Finding and loading software-stack profiles (``platforms/stacks/*.toml``, or a path)."""

from __future__ import annotations

import os
from pathlib import Path

from roofline.catalog import search_dirs
from roofline.catalog.cache import load_validated
from roofline.errors import SpecError, UnknownNameError
from roofline.files.reading import is_file, parse_toml, regular_file_problem, resolved
from roofline.spec.stack import StackProfile


def stack_path(ref: str) -> Path:
    """A stack profile by name (in ``stacks/`` beside the platform catalogs) or by path."""
    p = Path(ref).expanduser()
    if ref.endswith(".toml") or is_file(p):
        problem = regular_file_problem(p)
        if problem is not None:
            raise SpecError(ref, "", "no such stack profile file" if not os.path.lexists(p) else problem)
        return resolved(p)
    known = []
    for d in search_dirs("platforms"):
        candidate = d / "stacks" / f"{ref}.toml"
        if regular_file_problem(candidate) is None:
            return resolved(candidate)
        known += [f.stem for f in (d / "stacks").glob("*.toml")] if (d / "stacks").is_dir() else []
    raise UnknownNameError("stack", ref, known, "or give a profile's path; `roofline calibrate --records` fits one")


def load_stack(ref: str) -> StackProfile:
    path = stack_path(ref)
    return load_validated(StackProfile, path, lambda raw: parse_toml(raw, path))


def stack_names() -> list[str]:
    """Every profile's name in the catalog folders (the first of each name: user folders win), sorted."""
    names: set[str] = set()
    for d in search_dirs("platforms"):
        if (d / "stacks").is_dir():
            names.update(f.stem for f in (d / "stacks").glob("*.toml"))
    return sorted(names)
