"""``roofline accuracy`` and ``roofline calibrate --records``: score every record, fit stack profiles."""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from roofline.catalog.records import LoadedRecord, load_stack, stack_path
from roofline.errors import UnknownNameError
from roofline.fidelity.fit import (
    Figure,
    figures,
    leave_one_platform_out,
    pooled_dispatch,
    profile_from,
    score,
    summary,
)
from roofline.results.accuracy import AccuracyResult, AccuracyRow, StackAccuracy
from roofline.spec.stack import StackProfile


def _profile(stack: str) -> tuple[StackProfile | None, str | None]:
    try:
        return load_stack(stack), str(stack_path(stack))
    except UnknownNameError:
        return None, None


def accuracy(records: Sequence[LoadedRecord], command: str) -> AccuracyResult:
    rows: list[AccuracyRow] = []
    stacks: list[StackAccuracy] = []
    n_figs = 0
    for stack in sorted({r.record.stack for r in records}):
        recs = [r for r in records if r.record.stack == stack]
        profile, path = _profile(stack)
        rules = profile.path_rules if profile else ()
        figs = [f for r in recs for f in figures(r, rules)]
        n_figs += len(figs)
        if profile is None:
            scored = score(figs, None, None)
            stacks.append(StackAccuracy(stack, None, None, None))
        else:
            full, per = leave_one_platform_out(figs, pooled_dispatch(recs))
            scored = score(figs, full, per)
            ins = [abs(s.realistic_in_sample / s.figure.measured - 1) for s in scored]
            per_platform = {p: statistics.median(abs(s.error) for s in scored if s.figure.platform == p)
                            for p in sorted({s.figure.platform for s in scored})}
            stacks.append(StackAccuracy(stack, path, summary(scored, command), statistics.median(ins), per_platform))
        rows += [AccuracyRow(record=s.figure.record, platform=s.figure.platform, stack=stack, kind=s.figure.kind,
                             precision=s.figure.precision, baseline=s.figure.baseline, what=s.figure.label,
                             measured=s.figure.measured, ceiling=s.ceiling, ceiling_error=s.ceiling_error,
                             violation=s.violation, realistic=s.realistic, realistic_error=s.error,
                             realistic_in_sample=s.realistic_in_sample) for s in scored]
    notes = ["realistic: each figure predicted by its stack's profile refitted without the figure's platform "
             "(leave-one-platform-out), the error a user predicting an unseen CPU should expect",
             "a speedup may exceed the ratio of two ceilings (its baseline runs further below its own): only "
             "absolute figures (latency, gemm, throughput, tokens/s) count as ceiling violations"]
    return AccuracyResult(records=len(records), figures=n_figs, violations=sum(r.violation for r in rows),
                          stacks=stacks, rows=rows, notes=notes)


def fit_profile(records: Sequence[LoadedRecord], stack: str, command: str, description: str = "") -> StackProfile:
    """The stack's profile fitted on every record of the stack, with its leave-one-platform-out accuracy."""
    recs = [r for r in records if r.record.stack == stack]
    if not recs:
        known = sorted({r.record.stack for r in records})
        raise UnknownNameError("stack", stack, known, "no record of it among the records given")
    old, _ = _profile(stack)
    rules = old.path_rules if old else ()
    figs: list[Figure] = [f for r in recs for f in figures(r, rules)]
    full, per = leave_one_platform_out(figs, pooled_dispatch(recs))
    acc = summary(score(figs, full, per), command)
    return profile_from(stack, description or (old.description if old else stack), full, recs, len(figs), rules,
                        acc, command)
