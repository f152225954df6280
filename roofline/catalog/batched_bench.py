"""Reading ``llama-batched-bench`` results into typed rows: its markdown table (what it prints, and what is pasted
in issues) and ``--output-format jsonl``. Pure parsing: the model, its type and the CPU are the caller's business.

A row is one ``(PP, TG, B)`` test: ``B`` sequences each prefilled with ``PP`` tokens (one shared prompt with
``-pps``), then ``TG`` tokens generated for each, all ``B`` in every step. ``S_PP = B PP / T_PP`` (``PP / T_PP``
when shared) and ``S_TG = B TG / T_TG`` are tokens per second of the whole process.

The table's header line (``main: n_kv_max = 8192, n_batch = 2048, n_ubatch = 512, flash_attn = -1,
is_pp_shared = 0, n_gpu_layers = -1, n_threads = 2, n_threads_batch = 2``) is read where the paste holds it.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from roofline.errors import SpecError
from roofline.files.reading import read_bytes, utf8_text

Format = Literal["jsonl", "md"]

#: the columns of the markdown table, in llama-batched-bench's order, and the jsonl keys they hold
COLUMNS = {"PP": "pp", "TG": "tg", "B": "pl", "N_KV": "n_kv", "T_PP s": "t_pp", "S_PP t/s": "speed_pp",
           "T_TG s": "t_tg", "S_TG t/s": "speed_tg", "T s": "t", "S t/s": "speed"}
#: the settings its header line and each jsonl line state
SETTINGS = ("n_kv_max", "n_batch", "n_ubatch", "flash_attn", "is_pp_shared", "n_gpu_layers", "n_threads",
            "n_threads_batch")
#: the most tests a file may hold: each is priced; a real run's -npp/-ntg/-npl grid writes tens to hundreds
MAX_ROWS = 2000
_HEADER = re.compile(r"^\s*\|\s*PP\s*\|\s*TG\s*\|\s*B\s*\|\s*N_KV\s*\|")
_SETTINGS = re.compile(r"(\w+)\s*=\s*(-?\d{1,12})\b")


@dataclass(frozen=True)
class BatchedRow:
    """One llama-batched-bench test, as the file states it."""

    where: str
    pp: int
    tg: int
    b: int
    n_kv: int
    t_pp: float
    s_pp: float
    t_tg: float
    s_tg: float

    @property
    def decode_context(self) -> float:
        """the mean KV depth of the timed generation steps: ``PP + TG / 2`` (each sequence's own prompt or the
        shared one, then its own tokens)"""
        return self.pp + self.tg / 2


@dataclass(frozen=True)
class BatchedFile:
    path: str
    format: Format
    rows: tuple[BatchedRow, ...]
    settings: dict[str, int]
    """what the header line (or the jsonl lines, when all agree) states: :data:`SETTINGS`"""

    @property
    def shared_prompt(self) -> bool:
        return bool(self.settings.get("is_pp_shared", 0))

    @property
    def threads(self) -> int | None:
        return self.settings.get("n_threads")


def read_batched_bench(path: str | Path) -> BatchedFile:
    return parse_batched_bench(read_bytes(Path(path), str(path)), str(path))


def detect(text: str) -> Format | None:
    """Whether ``text`` is a llama-batched-bench result, and in which form."""
    for line in text.splitlines():
        if _HEADER.match(line):
            return "md"
        s = line.strip()
        if s:
            if s.startswith("{") and '"speed_tg"' in s and '"pl"' in s:
                return "jsonl"
    return None


def parse_batched_bench(raw: bytes, path: str) -> BatchedFile:
    text = utf8_text(raw, path, "a llama-batched-bench result")
    fmt = detect(text)
    if fmt is None:
        raise SpecError(path, "", "not a llama-batched-bench result: neither its markdown table (a line "
                        "'|    PP |     TG |    B |   N_KV | ...') nor --output-format jsonl")
    bench = _markdown(text, path) if fmt == "md" else _jsonl(text, path)
    if len(bench.rows) > MAX_ROWS:
        raise SpecError(path, "", f"{len(bench.rows):,} tests, more than the {MAX_ROWS:,} a file may hold here (each "
                        "is priced): split the file")
    return bench


def _number(path: str, where: str, name: str, v: object, whole: bool, low: float = 0.0) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        raise SpecError(path, f"{where}: {name}", f"{_shown(v)} is not a number")
    try:
        x = float(v)
    except (ValueError, OverflowError):
        raise SpecError(path, f"{where}: {name}", f"{_shown(v)} is not a number") from None
    if not math.isfinite(x) or x < low or x > 1e12 or (whole and not x.is_integer()):
        raise SpecError(path, f"{where}: {name}",
                        f"{_shown(v)}: a {'whole ' if whole else ''}number from {low:g} to 1e12")
    return x


def _shown(v: object) -> str:
    text = repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


def _row(path: str, where: str, d: dict) -> BatchedRow:
    values = {}
    for column, key in COLUMNS.items():
        if key in ("t", "speed"):
            continue
        if key not in d:
            raise SpecError(path, f"{where}: {column}", "missing; llama-batched-bench writes it in every test")
        values[key] = _number(path, where, column, d[key], key in ("pp", "tg", "pl", "n_kv"))
    row = BatchedRow(where, int(values["pp"]), int(values["tg"]), int(values["pl"]), int(values["n_kv"]),
                     values["t_pp"], values["speed_pp"], values["t_tg"], values["speed_tg"])
    if row.b < 1 or not (row.pp or row.tg):
        raise SpecError(path, where, f"B {row.b}, PP {row.pp}, TG {row.tg}: a test runs one sequence or more and "
                        "prompts or generates tokens")
    if row.tg and not row.s_tg > 0:
        raise SpecError(path, f"{where}: S_TG t/s", f"{row.s_tg}: a rate is a positive number")
    if row.pp and not row.s_pp > 0:
        raise SpecError(path, f"{where}: S_PP t/s", f"{row.s_pp}: a rate is a positive number")
    return row


def _jsonl(text: str, path: str) -> BatchedFile:
    rows, settings = [], []
    for i, line in enumerate(text.splitlines()):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
        except RecursionError:
            raise SpecError(path, f"line {i + 1}", "not usable JSON: nested deeper than any real file") from None
        except ValueError as e:  # not JSON, or an integer of thousands of digits
            raise SpecError(path, f"line {i + 1}", f"not a JSON object: {str(e)[:100]}") from None
        if not isinstance(d, dict):
            raise SpecError(path, f"line {i + 1}", "a llama-batched-bench test is a JSON object")
        rows.append(_row(path, f"line {i + 1}", d))
        # -1 is a setting's 'auto' (flash_attn) or 'all' (n_gpu_layers)
        settings.append({k: int(_number(path, f"line {i + 1}", k, d[k], True, -1)) for k in SETTINGS if k in d})
    agreed = {k: v for k, v in settings[0].items() if all(s.get(k) == v for s in settings)} if settings else {}
    return BatchedFile(path, "jsonl", tuple(rows), agreed)


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _markdown(text: str, path: str) -> BatchedFile:
    lines = text.splitlines()
    headers = [i for i, line in enumerate(lines) if _HEADER.match(line)]
    if len(headers) > 1:
        raise SpecError(path, f"line {headers[1] + 1}", "a second llama-batched-bench table: paste one table (or give "
                        "--output-format jsonl)")
    h = headers[0]
    columns = _cells(lines[h])
    unknown = [c for c in columns if c not in COLUMNS]
    if unknown or len(set(columns)) < len(columns):
        raise SpecError(path, f"line {h + 1}", f"columns {columns}: not llama-batched-bench's table as it prints it "
                        f"({' | '.join(COLUMNS)})")
    settings: dict[str, int] = {}
    for line in lines[:h]:
        if "n_kv_max" in line:
            settings = {k: int(v) for k, v in _SETTINGS.findall(line) if k in SETTINGS}
    i = h + 1
    if i < len(lines) and re.match(r"^\s*\|[\s:|-]+\|\s*$", lines[i]):
        i += 1
    rows = []
    while i < len(lines) and lines[i].strip().startswith("|"):
        cells = _cells(lines[i])
        if len(cells) != len(columns):
            raise SpecError(path, f"line {i + 1}", f"{len(cells)} cells under a header of {len(columns)}: not "
                            "llama-batched-bench's table as it prints it")
        rows.append(_row(path, f"line {i + 1}", {COLUMNS[c]: v for c, v in zip(columns, cells)}))
        i += 1
    if not rows:
        raise SpecError(path, f"line {h + 1}", "a llama-batched-bench table header with no rows under it")
    return BatchedFile(path, "md", tuple(rows), settings)
