"""Reading SGLang's ``python -m sglang.bench_serving --output-file FILE`` results: JSON lines, one per run (the
file is opened for appending, so one file often holds several runs: each is a test). Pure parsing.

The layout is ``python/sglang/bench_serving.py`` at commit 0033168f0f58b2bc05aa0273bd475d9c01bafb1c
(github.com/sgl-project/sglang), ``benchmark``'s ``result`` dict, written with ``json.dumps(result) + "\\n"``:
``backend``, ``dataset_name``, ``request_rate`` (a float; ``Infinity`` when unlimited), ``max_concurrency`` (null
without a cap), ``sharegpt_output_len``, ``random_input_len``, ``random_output_len``, ``random_range_ratio``,
``duration``, ``completed``, ``total_input_tokens``, ``total_output_tokens``, ``total_output_tokens_retokenized``,
``request_throughput``, ``input_throughput``, ``output_throughput``, the ``mean_``/``median_``/``std_``/``p99_``
of ``e2e_latency``, ``ttft``, ``tpot`` and ``itl`` (and ``p95_itl_ms``) in ms, ``concurrency`` (the sum of the
requests' end-to-end latencies over the duration: the mean number in flight, ``calculate_metrics``) and
``accept_length``. The model is not written; ``--model`` names it.
"""

from __future__ import annotations

import re

from roofline.catalog.serving_bench import ServingFile, ServingRun, checked, json_documents, number, optional
from roofline.errors import SpecError
from roofline.files.reading import utf8_text

TOOL = "SGLang bench_serving"
SIGNATURE = ("completed", "input_throughput", "output_throughput", "total_input_tokens")
_LATENCY = re.compile(r"^(mean|median|std|p\d+)_(ttft|tpot|itl|e2e_latency)_ms$")


def detect(d: dict | None) -> bool:
    return isinstance(d, dict) and all(k in d for k in SIGNATURE) and "total_token_throughput" not in d


def parse_sglang_serve(raw: bytes, path: str) -> ServingFile:
    text = utf8_text(raw, path, "an SGLang bench_serving result")
    runs = []
    for where, d in json_documents(text, path):
        where = where or "line 1"
        if not isinstance(d, dict):
            raise SpecError(path, where, "an SGLang bench_serving result is a JSON object per line")
        missing = [k for k in SIGNATURE if k not in d]
        if missing:
            raise SpecError(path, f"{where}: {missing[0]}", "missing; sglang.bench_serving --output-file writes it")
        runs.append(_run(path, where, d))
    if not runs:
        raise SpecError(path, "", "no run in the file")
    return ServingFile(path, TOOL, "--output-file JSONL", tuple(runs))


def _run(path: str, where: str, d: dict) -> ServingRun:
    n = lambda key, **kw: number(path, f"{where}: {key}", d.get(key), **kw)  # noqa: E731
    cap = optional(path, d, "max_concurrency", where, whole=True, low=1)
    latencies = {k: number(path, f"{where}: {k}", v) for k, v in d.items() if _LATENCY.match(k) and v is not None}
    if d.get("backend") is not None and not isinstance(d["backend"], str):
        raise SpecError(path, f"{where}: backend", f"{d['backend']!r} is not a string")
    return checked(path, ServingRun(
        where=where, completed=int(n("completed", whole=True)), input_tokens=int(n("total_input_tokens", whole=True)),
        output_tokens=int(n("total_output_tokens", whole=True)), output_throughput=n("output_throughput"),
        input_throughput=n("input_throughput"), request_throughput=optional(path, d, "request_throughput", where),
        keys={"completed": "completed", "output_throughput": "output_throughput",
              "input_throughput": "input_throughput",
              "input_tokens": "total_input_tokens", "output_tokens": "total_output_tokens",
              "concurrency": "concurrency"},
        backend=d.get("backend"), request_rate=optional(path, d, "request_rate", where, inf=True),
        max_concurrency=None if cap is None else int(cap), concurrency=optional(path, d, "concurrency", where),
        duration_s=optional(path, d, "duration", where), latencies_ms=latencies))
