"""Reading llama-bench's results into typed tests: ``-o json`` (an array of tests), ``-o jsonl`` (a test per
line), ``-o csv`` and the markdown table (``-o md``, what it prints by default, and what is pasted in
issues). Pure parsing: which model and CPU the tests were run on is the caller's business.

Each test is a llama-bench test: ``pp N`` (a prompt of N tokens in one batch), ``tg N`` (N tokens generated
one at a time), ``pp N+tg M`` (both, one rate), each ``@ d D`` with D tokens already in the KV cache.
``avg_ts`` is llama-bench's mean of its repetitions' tokens/s, ``stddev_ts`` their standard deviation.

The markdown table carries less than the machine formats (no file name, sizes rounded, no sample list, no
commit but the ``build:`` line under it): what is missing is None. A table is read only when it is
unambiguous: one header with a ``model``, a ``test`` and a ``t/s`` column, rows of that many cells, each
test name and rate in llama-bench's form.
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from roofline.errors import SpecError
from roofline.files.reading import read_bytes, utf8_text

Format = Literal["json", "jsonl", "csv", "md"]
FORMAT_NAMES = {"json": "-o json", "jsonl": "-o jsonl", "csv": "-o csv", "md": "-o md (its markdown table)"}


@dataclass(frozen=True)
class BenchTest:
    """One llama-bench test, as the file states it."""

    where: str
    """where in the file (``test 3``, ``line 5``)"""
    model_type: str
    """llama.cpp's description of the model: architecture, size class, file type (``llama 1B Q8_0``)"""
    n_prompt: int
    n_gen: int
    n_depth: int
    avg_ts: float
    """tokens per second, the mean of the repetitions"""
    stddev_ts: float | None
    n_threads: int | None
    samples_ts: tuple[float, ...] = ()
    model_filename: str | None = None
    model_size: float | None = None
    """bytes of the model's tensors (rounded in a markdown table)"""
    model_n_params: float | None = None
    backends: str | None = None
    n_batch: int | None = None
    n_ubatch: int | None = None
    type_k: str | None = None
    type_v: str | None = None
    flash_attn: str | None = None
    build_commit: str | None = None
    cpu_info: str | None = None
    test_time: str | None = None

    @property
    def test(self) -> str:
        """llama-bench's name of the test: ``pp512``, ``tg128``, ``pp512+tg128``, ``tg128 @ d512``"""
        parts = [f"pp{self.n_prompt}" if self.n_prompt else "", f"tg{self.n_gen}" if self.n_gen else ""]
        return "+".join(p for p in parts if p) + (f" @ d{self.n_depth}" if self.n_depth else "")

    @property
    def architecture(self) -> str:
        """``llama 1B`` of ``llama 1B Q8_0``: the model without its file type"""
        return " ".join(self.model_type.split()[:2])

    @property
    def file_type(self) -> str:
        """``Q8_0``, ``Q4_K - Medium``: llama.cpp's name of the file's (majority) weight type"""
        return " ".join(self.model_type.split()[2:])

    @property
    def repetitions(self) -> int | None:
        return len(self.samples_ts) or None


@dataclass(frozen=True)
class BenchFile:
    path: str
    format: Format
    tests: tuple[BenchTest, ...]
    build: str | None = None
    """the build line of a markdown paste (``0c1e570 (1)``)"""

    @property
    def format_name(self) -> str:
        return FORMAT_NAMES[self.format]


def read_llama_bench(path: str | Path) -> BenchFile:
    return parse_llama_bench(read_bytes(Path(path), str(path)), str(path))


def detect(text: str) -> Format | None:
    """Which of llama-bench's formats ``text`` is in (None: none of them)."""
    stripped = text.lstrip("\ufeff \t\r\n")
    if stripped.startswith("["):
        return "json"
    if stripped.startswith("{"):
        return "jsonl"
    lines = text.splitlines()
    if any(line.startswith("build_commit,") for line in lines):
        return "csv"
    if any(_MD_HEADER.match(line) for line in lines):
        return "md"
    return None


def parse_llama_bench(raw: bytes, path: str) -> BenchFile:
    text = utf8_text(raw, path, "a llama-bench result")
    fmt = detect(text)
    if fmt is None:
        raise SpecError(path, "", "not a llama-bench result: neither -o json, jsonl, csv nor the markdown table "
                        "(a line '| model | size | ... | test | t/s |')")
    if fmt == "md":
        return _markdown(text, path)
    if fmt == "json":
        from roofline.files.reading import load_json

        data = load_json(raw, path)
        if not isinstance(data, list) or not data:
            raise SpecError(path, "", "llama-bench -o json is an array of tests; this is not one (or it is empty)")
        items = [(f"test {i + 1}", d) for i, d in enumerate(data)]
    elif fmt == "jsonl":
        items = []
        for i, line in enumerate(text.splitlines()):
            if line.strip():
                try:
                    items.append((f"line {i + 1}", json.loads(line)))
                except json.JSONDecodeError as e:
                    raise SpecError(path, f"line {i + 1}", f"not a JSON object: {e}") from None
    else:
        lines = text.splitlines()
        start = next(i for i, line in enumerate(lines) if line.startswith("build_commit,"))
        rows = list(csv.DictReader(io.StringIO("\n".join(lines[start:]))))
        items = [(f"line {start + 2 + i}", row) for i, row in enumerate(rows)]
    tests = tuple(_test(path, where, d) for where, d in items)
    if not tests:
        raise SpecError(path, "", "no llama-bench test in the file")
    return BenchFile(path, fmt, tests)


# ------------------------------------------------------------------------------- machine formats


def _field(path: str, where: str, d: dict, name: str, kind: type, required: bool = False) -> Any:
    v = d.get(name)
    if v is None or v == "":
        if required:
            raise SpecError(path, f"{where}: {name}", "missing; llama-bench writes it in every test")
        return None
    try:
        if kind is bool:
            return str(v).lower() in ("1", "true")
        if kind is int:
            return int(v)
        if kind is float:
            x = float(v)
            if x != x or x in (float("inf"), float("-inf")):
                raise ValueError
            return x
        return str(v)
    except (TypeError, ValueError):
        raise SpecError(path, f"{where}: {name}", f"{v!r} is not a {kind.__name__}") from None


def _test(path: str, where: str, d: Any) -> BenchTest:
    if not isinstance(d, dict):
        raise SpecError(path, where, "a llama-bench test is a JSON object")
    f = lambda name, kind, required=False: _field(path, where, d, name, kind, required)  # noqa: E731
    samples = d.get("samples_ts") or ()
    if not isinstance(samples, (list, tuple)) or not all(isinstance(x, (int, float)) for x in samples):
        raise SpecError(path, f"{where}: samples_ts", "a list of numbers")
    flash = d.get("flash_attn")
    test = BenchTest(
        where=where, model_type=f("model_type", str, True), n_prompt=f("n_prompt", int, True),
        n_gen=f("n_gen", int, True), n_depth=f("n_depth", int) or 0, avg_ts=f("avg_ts", float, True),
        stddev_ts=f("stddev_ts", float), n_threads=f("n_threads", int), samples_ts=tuple(float(x) for x in samples),
        model_filename=f("model_filename", str), model_size=f("model_size", float),
        model_n_params=f("model_n_params", float), backends=f("backends", str), n_batch=f("n_batch", int),
        n_ubatch=f("n_ubatch", int), type_k=f("type_k", str), type_v=f("type_v", str),
        flash_attn=None if flash is None else str(flash), build_commit=f("build_commit", str),
        cpu_info=f("cpu_info", str), test_time=f("test_time", str))
    return _checked(path, test)


def _checked(path: str, t: BenchTest) -> BenchTest:
    if t.n_prompt < 0 or t.n_gen < 0 or t.n_depth < 0 or not (t.n_prompt or t.n_gen):
        raise SpecError(path, t.where, f"n_prompt {t.n_prompt}, n_gen {t.n_gen}: a test prompts or generates tokens")
    if not t.avg_ts > 0:
        raise SpecError(path, f"{t.where}: avg_ts", f"{t.avg_ts}: a rate is a positive number")
    if t.n_threads is not None and t.n_threads < 1:
        raise SpecError(path, f"{t.where}: n_threads", f"{t.n_threads}: at least 1")
    if len(t.model_type.split()) < 3:
        raise SpecError(path, f"{t.where}: model_type", f"{t.model_type!r}: llama.cpp writes the architecture, the "
                        "size class and the file type ('llama 1B Q8_0')")
    return t


# ------------------------------------------------------------------------------- the markdown table

_MD_HEADER = re.compile(r"^\s*\|\s*model\s*\|.*\|\s*test\s*\|.*t/s\s*\|\s*$")
_TEST = re.compile(r"^(?:pp(\d+))?(\+)?(?:tg(\d+))?(?: @ d(\d+))?$")
_RATE = re.compile(r"^([0-9.]+)(?:\s*±\s*([0-9.]+))?$")
_SIZE = re.compile(r"^([0-9.]+)\s*(B|KiB|MiB|GiB|TiB)$")
_PARAMS = re.compile(r"^([0-9.]+)\s*([KMBT]?)$")
_UNITS = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}
_COUNT = {"": 1, "K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _markdown(text: str, path: str) -> BenchFile:
    lines = text.splitlines()
    headers = [i for i, line in enumerate(lines) if _MD_HEADER.match(line)]
    if len({tuple(_cells(lines[i])) for i in headers}) > 1:
        raise SpecError(path, f"line {headers[1] + 1}", "a second llama-bench table with other columns: paste one "
                        "table (or give -o json)")
    columns = _cells(lines[headers[0]])
    tests = []
    for h in headers:
        i = h + 1
        if i < len(lines) and re.match(r"^\s*\|[\s:|-]+\|\s*$", lines[i]):
            i += 1
        while i < len(lines) and lines[i].strip().startswith("|"):
            cells = _cells(lines[i])
            if len(cells) != len(columns):
                raise SpecError(path, f"line {i + 1}", f"{len(cells)} cells under a header of {len(columns)}: not "
                                "llama-bench's table as it prints it")
            tests.append(_md_test(path, f"line {i + 1}", dict(zip(columns, cells))))
            i += 1
    if not tests:
        raise SpecError(path, f"line {headers[0] + 1}", "a llama-bench table header with no rows under it")
    build = next((m.group(1) for line in lines for m in [re.match(r"^build:\s*(.+?)\s*$", line)] if m), None)
    tests = [t if build is None else _with(t, build_commit=build.split()[0]) for t in tests]
    return BenchFile(path, "md", tuple(tests), build)


def _with(t: BenchTest, **changes) -> BenchTest:
    import dataclasses

    return dataclasses.replace(t, **changes)


def _md_test(path: str, where: str, row: dict[str, str]) -> BenchTest:
    m = _TEST.match(row["test"])
    if not m or not (m.group(1) or m.group(3)) or bool(m.group(2)) != bool(m.group(1) and m.group(3)):
        raise SpecError(path, f"{where}: test", f"{row['test']!r} is not a llama-bench test (pp512, tg128, "
                        "pp512+tg128, pp512 @ d512)")
    r = _RATE.match(row["t/s"])
    if not r:
        raise SpecError(path, f"{where}: t/s", f"{row['t/s']!r} is not a rate ('99.74 ± 9.68')")
    size = _SIZE.match(row.get("size", ""))
    params = _PARAMS.match(row.get("params", ""))
    threads = row.get("threads")
    try:
        n_threads = int(threads) if threads not in (None, "") else None
    except ValueError:
        raise SpecError(path, f"{where}: threads", f"{threads!r} is not a whole number") from None
    test = BenchTest(
        where=where, model_type=row["model"], n_prompt=int(m.group(1) or 0), n_gen=int(m.group(3) or 0),
        n_depth=int(m.group(4) or 0), avg_ts=float(r.group(1)), stddev_ts=float(r.group(2)) if r.group(2) else None,
        n_threads=n_threads, model_size=float(size.group(1)) * _UNITS[size.group(2)] if size else None,
        model_n_params=float(params.group(1)) * _COUNT[params.group(2)] if params else None,
        backends=row.get("backend"), n_batch=_int_or_none(row.get("n_batch")), n_ubatch=_int_or_none(row.get("n_ubatch")),
        type_k=row.get("type_k"), type_v=row.get("type_v"), flash_attn=row.get("fa"))
    return _checked(path, test)


def _int_or_none(v: str | None) -> int | None:
    try:
        return int(v) if v else None
    except ValueError:
        return None
