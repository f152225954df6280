"""``roofline check`` of measured rates: tokens/s (llama-bench's pp and tg, ``--tokens-per-s``) and samples/s of
a whole server (MLPerf, ``--samples-per-s``) beside the ceiling and the realistic estimate of the same step.

A rate is a record's ``tokens_per_s`` or ``throughput`` figure: its step is priced as ``roofline accuracy``
prices that figure (the same workload, layout, KV cache type and lm_head), so a ``records add`` of the file
gives the same ceilings in ``accuracy``. The realistic estimate is the engine's stack profile when one exists
(or a host calibration); without one it is the ceiling plus the roofline-priced terms, and the result says
so. The terms are seconds per step of the whole platform; what the measured step time has beyond the
realistic one is unexplained.
"""

from __future__ import annotations

from roofline.catalog.stacks import load_stack
from roofline.errors import UnknownNameError
from roofline.fidelity.measured import ENGINE_STACKS, Measured
from roofline.model.build import CeilingSpec, LayoutSpec, StepOptions
from roofline.model.efficiency import EfficiencySource
from roofline.model.estimate import EstimateQuery, evaluate
from roofline.model.realistic import TermName
from roofline.model.step import BOUNDS
from roofline.model.workload import WorkloadSpec
from roofline.results.check import CheckResult, CheckTerm, MeasuredFrom, RateRow
from roofline.spec.model import ModelSpec
from roofline.spec.platform import Platform
from roofline.spec.record import Measurement, Record
from roofline.spec.stack import attention_form
from roofline.spec.vocab import Ceiling, FigureKind, Phase


def engine_source(stack: str, calibrated: EfficiencySource | None = None,
                  soft: bool = False) -> tuple[EfficiencySource, list[str]]:
    """The efficiencies for an engine's rates: a host calibration given wins; else the stack's profile (a name or a
    path; ``none``: no profile); a stack the readers name without a profile
    (:data:`~roofline.fidelity.measured.ENGINE_STACKS`, or any name a file's record holds: ``soft``) gets none,
    and a note says so."""
    if calibrated is not None and calibrated.calibration is not None:
        return calibrated, []
    bare = ("the realistic rate is the ceiling plus the roofline-priced terms (activation quantization, "
            "dequantization, ...), with no fitted efficiency")
    if stack.lower() == "none":
        return EfficiencySource(), [f"--stack none: {bare}"]
    try:
        profile = load_stack(stack)
    except UnknownNameError:
        if stack not in ENGINE_STACKS and (not soft or stack.endswith(".toml")):
            raise
        return EfficiencySource(), [f"no {stack} stack profile (platforms/stacks): {bare}"]
    return EfficiencySource(stack=profile), []


def rate_query(r: Record, m: Measurement, source: EfficiencySource, platform: Platform,
               ceiling: Ceiling = Ceiling.ATTAINABLE) -> EstimateQuery:
    """The estimate of one rate figure's step: the workload and layout ``roofline accuracy`` prices it at
    (``ceiling``: the attainable ceiling, or the bound)."""
    kind = FigureKind(m.kind)
    cores = r.platform.cores
    instance_cores = r.figure_instance_cores(kind is FigureKind.TOKENS_PER_S, int(platform.cores_per_socket.value))
    return EstimateQuery(
        precisions=[m.precision], baseline=m.precision,
        workload=WorkloadSpec(phase=m.phase or r.phase, batch=m.batch or r.batch, seq_len=m.seq_len or r.seq_len,
                              context=m.context if m.context is not None else r.context,
                              attention_form=attention_form(source.stack.unfused_attention if source.stack else None,
                                                            r.date or None, r.flash_attention)),
        layout=LayoutSpec(sockets=r.platform.sockets, cores=cores, instance_cores=instance_cores,
                          tensor_parallel=r.split),
        ceiling=CeilingSpec(ceiling=ceiling),
        options=StepOptions(kv_dtype=m.kv_dtype, quantize_lm_head=r.quantize_lm_head,
                            lm_head_precision=r.lm_head_precision), source=source)


def above_bound_causes(phase: Phase, kind: FigureKind, sockets: int | None, platform: Platform) -> str:
    """Why a rate above the bound is first a question about the measurement: what it would take, and the likely
    slips in its description (sockets, lengths, batch, precision), the ones that fit the figure's phase."""
    n = int(sockets or platform.sockets.value)
    whole = int(platform.sockets.value)
    sockets_cause = (f"a run on {whole} sockets counted as {n}" if n < whole else
                     f"more than one server's rate counted as one {platform.name} of {n} socket{'s' if n > 1 else ''}")
    if phase is Phase.DECODE:
        lengths = "a shorter context than stated (fewer tokens in the KV cache)"
        batch = "more sequences decoded per step than stated"
    elif phase is Phase.PREFILL:
        lengths = "shorter prompts than stated"
        batch = "prompts batched or cached (a shared prefix served from the cache)"
    else:
        lengths = "shorter sequences than stated (padding not counted, or a dataset's mean length)"
        batch = "a larger batch per call than stated"
    unit = "tokens" if kind is FigureKind.TOKENS_PER_S else "samples"
    return (f"no run can go this fast on this description, so suspect the measurement or its description before the "
            f"model: {sockets_cause}; {lengths}; {batch}; another (narrower) precision than stated; or {unit} "
            "counted that were not computed")


def rate_row(platform: Platform, spec: ModelSpec, r: Record, m: Measurement, source: EfficiencySource,
             spread: float | None = None) -> RateRow:
    kind = FigureKind(m.kind)
    ev = evaluate(platform, spec, rate_query(r, m, source, platform))
    built, real = ev.evaluated[0], ev.realistic[0]
    work = ev.work
    decode = work.phase is Phase.DECODE
    per_step = work.batch * (1 if decode or kind is FigureKind.THROUGHPUT else work.seq_len)
    ceiling, realistic = per_step / float(real.ceiling_s), per_step / float(real.realistic_s)
    # the bound: the same step at the highest clock the datasheet allows and the theoretical bandwidth
    at_bound = evaluate(platform, spec, rate_query(r, m, source, platform, Ceiling.BOUND))
    bound_rate = per_step / float(at_bound.realistic[0].ceiling_s)
    measured_s = per_step / m.value
    gap = measured_s - real.ceiling_s
    terms = [CheckTerm(t.name.value if isinstance(t.name, TermName) else str(t.name), float(t.seconds),
                       float(t.seconds / real.ceiling_s), float(t.seconds / gap) if gap > 0 else None, t.how,
                       t.calibrated)
             for t in real.terms]
    lay = ev.res.layout
    return RateRow(
        what=m.name or kind.value, precision=m.precision, phase=work.phase.value,
        unit="tokens/s" if kind is FigureKind.TOKENS_PER_S else "samples/s", batch=work.batch,
        seq_len=None if decode else work.seq_len,
        context=work.context if decode or work.context else None, cores=int(lay.sockets * lay.active_cores),
        instances=int(lay.total_instances), measured=m.value, spread=spread, ceiling=ceiling,
        bound=BOUNDS[int(built.step.bound)].value, fraction_of_ceiling=m.value / ceiling, realistic=realistic,
        fraction_of_realistic=m.value / realistic, terms=terms,
        unexplained=float(max(measured_s - real.realistic_s, 0.0) / real.ceiling_s), stack=source.stack_name,
        error_band=source.error_band(ev.res, built.recipe, one_row=work.tokens <= 1),
        upper_bound=bound_rate, fraction_of_upper_bound=m.value / bound_rate,
        suspect=above_bound_causes(work.phase, kind, r.platform.sockets, platform) if m.value > bound_rate * (1 + 1e-9)
        else None)


def check_record(platform: Platform, spec: ModelSpec, r: Record, source: EfficiencySource, *,
                 origin: MeasuredFrom | None = None, spreads: tuple[float | None, ...] = (),
                 notes: list[str] | None = None, label: str = "typed") -> CheckResult:
    """Every rate figure of a record against its ceiling and the realistic estimate."""
    import dataclasses

    spec = dataclasses.replace(spec, num_hidden_layers=r.layers or spec.num_hidden_layers, measured=())
    rates = [rate_row(platform, spec, r, m, source, spreads[i] if i < len(spreads) else None)
             for i, m in enumerate(r.measurements)]
    notes = list(notes or []) + source.notes(platform)
    for x in rates:
        if x.suspect:
            notes.append(f"{x.what} {x.precision}: measured at {x.fraction_of_upper_bound:.0%} of the bound: "
                         f"{x.suspect}")
        elif x.fraction_of_ceiling > 1 + 1e-9:
            peak = "compute peak" if x.bound == "compute" else "bandwidth"
            notes.append(f"{x.what} {x.precision}: measured at {x.fraction_of_ceiling:.0%} of the ceiling "
                         f"({x.bound}-bound): an input of the ceiling (the {peak} of {platform.name}, the layout, the "
                         "model) is below what the run had")
    return CheckResult(model=spec.name, cpu=platform.name, source=label,
                       calibration=source.calibration_name if source.calibration is not None else None,
                       comparisons=[], notes=notes, stack=source.stack_name, realistic_accuracy=source.accuracy,
                       rates=rates, measured_from=origin)


def check_measured(measured: Measured, calibrated: EfficiencySource | None = None) -> CheckResult:
    """``check --from``: every figure of a measurement file."""
    source, notes = engine_source(measured.record.stack, calibrated, soft=True)
    o = measured.origin
    return check_record(measured.platform, measured.spec, measured.record, source, origin=o, spreads=measured.spreads,
                        notes=notes, label=f"{o.format}: {o.path}")
