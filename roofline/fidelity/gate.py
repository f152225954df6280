"""The accuracy gate: a committed summary of ``roofline accuracy`` (per stack and group: figures, median and worst
leave-one-platform-out |error|, median-band coverage; ceiling violations), and the changes that fail it.

A change fails the gate where a row's median |error| grows by more than :data:`MEDIAN_SLACK`, its coverage moves
further from one half by more than :data:`COVERAGE_SLACK`, or the violations grow: unless the summary is rewritten
in the same change (``roofline accuracy --write-gate FILE --reason TEXT``), with its reason.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from roofline.results.accuracy import AccuracyResult
from roofline.spec import PYDANTIC_CONFIG

SCHEMA_VERSION = 1
#: the most a row's median |error| may grow (2 points)
MEDIAN_SLACK = 0.02
#: the most a row's coverage may move further from 0.5 (10 points)
COVERAGE_SLACK = 0.10
#: the row of the decoder plan's rates against the MLPerf LLM runs (:mod:`roofline.fidelity.decoder_runs`)
DECODER_RUNS = "plan: MLPerf LLM runs"
#: the row of the decoder plan's output tokens per second against the concurrency runs
CONCURRENCY_RUNS = "plan: concurrency runs"


@dataclass(frozen=True)
class GateRow:
    __pydantic_config__ = PYDANTIC_CONFIG

    figures: int
    median_abs_error: float
    worst_abs_error: float
    coverage: float | None = None


@dataclass(frozen=True)
class Gate:
    """The committed summary (``validation/accuracy-gate.toml``)."""

    __pydantic_config__ = PYDANTIC_CONFIG

    reason: str
    """why it was last rewritten"""
    violations: int
    rows: dict[str, GateRow]
    """a stack's name, or ``group: NAME``"""
    schema_version: int = SCHEMA_VERSION


def gate_of(result: AccuracyResult, reason: str) -> Gate:
    rows = {s.stack: GateRow(s.accuracy.figures, s.accuracy.median_abs_error, s.accuracy.worst_abs_error, s.coverage)
            for s in result.stacks if s.accuracy is not None}
    rows |= {f"group: {g.name}": GateRow(g.accuracy.figures, g.accuracy.median_abs_error, g.accuracy.worst_abs_error,
                                         g.coverage) for g in result.groups}
    for name, runs in ((DECODER_RUNS, [d for d in result.decoder_runs if d.scenario != "concurrency"]),
                       (CONCURRENCY_RUNS, [d for d in result.decoder_runs if d.scenario == "concurrency"])):
        if runs:
            errs = sorted(abs(d.error) for d in runs)
            rows[name] = GateRow(len(errs), float(f"{statistics.median(errs):.4g}"), float(f"{errs[-1]:.4g}"))
    return Gate(reason=reason, violations=result.violations, rows=rows)


def failures(committed: Gate, now: Gate) -> list[str]:
    """What ``now`` does worse than ``committed``, one line each (empty: it passes)."""
    out = []
    if now.violations > committed.violations:
        out.append(f"ceiling violations: {committed.violations} -> {now.violations}")
    for name, was in committed.rows.items():
        row = now.rows.get(name)
        if row is None:
            out.append(f"{name}: no longer scored")
            continue
        if row.median_abs_error > was.median_abs_error + MEDIAN_SLACK:
            out.append(f"{name}: median |error| {was.median_abs_error:.1%} -> {row.median_abs_error:.1%} "
                       f"(more than {MEDIAN_SLACK:.0%} worse)")
        if was.coverage is not None and row.coverage is not None and \
                abs(row.coverage - 0.5) > abs(was.coverage - 0.5) + COVERAGE_SLACK:
            out.append(f"{name}: median-band coverage {was.coverage:.0%} -> {row.coverage:.0%} (more than "
                       f"{COVERAGE_SLACK:.0%} further from half)")
    return out
