"""Reading GuideLLM's JSON report (``guidellm benchmark ... --output-path report.json``): one benchmark per
strategy run (a sweep writes several), each a test. Pure parsing.

The layout is vllm-project/guidellm at commit ee7a77457ba668b4b5ccb40f110518829893b36a:
``src/guidellm/benchmark/schemas/report.py`` (``GenerativeBenchmarksReport``, lines 69-79: ``metadata``
(``version`` 2, ``guidellm_version``, lines 35-44), ``config``, ``benchmarks``); ``benchmark/schemas/benchmark.py``
(``GenerativeBenchmark``, lines 46-59: ``type_`` ``generative_benchmark``, ``config`` whose ``strategy`` is
``scheduler/strategies.py``'s: ``type_`` synchronous, concurrent (``streams``, line 317), throughput, constant or
poisson (``rate``, lines 474 and 574), each with an optional ``max_concurrency`` (line 79); and ``metrics``);
``benchmark/schemas/metrics.py`` (``GenerativeMetrics``, lines 775-824: ``request_totals``,
``requests_per_second``, ``request_concurrency``, ``request_latency``, ``prompt_token_count``,
``output_token_count``, ``time_to_first_token_ms``, ``time_per_output_token_ms``, ``inter_token_latency_ms``,
``prompt_tokens_per_second``, ``output_tokens_per_second``, ``tokens_per_second``), each a
``StatusDistributionSummary`` of ``successful``/``errored``/``incomplete``/``total`` ``DistributionSummary``
(``schemas/statistics.py`` lines 124-133: ``mean``, ``median``, ..., ``total_sum``, ``percentiles`` with ``p50``,
``p90``, ``p99``, ...).

Read: the successful requests' count and token sums, the mean of the output and prompt token rates and of the
request concurrency, the strategy's streams or cap, and the latencies' mean, median and p99. Not read: the model
(the report's ``config`` holds the backend's arguments, whose layout has changed between releases: ``--model``
names it).
"""

from __future__ import annotations

from typing import Any

from roofline.catalog.serving_bench import ServingFile, ServingRun, checked, number
from roofline.errors import SpecError
from roofline.files.reading import load_json

TOOL = "GuideLLM"
#: the latency distributions read, and the name each gets
LATENCIES = {"time_to_first_token_ms": "ttft", "time_per_output_token_ms": "tpot", "inter_token_latency_ms": "itl"}
STRATEGIES = ("synchronous", "concurrent", "throughput", "constant", "poisson")


def detect(d: Any) -> bool:
    if not isinstance(d, dict) or not isinstance(d.get("benchmarks"), list):
        return False
    first = d["benchmarks"][0] if d["benchmarks"] else None
    return isinstance(first, dict) and isinstance(first.get("metrics"), dict) and \
        "output_tokens_per_second" in first["metrics"]


def parse_guidellm(raw: bytes, path: str) -> ServingFile:
    d = load_json(raw, path)
    if not detect(d):
        raise SpecError(path, "benchmarks", "not a GuideLLM report: no benchmarks[] with metrics."
                        "output_tokens_per_second (guidellm benchmark --output-path report.json)")
    meta = d.get("metadata") if isinstance(d.get("metadata"), dict) else {}
    version = meta.get("guidellm_version")
    runs = tuple(_run(path, f"benchmarks[{i}]", b) for i, b in enumerate(d["benchmarks"]))
    return ServingFile(path, TOOL, "JSON report", runs, version if isinstance(version, str) else "")


def _get(path: str, d: Any, keys: str, where: str) -> Any:
    """``d`` at the dotted ``keys``; a missing step is a one-line SpecError naming it."""
    for i, k in enumerate(keys.split(".")):
        if not isinstance(d, dict) or k not in d:
            raise SpecError(path, f"{where}: {'.'.join(keys.split('.')[:i + 1])}", "missing; GuideLLM's report "
                            "writes it")
        d = d[k]
    return d


def _run(path: str, where: str, b: Any) -> ServingRun:
    if not isinstance(b, dict):
        raise SpecError(path, where, "a GuideLLM benchmark is a JSON object")
    n = lambda keys, **kw: number(path, f"{where}: {keys}", _get(path, b, keys, where), **kw)  # noqa: E731
    ok = "successful"
    strategy = _get(path, b, "config.strategy", where)
    kind = strategy.get("type_") if isinstance(strategy, dict) else None
    if kind not in STRATEGIES:
        raise SpecError(path, f"{where}: config.strategy.type_", f"{kind!r}: one of {', '.join(STRATEGIES)}")
    cap = None
    if kind == "synchronous":
        cap = 1
    elif kind == "concurrent":
        cap = int(n("config.strategy.streams", whole=True, low=1))
    elif strategy.get("max_concurrency") is not None:
        cap = int(n("config.strategy.max_concurrency", whole=True, low=1))
    rate = None
    if kind in ("constant", "poisson"):
        rate = n("config.strategy.rate")
    elif kind in ("throughput",):
        rate = float("inf")
    latencies = {}
    for key, name in LATENCIES.items():
        m = b["metrics"].get(key)
        if isinstance(m, dict) and isinstance(m.get(ok), dict):
            for stat in ("mean", "median"):
                latencies[f"{stat}_{name}_ms"] = n(f"metrics.{key}.{ok}.{stat}")
            latencies[f"p99_{name}_ms"] = n(f"metrics.{key}.{ok}.percentiles.p99")
    return checked(path, ServingRun(
        where=where, completed=int(n(f"metrics.request_totals.{ok}", whole=True)),
        input_tokens=int(round(n(f"metrics.prompt_token_count.{ok}.total_sum"))),
        output_tokens=int(round(n(f"metrics.output_token_count.{ok}.total_sum"))),
        output_throughput=n(f"metrics.output_tokens_per_second.{ok}.mean"),
        input_throughput=n(f"metrics.prompt_tokens_per_second.{ok}.mean"),
        request_throughput=n(f"metrics.requests_per_second.{ok}.mean"),
        keys={"completed": f"metrics.request_totals.{ok}",
              "output_throughput": f"metrics.output_tokens_per_second.{ok}.mean",
              "input_throughput": f"metrics.prompt_tokens_per_second.{ok}.mean",
              "input_tokens": f"metrics.prompt_token_count.{ok}.total_sum",
              "output_tokens": f"metrics.output_token_count.{ok}.total_sum",
              "concurrency": ("config.strategy.streams" if kind == "concurrent" else
                              f"metrics.request_concurrency.{ok}.mean")},
        strategy=kind, request_rate=rate, max_concurrency=cap,
        concurrency=n(f"metrics.request_concurrency.{ok}.mean"), latencies_ms=latencies))
