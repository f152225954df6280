"""Reading MLPerf Inference results: loadgen's ``mlperf_log_summary.txt`` and the submission's system
description (``systems/<system>.json``), into typed values. Pure parsing.

The summary states the scenario, the mode, whether the run is valid, and the rate (``Samples per second``
offline, ``Scheduled samples per second`` in the server scenario, ``Tokens per second`` for the LLM
benchmarks), the latency percentiles and the test parameters. It does not name the benchmark or the system:
a results tree does, in its path (``<division>/<submitter>/results/<system>/<benchmark>/<Scenario>/
performance/run_1/mlperf_log_summary.txt``), and the system's JSON sits at ``<division>/<submitter>/
systems/<system>.json`` there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from roofline.errors import SpecError
from roofline.files.reading import parse_json, read_bytes

SCENARIOS = ("Offline", "Server", "SingleStream", "MultiStream")


@dataclass(frozen=True)
class Stated:
    """A figure of the summary and the line it is on."""

    value: float
    line: int


@dataclass(frozen=True)
class MlperfSummary:
    path: str
    scenario: str
    mode: str
    valid: bool
    result_line: int
    sut_name: str | None = None
    samples_per_s: Stated | None = None
    """offline: ``Samples per second``; server: ``Scheduled samples per second``"""
    completed_samples_per_s: Stated | None = None
    tokens_per_s: Stated | None = None
    latency_ns: dict[str, int] = field(default_factory=dict)
    """``min``, ``max``, ``mean``, ``50.00``, ``99.00``, ... percentile"""
    parameters: dict[str, str] = field(default_factory=dict)
    """the Test Parameters Used block"""
    benchmark: str | None = None
    """from the results tree (``bert-99``), when the path is one"""
    system: str | None = None
    """from the results tree (``1-node-2S-SPR-PyTorch-INT8``)"""
    tree_root: str | None = None
    """the submitter's folder of the results tree (``.../closed/Intel``)"""

    @property
    def system_file(self) -> Path | None:
        """Where the results tree keeps the system's JSON."""
        return Path(self.tree_root) / "systems" / f"{self.system}.json" if self.tree_root and self.system else None


@dataclass(frozen=True)
class MlperfSystem:
    path: str
    system_name: str
    processor: str
    """``host_processor_model_name``"""
    processors_per_node: int | None
    cores_per_processor: int | None
    nodes: int | None
    accelerators_per_node: int | None
    submitter: str | None = None
    division: str | None = None
    framework: str | None = None
    memory: str | None = None
    software: str | None = None


_LINE = re.compile(r"^\s*(.+?)\s*:\s*(.*?)\s*$")


def read_summary(path: str | Path) -> MlperfSummary:
    raw = read_bytes(Path(path), str(path))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise SpecError(str(path), "", "not an MLPerf summary: not UTF-8 text") from None
    return parse_summary(text, str(path))


def is_summary(text: str) -> bool:
    return "MLPerf Results Summary" in text[:2000]


def parse_summary(text: str, path: str) -> MlperfSummary:
    if not is_summary(text):
        raise SpecError(path, "", "not an MLPerf loadgen summary (mlperf_log_summary.txt: 'MLPerf Results Summary')")
    values: dict[str, tuple[str, int]] = {}
    latency: dict[str, int] = {}
    parameters: dict[str, str] = {}
    section = "summary"
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("Additional Stats"):
            section = "stats"
        elif line.startswith("Test Parameters Used"):
            section = "parameters"
        m = _LINE.match(line)
        if not m or line.startswith("="):
            continue
        key, value = m.group(1), m.group(2)
        if section == "parameters":
            parameters[key] = value
        elif key.endswith("latency (ns)"):
            name = key[: -len("latency (ns)")].strip().removesuffix("percentile").strip().lower()
            try:
                latency[name] = int(value)
            except ValueError:
                raise SpecError(path, f"line {n}", f"{key}: {value[:40]!r} is not a whole number of nanoseconds") \
                    from None
            if not 0 <= latency[name] <= 10 ** 15:
                raise SpecError(path, f"line {n}", f"{key}: {value[:40]}: nanoseconds from 0 to 1e15 (11 days)")
        elif key in values and values[key][0] != value:  # which of two rates is the run's? neither is taken
            raise SpecError(path, f"line {n}", f"{key[:60]}: stated twice, {values[key][0][:40]!r} (line "
                            f"{values[key][1]}) and {value[:40]!r}: not one loadgen summary; give the run's own file")
        else:
            values.setdefault(key, (value, n))

    def number(key: str) -> Stated | None:
        if key not in values:
            return None
        text_value, n = values[key]
        try:
            x = float(text_value)
        except ValueError:
            raise SpecError(path, f"line {n}", f"{key}: {text_value[:40]!r} is not a number") from None
        if not 0 < x <= MAX_RATE:  # nan fails too
            raise SpecError(path, f"line {n}", f"{key}: {text_value[:40]}: a rate is a positive number up to "
                            f"{MAX_RATE:g} per second")
        return Stated(x, n)

    if "Scenario" not in values:
        raise SpecError(path, "Scenario", "missing: loadgen writes 'Scenario : Offline' (or Server, ...)")
    scenario = values["Scenario"][0]
    if scenario not in SCENARIOS:
        raise SpecError(path, f"line {values['Scenario'][1]}", f"scenario {scenario!r}: one of {', '.join(SCENARIOS)}")
    result, result_line = values.get("Result is", ("", 0))
    rate = number("Samples per second") or number("Scheduled samples per second")
    tree = _tree(Path(path), scenario)
    return MlperfSummary(
        path=path, scenario=scenario, mode=values.get("Mode", ("", 0))[0], valid=result == "VALID",
        result_line=result_line, sut_name=values.get("SUT name", (None, 0))[0], samples_per_s=rate,
        completed_samples_per_s=number("Completed samples per second"),
        tokens_per_s=number("Tokens per second") or number("Completed tokens per second"),
        latency_ns=latency, parameters=parameters, **tree)


def _tree(path: Path, scenario: str) -> dict:
    """The benchmark, the system and the submitter's folder, from a results tree's path (the folder as the
    path names it, relative where it is)."""
    parts = path.resolve().parts
    try:
        i = len(parts) - 1 - [p.lower() for p in parts[::-1]].index(scenario.lower())
    except ValueError:
        return {}
    if i < 3 or parts[i - 3] != "results":
        return {}
    up = len(parts) - 2 - i + 4  # from the file to the submitter's folder
    root = path.parents[up] if up < len(path.parents) else Path(*parts[:i - 3])
    return {"benchmark": parts[i - 1], "system": parts[i - 2], "tree_root": str(root)}


#: the highest rate a summary may state: no CPU system serves a trillion samples per second
MAX_RATE = 1e12
#: the range of each count a system description states (the fewest and the most any system has)
COUNTS = {"host_processors_per_node": (1, 64), "host_processor_core_count": (1, 4096), "number_of_nodes": (1, 100_000),
          "accelerators_per_node": (0, 4096)}


def _count(path: str, data: dict, key: str) -> int | None:
    v = data.get(key)
    if v is None or str(v).strip().upper() in ("", "N/A", "NA"):
        return None
    shown = repr(v) if len(repr(v)) <= 40 else repr(v)[:37] + "..."
    if isinstance(v, (bool, float, list, dict)):
        raise SpecError(path, key, f"{shown} is not a whole number")
    try:
        n = int(str(v).strip())
    except ValueError:
        raise SpecError(path, key, f"{shown} is not a whole number") from None
    low, high = COUNTS.get(key, (0, 1 << 20))
    if not low <= n <= high:
        raise SpecError(path, key, f"{shown}: a whole number from {low} to {high:,}")
    return n


def read_system(path: str | Path) -> MlperfSystem:
    data = parse_json(read_bytes(Path(path), str(path)), path)
    p = str(path)
    name = data.get("system_name")
    processor = data.get("host_processor_model_name")
    if not isinstance(name, str) or not isinstance(processor, str) or not processor.strip():
        raise SpecError(p, "host_processor_model_name" if isinstance(name, str) else "system_name",
                        "missing: not an MLPerf system description (systems/<system>.json)")
    text = lambda k: (str(data[k]).strip() or None) if data.get(k) not in (None, "N/A") else None  # noqa: E731
    return MlperfSystem(
        path=p, system_name=name, processor=processor.strip(), processors_per_node=_count(p, data, "host_processors_per_node"),
        cores_per_processor=_count(p, data, "host_processor_core_count"), nodes=_count(p, data, "number_of_nodes"),
        accelerators_per_node=_count(p, data, "accelerators_per_node"), submitter=text("submitter"),
        division=text("division"), framework=text("framework"), memory=text("host_memory_capacity"),
        software=text("other_software_stack"))
