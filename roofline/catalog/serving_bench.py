"""What a serving benchmark's result states about one run, whichever tool wrote it (``vllm bench serve``, SGLang's
``bench_serving``, GuideLLM): the requests completed, their tokens, the rates of the whole server, the concurrency
and the latency statistics as read. Pure data and the checks every reader shares: the per-tool layouts are
:mod:`roofline.catalog.vllm_serve`, :mod:`roofline.catalog.sglang_serve` and :mod:`roofline.catalog.guidellm_report`.

Rates are of the whole server: ``output_throughput = total_output_tokens / duration`` (decode tokens per second),
``input_throughput = total_input_tokens / duration`` (prompt tokens per second), over the run's wall time.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from roofline.errors import SpecError

#: the largest count or rate a real run states; above it the number is a corrupt file, not a measurement
HUGE = 1e12


@dataclass(frozen=True)
class ServingRun:
    """One serving benchmark run, as its file states it."""

    where: str
    """where in the file (``line 2``, ``benchmarks[1]``)"""
    completed: int
    """requests that finished"""
    input_tokens: int
    """prompt tokens of the completed requests, all of them"""
    output_tokens: int
    output_throughput: float
    """generated tokens per second of the whole server"""
    input_throughput: float | None
    """prompt tokens per second of the whole server (stated, or total minus output tokens per second)"""
    request_throughput: float | None
    keys: dict[str, str]
    """what each of the above was read from (``output_throughput``, ``metrics.output_tokens_per_second...``)"""
    model: str | None = None
    """the model the client asked the server for (``model_id``), as the file names it"""
    backend: str | None = None
    request_rate: float | None = None
    """requests per second the client sent at (``math.inf``: all at once); None when not stated"""
    max_concurrency: int | None = None
    """the client's cap on requests in flight; None when there was none"""
    concurrency: float | None = None
    """the measured mean of requests in flight, when the file states it"""
    duration_s: float | None = None
    latencies_ms: dict[str, float] = field(default_factory=dict)
    """TTFT, TPOT, ITL, end-to-end: ``mean_ttft_ms`` -> its value, as read"""
    date: str = ""
    strategy: str = ""
    """how the client sent its requests, in the tool's words (GuideLLM's ``concurrent``, ``poisson``, ...)"""

    @property
    def mean_input_len(self) -> float:
        return self.input_tokens / self.completed

    @property
    def mean_output_len(self) -> float:
        return self.output_tokens / self.completed


@dataclass(frozen=True)
class ServingFile:
    path: str
    tool: str
    """``vllm bench serve``, ``SGLang bench_serving``, ``GuideLLM``"""
    format: str
    """how the file holds its runs: ``--save-result JSON``, ``--output-file JSONL``, ..."""
    runs: tuple[ServingRun, ...]
    version: str = ""


def number(path: str, field_: str, v: Any, whole: bool = False, low: float = 0.0, inf: bool = False) -> float:
    """``v`` as a finite number from ``low`` to :data:`HUGE` (a whole one when ``whole``; ``inf`` lets ``inf``,
    ``"inf"`` and JSON's ``Infinity`` through); else a one-line SpecError naming the file and the field."""
    if inf and (v == "inf" or (isinstance(v, float) and math.isinf(v) and v > 0)):
        return math.inf
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise SpecError(path, field_, f"{v!r} is not a number")
    x = float(v)
    if not math.isfinite(x) or x < low or x > HUGE or (whole and not x.is_integer()):
        raise SpecError(path, field_, f"{v!r}: a {'whole ' if whole else ''}number from {low:g} to {HUGE:g}")
    return x


def optional(path: str, d: dict, key: str, where: str, **kw) -> float | None:
    """``d[key]`` as :func:`number`, or None when the key is missing or null."""
    v = d.get(key)
    return None if v is None else number(path, f"{where}: {key}", v, **kw)


def json_documents(text: str, path: str) -> list[tuple[str, Any]]:
    """The JSON values of ``text``: one document (``where`` = ``""``), else one per non-empty line (``line N``);
    text that is neither is a one-line SpecError."""
    try:
        return [("", json.loads(text))]
    except (json.JSONDecodeError, RecursionError, ValueError):
        pass
    out = []
    for i, line in enumerate(text.splitlines()):
        if line.strip():
            try:
                out.append((f"line {i + 1}", json.loads(line)))
            except (json.JSONDecodeError, RecursionError, ValueError) as e:
                raise SpecError(path, f"line {i + 1}", f"not a JSON object: {' '.join(str(e).split())[:120]}") from None
    return out


def first_object(text: str) -> dict | None:
    """The first JSON object of ``text`` (a whole document, or its first line), or None: for telling formats
    apart without raising."""
    stripped = text.lstrip("\ufeff \t\r\n")
    if not stripped.startswith(("{", "[")):
        return None
    for candidate in (stripped, stripped.splitlines()[0]):
        try:
            d = json.loads(candidate)
        except (json.JSONDecodeError, RecursionError, ValueError):
            continue
        if isinstance(d, list):
            d = d[0] if d else None
        return d if isinstance(d, dict) else None
    return None


def checked(path: str, run: ServingRun) -> ServingRun:
    """A run whose counts can be a measurement: some request completed and some token came out."""
    if run.completed < 1:
        raise SpecError(path, f"{run.where}: {run.keys.get('completed', 'completed')}",
                        f"{run.completed}: no request completed; a run with none measures nothing")
    if not run.output_throughput > 0 or run.output_tokens < 1:
        raise SpecError(path, f"{run.where}: {run.keys['output_throughput']}",
                        f"{run.output_throughput:g}: no token generated; a serving run's rate is a positive number")
    if run.max_concurrency is not None and run.max_concurrency < 1:
        raise SpecError(path, f"{run.where}: max_concurrency", f"{run.max_concurrency}: at least 1, or null")
    return run
