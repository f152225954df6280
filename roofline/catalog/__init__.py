"""Finding spec files by name, alias or path.

Built-in catalogs are the repository's ``platforms/`` and ``models/`` folders
(installed as ``roofline/catalog/_data/``). Users add their own without touching
the package: pass a file path (``--cpu my-cpu.toml``), or put files in folders
named by ``ROOFLINE_PLATFORMS`` / ``ROOFLINE_MODELS`` (``os.pathsep``-separated),
which are searched first.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from roofline.catalog.cache import load_validated
from roofline.catalog.files import parse_json, parse_toml
from roofline.errors import SpecError, UnknownNameError
from roofline.spec.model import ModelSpec
from roofline.spec.platform import Platform

_PACKAGE = Path(__file__).resolve().parent


#: where each built-in catalog lives in the source checkout (installed as roofline/catalog/_data/<kind>)
SOURCE_DIRS = {"platforms": "platforms", "models": "models", "records": "validation/records",
               "results": "validation/results"}


def builtin_dir(kind: str) -> Path:
    """The built-in catalog folder: inside the installed package, or the source checkout's."""
    packaged = _PACKAGE / "_data" / kind
    if packaged.is_dir():
        return packaged
    return _PACKAGE.parent.parent / SOURCE_DIRS[kind]  # editable install / source checkout


def search_dirs(kind: str) -> list[Path]:
    env = os.environ.get(f"ROOFLINE_{kind.upper()}", "")
    user = [Path(p) for p in env.split(os.pathsep) if p]
    return [*user, builtin_dir(kind)]


def _looks_like_path(ref: str) -> bool:
    return ref.endswith((".toml", ".json", ".gguf")) or os.sep in ref or Path(ref).is_file()


def _catalog_files(kind: str) -> list[Path]:
    files: list[Path] = []
    for d in search_dirs(kind):
        if d.is_dir():
            files.extend(sorted(d.glob("*.toml")))
    return files


# ---------------------------------------------------------------- lookup


def find_file(kind: str, ref: str) -> Path:
    """The spec file for ``ref``: a path, a file named after it, or the file whose name or alias matches."""
    if _looks_like_path(ref):
        return _existing(ref, kind[:-1])
    if kind == "platforms" and ref == "host":
        return _host_probe()
    for d in search_dirs(kind):  # fast path: the file is named after the entry
        direct = d / f"{ref}.toml"
        if direct.is_file():
            return direct.resolve()
    index = _index(kind)
    for name, path in index.items():
        if name.lower() == ref.lower():
            return path
    what, hint = (("CPU", "or give a path to a platform .toml") if kind == "platforms"
                  else ("model", "or give a path to a config.json or a .gguf file"))
    raise UnknownNameError(what, ref, index, hint)


def _index(kind: str) -> dict[str, Path]:
    """Every name and alias in the catalog folders -> its file (user folders first)."""
    out: dict[str, Path] = {}
    load = load_platform_file if kind == "platforms" else load_model_file
    for f in _catalog_files(kind):
        for n in load(f.resolve()).all_names:
            out.setdefault(n, f.resolve())
    return out


# ---------------------------------------------------------------- platforms


@lru_cache(maxsize=None)
def load_platform_file(path: Path) -> Platform:
    return load_validated(Platform, path, lambda raw: parse_toml(raw, path))


def load_platform(ref: str) -> Platform:
    """A platform by catalog name, alias, or path to a TOML file."""
    return load_platform_file(find_file("platforms", ref))


def all_platforms() -> list[Platform]:
    return _unique([load_platform_file(f.resolve()) for f in _catalog_files("platforms")])


# ---------------------------------------------------------------- models


@lru_cache(maxsize=None)
def load_model_file(path: Path) -> ModelSpec:
    if path.suffix == ".gguf":  # its header only, read in place (a GGUF file can be many GB: not hashed)
        from roofline.catalog.gguf_file import load_gguf_model

        return load_gguf_model(path)
    if path.suffix == ".json":
        return load_validated(ModelSpec, path, lambda raw: _hf_fields(raw, path))
    return load_validated(ModelSpec, path, lambda raw: parse_toml(raw, path))


def _hf_fields(raw: bytes, path: Path) -> dict:
    from roofline.spec.hf_config import hf_config_to_fields

    name = path.parent.name if path.name == "config.json" else path.stem
    try:
        return hf_config_to_fields(parse_json(raw, path), name=name, source=str(path))
    except ValueError as e:
        raise SpecError(str(path), "model_type", str(e)) from None


def load_model(ref: str) -> ModelSpec:
    """A model by catalog name, alias, or path to a TOML spec or Hugging Face config.json."""
    return load_model_file(find_file("models", ref))


def all_models() -> list[ModelSpec]:
    return _unique([load_model_file(f.resolve()) for f in _catalog_files("models")])


# ---------------------------------------------------------------- calibrations


def load_calibration(ref: str):
    """A calibration by path, or by name in a ``calibration/`` folder beside the platform catalogs."""
    from roofline.spec.calibration import Calibration

    if not _looks_like_path(ref):
        for d in search_dirs("platforms"):
            candidate = d / "calibration" / f"{ref}.toml"
            if candidate.is_file():
                ref = str(candidate)
                break
        else:
            raise SpecError(ref, "", "no such calibration: give a file written by `roofline calibrate`")
    path = _existing(ref, "calibration")
    return load_validated(Calibration, path, lambda raw: parse_toml(raw, path))


# ---------------------------------------------------------------- helpers


def host_probe_path() -> Path:
    """Where `roofline probe` (all cores) leaves this machine's platform file."""
    from roofline.catalog.cache import cache_dir

    return cache_dir() / "probes" / "host.toml"


def _host_probe() -> Path:
    path = host_probe_path()
    if not path.is_file():
        raise SpecError("host", "", f"no probe of this machine yet ({path}): run `roofline probe` "
                        "(needs the validate extra: pip install 'roofline[validate]')")
    return path.resolve()



def _existing(ref: str, kind: str) -> Path:
    path = Path(ref).expanduser()
    if not path.is_file():
        raise SpecError(ref, "", f"no such {kind} file")
    return path.resolve()


def _unique(items: list) -> list:
    """First occurrence of each name wins (user folders come before the built-in catalog)."""
    seen: set[str] = set()
    out = []
    for it in items:
        if it.name not in seen:
            seen.add(it.name)
            out.append(it)
    return out
