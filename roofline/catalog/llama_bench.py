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
from roofline.spec.record import is_iso_date

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


#: the most tests a file may hold: each is priced (a check of 100,000 rows ran past a minute; 2,000 take a few
#: seconds); a real run's parameter sweep writes tens to hundreds
MAX_TESTS = 2000


def parse_llama_bench(raw: bytes, path: str) -> BenchFile:
    bench = _parse(raw, path)
    if len(bench.tests) > MAX_TESTS:
        raise SpecError(path, "", f"{len(bench.tests):,} tests, more than the {MAX_TESTS:,} a file may hold here "
                        "(each is priced): split the file")
    return bench


def _parse(raw: bytes, path: str) -> BenchFile:
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
                except RecursionError:
                    raise SpecError(path, f"line {i + 1}", "not usable JSON: nested deeper than any real "
                                    "file") from None
                except ValueError as e:  # an integer of thousands of digits
                    raise SpecError(path, f"line {i + 1}", f"not usable JSON: {str(e)[:100]}") from None
    else:
        lines = text.splitlines()
        start = next(i for i, line in enumerate(lines) if line.startswith("build_commit,"))
        try:
            rows = list(csv.DictReader(io.StringIO("\n".join(lines[start:]))))
        except csv.Error as e:  # a field over the csv module's limit (131,072 characters), a NUL byte
            raise SpecError(path, "", f"not llama-bench's -o csv: {e}") from None
        header = lines[start].split(",")
        twice = sorted({c for c in header if header.count(c) > 1})
        if twice:
            raise SpecError(path, f"line {start + 1}", f"the column {twice[0]!r} is there twice: not llama-bench's "
                            "-o csv as it writes it")
        items = [(f"line {start + 2 + i}", row) for i, row in enumerate(rows)]
    tests = tuple(_test(path, where, d, typed=fmt != "csv") for where, d in items)
    if not tests:
        raise SpecError(path, "", "no llama-bench test in the file")
    return BenchFile(path, fmt, tests)


# ------------------------------------------------------------------------------- machine formats


#: the most tokens a test may name (prompt, generated, depth, a batch): ``--seq-len``'s own limit, 2^27
MAX_TOKENS = 1 << 27
#: the highest rate a file may state: no CPU runs a model at a billion tokens per second
MAX_RATE = 1e9
_LIMITS = {"n_threads": (1, 1 << 20), "avg_ts": (0, MAX_RATE), "stddev_ts": (0, MAX_RATE),
           "model_size": (0, 1e15), "model_n_params": (0, 1e15)}


def _field(path: str, where: str, d: dict, name: str, kind: type, required: bool = False,
           typed: bool = False) -> Any:
    """``d[name]`` as ``kind``, in its range (token counts up to :data:`MAX_TOKENS`); in a JSON file
    (``typed``) the value must already have the JSON type llama-bench writes: ``n_prompt: true`` or
    ``"512"`` is refused, where a CSV's text is converted."""
    v = d.get(name)
    if v is None or v == "":
        if required:
            raise SpecError(path, f"{where}: {name}", "missing; llama-bench writes it in every test")
        return None
    field = f"{where}: {name}"
    shown = repr(v) if len(repr(v)) <= 40 else repr(v)[:37] + "..."
    if kind is str:
        if typed and not isinstance(v, str):
            raise SpecError(path, field, f"{shown} is not a string")
        return str(v)
    if typed and (isinstance(v, bool) or not isinstance(v, (int, float) if kind is float else int)):
        raise SpecError(path, field, f"{shown} is not {'a number' if kind is float else 'a whole number'}")
    if not typed and not isinstance(v, str):
        raise SpecError(path, field, f"{shown} is not a number")
    try:
        x = int(v) if kind is int else float(v)
    except (TypeError, ValueError, OverflowError):
        raise SpecError(path, field, f"{shown} is not {'a whole number' if kind is int else 'a number'}") from None
    low, high = _LIMITS.get(name, (0, MAX_TOKENS))
    if x != x or not low <= x <= high:
        raise SpecError(path, field, f"{shown}: a number from {low:,} to {high:,}")
    return x


def _test(path: str, where: str, d: Any, typed: bool = True) -> BenchTest:
    if not isinstance(d, dict):
        raise SpecError(path, where, "a llama-bench test is a JSON object")
    f = lambda name, kind, required=False: _field(path, where, d, name, kind, required, typed)  # noqa: E731
    samples = d.get("samples_ts") or ()
    if isinstance(samples, str) and not typed:  # the CSV writes no samples; a JSON test a list
        samples = ()
    if not isinstance(samples, (list, tuple)) or not all(
            type(x) in (int, float) and 0 <= x <= MAX_RATE for x in samples):
        raise SpecError(path, f"{where}: samples_ts", f"a list of rates from 0 to {MAX_RATE:g}")
    flash = d.get("flash_attn")
    test = BenchTest(
        where=where, model_type=f("model_type", str, True), n_prompt=f("n_prompt", int, True),
        n_gen=f("n_gen", int, True), n_depth=f("n_depth", int) or 0, avg_ts=f("avg_ts", float, True),
        stddev_ts=f("stddev_ts", float), n_threads=f("n_threads", int), samples_ts=tuple(float(x) for x in samples),
        model_filename=f("model_filename", str), model_size=f("model_size", float),
        model_n_params=f("model_n_params", float), backends=f("backends", str), n_batch=f("n_batch", int),
        n_ubatch=f("n_ubatch", int), type_k=f("type_k", str), type_v=f("type_v", str),
        flash_attn=None if flash is None else str(flash)[:40], build_commit=f("build_commit", str),
        cpu_info=f("cpu_info", str), test_time=f("test_time", str))
    if test.test_time is not None and not is_iso_date(test.test_time[:10]):
        raise SpecError(path, f"{where}: test_time", f"{test.test_time[:40]!r}: llama-bench writes an ISO 8601 time "
                        "(2026-12-01T23:28:59Z); a record's date is YYYY-MM-DD")
    return _checked(path, test)


def _checked(path: str, t: BenchTest) -> BenchTest:
    for name in ("n_prompt", "n_gen", "n_depth", "n_batch", "n_ubatch"):
        v = getattr(t, name)
        if v is not None and not 0 <= v <= MAX_TOKENS:
            raise SpecError(path, f"{t.where}: {name}", f"{v if v < 1e12 else f'{v:.3g}'}: a number of tokens from 0 "
                            f"to {MAX_TOKENS:,}")
    if not (t.avg_ts == t.avg_ts and t.avg_ts <= MAX_RATE):
        raise SpecError(path, f"{t.where}: avg_ts", f"{t.avg_ts:g}: a rate up to {MAX_RATE:g} tokens/s")
    if t.n_threads is not None and t.n_threads > 1 << 20:
        raise SpecError(path, f"{t.where}: n_threads", f"{t.n_threads:.3g}: at most {1 << 20:,}")
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
_TEST = re.compile(r"^(?:pp(\d{1,12}))?(\+)?(?:tg(\d{1,12}))?(?: @ d(\d{1,12}))?$")
_DECIMAL = r"\d{1,15}(?:\.\d{1,15})?"
_RATE = re.compile(rf"^({_DECIMAL})(?:\s*±\s*({_DECIMAL}))?$")
_SIZE = re.compile(rf"^({_DECIMAL})\s*(B|KiB|MiB|GiB|TiB)$")
_PARAMS = re.compile(rf"^({_DECIMAL})\s*([KMBT]?)$")
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
    for name in ("model", "test", "t/s"):
        if columns.count(name) != 1:
            raise SpecError(path, f"line {headers[0] + 1}", f"{columns.count(name)} columns named {name!r}: "
                            "llama-bench's table has one model, one test and one t/s column")
    twice = sorted({c for c in columns if columns.count(c) > 1})
    if twice:
        raise SpecError(path, f"line {headers[0] + 1}", f"the column {twice[0]!r} is there twice: not llama-bench's "
                        "table as it prints it")
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
    build = build if build and build.split() else None  # a line of 'build:' and blanks only names no build
    tests = [t if build is None else _with(t, build_commit=build.split()[0]) for t in tests]
    return BenchFile(path, "md", tuple(tests), build)


def _with(t: BenchTest, **changes) -> BenchTest:
    import dataclasses

    return dataclasses.replace(t, **changes)


def _md_test(path: str, where: str, row: dict[str, str]) -> BenchTest:
    m = _TEST.match(row["test"])
    if not m or not (m.group(1) or m.group(3)) or bool(m.group(2)) != bool(m.group(1) and m.group(3)):
        raise SpecError(path, f"{where}: test", f"{row['test'][:40]!r} is not a llama-bench test (pp512, tg128, "
                        "pp512+tg128, pp512 @ d512)")
    r = _RATE.match(row["t/s"])
    if not r:
        raise SpecError(path, f"{where}: t/s", f"{row['t/s'][:40]!r} is not a rate ('99.74 ± 9.68')")
    size = _SIZE.match(row.get("size", ""))
    params = _PARAMS.match(row.get("params", ""))
    threads = row.get("threads")
    if threads in (None, ""):
        n_threads = None
    elif threads.isdecimal() and len(threads) <= 12:
        n_threads = int(threads)
    else:
        raise SpecError(path, f"{where}: threads", f"{threads[:40]!r} is not a whole number")
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
        return int(v) if v and len(v) <= 12 else None
    except ValueError:
        return None


#: llama.cpp's flash attention words (llama-bench's ``flash_attn`` column, llama-batched-bench's header, a validate
#: report's ``settings.flash_attn``): on, off; anything else (``-1``, ``auto``) says the build's default
FLASH_ON = frozenset({"1", "true", "on", "enabled"})
FLASH_OFF = frozenset({"0", "false", "off", "disabled"})


def flash_attention(values) -> tuple[bool | None, set[str]]:
    """llama.cpp's flash attention as ``values`` state it (one file's, every test's): on, off, or None where they say
    neither or disagree; and the words said."""
    said = {str(v).strip().lower() for v in values if v is not None and str(v).strip()}
    if said and said <= FLASH_ON:
        return True, said
    if said and said <= FLASH_OFF:
        return False, said
    return None, said
