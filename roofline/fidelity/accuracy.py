"""How right the model is: every measurement record against the two ceilings and the realistic
estimate, and the error a user predicting an unseen CPU should expect (leave-one-platform-out: the
stack's profile refitted without the record's platform). ``roofline accuracy`` and ``roofline
calibrate --records``.

Each figure is priced twice: at the attainable ceiling (what the realistic estimate and its
efficiencies build on, and what tightness is measured against) and at the bound (no real run may
beat it: a figure above it is a violation). A figure more than :data:`SUSPECT_TIGHTNESS` times its
attainable ceiling is suspect (its platform's or its record's inputs are wrong) and left out of the
fit. A figure whose runs in its source (the same command, repeated) disagree by more than
:data:`UNSTABLE_SPREAD` is unstable: no one rate is the machine's, so it is neither fitted nor scored.
Excluded records (an engine feature the model cannot price) are listed with their reason.

A stack fitted on fewer than :data:`~roofline.spec.stack.MIN_PLATFORMS` platforms quotes the cross-stack error
band, and a GEMM class its figures never use takes the well-founded stacks' mean efficiency for it
(:func:`cross_stack`), each left-out platform's from those stacks refitted without it: the well-founded stacks
are fitted first.

Which terms a stack's model has (its form: the shape term's measure, the non-GEMM passes' form, a factor per
platform, a per-call dispatch chosen by the Server runs) is chosen by prediction inside each fold
(:mod:`roofline.fidelity.forms`): a left-out platform's profile is fitted in the form the other platforms' own
leave-one-out figures chose, so the band printed is a nested, out-of-sample figure. ``roofline calibrate
--records`` chooses the forms and stores them in the profile; ``roofline accuracy`` fits in the stored forms.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import get_args

import numpy as np

from roofline.calc.aggregate import geometric_mean
from roofline.catalog import load_platform
from roofline.catalog.records import LoadedRecord
from roofline.catalog.stacks import load_stack, stack_path
from roofline.errors import SpecError, UnknownNameError, UserError
from roofline.fidelity.decoder_runs import (
    is_decoder_run,
    predict_decoder_run,
    pricing_stack,
    rate_unit,
    run_rate,
    stated_latencies,
)
from roofline.fidelity.figures import Figure, figures
from roofline.fidelity.fit import FitTable, Params, pooled_dispatch, profile_from
from roofline.fidelity.forms import CALL_GRID, CrossTable, FormSearch, choose_forms, fit_forms
from roofline.fidelity.plans import ServerGroup, ServerPrediction, is_server, offline_twin, predict_servers, rate_of
from roofline.model.efficiency import EMULATED, shaped, takes_cross
from roofline.results.accuracy import (
    AccuracyResult,
    AccuracyRow,
    DecoderLatency,
    DecoderRunCheck,
    ExcludedRecord,
    GroupAccuracy,
    PlanCheck,
    Spread,
    StackAccuracy,
)
from roofline.spec.platform import ComputeDtype
from roofline.spec.sourced import Sourced, bare_values
from roofline.spec.stack import MIN_PLATFORMS, Accuracy, ClassAccuracy, FormChoice, StackProfile, typical_factor
from roofline.spec.vocab import Ceiling, Phase, Scenario, ShapeForm

#: measured above this many times the attainable ceiling: the inputs are suspect, the figure is not fitted
SUSPECT_TIGHTNESS = 2.0
#: the same command's runs in one source disagreeing by more than this (max / min - 1): the figure is unstable
#: (a machine under other load, or a setting that changes between runs) and neither fitted nor scored. Chosen,
#: not measured: the scored records that state llama-bench's ± (a standard deviation over its -r runs) all state
#: one under 10% of the rate
UNSTABLE_SPREAD = 0.25


@dataclass(frozen=True)
class Group:
    """A summary over some stacks' figures of some phases (None: every stack with a profile)."""

    name: str
    stacks: tuple[str, ...] | None
    phases: tuple[Phase, ...]
    min_batch: int = 1
    """only figures of this many sequences or more (a batched decode)"""


#: the encoder stacks a deployment picks from: what ``validate`` runs (Inductor), Intel's tuned stacks (its MLPerf
#: harness, IPEX) and OpenVINO; Neural Compressor's PyTorch-eager and ONNX Runtime lists count in "every stack"
ENCODER_STACKS = ("torch-inductor", "intel-mlperf", "inc-ipex", "openvino")

#: the summaries ``roofline accuracy`` reports beside the per-stack ones
GROUPS = (
    Group("encoders", ENCODER_STACKS, (Phase.FORWARD,)),
    Group("encoders, every stack", None, (Phase.FORWARD,)),
    Group("llama.cpp prefill", ("llama.cpp",), (Phase.PREFILL,)),
    Group("llama.cpp decode", ("llama.cpp",), (Phase.DECODE,)),
    Group("llama.cpp decode, B>=2", ("llama.cpp",), (Phase.DECODE,), min_batch=2),
    Group("LLM decode", None, (Phase.DECODE,)),
    Group("all", None, (Phase.FORWARD, Phase.PREFILL, Phase.DECODE)),
)


@dataclass(frozen=True)
class Scored:
    figure: Figure
    ceiling: float
    """at the attainable ceiling"""
    bound: float
    realistic: float | None
    """leave-one-platform-out; None for a stack without a profile"""
    realistic_in_sample: float | None

    @property
    def error(self) -> float | None:
        return None if self.realistic is None else self.realistic / self.figure.measured - 1

    @property
    def ceiling_error(self) -> float:
        return self.ceiling / self.figure.measured - 1

    def _of(self, ceiling: float) -> float | None:
        """measured performance over a ceiling's (absolute figures)"""
        kind = self.figure.kind
        if not kind.is_absolute:
            return None
        return self.figure.measured / ceiling if kind.is_rate else ceiling / self.figure.measured

    @property
    def tightness(self) -> float | None:
        return self._of(self.ceiling)

    @property
    def of_bound(self) -> float | None:
        return self._of(self.bound)

    @property
    def violation(self) -> bool:
        """a measured performance above the bound's, or above the ceiling of the validate run the figure comes
        from (its report marked it)"""
        if self.figure.reported_violation:
            return True
        b = self.of_bound
        return b is not None and b > 1 + 1e-9

    @property
    def suspect(self) -> bool:
        t = self.tightness
        return t is not None and t > SUSPECT_TIGHTNESS

    @property
    def unstable(self) -> bool:
        return self.figure.repeat_spread > UNSTABLE_SPREAD

    @property
    def kept(self) -> bool:
        """fitted and scored: neither suspect nor unstable"""
        return not (self.suspect or self.unstable)


#: a Server figure the plan could not price (no rate meets the bound, no request simulated): as far off as e^3
MISSED = 3.0




Fit = tuple[list[Scored], Params | None, dict[str, Params], FormChoice | None]
"""a stack's figures scored, its profile fitted on every platform and without each, and the form they are fitted
in (:meth:`StackInputs.fit`)"""


#: the GEMM classes a cross-stack value stands for: a platform's compute dtypes (a GGUF type's kernels are
#: llama.cpp's own, and an emulated kernel's rate is the platform's measurement of it)
CROSS_DTYPES = get_args(ComputeDtype)


@dataclass
class Fitted:
    """A stack's profile as fitted on every platform (None: nothing to fit) and without each of its platforms."""

    full: Params | None
    per: dict[str, Params] = field(default_factory=dict)
    phases: frozenset[Phase] = frozenset()
    """the phases of its fitted figures (encoder forwards, prefill, decode)"""
    figs: Sequence[Figure] = ()
    """the figures it is fitted on (:meth:`typical_shape`)"""
    _typical: dict[str | None, dict[str, float]] = field(default_factory=dict, repr=False)

    def without(self, platform: str | None) -> Params | None:
        """the profile fitted without ``platform``'s figures (None: on every platform)"""
        return self.per.get(platform, self.full) if platform is not None else self.full

    def typical_shape(self, platform: str | None) -> dict[str, float]:
        """Per GEMM class, the median of the shape term (:func:`~roofline.model.efficiency.shaped`) over the class's
        GEMMs in the figures the profile fitted without ``platform`` was fitted on: what its large-GEMM efficiency
        is multiplied by on the GEMMs it was measured on (a call of one row has none: 1)."""
        if platform not in self._typical:
            q, train = self.without(platform), [f for f in self.figs if f.platform != platform]
            out: dict[str, float] = {}
            if q is not None and train and q.work_half > 0 and q.shape is not ShapeForm.NONE:
                t = FitTable.of(train)
                factor = np.where(t.row_rows <= 1, 1.0, shaped(1.0, t.parts.size(q.shape), q.work_half)[1])
                for k, cls in enumerate(t.classes):
                    out[cls] = float(np.median(factor[t.row_class == k]))
            self._typical[platform] = out
        return self._typical[platform]


def cross_stack(founded: dict[str, Fitted], platform: str | None, phases: frozenset[Phase]) -> dict[str, Sourced]:
    """Each GEMM class's cross-stack efficiency: the geometric mean of the well-founded stacks' (``founded``: each
    fitted on at least :data:`MIN_PLATFORMS` platforms) efficiency for it on the GEMMs they measured it on (their
    fitted large-GEMM efficiency times their shape term's median over those GEMMs, :meth:`Fitted.typical_shape`:
    each stack's efficiency means something only with its own form of the shape term, so what is lent is what the
    class reached), of those measured on the same kind of work (a figure in one of ``phases``: encoder forwards,
    prefill, decode), every profile as fitted without ``platform`` (None: on every platform), so that a left-out
    platform's figures never reach its own prediction. A stack fitted on fewer platforms takes it for a class its
    figures never use and no class of its own runs on the same units (:func:`roofline.model.efficiency.lookup`):
    what a profile resting on one or two CPUs has not seen is better guessed from the stacks measured on many than
    from its own other classes."""
    values: dict[str, list[tuple[str, float, float]]] = {}
    for stack, f in sorted(founded.items()):
        q = f.without(platform)
        if q is None or not f.phases & phases:
            continue
        typical = f.typical_shape(platform)
        phi = typical_factor(q.platform)
        for cls, v in q.gemm.items():
            dtype, isa = (cls.split("-", 1) + [""])[:2]
            if dtype in CROSS_DTYPES and isa != EMULATED:
                values.setdefault(cls, []).append((stack, v, typical.get(cls, 1.0) * phi))
    said = lambda s, v, k: f"{s}'s {v:.4g}" + (f" x {k:.3g}" if k != 1.0 else "")  # noqa: E731
    return {cls: Sourced(value=float(f"{geometric_mean([min(v * k, 1.0) for _, v, k in vs]):.4g}"), kind="derived",
                         source=("the geometric mean of " if len(vs) > 1 else "")
                         + ", ".join(said(*x) for x in vs)
                         + f": gemm_efficiency.{cls} of the stacks fitted on {MIN_PLATFORMS} or more platforms with "
                         + "figures of the same phases (" + ", ".join(sorted(p.value for p in phases)) + "), times "
                         + "each one's shape term at the median of its GEMMs of the class and its platform factors' "
                         + "geometric mean (where it has them)")
            for cls, vs in sorted(values.items())}


def _ceilings(figs: list[Figure]) -> list[float]:
    return [float(v) for v in FitTable.of(figs).predict_params(None)] if figs else []


def score(figs: list[Figure], bound_figs: list[Figure], full: Params | None, per: dict[str, Params] | None,
          fitted: set[int] | None = None) -> list[Scored]:
    """Each figure's two ceilings, its leave-one-platform-out prediction (``per``: the profile refitted without
    its platform) and its in-sample one (``full``)."""
    if not figs:
        return []
    ceiling, bound = _ceilings(figs), _ceilings(bound_figs)
    inside = FitTable.of(figs).predict_params(full) if full else [None] * len(figs)
    out: dict[int, float] = {}
    for platform, q in (per or {}).items():
        idx = [i for i, f in enumerate(figs) if f.platform == platform]
        if idx:
            out.update(zip(idx, FitTable.of([figs[i] for i in idx]).predict_params(q)))
    return [Scored(f, ceiling[i], bound[i], float(out[i]) if per else None,
                   float(inside[i]) if full else None) for i, f in enumerate(figs)]


def summary(scored: Sequence[Scored], command: str, by_class: bool = False) -> Accuracy:
    """The leave-one-platform-out error of the scored figures (fitted and scored: neither suspect nor unstable);
    ``by_class``: also per compute path class (:attr:`Figure.path_class`) of those figures."""
    kept = [s for s in scored if s.error is not None and s.kept]
    errs = [abs(s.error) for s in kept]
    classes = {}
    if by_class:
        for cls in sorted({s.figure.path_class for s in kept} - {None}):
            of = [s for s in kept if s.figure.path_class == cls]
            e = [abs(s.error) for s in of]
            classes[cls] = ClassAccuracy(median_abs_error=float(f"{statistics.median(e):.4g}"),
                                         worst_abs_error=float(f"{max(e):.4g}"), figures=len(e),
                                         platforms=len({s.figure.platform for s in of}))
    return Accuracy(median_abs_error=float(f"{statistics.median(errs):.4g}") if errs else 0.0,
                    worst_abs_error=float(f"{max(errs):.4g}") if errs else 0.0, figures=len(errs),
                    records=len({s.figure.record for s in kept}),
                    platforms=len({s.figure.platform for s in kept}), command=command, classes=classes)


def coverage(scored: Sequence[Scored]) -> float | None:
    """The share of the kept figures ``i`` with ``|e_i| <= median_j |e_j|`` over the same stack's kept figures ``j``
    on other platforms: how often the median band quoted for an unseen CPU holds (0.5 when it is honest)."""
    inside = _inside(scored, scored)
    return float(f"{sum(inside) / len(inside):.4g}") if inside else None


def _inside(pool: Sequence[Scored], of: Sequence[Scored]) -> list[bool]:
    """For each kept figure of ``of``: is its |error| within the median |error| of ``pool``'s kept figures of its
    stack on other platforms (:func:`coverage`)?"""
    errs = [(s.figure.stack, s.figure.platform, abs(s.error)) for s in pool if s.error is not None and s.kept]
    out = []
    for s in of:
        if s.error is None or not s.kept:
            continue
        others = [e for st, p, e in errs if st == s.figure.stack and p != s.figure.platform]
        if others:
            out.append(abs(s.error) <= statistics.median(others))
    return out


def spread(values: Sequence[float]) -> Spread | None:
    if not values:
        return None
    v = sorted(values)
    q = statistics.quantiles(v, n=4, method="inclusive") if len(v) > 1 else [v[0]] * 3
    return Spread(n=len(v), minimum=float(f"{v[0]:.4g}"), p25=float(f"{q[0]:.4g}"), median=float(f"{q[1]:.4g}"),
                  p75=float(f"{q[2]:.4g}"), maximum=float(f"{v[-1]:.4g}"))


def _profile(stack: str) -> tuple[StackProfile | None, str | None]:
    try:
        from roofline.files.reading import shown_path

        return load_stack(stack), shown_path(stack_path(stack))  # no absolute path of this machine in the result
    except UnknownNameError:
        return None, None


def stack_figures(recs: Sequence[LoadedRecord], profile: StackProfile | None) -> tuple[list[Figure], list[Figure]]:
    """A stack's figures at the attainable ceiling and, in the same order, at the bound."""
    rules = profile.path_rules if profile else ()
    kernels = profile.kernels if profile else ""
    shared = profile.shared_kv if profile else None
    barriers = profile.barriers if profile else None
    unfused = profile.unfused_attention if profile else None
    att_kernels = profile.attention_kernels if profile else ()
    att = [f for r in recs for f in figures(r, rules, kernels=kernels, shared_kv=shared, barriers=barriers,
                                            unfused_attention=unfused, attention_kernels=att_kernels)]
    bound = [f for r in recs for f in figures(r, rules, Ceiling.BOUND, kernels, shared, barriers, unfused, att_kernels)]
    return att, bound


@dataclass(frozen=True)
class StackInputs:
    """A stack's scored records, its profile (None: none yet) and figures, and what its fit rests on."""

    recs: Sequence[LoadedRecord]
    profile: StackProfile | None
    path: str | None
    figs: list[Figure]
    bound: list[Figure]
    platforms: int
    """the platforms of the figures it is fitted on"""
    phases: frozenset[Phase]

    @classmethod
    def of(cls, recs: Sequence[LoadedRecord], stack: str) -> StackInputs:
        profile, path = _profile(stack)
        figs, bound = stack_figures(recs, profile)
        fitted = _fitted(score(figs, bound, None, None))
        return cls(recs, profile, path, figs, bound, len({f.platform for f in fitted}),
                   frozenset(f.phase for f in fitted))

    @property
    def founded(self) -> bool:
        """fitted on enough platforms for its own error band, and to lend its efficiencies (:func:`cross_stack`)"""
        return self.platforms >= MIN_PLATFORMS

    @property
    def rules(self):
        return self.profile.path_rules if self.profile else ()

    def fit(self, stack: str, command: str, founded: dict[str, Fitted] | None = None, rechoose: bool = False
            ) -> Fit:
        """:func:`_fit_and_score` in the profile's stored form (``rechoose``, or none stored: chosen anew), a stack
        short of platforms with its cross-stack values from ``founded``"""
        cross = None if self.founded or founded is None else (
            lambda platform: cross_stack(founded, platform, self.phases))
        forms = None if rechoose or self.profile is None else self.profile.forms
        return _fit_and_score(self.figs, self.bound, self.recs, command, stack, self.rules, cross, forms)


def _fit_and_score(figs: list[Figure], bound: list[Figure], recs: Sequence[LoadedRecord], command: str,
                   stack: str = "", rules=(), cross: CrossTable | None = None, forms: FormChoice | None = None
                   ) -> Fit:
    """Fit leave-one-platform-out on the step figures that are not suspect (a server figure is the plan's), in the
    form ``forms`` states (None: chosen here, :func:`~roofline.fidelity.forms.choose_forms`); score every figure
    (``cross``: the cross-stack values of a stack fitted on too few platforms)."""
    at_ceiling = score(figs, bound, None, None)
    fitted = _fitted(at_ceiling)
    if not fitted:
        return at_ceiling, None, {}, None
    search = form_search(fitted, recs, stack, rules, command, cross)
    forms = forms if forms is not None else choose_forms(search, command)
    full, per = fit_forms(search, forms)
    return score(figs, bound, full, per), full, per, forms


def form_search(fitted: list[Figure], recs: Sequence[LoadedRecord], stack: str, rules, command: str,
                cross: CrossTable | None) -> FormSearch:
    """What a stack's fits share: its fitted figures, dispatch, and for a stack with Server runs (and no measured
    dispatch) the per-call values to hold and the plan's errors on those runs."""
    stored = _profile(stack)[0]
    rule = stored.dispatch if stored else None
    dispatch = pooled_dispatch(recs) or ({"call_s": rule.call_s, "per_op_s": rule.per_op_s} if rule else {})
    servers = [r for r in recs if is_server(r) and r.record.server_latencies]
    calls = CALL_GRID if servers and "call_s" not in dispatch else ()

    def server_errors(per: dict[str, Params]) -> dict[str, list[float]]:
        (predicted,) = _server_predictions(recs, stack, rules, [per], command, offline=False)
        return _server_log_errors(recs, predicted)

    return FormSearch(fitted, dispatch, calls, cross, server_errors if calls else None)


def _fitted(at_ceiling: list[Scored]) -> list[Figure]:
    """The figures a profile is fitted on: the step figures that are not suspect (a server figure is the plan's)."""
    return [s.figure for s in at_ceiling if s.kept and s.figure.scenario is not Scenario.SERVER]


def _server_predictions(recs: Sequence[LoadedRecord], stack: str, rules, pers: Sequence[dict[str, Params]],
                        command: str, offline: bool = True,
                        bands: dict[str, float] | None = None) -> list[dict[str, ServerPrediction]]:
    """For each set of leave-one-platform-out profiles in ``pers``, every Server record's plan prediction (its
    platform's profile), all simulated in one call; ``offline``: with the plan's offline capacity of the Offline
    twin's layout too; ``bands``: per platform, the error band at whose two ends the capacity is also simulated."""
    by_id = {r.id: r for r in recs}
    groups: dict[tuple, list[LoadedRecord]] = {}
    for rec in recs:  # records alike in all but their rate share one plan
        if not is_server(rec):
            continue
        r = rec.record
        twin = offline_twin(rec, by_id) if offline else None
        off_cores = (twin.record.platform.instance_cores or 4) if twin else None
        key = (r.platform.name, r.model, tuple(m.precision for m in r.measurements), r.request_lengths,
               r.latency_bound_s, r.platform.cores, r.platform.instance_cores, off_cores, bool(r.server_latencies),
               r.max_batch_tokens, r.batch_watermark_tokens)
        groups.setdefault(key, []).append(rec)
    jobs, where = [], []
    for k, per in enumerate(pers):
        profiles: dict[str, StackProfile] = {}
        for key, members in groups.items():
            name = key[0]
            if name not in per:
                continue
            if name not in profiles:
                profiles[name] = _refitted(stack, per[name], recs, rules, command)
            rates = tuple((rate_of(rec), rec.record.platform.sockets) for rec in members)
            jobs.append(ServerGroup(members[0], profiles[name], key[7], rates, (bands or {}).get(name)))
            where.append((k, members))
    out: list[dict[str, ServerPrediction]] = [{} for _ in pers]
    for (k, members), ps in zip(where, predict_servers(jobs)):
        out[k].update({rec.id: p for rec, p in zip(members, ps)})
    return out


def _server_rps(rec: LoadedRecord, p: ServerPrediction, platform: str) -> float:
    """The predicted rate of the run's own sockets (a run on fewer sockets than the platform's)."""
    share = rec.record.platform.sockets
    return p.rps * (share / load_platform(platform).sockets.value if share else 1.0)


def _server_log_errors(recs: Sequence[LoadedRecord], predicted: dict[str, ServerPrediction]) -> dict[str, list[float]]:
    """Each platform's ``|log(predicted / measured)|`` over its Server runs' figures: the rate, and the p50 and
    p99 latency at it where the record states them."""
    by_id = {r.id: r for r in recs}
    out: dict[str, list[float]] = {}
    for rid, p in predicted.items():
        rec = by_id[rid]
        name = rec.record.platform.name
        errs = out.setdefault(name, [])
        rps = _server_rps(rec, p, name)
        errs.append(abs(math.log(rps / rate_of(rec))) if rps > 0 else MISSED)
        for x in rec.record.server_latencies:
            got = p.latency_s.get(x.percentile)
            errs.append(abs(math.log(got / x.value)) if got else MISSED)
    return out


def _servers(scored: list[Scored], recs: Sequence[LoadedRecord], stack: str, rules, per: dict[str, Params],
             command: str) -> tuple[list[Scored], list[PlanCheck]]:
    """Server figures predicted by the plan (leave-one-platform-out profiles), and each Server run's plan
    ratio against its Offline twin's measured one."""
    by_id = {r.id: r for r in recs}
    (predicted,) = _server_predictions(recs, stack, rules, [per], command, bands=_bands(scored))
    out = []
    for s in scored:
        p = predicted.get(s.figure.record)
        if p is not None:
            s = dataclasses.replace(s, realistic=_server_rps(by_id[s.figure.record], p, s.figure.platform),
                                    realistic_in_sample=None)
        out.append(s)
    checks = []
    for rid, p in predicted.items():
        rec = by_id[rid]
        twin = offline_twin(rec, by_id)
        if twin is None:
            continue
        measured = rate_of(rec) / rate_of(twin)
        ratio = p.ratio
        stated = {x.percentile: x.value for x in rec.record.server_latencies}
        ends = p.ratio_band
        checks.append(PlanCheck(record=rid, offline_record=twin.id, platform=rec.record.platform.name, stack=stack,
                                instance_cores=p.instance_cores, latency_bound_s=rec.record.latency_bound_s,
                                measured_ratio=measured, plan_ratio=ratio, error=ratio / measured - 1,
                                offline_instance_cores=p.offline_instance_cores,
                                measured_p50_s=stated.get(50), plan_p50_s=p.latency_s.get(50),
                                p50_error=_relative(p.latency_s.get(50), stated.get(50)),
                                measured_p99_s=stated.get(99), plan_p99_s=p.latency_s.get(99),
                                p99_error=_relative(p.latency_s.get(99), stated.get(99)),
                                band=p.band, plan_ratio_band=list(ends) if ends else None,
                                within_band=ends[0] <= measured <= ends[1] if ends else None))
    return out, checks


def _bands(scored: list[Scored]) -> dict[str, float]:
    """Per platform, the error band its plan is also simulated at the ends of: the median ``|error|`` of the other
    platforms' leave-one-out step figures (as a user predicting an unseen CPU would quote it)."""
    errs = [(s.figure.platform, abs(s.error)) for s in scored
            if s.error is not None and s.kept and s.figure.scenario is not Scenario.SERVER]
    out = {}
    for platform in sorted({p for p, _ in errs}):
        others = [e for p, e in errs if p != platform]
        if others:
            out[platform] = statistics.median(others)
    return out


def _loo_profile(stack: str, platform: str, inputs: dict[str, StackInputs], fits: dict[str, Fit],
                 command: str) -> StackProfile:
    """``stack``'s profile as its fit without ``platform`` gives it (its full fit where the platform is not among
    its records'; the stored profile where it has no scored record)."""
    fitted = fits.get(stack)
    current = _profile(stack)[0]
    assert current is not None, "checked by _decoder_runs"
    if fitted is None or fitted[1] is None:
        return current
    _, full, per, _ = fitted
    i = inputs[stack]
    return _refitted(stack, per.get(platform, full), i.recs, i.rules, command)


def _refitted(stack: str, q: Params, recs: Sequence[LoadedRecord], rules, command: str) -> StackProfile:
    """``stack``'s profile holding the fitted values ``q`` (a fit without some platform), with its stored profile's
    rules (its kernel table, shared KV cache, latent attention, barriers, unfused attention, dispatch and attention
    kernels; none before its first calibration)."""
    c = _profile(stack)[0]
    return profile_from(stack, stack, q, recs, 0, rules, None, command, kernels=c.kernels if c else "",
                        shared_kv=c.shared_kv if c else None, mla=c.mla if c else None,
                        barriers=c.barriers if c else None, unfused_attention=c.unfused_attention if c else None,
                        dispatch=c.dispatch if c else None, attention_kernels=c.attention_kernels if c else ())


def _decoder_runs(runs: Sequence[LoadedRecord], inputs: dict[str, StackInputs], fits: dict[str, Fit],
                  command: str) -> list[DecoderRunCheck]:
    """Every decoder serving run against the decoder plan of its layout (:mod:`roofline.fidelity.decoder_runs`),
    priced by its stack's profile (or ``priced_by``'s) refitted without its platform; MLPerf runs alike in all but
    their rate share one plan, their latencies simulated at each one's rate in one call."""
    from roofline.catalog.stacks import stack_names

    groups: dict[tuple, list[LoadedRecord]] = {}
    for rec in runs:
        r, m = rec.record, run_rate(rec)
        if _profile(pricing_stack(rec))[0] is None:
            field_name = "priced_by" if r.priced_by else "stack"
            raise SpecError(str(rec.path), field_name, f"{pricing_stack(rec)!r} names no stack profile; one of "
                            f"{', '.join(stack_names())}")
        key = (r.platform.name, r.platform.sockets, r.platform.cores, r.platform.instance_cores, r.model, m.precision,
               m.kv_dtype, r.scenario, r.request_lengths, r.prompt_len, r.output_len, r.max_sequences,
               r.max_batch_tokens, r.latency_bound_s, r.tpot_bound_s, r.concurrency, pricing_stack(rec))
        groups.setdefault(key, []).append(rec)
    predicted: dict[str, tuple] = {}
    for members in groups.values():
        first = members[0]
        profile = _loo_profile(pricing_stack(first), first.record.platform.name, inputs, fits, command)
        rates = tuple(run_rate(rec).value for rec in members) if first.record.scenario is Scenario.SERVER else ()
        p = predict_decoder_run(first, profile, rates)
        for g, rec in enumerate(members):
            predicted[rec.id] = (p, p.latencies_s[min(g, len(p.latencies_s) - 1)] if p.latencies_s else {})
    out = []
    for rec in runs:
        r, m = rec.record, run_rate(rec)
        p, lat = predicted[rec.id]
        server = r.scenario is Scenario.SERVER
        out.append(DecoderRunCheck(record=rec.id, platform=r.platform.name, scenario=r.scenario.value,
                                   priced_by=pricing_stack(rec), instances=p.instances,
                                   instance_cores=int(r.platform.instance_cores or 0),
                                   max_sequences=int(r.max_sequences or 0), unit=rate_unit(rec), measured=m.value,
                                   plan=p.rps, error=p.rps / m.value - 1, ceiling=p.ceiling_rps,
                                   violation=m.value > p.ceiling_rps, concurrency=r.concurrency,
                                   ttft_bound_s=r.latency_bound_s if server else None,
                                   tpot_bound_s=r.tpot_bound_s if server else None,
                                   latencies=[DecoderLatency(kind.value, stat.value, v, lat[kind, stat],
                                                             lat[kind, stat] / v - 1)
                                              for (kind, stat), v in stated_latencies(rec).items()
                                              if (kind, stat) in lat]))
    return out


def _relative(predicted: float | None, measured: float | None) -> float | None:
    return predicted / measured - 1 if predicted is not None and measured else None


def accuracy(records: Sequence[LoadedRecord], command: str) -> AccuracyResult:
    return _evaluate(records, command)[0]


def _evaluate(records: Sequence[LoadedRecord], command: str
              ) -> tuple[AccuracyResult, dict[str, Fitted], dict[str, Fit]]:
    """:func:`accuracy`, the well-founded stacks' fits (the cross-stack values' sources) and every profiled stack's
    fit. The well-founded stacks are fitted first, the others with their cross-stack values (:func:`cross_stack`)."""
    scored_records = [r for r in records if r.record.excluded is None]
    excluded = [ExcludedRecord(r.id, r.record.stack, r.record.platform.name, r.record.excluded)
                for r in records if r.record.excluded is not None]
    rows: list[AccuracyRow] = []
    stacks: list[StackAccuracy] = []
    every: list[Scored] = []
    plans: list[PlanCheck] = []
    runs = [r for r in scored_records if is_decoder_run(r)]  # predicted by the decoder plan, not step figures
    stepped = [r for r in scored_records if not is_decoder_run(r)]
    inputs = {stack: StackInputs.of([r for r in stepped if r.record.stack == stack], stack)
              for stack in sorted({r.record.stack for r in stepped})}
    founded: dict[str, Fitted] = {}
    fits: dict[str, Fit] = {}
    for stack in sorted(inputs, key=lambda k: (not inputs[k].founded, k)):  # the well-founded ones first
        i = inputs[stack]
        if i.profile is not None:
            fits[stack] = i.fit(stack, command, founded)
            scored, full, per, _ = fits[stack]
            if i.founded and full is not None:
                founded[stack] = Fitted(full, per, i.phases, _fitted(scored))
    for stack, i in inputs.items():
        if i.profile is None:
            scored = score(i.figs, i.bound, None, None)
            tight = spread([s.tightness for s in scored if s.tightness is not None])
            stacks.append(StackAccuracy(stack, None, None, None, tightness=tight))
        else:
            scored, _, per, _ = fits[stack]
            scored, checks = _servers(scored, i.recs, stack, i.rules, per, command)
            plans += checks
            ok = [s for s in scored if s.error is not None and s.kept]
            ins = [abs(s.realistic_in_sample / s.figure.measured - 1) for s in ok if s.realistic_in_sample is not None]
            per_platform = {p: statistics.median(abs(s.error) for s in ok if s.figure.platform == p)
                            for p in sorted({s.figure.platform for s in ok})}
            per_phase = {ph.value: summary([s for s in ok if s.figure.phase is ph], command)
                         for ph in Phase if any(s.figure.phase is ph for s in ok)}
            stacks.append(StackAccuracy(stack, i.path, summary(scored, command, by_class=True),
                                        statistics.median(ins) if ins else None,
                                        per_platform, per_phase,
                                        spread([s.tightness for s in scored if s.tightness is not None]),
                                        coverage(scored)))
        every += scored
        rows += [AccuracyRow(record=s.figure.record, platform=s.figure.platform, stack=stack,
                             phase=s.figure.phase.value, kind=s.figure.kind.value, precision=s.figure.precision,
                             baseline=s.figure.baseline, what=s.figure.label, batch=s.figure.batch,
                             measured=s.figure.measured,
                             ceiling=s.ceiling, ceiling_error=s.ceiling_error, bound=s.bound, tightness=s.tightness,
                             of_bound=s.of_bound, violation=s.violation, suspect=s.suspect, unstable=s.unstable,
                             realistic=s.realistic,
                             realistic_error=s.error, realistic_in_sample=s.realistic_in_sample,
                             path_class=s.figure.path_class) for s in scored]
    profiled = set(fits)
    groups = []
    for g in GROUPS:
        members = [s for s in every if s.figure.stack in profiled and (g.stacks is None or s.figure.stack in g.stacks)
                   and s.figure.phase in g.phases and s.figure.batch >= g.min_batch]
        if any(s.error is not None for s in members):
            # each figure against its own stack's band: over the stack's figures, not the group's alone
            band_of = [s for s in every if s.figure.stack in {m.figure.stack for m in members}]
            inside = _inside(band_of, members)
            groups.append(GroupAccuracy(g.name, sorted({s.figure.stack for s in members}),
                                        [p.value for p in g.phases], summary(members, command),
                                        float(f"{sum(inside) / len(inside):.4g}") if inside else None, g.min_batch))
    suspect = [s for s in every if s.suspect]
    notes = ["realistic: each figure predicted by its stack's profile refitted without the figure's platform "
             "(leave-one-platform-out), the error a user predicting an unseen CPU should expect",
             "ceiling: the attainable ceiling (the nominal all-core clock of the busy cores, STREAM-class DRAM "
             "bandwidth); bound: the highest clock the datasheet allows and the theoretical bandwidth; tightness: "
             "measured performance over the attainable ceiling's",
             "a speedup may exceed the ratio of two ceilings (its baseline runs further below its own): only "
             "absolute figures (latency, gemm, throughput, tokens/s) count as violations of the bound"]
    if suspect:
        notes.append(f"{len(suspect)} figure(s) measured above {SUSPECT_TIGHTNESS:g}x their attainable ceiling are "
                     "suspect (the platform's or the record's inputs are wrong) and left out of the fits: "
                     + ", ".join(sorted({s.figure.record for s in suspect})))
    unstable = [s for s in every if s.unstable]
    if unstable:
        notes.append(f"{len(unstable)} figure(s) whose runs in their source disagree by more than "
                     f"{UNSTABLE_SPREAD:.0%} (the same command repeated) are unstable and neither fitted nor scored: "
                     + ", ".join(f"{s.figure.record} {s.figure.label} ({s.figure.repeat_spread:.0%})" for s in unstable))
    decoder_runs = _decoder_runs(runs, inputs, fits, command)
    result = AccuracyResult(records=len(scored_records), figures=len(every),
                            violations=sum(r.violation for r in rows) + sum(d.violation for d in decoder_runs),
                            platforms=len({r.record.platform.name for r in scored_records}), stacks=stacks,
                            groups=groups, tightness=spread([s.tightness for s in every if s.tightness is not None]),
                            rows=rows, plans=plans, decoder_runs=decoder_runs, excluded=excluded, notes=notes)
    return result, founded, fits


def fit_profile(records: Sequence[LoadedRecord], stack: str, command: str, description: str = "",
                rechoose: bool = True) -> StackProfile:
    """The stack's profile fitted on every scored record of the stack (suspect figures left out), with its
    leave-one-platform-out accuracy; fitted on fewer than :data:`MIN_PLATFORMS` platforms, with the cross-stack
    values (:func:`cross_stack`) and error band too; ``rechoose``: its forms chosen anew (else the stored ones)."""
    recs = [r for r in records if r.record.stack == stack and r.record.excluded is None
            and not is_decoder_run(r)]  # a serving run is the plan's prediction, not a figure to fit
    if not recs:
        known = sorted({r.record.stack for r in records if r.record.excluded is None})
        raise UnknownNameError("stack", stack, known, "no scored record of it among the records given")
    i = StackInputs.of(recs, stack)
    cross: dict[str, Sourced] = {}
    band = None
    if i.founded:
        scored, full, per, forms = i.fit(stack, command, rechoose=rechoose)
    else:  # the well-founded stacks' fits give its cross-stack values, and every stack's figures its band
        result, founded, fits = _evaluate(records, command)
        scored, full, per, forms = i.fit(stack, command, founded, rechoose=rechoose)
        every = cross_stack(founded, None, i.phases)
        every_value = bare_values(every)
        cross = {k: v for k, v in every.items() if takes_cross(full.gemm if full else {}, k, every_value)}  # those it can use
        band = next((g.accuracy.median_abs_error for g in result.groups if g.name == "all"), None)
    scored, _ = _servers(scored, recs, stack, i.rules, per, command)
    if full is None:
        raise UserError(f"stack {stack}: every figure is above {SUSPECT_TIGHTNESS:g}x its attainable ceiling; "
                        "nothing to fit (check the records' platforms)")
    kept = [s for s in scored if s.kept and s.figure.scenario is not Scenario.SERVER]
    acc = summary(scored, command, by_class=True)
    if band is not None:  # too few platforms for its own band: the cross-stack one
        acc = dataclasses.replace(acc, cross_stack_median_abs_error=band)
    from roofline.fidelity.profile_values import mark_bounds

    return mark_bounds(profile_from(stack, description or (i.profile.description if i.profile else stack), full, recs,
                                    len(kept), i.rules, acc, command, cross, i.profile.kernels if i.profile else "",
                                    forms, i.profile.shared_kv if i.profile else None,
                                    i.profile.mla if i.profile else None,
                                    i.profile.barriers if i.profile else None,
                                    i.profile.unfused_attention if i.profile else None,
                                    i.profile.dispatch if i.profile else None,
                                    i.profile.attention_kernels if i.profile else ()))
