"""Finding spec files by name, alias or path.

Built-in catalogs are the repository's ``platforms/`` and ``models/`` folders
(installed as ``roofline/catalog/_data/``). Users add their own without touching
the package: pass a file path (``--cpu my-cpu.toml``), or put files in folders
named by ``ROOFLINE_PLATFORMS`` / ``ROOFLINE_MODELS`` (``os.pathsep``-separated),
which are searched first and win by name and alias. A model may also be a folder
holding a ``config.json``, or a Hugging Face id (``org/name``) found in the local
Hugging Face cache (:func:`find_file`).
"""

from __future__ import annotations

import os
import re
import sys
from functools import lru_cache
from pathlib import Path

from roofline.catalog.cache import load_validated
from roofline.errors import SpecError, UnknownNameError, UserError, printable
from roofline.files.reading import is_dir, is_file, parse_json, parse_toml, regular_file_problem, resolved
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
    return ref.endswith((".toml", ".json", ".gguf")) or os.sep in ref or is_file(ref)


def _catalog_files(kind: str) -> tuple[list[Path], list[tuple[Path, str]]]:
    files: list[Path] = []
    skipped: list[tuple[Path, str]] = []
    for d in search_dirs(kind):
        found, odd = _folder_files(d)
        files.extend(found)
        skipped.extend(odd)
    return files, skipped


def _folder_files(d: Path) -> tuple[list[Path], list[tuple[Path, str]]]:
    """The ``*.toml`` files of a catalog folder that are regular files (or links to one), and the other
    entries with why they are skipped (a FIFO, a device, a directory, a symlink loop): never opened, so a
    FIFO cannot hang a lookup."""
    try:
        names = sorted(d.glob("*.toml")) if d.is_dir() else []
    except OSError:
        return [], []
    files, skipped = [], []
    for f in names:
        problem = regular_file_problem(f)
        if problem is None:
            files.append(f)
        else:
            skipped.append((f, problem))
    return files, skipped


_WARNED: set[Path] = set()


def warn_skipped(path: Path, why: str) -> None:
    """One line on stderr, once per file and process: a catalog folder's entry that is not a spec file."""
    if path in _WARNED:
        return
    _WARNED.add(path)
    sys.stderr.write(printable(f"roofline: warning: skipped {path}: {why}", keep_newlines=False) + "\n")


# ---------------------------------------------------------------- lookup

#: ``org/name``: a Hugging Face repository id
_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


def find_file(kind: str, ref: str) -> Path:
    """The spec file for ``ref``, searched in this order:

    1. ``host`` (platforms): this machine's probe; a name ending in ``.toml`` or ``.json``: that file;
    2. each catalog folder in turn, user folders (``ROOFLINE_PLATFORMS`` / ``ROOFLINE_MODELS``) before
       the built-in one: a file named after ``ref``, then any file whose name or alias is ``ref``
       (aliases may hold a ``/``, e.g. ``meta-llama/Llama-3.2-1B``);
    3. a file on disk, or (models) a folder holding a ``config.json``;
    4. (models) a Hugging Face repository id ``org/name`` in the local Hugging Face cache (never downloaded).
    """
    what = "CPU" if kind == "platforms" else "model"
    if not ref.strip():
        raise UserError(f"an empty {what} name; give a catalog name (roofline {kind}) or a file path")
    if kind == "platforms" and ref == "host":
        return _host_probe()
    if ref.endswith((".toml", ".json")):
        return _existing(ref, kind[:-1])
    known: dict[str, Path] = {}
    for d in search_dirs(kind):
        direct = d / f"{ref}.toml"
        if "/" not in ref and os.sep not in ref and is_file(direct):  # fast path: the file is named after the entry
            return resolved(direct)
        index, _ = _folder_index(kind, d)
        for name, path in index.items():
            if name.lower() == ref.lower():
                return path
        for name, path in index.items():
            known.setdefault(name, path)
    path = Path(ref).expanduser()
    if is_file(path):
        return resolved(path)
    if kind == "models" and is_dir(path):
        config = resolved(path) / "config.json"  # the folder resolved, not the file: a cache snapshot's
        problem = regular_file_problem(config)    # config.json links to a blob, and the name is the folder's
        if problem is not None:
            raise SpecError(ref, "", "the folder holds no config.json; give a folder with a Hugging Face "
                                     "config.json, or the file itself" if not os.path.lexists(config)
                            else f"its config.json: {problem}")
        return config
    if kind == "models" and _REPO_ID.match(ref):
        return _hf_cached_config(ref)
    if os.path.lexists(path):  # there, but not a file or folder this reads: a FIFO, a device, a symlink loop
        raise SpecError(ref, "", regular_file_problem(path) or "not a file")
    if os.sep in ref or "/" in ref:
        raise SpecError(ref, "", f"no such {kind[:-1]} file" + (" or folder" if kind == "models" else ""))
    hint = ("or give a path to a platform .toml" if kind == "platforms"
            else "or give a path to a config.json or a .gguf file")
    env = f"ROOFLINE_{kind.upper()}"
    missing = [str(d) for d in search_dirs(kind)[:-1] if not d.is_dir()]
    if missing:  # the user's own catalog folder is not there: say so, it is likely why the name is unknown
        hint += f"; {env} names {', '.join(missing)}, which is not a folder"
    raise UnknownNameError(what, ref, known, hint)


def _folder_index(kind: str, d: Path) -> tuple[dict[str, Path], list[tuple[Path, str]]]:
    """Every name and alias in one catalog folder -> its file, and the files skipped (unreadable or
    invalid) with why: one bad file must not break the lookup of the others."""
    out: dict[str, Path] = {}
    skipped: list[tuple[Path, str]] = []
    load = load_platform_file if kind == "platforms" else load_model_file
    files, odd = _folder_files(d)
    for f, why in odd:
        warn_skipped(f, why)
    skipped.extend(odd)
    from roofline.catalog.cache import folder_index_entry, read_index, store_entry

    entry_path = folder_index_entry(kind, d, files)
    stored = read_index(entry_path) if entry_path is not None else None
    if stored is not None:  # the same files as last time: no file is read or validated again
        names, refused = stored
        return {n: Path(f) for n, f in names.items()}, skipped + [(Path(f), why) for f, why in refused]
    refused: list[tuple[Path, str]] = []
    for f in files:
        try:
            entry = load(resolved(f))
        except UserError as e:
            refused.append((f, str(e)))
            continue
        for n in entry.all_names:
            out.setdefault(n, resolved(f))
    if entry_path is not None:
        store_entry(entry_path, {"names": {n: str(f) for n, f in out.items()},
                                 "refused": [[str(f), why] for f, why in refused]})
    return out, skipped + refused


def _hf_cache_dir() -> Path:
    """The Hugging Face hub cache, as huggingface_hub finds it (read at call time, not at import)."""
    hub = os.environ.get("HF_HUB_CACHE") or os.environ.get("HUGGINGFACE_HUB_CACHE")
    if hub:
        return Path(hub).expanduser()
    home = os.environ.get("HF_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "huggingface")
    return Path(home).expanduser() / "hub"


def _hf_cached_config(repo_id: str) -> Path:
    """``config.json`` of ``repo_id`` (its ``main`` revision) from the local Hugging Face cache; never downloads."""
    cache = _hf_cache_dir()
    found = None
    if cache.is_dir():
        try:
            from huggingface_hub import try_to_load_from_cache
        except ImportError:
            raise UserError(f"model '{repo_id}' is not in the catalog; reading the Hugging Face cache needs "
                            "huggingface_hub (pip install huggingface_hub)") from None
        try:
            found = try_to_load_from_cache(repo_id, "config.json", cache_dir=cache)
        except (ValueError, OSError):  # an id the hub would refuse; an unreadable cache
            found = None
    if isinstance(found, str) and regular_file_problem(found) is None:
        return Path(found).absolute()
    raise UserError(
        f"model '{repo_id}' is not in the catalog (roofline models), not a local file or folder, and not in the "
        f"Hugging Face cache ({cache}, from HF_HUB_CACHE / HF_HOME); fetch its config.json with "
        f"`hf download {repo_id} config.json` (or huggingface-cli download), or give a path to a config.json")


# ---------------------------------------------------------------- platforms


@lru_cache(maxsize=None)
def load_platform_file(path: Path) -> Platform:
    return load_validated(Platform, path, lambda raw: parse_toml(raw, path))


def load_platform(ref: str) -> Platform:
    """A platform by catalog name, alias, or path to a TOML file."""
    return load_platform_file(find_file("platforms", ref))


def all_platforms() -> list[Platform]:
    return catalog_listing("platforms")[0]


def catalog_listing(kind: str) -> tuple[list, list[tuple[Path, str]]]:
    """Every entry of the catalog folders (the first of each name: user folders win), and the files
    skipped because they could not be read or validated, with why."""
    load = load_platform_file if kind == "platforms" else load_model_file
    items = []
    files, skipped = _catalog_files(kind)
    for f in files:
        try:
            items.append(load(resolved(f)))
        except UserError as e:
            skipped.append((f, str(e)))
    return _unique(items), skipped


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
    from roofline.spec.hf_config import ConfigError, hf_config_to_fields

    name = path.parent.name if path.name == "config.json" else path.stem
    parts = path.parts
    if len(parts) >= 4 and parts[-3] == "snapshots" and parts[-4].startswith("models--"):
        name = parts[-4].removeprefix("models--").replace("--", "/")  # a Hugging Face cache snapshot
    try:
        return hf_config_to_fields(parse_json(raw, path), name=name, source=str(path))
    except ConfigError as e:
        raise SpecError(str(path), e.key, e.reason) from None


def load_model(ref: str) -> ModelSpec:
    """A model by catalog name, alias, or path to a TOML spec or Hugging Face config.json."""
    return load_model_file(find_file("models", ref))


def all_models() -> list[ModelSpec]:
    return catalog_listing("models")[0]


# ---------------------------------------------------------------- calibrations


def load_calibration(ref: str):
    """A calibration by path, or by name in a ``calibration/`` folder beside the platform catalogs."""
    from roofline.spec.calibration import Calibration

    if not _looks_like_path(ref):
        for d in search_dirs("platforms"):
            candidate = d / "calibration" / f"{ref}.toml"
            if regular_file_problem(candidate) is None:
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
    return resolved(path)


def _existing(ref: str, kind: str) -> Path:
    path = Path(ref).expanduser()
    problem = regular_file_problem(path)
    if problem is not None:
        raise SpecError(ref, "", f"no such {kind} file" if not os.path.lexists(path) else problem)
    return resolved(path)


def _unique(items: list) -> list:
    """First occurrence of each name wins (user folders come before the built-in catalog)."""
    seen: set[str] = set()
    out = []
    for it in items:
        if it.name not in seen:
            seen.add(it.name)
            out.append(it)
    return out


# ---------------------------------------------------------------- a command's input files


def input_files(args, kinds: dict[str, str]) -> list[tuple[str, str, os.stat_result]]:
    """The files a command's arguments name and that exist: ``(argument, the name as given, the file's
    status)``, catalog names looked up as the command will (``--model bert-large``: its TOML). Never raises:
    a name that resolves to nothing names no file (the command says why when it runs)."""
    out = []
    for name, kind in kinds.items():
        value = getattr(args, name, None)
        values = value if isinstance(value, list) else [value]
        if name == "records" and value == []:
            values = [str(builtin_dir("records"))]
        for v in values:
            if not isinstance(v, str) or not v:
                continue
            refs = [r.strip() for r in v.split(",") if r.strip()] if kind in ("models", "platforms") else [v]
            for ref in refs:
                for p in _input_paths(kind, ref):
                    try:
                        out.append((name, ref, os.stat(p)))
                    except (OSError, ValueError):
                        continue
    return out


def _input_paths(kind: str, ref: str) -> list[Path]:
    path = Path(ref).expanduser()
    try:
        if path.is_dir():
            if kind == "models":
                return [path / "config.json"]
            return sorted(path.rglob("*.toml")) if kind == "records" else []  # as load_records reads
        if regular_file_problem(path) is None:
            return [path]
        if kind in ("models", "platforms"):
            return [find_file(kind, ref)]
        if kind == "calibration":
            return [d / "calibration" / f"{ref}.toml" for d in search_dirs("platforms")]
        if kind == "stack" and ref.lower() != "none":
            from roofline.catalog.stacks import stack_path

            return [stack_path(ref)]
    except (UserError, OSError, ValueError):
        pass
    return []
