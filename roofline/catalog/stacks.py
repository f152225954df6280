"""Finding and loading software-stack profiles (``platforms/stacks/*.toml``, or a path)."""

from __future__ import annotations

from pathlib import Path

from roofline.catalog import search_dirs
from roofline.catalog.cache import load_validated
from roofline.errors import SpecError, UnknownNameError
from roofline.files.reading import parse_toml
from roofline.spec.stack import StackProfile


def stack_path(ref: str) -> Path:
    """A stack profile by name (in ``stacks/`` beside the platform catalogs) or by path."""
    p = Path(ref).expanduser()
    if ref.endswith(".toml") or p.is_file():
        if not p.is_file():
            raise SpecError(ref, "", "no such stack profile file")
        return p.resolve()
    known = []
    for d in search_dirs("platforms"):
        candidate = d / "stacks" / f"{ref}.toml"
        if candidate.is_file():
            return candidate.resolve()
        known += [f.stem for f in (d / "stacks").glob("*.toml")] if (d / "stacks").is_dir() else []
    raise UnknownNameError("stack", ref, known, "or give a profile's path; `roofline calibrate --records` fits one")


def load_stack(ref: str) -> StackProfile:
    path = stack_path(ref)
    return load_validated(StackProfile, path, lambda raw: parse_toml(raw, path))
