"""Tables of numpy columns written as CSV, JSON lines or Parquet, a whole column at a time.

A table streams as :class:`Block` s (runs of rows, every column an array of the block's length, a
:class:`Words` column of codes into its words, or a :class:`Constant`), described once by its
:class:`Schema` (each column's name and kind). Blocks are gathered into runs of at least
:data:`WRITE_ROWS` rows, and written on a second thread while the next are made (:func:`pipelined`: the
evaluation and the text overlap, at most two runs waiting between them). Text is made column by column
in numpy, never row by row:

- a float is written as Python's ``repr`` writes it (the shortest of 15, 16 or 17 significant digits
  that reads back as the same float; positional from 1e-4 to 1e16, else ``1.5e-05``), so every value
  reads back exactly; its digits come from the float times a power of ten in long double (64-bit
  mantissa) arithmetic, and the few values whose digits that arithmetic cannot decide (and those next
  to a power of two or below the smallest normal float) take ``repr`` itself; a run of one value is
  formatted once;
- an integer as its decimal digits, a bool as ``True``/``False`` (CSV) or ``true``/``false`` (JSON), a
  missing value (a :class:`Constant` of None) as an empty CSV field or ``null``;
- each field is laid out in a byte matrix whose NUL bytes are padding (anywhere in a row), the fields
  side by side with their separators, and the NULs dropped in one pass.

Parquet takes pyarrow (the ``parquet`` extra), imported only when a Parquet file is written; its arrays
are built from the numpy buffers, text as dictionaries. Files are written through
:func:`roofline.files.writing.replacing`: whole or not at all.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import IO, Any, Literal

import numpy as np

from roofline.errors import UserError

Kind = Literal["text", "int", "float", "bool"]
FORMATS = ("csv", "jsonl", "parquet")
SUFFIXES = {".csv": "csv", ".jsonl": "jsonl", ".json": "jsonl", ".parquet": "parquet"}


@dataclass(frozen=True)
class Words:
    """A text column as codes into its words (dictionary-encoded)."""

    codes: np.ndarray
    words: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.codes)

    def to_numpy(self) -> np.ndarray:
        return np.asarray(self.words, dtype=object)[self.codes]


@dataclass(frozen=True)
class Constant:
    """One value for every row of a block (None: missing)."""

    value: Any


Column = np.ndarray | Words | Constant


@dataclass(frozen=True)
class Block:
    """A run of rows."""

    length: int
    columns: dict[str, Column]


@dataclass(frozen=True)
class Schema:
    """Each column's name and kind, in order."""

    columns: tuple[tuple[str, Kind], ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(n for n, _ in self.columns)


#: blocks are gathered into runs of at least this many rows before they are written (fewer, larger calls)
WRITE_ROWS = 1 << 16


def merge(schema: Schema, blocks: Sequence[Block]) -> Block:
    """Consecutive blocks as one: a column constant across them stays a constant, text becomes
    :class:`Words`, the rest arrays."""
    if len(blocks) == 1:
        return blocks[0]
    n = sum(b.length for b in blocks)
    out: dict[str, Column] = {}
    for name, kind in schema.columns:
        cols = [b.columns[name] for b in blocks]
        if all(isinstance(c, Constant) for c in cols) and len({repr(c.value) for c in cols}) == 1:
            out[name] = cols[0]
        elif kind == "text":
            words: dict[str, int] = {}
            codes = []
            for c, b in zip(cols, blocks):
                if isinstance(c, Constant):
                    codes.append(np.full(b.length, words.setdefault(str(c.value), len(words)), np.int64))
                elif isinstance(c, Words):
                    remap = np.array([words.setdefault(w, len(words)) for w in c.words], np.int64)
                    codes.append(remap[c.codes])
                else:
                    codes.append(np.array([words.setdefault(str(v), len(words)) for v in c.tolist()], np.int64))
            out[name] = Words(np.concatenate(codes), tuple(words))
        elif any(isinstance(c, Constant) and c.value is None for c in cols):
            raise ValueError(f"{name}: a missing value beside present ones cannot be merged")
        else:
            out[name] = np.concatenate([column_values(c, b.length, kind) for c, b in zip(cols, blocks)])
    return Block(n, out)


def coalesced(schema: Schema, blocks: Iterable[Block], rows: int | None = None) -> Iterator[Block]:
    """``blocks`` merged into runs of at least ``rows`` rows (default :data:`WRITE_ROWS`; a run ends early
    where a column goes from missing to present)."""
    rows = WRITE_ROWS if rows is None else rows
    run: list[Block] = []
    held = 0
    missing: tuple[bool, ...] | None = None
    for block in blocks:
        if not block.length:
            continue
        gaps = tuple(isinstance(c, Constant) and c.value is None for c in block.columns.values())
        if run and gaps != missing:
            yield merge(schema, run)
            run, held = [], 0
        run.append(block)
        missing = gaps
        held += block.length
        if held >= rows:
            yield merge(schema, run)
            run, held = [], 0
    if run:
        yield merge(schema, run)


def column_values(col: Column, length: int, kind: Kind) -> np.ndarray:
    """A column as a plain numpy array (text as objects, a missing int or float as NaN)."""
    if isinstance(col, Words):
        return col.to_numpy()
    if isinstance(col, Constant):
        if col.value is None:
            return np.full(length, np.nan)
        dtype = {"text": object, "int": np.int64, "float": np.float64, "bool": bool}[kind]
        return np.full(length, col.value, dtype=dtype)
    return col


# ------------------------------------------------------------------------------- digits

_LD = np.longdouble
#: long double carries a 64-bit (x87) or wider mantissa: the float digits below are decided in it
EXACT_LONG_DOUBLE = np.finfo(_LD).nmant >= 63
_P10_OFFSET = 420
_P10: np.ndarray | None = None
_PAIRS4 = np.frombuffer(b"".join(b"%04d" % i for i in range(10000)), dtype="<u4")
#: 0 to 9,999 as text, left-aligned and NUL-padded to 4 bytes: the small whole numbers a sweep is made of
_SMALL4 = np.frombuffer(b"".join((b"%d" % i).ljust(4, b"\0") for i in range(10000)), dtype="<u4")
#: a digit count's decision is sure when the candidate lies this far inside the rounding interval
_SURE, _MAYBE = 1 - 2.0**-7, 1 + 2.0**-7
#: below the smallest normal float fewer digits suffice than 15: repr writes those
_TINY = np.finfo(np.float64).tiny
WIDTH = 24
"""the longest float text: a sign, 17 digits, a point and ``e-308``, or ``-0.0000`` and 17 digits"""


def _p10() -> np.ndarray:
    global _P10
    if _P10 is None:
        _P10 = np.array([_LD(10) ** k for k in range(-_P10_OFFSET, _P10_OFFSET + 1)], dtype=_LD)
    return _P10


def _digit_matrix(m: np.ndarray) -> np.ndarray:
    """The 17 decimal digits (ASCII, leading zeros kept) of each whole number ``0 <= m < 1e17``."""
    n = len(m)
    buf = np.empty((n, 5), "<u4")
    top, rest = np.divmod(m, 10**16)
    hi, lo = np.divmod(rest, 10**8)
    hi, lo = hi.astype(np.int32), lo.astype(np.int32)
    a, b = np.divmod(hi, 10000)
    c, d = np.divmod(lo, 10000)
    buf[:, 0] = (top.astype(np.uint32) + 48) << 24
    buf[:, 1], buf[:, 2], buf[:, 3], buf[:, 4] = _PAIRS4[a], _PAIRS4[b], _PAIRS4[c], _PAIRS4[d]
    return buf.view(np.uint8)[:, 3:]


def _scaled(a_ld: np.ndarray, k: np.ndarray) -> np.ndarray:
    """``a x 10^k`` in long double: one rounding where ``10^|k|`` is exact (``|k| <= 27``)."""
    p10 = _p10()
    y = a_ld * p10[_P10_OFFSET + np.maximum(k, 0)]
    down = k < 0
    if down.any():
        y[down] = a_ld[down] / p10[_P10_OFFSET - k[down]]
    return y


with np.errstate(over="ignore"):
    _P10F = 10.0 ** np.arange(-_P10_OFFSET, _P10_OFFSET + 1, dtype=np.float64)


def _pow10(x: np.ndarray, k: np.ndarray) -> np.ndarray:
    """``x x 10^k`` in float64, in two steps so that neither overflows."""
    half = k // 2
    return x * _P10F[_P10_OFFSET + half] * _P10F[_P10_OFFSET + k - half]


def _candidate(a_ld: np.ndarray, e: np.ndarray, d: int, below: np.ndarray, above: np.ndarray):
    """``d`` significant digits of each ``a``: ``(m, sure, maybe)``, m the digits as a whole number, ``sure``
    where ``m x 10^(e-d+1)`` is the nearest such number and reads back as ``a`` beyond doubt, ``maybe`` where
    it might."""
    k = d - 1 - e
    y = _scaled(a_ld, k)
    m = np.rint(y)
    signed = (m - y).astype(np.float64)  # m - a x 10^k, up to the error of y
    off = np.abs(signed)
    # y is within y 2^-64 of a x 10^k (2^-63 where 10^|k| is not exact): nearer a half-integer than twice
    # that, the rounding could go either way
    tie = 0.5 - off < m.astype(np.float64) * np.where(np.abs(k) <= 27, 2.0**-63, 2.0**-62)
    scaled_tol = _pow10(np.where(signed > 0, above, below), k)
    return m.astype(np.int64), (off < scaled_tol * _SURE) & ~tie, (off < scaled_tol * _MAYBE) | tie


def _shortest(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For positive normal floats: ``(digits, e, undecided)``: the shortest digits that read back as each
    value, as a 17-digit whole number (trailing zeros added), and its decimal exponent; ``undecided``:
    where long double arithmetic could not tell (those take ``repr``).

    16 digits are tried first: where they read back, 15 may too (and then they are 16 with a trailing zero,
    or none at all); where they do not, 15 cannot, and 17 always do (exactly rounded)."""
    a_ld = a.astype(_LD)
    e = np.floor(np.log10(a)).astype(np.int64)
    y = _scaled(a_ld, 16 - e)
    e += (y >= 1e17).astype(np.int64) - (y < 1e16).astype(np.int64)  # log10 a hair off at a power of ten
    lower = a - np.nextafter(a, 0.0)
    with np.errstate(over="ignore"):
        upper = np.nextafter(a, np.inf) - a
    upper[~np.isfinite(upper)] = lower[~np.isfinite(upper)]  # beyond the largest float: half an ulp to infinity
    below, above = lower / 2, upper / 2  # a candidate within this of a (below it, above it) reads back as a
    m16, sure16, maybe16 = _candidate(a_ld, e, 16, below, above)
    digits = m16 * 10
    undecided = maybe16 & ~sure16
    short = np.flatnonzero(sure16)
    if len(short):
        m15, sure15, maybe15 = _candidate(a_ld[short], e[short], 15, below[short], above[short])
        digits[short[sure15]] = m15[sure15] * 100
        undecided[short[maybe15 & ~sure15]] = True
    long = np.flatnonzero(~maybe16)
    if len(long):
        m17, sure17, _ = _candidate(a_ld[long], e[long], 17, below[long], above[long])
        digits[long] = m17
        undecided[long[~sure17]] = True
    carried = digits >= 10**17  # rounded up to the next power of ten (9.99...e4 -> 1.0e5)
    digits[carried] //= 10
    e[carried] += 1
    return digits, e, undecided


# ------------------------------------------------------------------------------- layout


def _layout(rows: np.ndarray, out: np.ndarray, digits: np.ndarray, template: bytes, first: int = 0) -> None:
    """Fill ``out[rows]`` with ``template``, its ``\x01`` places taking the rows' digits from column ``first``
    on, in order (each run of places a slice)."""
    t = np.frombuffer(template, np.uint8)
    block = np.empty((len(rows), len(t)), np.uint8)
    block[:] = t
    places = np.flatnonzero(t == 1)
    if len(places):
        sub = digits[rows]
        breaks = np.flatnonzero(np.diff(places) != 1) + 1
        src = first
        for run in np.split(places, breaks):
            block[:, run[0]:run[-1] + 1] = sub[:, src:src + len(run)]
            src += len(run)
    out[rows, :len(t)] = block


def _float_template(negative: bool, e: int, nd: int) -> bytes:
    """Python's repr layout of digits ``d0 d1 ... d(nd-1)`` x 10^e (``\x01``: a digit's place)."""
    sign = b"-" if negative else b""
    if e < -4 or e >= 16:
        body = b"\x01" + (b"." + b"\x01" * (nd - 1) if nd > 1 else b"")
        text = body + b"e" + (b"-" if e < 0 else b"+") + b"%02d" % abs(e)
    elif e < 0:
        text = b"0." + b"0" * (-e - 1) + b"\x01" * nd
    else:
        whole = min(nd, e + 1)
        text = b"\x01" * whole + b"0" * (e + 1 - whole) + b"." + (b"\x01" * (nd - whole) if nd > whole else b"0")
    return sign + text


def _groups(key: np.ndarray) -> Iterator[tuple[int, np.ndarray]]:
    """``(key, rows)`` for each distinct key (a few, usually)."""
    counts = np.bincount(key)
    present = np.flatnonzero(counts)
    if len(present) <= 48:
        for k in present:
            yield int(k), np.flatnonzero(key == k)
        return
    order = np.argsort(key, kind="stable")
    bounds = np.flatnonzero(np.diff(key[order])) + 1
    for rows in np.split(order, bounds):
        yield int(key[rows[0]]), rows


def _per_run(x: np.ndarray, text) -> np.ndarray | None:
    """``text`` of a column that holds long runs of one value (a constant per plane, a compute roof), formatted
    once per run and repeated; None where the values mostly change."""
    if len(x) < 64:
        return None
    change = np.flatnonzero(x[1:] != x[:-1]) + 1
    if len(change) > len(x) // 8:
        return None
    starts = np.concatenate([[0], change])
    return np.repeat(text(x[starts]), np.diff(np.concatenate([starts, [len(x)]])), axis=0)


def float_text(x: np.ndarray) -> np.ndarray:
    """Each float as ``repr`` writes it, one row of bytes per value, NUL bytes (anywhere in it) padding."""
    x = np.asarray(x, dtype=np.float64).ravel()
    if (repeated := _per_run(x, float_text)) is not None:
        return repeated
    n = len(x)
    out = np.zeros((n, WIDTH), np.uint8)
    if not n:
        return out
    finite = np.isfinite(x)
    regular = finite & (x != 0)
    a = np.abs(np.where(regular, x, 1.0))
    if EXACT_LONG_DOUBLE:
        digits, e, undecided = _shortest(a)
    else:  # pragma: no cover (a long double no wider than a double: repr decides every value)
        digits, e, undecided = np.zeros(n, np.int64), np.zeros(n, np.int64), np.ones(n, bool)
    # at a power of two the float's rounding interval is lopsided, and the shortest digits may lie beyond the
    # nearer neighbour: repr writes those too, as it does below the smallest normal float
    special = ~regular | undecided | (a < _TINY) | (np.frexp(a)[0] == 0.5)
    matrix = _digit_matrix(digits)
    last = 16 - np.argmax((matrix != 48)[:, ::-1], axis=1)  # the last significant digit's index
    negative = np.signbit(x).astype(np.int64)
    scientific = (e < -4) | (e >= 16)
    # positional: the 17 digits at the places the sign and the exponent give, the zeros after the last
    # significant digit made NUL (padding, dropped with the rest); d..d.dd keeps one fraction digit
    kept = np.where(e >= 0, np.maximum(last, e + 1), last)
    matrix[np.arange(17)[None, :] > kept[:, None]] = 0
    key = (negative << 10) | (e + 400)
    key[special | scientific] = 0
    for k, rows in _groups(key):
        if k:
            _layout(rows, out, matrix, _float_template(bool(k >> 10), (k & 1023) - 400, 17))
    # scientific: d.ddde-05, rare in a sweep: grouped by its digit count too
    key = (negative << 15) | ((e + 400) << 5) | (last + 1)
    key[special | ~scientific] = 0
    for k, rows in _groups(key):
        if k:
            _layout(rows, out, matrix, _float_template(bool(k >> 15), ((k >> 5) & 1023) - 400, k & 31))
    out[special] = 0
    for i in np.flatnonzero(special):
        text = repr(float(x[i])).encode()
        out[i, :len(text)] = np.frombuffer(text, np.uint8)
    return out


def int_text(x: np.ndarray) -> np.ndarray:
    """Each whole number's decimal digits, one NUL-padded row of bytes per value."""
    x = np.asarray(x, dtype=np.int64).ravel()
    if (repeated := _per_run(x, int_text)) is not None:
        return repeated
    n = len(x)
    if n and x.min() >= 0 and x.max() < 10000:
        return _SMALL4[x].view(np.uint8).reshape(n, 4)
    out = np.zeros((n, 20), np.uint8)
    if not n:
        return out
    big = (x <= -(10**17)) | (x >= 10**17)
    a = np.abs(np.where(big, 0, x))
    matrix = _digit_matrix(a)
    nz = matrix != 48
    nd = 17 - np.where(nz.any(axis=1), np.argmax(nz, axis=1), 16)  # 0 is one digit
    key = ((x < 0).astype(np.int64) << 5) | nd
    key[big] = 0
    for k, rows in _groups(key):
        if k == 0:
            continue
        digits = k & 31
        _layout(rows, out, matrix, (b"-" if k >> 5 else b"") + b"\x01" * digits, 17 - digits)
    for i in np.flatnonzero(big):
        text = str(int(x[i])).encode()
        out[i, :len(text)] = np.frombuffer(text, np.uint8)
    return out


def _fixed(texts: Sequence[bytes]) -> np.ndarray:
    """Byte strings as NUL-padded rows."""
    width = max([len(t) for t in texts] + [1])
    out = np.zeros((len(texts), width), np.uint8)
    for i, t in enumerate(texts):
        if b"\0" in t:
            raise UserError(f"{t!r}: a value with a NUL character cannot be written as text")
        out[i, :len(t)] = np.frombuffer(t, np.uint8)
    return out


def _csv_word(word: str) -> bytes:
    if any(c in word for c in ',"\r\n'):
        return ('"' + word.replace('"', '""') + '"').encode()
    return word.encode()


FormatName = Literal["csv", "jsonl"]


def _scalar_text(value: Any, kind: Kind, fmt: FormatName) -> bytes:
    if value is None:
        return b"null" if fmt == "jsonl" else b""
    if kind == "text":
        return json.dumps(str(value)).encode() if fmt == "jsonl" else _csv_word(str(value))
    if kind == "bool":
        return (b"true" if value else b"false") if fmt == "jsonl" else (b"True" if value else b"False")
    if kind == "float":
        value = float(value)
        if fmt == "jsonl" and not np.isfinite(value):
            raise UserError(f"a value of {value!r}: JSON has no infinity or NaN; write CSV or Parquet")
        return repr(value).encode()
    return str(int(value)).encode()


def field_text(col: Column, kind: Kind, fmt: FormatName) -> np.ndarray:
    """One column's text: a NUL-padded byte row per value (one row for a constant)."""
    if isinstance(col, Constant):
        return _fixed([_scalar_text(col.value, kind, fmt)])
    if isinstance(col, Words):
        table = _fixed([_scalar_text(w, "text", fmt) for w in col.words])
        return table[col.codes]
    if kind == "float":
        if fmt == "jsonl" and not np.isfinite(col).all():
            bad = col[~np.isfinite(col)][0]
            raise UserError(f"a value of {float(bad)!r}: JSON has no infinity or NaN; write CSV or Parquet")
        return float_text(col)
    if kind == "bool":
        return _fixed([b"true", b"false"] if fmt == "jsonl" else [b"True", b"False"])[(~col.astype(bool)).astype(int)]
    if kind == "int":
        return int_text(col)
    return _fixed([_scalar_text(v, kind, fmt) for v in col.tolist()])


def _trim(field: np.ndarray) -> np.ndarray:
    """The field without its all-NUL columns on the right (NUL bytes are padding wherever they are)."""
    used = np.flatnonzero(field.any(axis=0))
    return field[:, :used[-1] + 1] if len(used) else field[:, :0]


def rows_text(schema: Schema, block: Block, fmt: FormatName) -> bytes:
    """The block's rows as CSV lines or JSON objects, one per line."""
    n = block.length
    pieces: list[np.ndarray] = []  # each (n, w) or (1, w)
    for i, (name, kind) in enumerate(schema.columns):
        if fmt == "jsonl":
            pieces.append(_fixed([(b"{" if i == 0 else b", ") + json.dumps(name).encode() + b": "]))
        elif i:
            pieces.append(_fixed([b","]))
        pieces.append(_trim(field_text(block.columns[name], kind, fmt)))
    pieces.append(_fixed([b"}\n" if fmt == "jsonl" else b"\n"]))
    widths = [p.shape[1] for p in pieces]
    matrix = np.zeros((n, sum(widths)), np.uint8)
    at = 0
    for p, w in zip(pieces, widths):
        matrix[:, at:at + w] = p
        at += w
    flat = matrix.ravel()
    return flat[flat != 0].tobytes()


def header_text(schema: Schema) -> bytes:
    return (",".join(_csv_word(n).decode() for n in schema.names) + "\n").encode()


# ------------------------------------------------------------------------------- files


def table_format(path: str | None, fmt: str | None, flag: str = "-o") -> str:
    """The format to write: ``fmt`` if given (it must agree with the file's suffix), else the suffix's; no
    suffix: CSV. A suffix this writer does not write is refused."""
    import os

    if fmt is not None and fmt not in FORMATS:
        raise UserError(f"--format {fmt}: one of {', '.join(FORMATS)}")
    suffix = os.path.splitext(path)[1].lower() if path and path != "-" else ""
    if suffix and suffix not in SUFFIXES:
        raise UserError(f"{flag} {path}: writes {', '.join(SUFFIXES)}, not {suffix} files; name the file with one of "
                        "those suffixes")
    by_suffix = SUFFIXES.get(suffix)
    if fmt and by_suffix and fmt != by_suffix:
        raise UserError(f"{flag} {path} --format {fmt}: the file's suffix says {by_suffix}; drop --format or rename "
                        "the file")
    chosen = fmt or by_suffix or "csv"
    if chosen == "parquet":
        if not path or path == "-":
            raise UserError("--format parquet: Parquet is binary; give a file (-o FILE.parquet)")
        _pyarrow()
    return chosen


def _pyarrow():
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise UserError("Parquet needs pyarrow: pip install 'roofline[parquet]'") from None
    return pyarrow


def pipelined(blocks: Iterable[Block], consume: Callable[[Block], None], depth: int = 2) -> int:
    """``consume(block)`` for every block on a second thread while this one makes the next blocks (the
    evaluation and the text overlap: numpy leaves the interpreter lock in both); at most ``depth`` blocks
    wait between the two, so the memory stays bounded. An error on either side stops both and is raised
    here, after the writing thread has finished its block; returns the rows consumed."""
    import queue
    import threading

    waiting: queue.Queue = queue.Queue(maxsize=depth)
    failed: list[BaseException] = []

    def work() -> None:
        while True:
            block = waiting.get()
            if block is None:
                return
            try:
                consume(block)
            except BaseException as e:  # raised on the calling thread
                failed.append(e)
                return

    def hand_over(item: Block | None) -> None:
        while True:  # a timeout, so that a signal (Ctrl-C) is handled on this thread meanwhile
            if failed:
                raise failed[0]
            try:
                waiting.put(item, timeout=0.05)
                return
            except queue.Full:
                if not writer.is_alive():
                    raise RuntimeError("the writing thread stopped") from None

    writer = threading.Thread(target=work, name="roofline-writer", daemon=True)
    writer.start()
    rows = 0
    try:
        for block in blocks:
            hand_over(block)
            rows += block.length
        hand_over(None)
        writer.join()
    except BaseException:
        while True:  # drop what waits, tell the writer to stop after its block, and wait for it
            try:
                waiting.get_nowait()
            except queue.Empty:
                break
        if writer.is_alive():
            waiting.put(None)
            writer.join()
        raise
    if failed:
        raise failed[0]
    return rows


def stream_text(out: IO[bytes], schema: Schema, blocks: Iterable[Block], fmt: FormatName) -> int:
    """Write every block to a binary stream; returns the rows written."""
    if fmt == "csv":
        out.write(header_text(schema))
    return pipelined(coalesced(schema, blocks), lambda block: out.write(rows_text(schema, block, fmt)))


def _arrow_text(words: Sequence[str], codes: np.ndarray):
    """A pyarrow string array of ``words[codes]`` built from its buffers (no compute kernel: pyarrow.compute
    costs half a second to load)."""
    pa = _pyarrow()
    encoded = [w.encode() for w in words]
    lengths = np.array([len(b) for b in encoded], dtype=np.int64)
    row_lengths = lengths[codes]
    offsets = np.zeros(len(codes) + 1, dtype=np.int64)
    np.cumsum(row_lengths, out=offsets[1:])
    table = np.zeros((len(encoded), max(int(lengths.max()), 1)), np.uint8)
    for i, b in enumerate(encoded):
        table[i, :len(b)] = np.frombuffer(b, np.uint8)
    rows = table[codes]
    data = rows[np.arange(rows.shape[1])[None, :] < row_lengths[:, None]]
    kind, offsets = (pa.string(), offsets.astype(np.int32)) if offsets[-1] < 2**31 else (pa.large_string(), offsets)
    return pa.Array.from_buffers(kind, len(codes), [None, pa.py_buffer(offsets), pa.py_buffer(data.tobytes())])


def _arrow_numbers(values: np.ndarray, kind: Kind):
    """A pyarrow array of numbers or bools built from the numpy buffer (``pa.array`` of a numpy array loads
    pandas, when it is installed, to check for its types: most of a second)."""
    pa = _pyarrow()
    if kind == "bool":
        bits = np.packbits(np.ascontiguousarray(values, dtype=bool), bitorder="little")
        return pa.Array.from_buffers(pa.bool_(), len(values), [None, pa.py_buffer(bits)])
    dtype, arrow = (np.float64, pa.float64()) if kind == "float" else (np.int64, pa.int64())
    return pa.Array.from_buffers(arrow, len(values), [None, pa.py_buffer(np.ascontiguousarray(values, dtype=dtype))])


def _arrow_codes(words: Sequence[str], codes: np.ndarray):
    """A pyarrow dictionary array: the codes (int32) into the words."""
    pa = _pyarrow()
    indices = pa.Array.from_buffers(pa.int32(), len(codes), [None, pa.py_buffer(codes.astype(np.int32))])
    return pa.DictionaryArray.from_arrays(indices, _arrow_text(list(words), np.arange(len(words))))


def arrow_batch(schema: Schema, block: Block, dictionary: bool = False):
    """A block as a pyarrow RecordBatch: text as plain strings, or (``dictionary``) as codes into its words (as a
    Parquet file stores them; cheaper to make)."""
    pa = _pyarrow()
    arrays = []
    n = block.length
    for name, kind in schema.columns:
        col = block.columns[name]
        if kind == "text" and not (isinstance(col, Constant) and col.value is None):
            if isinstance(col, Constant):
                words, codes = [str(col.value)], np.zeros(n, np.int64)
            elif isinstance(col, Words):
                words, codes = list(col.words), col.codes
            else:
                words = list(dict.fromkeys(map(str, col.tolist())))
                index = {w: i for i, w in enumerate(words)}
                codes = np.array([index[str(v)] for v in col.tolist()], np.int64)
            arr = _arrow_codes(words, codes) if dictionary else _arrow_text(words, codes)
        elif isinstance(col, Constant) and col.value is None:
            arr = pa.nulls(n, arrow_schema(schema, dictionary).field(name).type)
        else:
            arr = _arrow_numbers(column_values(col, n, kind), kind)
        arrays.append(arr)
    return pa.RecordBatch.from_arrays(arrays, schema=arrow_schema(schema, dictionary))


def arrow_schema(schema: Schema, dictionary: bool = False):
    pa = _pyarrow()
    text = pa.dictionary(pa.int32(), pa.string()) if dictionary else pa.string()
    types = {"text": text, "int": pa.int64(), "float": pa.float64(), "bool": pa.bool_()}
    return pa.schema([(n, types[k]) for n, k in schema.columns])


def write_table(given: str, schema: Schema, blocks: Iterable[Block], fmt: str, *, force: bool = False) -> int:
    """Write the table to ``given`` (``-``: stdout; CSV or JSON lines there) in ``fmt``, whole or not at all;
    returns the rows written."""
    from roofline.files.writing import replacing

    if given == "-":
        if fmt == "parquet":
            raise UserError("--format parquet: Parquet is binary; give a file (-o FILE.parquet)")
        stream = getattr(sys.stdout, "buffer", None)
        if stream is None:  # a text stream (a test's capture): decode
            return _write_decoded(sys.stdout, schema, blocks, fmt)  # type: ignore[arg-type]
        sys.stdout.flush()
        rows = stream_text(stream, schema, blocks, fmt)  # type: ignore[arg-type]
        stream.flush()
        return rows
    with replacing(given, force=force) as path:
        try:
            if fmt == "parquet":
                import pyarrow.parquet as pq

                # text as dictionaries (the arrow schema left out of the file: it reads back as plain strings),
                # numbers plain: dictionary pages for floats that hardly repeat only cost time
                text = [n for n, k in schema.columns if k == "text"]
                with pq.ParquetWriter(str(path), arrow_schema(schema, dictionary=True), store_schema=False,
                                      use_dictionary=text) as writer:
                    return pipelined(coalesced(schema, blocks),
                                     lambda block: writer.write_batch(arrow_batch(schema, block, dictionary=True)))
            with open(path, "wb") as f:
                return stream_text(f, schema, blocks, fmt)  # type: ignore[arg-type]
        except BrokenPipeError:
            raise
        except OSError as e:  # a full disk, an I/O error: the target is left as it was
            raise UserError(f"{given}: cannot write ({e.strerror or e})") from None


def _write_decoded(out: IO[str], schema: Schema, blocks: Iterable[Block], fmt: str) -> int:
    class Decoding:
        def write(self, data: bytes) -> None:
            out.write(data.decode("utf-8"))

    return stream_text(Decoding(), schema, blocks, fmt)  # type: ignore[arg-type]


def checked_blocks(blocks: Iterable[Block], check: Callable[[], None]) -> Iterator[Block]:
    """``blocks``, calling ``check`` before each (an interrupt noted between blocks is raised there)."""
    for block in blocks:
        check()
        yield block
