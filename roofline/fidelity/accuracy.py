"""How right the model is: every measurement record against the ceiling and the realistic estimate,
and the error a user predicting an unseen CPU should expect (leave-one-platform-out: the stack's
profile refitted without the record's platform). ``roofline accuracy`` and ``roofline calibrate
--records``."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from roofline.catalog.records import LoadedRecord
from roofline.catalog.stacks import load_stack, stack_path
from roofline.errors import UnknownNameError
from roofline.fidelity.figures import Figure, figures
from roofline.fidelity.fit import FitTable, Params, fit, pooled_dispatch, profile_from
from roofline.results.accuracy import AccuracyResult, AccuracyRow, StackAccuracy
from roofline.spec.stack import Accuracy, StackProfile


@dataclass(frozen=True)
class Scored:
    figure: Figure
    ceiling: float
    realistic: float | None
    """leave-one-platform-out; None for a stack without a profile"""
    realistic_in_sample: float | None

    @property
    def error(self) -> float | None:
        return None if self.realistic is None else self.realistic / self.figure.measured - 1

    @property
    def ceiling_error(self) -> float:
        return self.ceiling / self.figure.measured - 1

    @property
    def violation(self) -> bool:
        """a measured performance above the ceiling's (this record platform's, or the one of the validate run
        the figure comes from, which its report marked)"""
        if self.figure.reported_violation:
            return True
        if not self.figure.kind.is_absolute:
            return False
        faster = self.figure.measured > self.ceiling if self.figure.kind.is_rate else \
            self.figure.measured < self.ceiling
        return bool(faster) and abs(self.ceiling / self.figure.measured - 1) > 1e-9


def leave_one_platform_out(figs: list[Figure], dispatch: dict[str, float]) -> tuple[Params, dict[str, Params]]:
    """The profile fitted on every figure, and one refitted without each platform."""
    full = fit(figs, dispatch)
    per = {}
    for platform in sorted({f.platform for f in figs}):
        train = [f for f in figs if f.platform != platform]
        per[platform] = fit(train, dispatch) if train else Params()
    return full, per


def score(figs: list[Figure], full: Params | None, per: dict[str, Params] | None) -> list[Scored]:
    """Each figure's ceiling, its leave-one-platform-out prediction (``per``: the profile refitted without
    its platform) and its in-sample one (``full``)."""
    if not figs:
        return []
    table = FitTable.of(figs)
    ceiling = table.predict_params(None)
    inside = table.predict_params(full) if full else [None] * len(figs)
    out: dict[int, float] = {}
    for platform, q in (per or {}).items():
        idx = [i for i, f in enumerate(figs) if f.platform == platform]
        if idx:
            out.update(zip(idx, FitTable.of([figs[i] for i in idx]).predict_params(q)))
    return [Scored(f, float(ceiling[i]), float(out[i]) if per else None,
                   float(inside[i]) if full else None) for i, f in enumerate(figs)]


def summary(scored: list[Scored], command: str) -> Accuracy:
    errs = [abs(s.error) for s in scored if s.error is not None]
    return Accuracy(median_abs_error=float(f"{statistics.median(errs):.4g}") if errs else 0.0,
                    worst_abs_error=float(f"{max(errs):.4g}") if errs else 0.0, figures=len(errs),
                    records=len({s.figure.record for s in scored if s.error is not None}),
                    platforms=len({s.figure.platform for s in scored if s.error is not None}), command=command)


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
        rows += [AccuracyRow(record=s.figure.record, platform=s.figure.platform, stack=stack, kind=s.figure.kind.value,
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
