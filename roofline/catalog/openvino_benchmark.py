"""Reading OpenVINO ``benchmark_app`` results: its JSON report (``-report_type no_counters -json_stats
-report_folder DIR`` writes ``DIR/benchmark_report.json``) and the summary it logs at the end of a run. Pure
parsing: the model, its precision and input length and the CPU are the caller's business.

The layout is openvinotoolkit/openvino ``tools/benchmark_tool/openvino/tools/benchmark/``:
``utils/statistics_report.py`` at commit fd8b0ac5a2cda483b39eb83145095423feba435c (``JsonStatisticsReport.dump``:
``cmd_options``, ``configuration_setup`` and ``execution_results``, each a dict of the parameters ``main.py``
added, values as strings) and ``main.py`` at commit 74959490cbbd8eafd8bf4f52407507f3129f3557: step 9 adds
``configuration_setup`` ``topology``, ``target device``, ``API``, ``inference_only``, ``precision`` (always
``UNSPECIFIED``), ``batch size``, ``number of parallel infer requests``, ``number of CPU streams``; step 11 adds
``execution_results`` ``total execution time (ms)``, ``total number of iterations``, ``latency (ms)`` (the
median; ``latency (N percentile) (ms)`` with ``-latency_percentile N``), ``avg latency``, ``min latency``, ``max
latency`` and ``throughput`` (FPS: frames, i.e. samples, per second: batch x iterations / duration), and logs
``Count:``, ``Duration:``, ``Latency:`` (``Median:``, ``Average:``, ``Min:``, ``Max:``) and ``Throughput: N FPS``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from roofline.catalog.serving_bench import HUGE
from roofline.errors import SpecError
from roofline.files.reading import load_json, utf8_text

_THROUGHPUT = re.compile(r"^\[\s*INFO\s*\]\s*Throughput:\s*(\S+)\s*FPS\s*$")
_LINE = {"count": re.compile(r"^\[\s*INFO\s*\]\s*Count:\s*(\S+)\s*iterations\s*$"),
         "duration_ms": re.compile(r"^\[\s*INFO\s*\]\s*Duration:\s*(\S+)\s*ms\s*$"),
         "median_ms": re.compile(r"^\[\s*INFO\s*\]\s*Median:\s*(\S+)\s*ms\s*$"),
         "mean_ms": re.compile(r"^\[\s*INFO\s*\]\s*Average:\s*(\S+)\s*ms\s*$"),
         "min_ms": re.compile(r"^\[\s*INFO\s*\]\s*Min:\s*(\S+)\s*ms\s*$"),
         "max_ms": re.compile(r"^\[\s*INFO\s*\]\s*Max:\s*(\S+)\s*ms\s*$"),
         "streams": re.compile(r"^\[\s*INFO\s*\]\s*NUM_STREAMS:\s*(\S+)\s*$")}
#: the execution_results keys and the name each value gets
RESULTS = {"total number of iterations": "count", "total execution time (ms)": "duration_ms",
           "latency (ms)": "median_ms", "avg latency": "mean_ms", "min latency": "min_ms", "max latency": "max_ms"}


@dataclass(frozen=True)
class BenchmarkApp:
    """One benchmark_app run, as its report or log states it."""

    path: str
    format: str
    """``JSON report`` or ``log summary``"""
    fps: float
    """samples per second: ``batch x iterations / duration``"""
    fps_where: str
    values: dict[str, float] = field(default_factory=dict)
    """count, duration_ms, median_ms, mean_ms, min_ms, max_ms, streams, batch, nireq: what the file states"""
    where: dict[str, str] = field(default_factory=dict)
    """each value's key or line"""
    device: str | None = None
    topology: str | None = None
    api: str | None = None
    shape: str | None = None
    """the ``-shape`` or ``-data_shape`` command-line option, when given (``cmd_options``: ``main.py`` step 1 adds
    ``get_command_line_arguments(sys.argv)``, each option as typed)"""

    @property
    def batch(self) -> int | None:
        v = self.values.get("batch")
        return int(v) if v else None

    @property
    def streams(self) -> int | None:
        v = self.values.get("streams")
        return int(v) if v else None


def detect(text: str, first: Any) -> str | None:
    """``json`` (a report), ``log`` (the logged summary) or None."""
    if isinstance(first, dict) and isinstance(first.get("execution_results"), dict):
        return "json"
    if any(_THROUGHPUT.match(line.strip()) for line in text.splitlines()):
        return "log"
    return None


def _number(path: str, where: str, v: Any, whole: bool = False, low: float = 0.0) -> float:
    try:
        x = float(v) if not isinstance(v, bool) else math.nan
    except (TypeError, ValueError):
        raise SpecError(path, where, f"{v!r} is not a number") from None
    if not math.isfinite(x) or x < low or x > HUGE or (whole and not x.is_integer()):
        raise SpecError(path, where, f"{v!r}: a {'whole ' if whole else ''}number from {low:g} to {HUGE:g}")
    return x


def parse_benchmark_app(raw: bytes, path: str) -> BenchmarkApp:
    text = utf8_text(raw, path, "a benchmark_app report")
    stripped = text.lstrip()
    if stripped.startswith("{"):
        return _json(load_json(raw, path), path)
    return _log(text, path)


def _json(d: Any, path: str) -> BenchmarkApp:
    if not isinstance(d, dict) or not isinstance(d.get("execution_results"), dict):
        raise SpecError(path, "execution_results", "missing; benchmark_app's JSON report (benchmark_report.json) "
                        "holds it")
    results = d["execution_results"]
    setup = d.get("configuration_setup") if isinstance(d.get("configuration_setup"), dict) else {}
    options = d.get("cmd_options") if isinstance(d.get("cmd_options"), dict) else {}
    if "error" in results:
        raise SpecError(path, "execution_results: error", f"{str(results['error'])[:120]!r}: the run failed")
    if "throughput" not in results:
        raise SpecError(path, "execution_results: throughput", "missing; benchmark_app writes it after a run")
    fps = _number(path, "execution_results: throughput", results["throughput"])
    if not fps > 0:
        raise SpecError(path, "execution_results: throughput", f"{fps:g}: a rate is a positive number")
    values, where = {}, {}
    for key, name in RESULTS.items():
        if results.get(key) is not None:
            values[name] = _number(path, f"execution_results: {key}", results[key], whole=name == "count")
            where[name] = f"execution_results: {key}"
    for key, name in (("batch size", "batch"), ("number of parallel infer requests", "nireq"),
                      ("number of CPU streams", "streams")):
        if setup.get(key) not in (None, ""):
            values[name] = _number(path, f"configuration_setup: {key}", setup[key], whole=True, low=1)
            where[name] = f"configuration_setup: {key}"
    device = setup.get("target device")
    # get_command_line_arguments keeps each option as typed (``-shape``): compare without the dashes
    typed = {str(k).strip("-"): v for k, v in options.items()}
    shape = next((str(typed[k]) for k in ("shape", "data_shape") if typed.get(k)), None)
    return BenchmarkApp(path, "JSON report", fps, "execution_results: throughput", values, where,
                        str(device) if device is not None else None,
                        str(setup["topology"]) if setup.get("topology") is not None else None,
                        str(setup["API"]) if setup.get("API") is not None else None, shape)


def _log(text: str, path: str) -> BenchmarkApp:
    fps = None
    values, where = {}, {}
    for i, line in enumerate(text.splitlines()):
        s = line.strip()
        m = _THROUGHPUT.match(s)
        if m:
            fps = _number(path, f"line {i + 1}: Throughput", m.group(1))
            fps_where = f"line {i + 1}: Throughput"
            continue
        for name, pattern in _LINE.items():
            m = pattern.match(s)
            if m:
                values[name] = _number(path, f"line {i + 1}: {name}", m.group(1), whole=name in ("count", "streams"))
                where[name] = f"line {i + 1}"
    if fps is None:
        raise SpecError(path, "Throughput", "missing: benchmark_app logs 'Throughput: N FPS' at the end of a run")
    if not fps > 0:
        raise SpecError(path, fps_where, f"{fps:g}: a rate is a positive number")
    if values.get("count") and values.get("duration_ms"):
        # FPS = batch x iterations / duration in the async modes: the batch, when it comes out whole
        b = fps * values["duration_ms"] / 1000 / values["count"]
        if b >= 0.99 and abs(b - round(b)) < 0.01 * b:
            values["batch"] = float(round(b))
            where["batch"] = f"Throughput x Duration / Count ({where['count']}, {where['duration_ms']})"
    return BenchmarkApp(path, "log summary", fps, fps_where, values, where)
