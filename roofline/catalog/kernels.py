"""Loading an engine's kernel table (``platforms/kernels/<engine>.toml``: :mod:`roofline.spec.kernels`)."""

from __future__ import annotations

import functools

from roofline.catalog import search_dirs
from roofline.catalog.cache import load_validated
from roofline.errors import UnknownNameError
from roofline.files.reading import parse_toml, regular_file_problem, resolved
from roofline.spec.kernels import KernelTable


@functools.lru_cache(maxsize=8)
def load_kernel_table(name: str) -> KernelTable:
    """An engine's kernel table by name (the first ``kernels/<name>.toml`` beside the platform catalogs)."""
    known: list[str] = []
    for d in search_dirs("platforms"):
        path = d / "kernels" / f"{name}.toml"
        if regular_file_problem(path) is None:
            path = resolved(path)
            return load_validated(KernelTable, path, lambda raw, path=path: parse_toml(raw, path))
        known += [f.stem for f in (d / "kernels").glob("*.toml")] if (d / "kernels").is_dir() else []
    raise UnknownNameError("kernel table", name, known, "a stack profile's `kernels` names a file in platforms/kernels")
