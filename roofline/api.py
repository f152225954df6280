"""The Python API: each command as a function, its keyword arguments the command's flags.

    >>> import roofline
    >>> r = roofline.estimate(model="bert-large", cpu="icx")   # the result --json prints
    >>> round(r.speedups[0].end_to_end_ceiling, 2)
    3.15

A flag ``--seq-len`` is the argument ``seq_len``; a switch (``--separate-qkv``) takes True; a list flag
(``--precision``) takes a list or a comma-separated string. ``model``, ``cpu``, ``calibration`` and
``stack`` also take the objects themselves (a :class:`~roofline.spec.model.ModelSpec`, a
:class:`~roofline.spec.platform.Platform`, ...). Every argument is checked by its definition in
:mod:`roofline.arguments`, the same the command line's flags are built from, and a bad one raises
:class:`roofline.errors.UserError` naming it. Results are the typed objects behind the JSON contract;
``result.to_json()`` is exactly what ``--json`` prints.
"""

from __future__ import annotations

from typing import Any

from roofline import arguments as A
from roofline.errors import UserError


class Values(dict):
    """A command's checked arguments, by name (also as attributes)."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def checked(command: A.Command, given: dict[str, Any]) -> Values:
    """``given`` checked against the command's argument definitions, the defaults filled in."""
    try:
        return Values(command.values(given))
    except KeyError as e:
        names = ", ".join(a.name for a in command.args)
        raise UserError(f"{command.name}: no argument '{e.args[0]}'; the arguments: {names}") from None
    except A.ArgumentError as e:
        raise UserError(f"{command.name}: {e.arg.name}: {e.reason}") from None
    except A.MissingArguments as e:
        raise UserError(f"{command.name}: {e}") from None


def efficiency_source(a: Values):
    """The :class:`~roofline.model.efficiency.EfficiencySource` the calibration and stack arguments name."""
    from roofline.catalog import resolve
    from roofline.model.efficiency import GGUF_STACK, TORCH_STACK, EfficiencySource

    c, name = resolve.calibration(a.get("calibration"))
    stack = a.get("stack")
    named = stack is not None
    if stack is None:
        stack = GGUF_STACK if _gguf(a) else TORCH_STACK
    return EfficiencySource(stack=resolve.stack(stack), calibration=c, calibration_name=name,
                            any_platform=bool(a.get("calibration_any_platform")), per_engine=not named)


def _gguf(a: Values) -> bool:
    """A GGUF model file, or precisions named after GGUF types: llama.cpp's territory."""
    from roofline.spec.gguf_types import RECIPE_TYPES
    from roofline.spec.precision import MIX_NAMES

    model = a.get("model")
    precisions = a.get("precision") or []
    precisions = [precisions] if isinstance(precisions, str) else list(precisions)
    return (isinstance(model, str) and model.lower().endswith(".gguf")) or bool(precisions) and all(
        str(p).lower() in RECIPE_TYPES or str(p).lower() in MIX_NAMES for p in precisions)


def with_sockets(platform, a: Values):
    """The platform as a server of ``--sockets`` of its sockets, when given."""
    from roofline.spec.platform import with_sockets as used

    return _variant(platform, a, "sockets", used)


def with_channels(platform, a: Values):
    """The platform on ``--memory-channels`` channels per socket (its bandwidths scaled), when given."""
    from roofline.spec.platform import with_memory_channels

    return _variant(platform, a, "memory_channels", with_memory_channels)


def _variant(platform, a: Values, name: str, make):
    """``make(platform, value)`` for a flag given, its ValueError ("<what>: <why>") as the flag's one line."""
    n = a.get(name)
    if n is None:
        return platform
    try:
        return make(platform, n)
    except ValueError as e:
        raise UserError(f"--{name.replace('_', '-')} {n}: {str(e).split(': ', 1)[-1]}") from None


def _require(command: str, a: Values, *names: str, alternative: str = "") -> None:
    missing = [f"--{n.replace('_', '-')}" for n in names if a.get(n) is None]
    if missing:
        raise UserError(f"{command} needs {', '.join(missing)}{alternative}")


# ------------------------------------------------------------------------------- estimate


def estimate(model: Any = None, cpu: Any = None, **flags: Any):
    """``roofline estimate``: the roofline ceilings of ``model``'s GEMMs on ``cpu``, the end-to-end Amdahl ceiling
    and the realistic estimate; returns the :class:`~roofline.results.estimate.EstimateResult`.

    Arguments: precision, baseline, batch, seq_len, phase, context, bandwidth, memory_model, cores, instance_cores,
    sockets, tensor_parallel, group_size, kv_dtype, quantize_lm_head, calibration, stack, separate_qkv, f_gemm, gemm_speedup,
    non_gemm_speedup, calibration_any_platform, server_overhead_w (``roofline estimate --help``)."""
    return run_estimate(checked(A.ESTIMATE, {"model": model, "cpu": cpu, **flags}))


def estimate_inputs(a: Values):
    """``(platform, its file, model, EstimateQuery)`` of checked estimate arguments."""
    from roofline.catalog import resolve
    from roofline.model.amdahl import Overrides
    from roofline.model.build import CeilingSpec, LayoutSpec, StepOptions
    from roofline.model.estimate import EstimateQuery
    from roofline.model.workload import WorkloadSpec

    _require("estimate", a, "model", "cpu")
    platform, platform_file = resolve.platform(a.cpu)
    platform = with_channels(platform, a)
    spec = resolve.model(a.model)
    query = EstimateQuery(
        precisions=a.precision, baseline=a.baseline,
        workload=WorkloadSpec(phase=a.phase, batch=a.batch, seq_len=a.seq_len, context=a.context,
                              fused_qkv=not a.get("separate_qkv", False)),
        layout=LayoutSpec(sockets=a.get("sockets"), cores=a.cores, instance_cores=a.instance_cores,
                          tensor_parallel=a.get("tensor_parallel") or 1),
        ceiling=CeilingSpec(memory_model=a.memory_model, bandwidth=a.bandwidth, ceiling=a.ceiling),
        options=StepOptions(group_size=a.get("group_size"), kv_dtype=a.get("kv_dtype"),
                            quantize_lm_head=bool(a.get("quantize_lm_head"))),
        source=efficiency_source(a),
        overrides=Overrides(a.get("f_gemm"), a.get("gemm_speedup"), a.get("non_gemm_speedup")),
    )
    return platform, platform_file, spec, query


def run_estimate(a: Values):
    """The estimate of checked arguments (also what ``plot`` draws)."""
    from roofline.model.energy import estimate_energy
    from roofline.model.estimate import estimate as model_estimate

    platform, platform_file, spec, query = estimate_inputs(a)
    result = model_estimate(platform, spec, query, platform_file=platform_file)
    return estimate_energy(result, platform, a.get("server_overhead_w") or 0.0)


# ------------------------------------------------------------------------------- footprint


def footprint(model: Any = None, precision: str | None = None, **flags: Any):
    """``roofline footprint``: bytes of ``model``'s tensors before and after quantizing to ``precision``; returns
    the :class:`~roofline.results.footprint.FootprintResult`.

    Arguments: base_dtype, group_size, quantize_lm_head, quantize_embeddings, count_tied_lm_head_copy."""
    from roofline.catalog import resolve
    from roofline.model.footprint import footprint as model_footprint

    a = checked(A.FOOTPRINT, {"model": model, "precision": precision, **flags})
    _require("footprint", a, "model", "precision")
    return model_footprint(resolve.model(a.model), a.precision, base_dtype=a.base_dtype, group_size=a.group_size,
                           quantize_lm_head=a.quantize_lm_head, quantize_embeddings=a.quantize_embeddings,
                           count_tied_lm_head_copy=a.count_tied_lm_head_copy)


# ------------------------------------------------------------------------------- check


def check(**flags: Any):
    """``roofline check``: measured speedups (typed, or a validate ``report``) beside the ceilings and the
    realistic estimate, the gap split into named terms; or measured rates (``tokens_per_s``, ``samples_per_s``,
    or ``from_file``: a llama-bench result or an MLPerf summary) beside their ceilings; returns the
    :class:`~roofline.results.check.CheckResult`.

    Arguments: model, cpu, precision, baseline, throughput_speedup, linear_speedup, report, calibration, stack,
    batch, seq_len, memory_model, f_gemm, gemm_speedup, non_gemm_speedup, calibration_any_platform, phase, context,
    engine_ops_per_cycle, dequant, widen_weights, engine_kv_dtype, from_file, tokens_per_s, samples_per_s, cores,
    instance_cores, kv_dtype, quantize_lm_head, system."""
    from roofline.catalog import resolve
    from roofline.model.amdahl import Overrides

    a = checked(A.CHECK, flags)
    rates = [f for f, v in (("--from", a.from_file), ("--tokens-per-s", a.tokens_per_s),
                            ("--samples-per-s", a.samples_per_s)) if v is not None]
    if rates:
        return _check_rates(a, rates)
    for name in ("system", "cores", "instance_cores", "kv_dtype"):
        if a[name] is not None:
            raise UserError(f"--{name.replace('_', '-')}: applies to measured rates (--tokens-per-s, --samples-per-s, "
                            "--from)")
    if a.quantize_lm_head:
        raise UserError("--quantize-lm-head: applies to --tokens-per-s")
    a["stack"] = a.stack or "torch-inductor"
    batch, seq_len = a.batch or 1, a.seq_len or DEFAULT_SEQ_LEN
    source = efficiency_source(a)
    if a.report:
        if a.throughput_speedup is not None or a.linear_speedup is not None:
            raise UserError("give either --report or the measured speedups, not both")
        return _check_report(a, source)
    if a.phase == "prefill":
        raise UserError("--phase prefill: a measured prefill rate is --tokens-per-s; speedups are of forward or decode")
    if a.phase == "decode":
        from roofline.fidelity.check_decode import Engine, check_decode
        from roofline.model.estimate import default_baseline

        _require("check --phase decode", a, "model", "cpu", "precision", "throughput_speedup")
        if a.linear_speedup is not None:
            raise UserError("--linear-speedup: not with --phase decode (its throughput speedup is tokens/s)")
        spec, platform = resolve.model(a.model), resolve.platform(a.cpu)[0]
        return check_decode(platform, spec, a.precision, a.baseline or default_baseline(platform, spec),
                            throughput_speedup=a.throughput_speedup, batch=batch, context=a.context,
                            engine=Engine(a.engine_ops_per_cycle, a.dequant, a.widen_weights, a.engine_kv_dtype),
                            source=source, memory_model=a.memory_model)
    from roofline.fidelity.check import check_typed

    _require("check", a, "model", "cpu", "precision", "throughput_speedup",
             alternative=" (or --report REPORT.json, or a measured rate: --from FILE, --tokens-per-s, --samples-per-s)")
    return check_typed(resolve.platform(a.cpu)[0], resolve.model(a.model), a.precision, a.baseline or "fp32",
                       throughput_speedup=a.throughput_speedup, linear_speedup=a.linear_speedup, batch=batch,
                       seq_len=seq_len, overrides=Overrides(a.f_gemm, a.gemm_speedup, a.non_gemm_speedup),
                       source=source, memory_model=a.memory_model)


def _check_rates(a: Values, given: list[str]):
    """Measured rates: a file's (``--from``) or typed (``--tokens-per-s``, ``--samples-per-s``)."""
    from roofline.catalog import resolve
    from roofline.fidelity.check_rates import check_measured, check_record, engine_source
    from roofline.model.efficiency import EfficiencySource

    if len(given) > 1:
        raise UserError(f"{given[0]} and {given[1]}: give one measurement")
    for flag, name in (("--throughput-speedup", "throughput_speedup"), ("--linear-speedup", "linear_speedup"),
                       ("--report", "report"), ("--baseline", "baseline"), ("--f-gemm", "f_gemm"),
                       ("--gemm-speedup", "gemm_speedup"), ("--non-gemm-speedup", "non_gemm_speedup"),
                       ("--engine-ops-per-cycle", "engine_ops_per_cycle"), ("--engine-kv-dtype", "engine_kv_dtype")):
        if a[name] is not None:
            raise UserError(f"{flag}: not with {given[0]} (a measured rate is compared with its ceiling, not a speedup)")
    if a.memory_model != A.MEMORY_MODEL.default:
        raise UserError(f"--memory-model {a.memory_model}: {given[0]} is priced with the levels model, as accuracy "
                        "prices every record")
    calibration, name = resolve.calibration(a.calibration)
    calibrated = EfficiencySource(calibration=calibration, calibration_name=name,
                                  any_platform=bool(a.calibration_any_platform)) if calibration else None
    if a.from_file is not None:
        for flag, name in (("--phase", "phase"), ("--context", "context"), ("--kv-dtype", "kv_dtype")):
            if a[name] is not None:
                raise UserError(f"{flag}: --from takes it from the file")
        if a.quantize_lm_head:
            raise UserError("--quantize-lm-head: --from takes it from the file's engine")
        return check_measured(read_measured_args(a.from_file, a), calibrated)
    record, platform, spec = typed_rate_record(a)
    source, notes = engine_source(record.stack, calibrated)
    return check_record(platform, spec, record, source, notes=notes, label="typed")


def read_measured_args(path: str, a: Values):
    """A measurement file read with the flags that complete it."""
    from roofline.errors import SpecError
    from roofline.fidelity.measured import Given, read_measured

    try:
        return read_measured(path, Given(cpu=a.get("cpu"), model=a.get("model"), precision=a.get("precision"),
                                         cores=a.get("cores"), batch=a.get("batch"), seq_len=a.get("seq_len"),
                                         instance_cores=a.get("instance_cores"), stack=a.get("stack"),
                                         system=a.get("system")))
    except ValueError as e:  # a value of the file or a flag outside a record's range (the record's own checks)
        raise SpecError(str(path), "", f"the record it makes is refused: {e}") from None


def typed_rate_record(a: Values):
    """``--tokens-per-s`` or ``--samples-per-s`` as the record a file stating that measurement gives."""
    from roofline.catalog import resolve
    from roofline.spec.record import Measurement, Record, RecordPlatform

    what = "--tokens-per-s" if a.tokens_per_s is not None else "--samples-per-s"
    _require(f"check {what}", a, "model", "cpu", "precision")
    platform, file = resolve.platform(a.cpu)
    spec = resolve.model(a.model)
    name = a.cpu if isinstance(a.cpu, str) else platform.name
    if a.tokens_per_s is not None:
        if a.phase not in ("prefill", "decode"):
            raise UserError("--tokens-per-s: give --phase prefill (a prompt of --seq-len tokens) or decode (one token "
                            "per sequence at --context)")
        decode = a.phase == "decode"
        if decode and a.seq_len is not None:
            raise UserError("--seq-len: a decode rate is at --context tokens in the KV cache")
        m = Measurement(kind="tokens_per_s", precision=a.precision, value=a.tokens_per_s, name=f"{a.phase} rate",
                        phase=a.phase, seq_len=None if decode else (a.seq_len or DEFAULT_SEQ_LEN),
                        context=a.context, kv_dtype=a.kv_dtype)
        cores = a.cores or platform.cores_per_socket.value  # one engine process per socket
        record_platform = RecordPlatform(name=name, cores=cores, sockets=a.get("sockets") or 1,
                                         instance_cores=a.instance_cores or cores)
        batch, seq_len = a.batch or 1, a.seq_len or DEFAULT_SEQ_LEN
    else:
        if a.phase not in (None, "forward") or a.context is not None or a.kv_dtype is not None or a.quantize_lm_head:
            raise UserError("--samples-per-s: an encoder's rate; --phase, --context, --kv-dtype and "
                            "--quantize-lm-head apply to --tokens-per-s")
        m = Measurement(kind="throughput", precision=a.precision, value=a.samples_per_s, name="samples rate")
        record_platform = RecordPlatform(name=name, cores=a.cores, sockets=a.get("sockets"),
                                         instance_cores=a.instance_cores or 4)
        batch, seq_len = a.batch or 1, a.seq_len or DEFAULT_SEQ_LEN
    try:
        record = Record(description="typed", source="typed", stack=a.stack or _default_stack(a.precision),
                        platform=record_platform, model=spec.name, batch=batch, seq_len=seq_len,
                        quantize_lm_head=bool(a.quantize_lm_head), measurements=(m,))
    except ValueError as e:
        raise UserError(f"{what}: {e}") from None
    return record, platform, spec


def _default_stack(precision: str | None) -> str:
    """The stack a typed rate is priced by: the engine's for a GGUF type (:func:`~roofline.model.efficiency.gguf_stack`),
    torch-inductor's otherwise."""
    from roofline.model.efficiency import TORCH_STACK, gguf_stack, is_gguf
    from roofline.spec.precision import RECIPES

    recipe = RECIPES.get(precision or "")
    return gguf_stack(recipe) if recipe is not None and is_gguf(recipe) else TORCH_STACK


def report_platform(report, cpu, path: str):
    """The platform a validate report was measured on: ``cpu``, else the probe file it names."""
    from roofline.catalog import resolve

    if cpu is not None:
        platform = resolve.platform(cpu)[0]
    else:
        try:
            platform = resolve.platform(report.platform.file)[0]
        except UserError:
            raise UserError(f"{path}: its platform file {report.platform.file} is not here; give the probe with "
                            "--cpu") from None
    if platform.name != report.platform.name:
        raise UserError(f"{path}: the report was measured on '{report.platform.name}', not '{platform.name}' "
                        f"(--cpu {cpu if isinstance(cpu, str) else platform.name})")
    return platform


def report_spec(report, model, path: str):
    """The model as a validate report built it (its layer count), checked against ``model`` when given."""
    from roofline.catalog import find_file, load_model_file, resolve
    from roofline.fidelity.check import report_model

    given = resolve.model(model).name if model else report.model
    if given != report.model:
        raise UserError(f"{path}: the report is for model '{report.model}', not '{given}'")
    return report_model(report, load_model_file(find_file("models", report.model)))


def _check_report(a: Values, source):
    from roofline.catalog.reports import load_report
    from roofline.fidelity.check import check_report

    report = load_report(a.report)
    result = check_report(report, report_platform(report, a.cpu, a.report), report_spec(report, a.model, a.report),
                          source=a.report, efficiencies=source, precision=a.precision,
                          baseline=(a.baseline or "fp32") if a.precision else None)
    if not result.comparisons:
        raise UserError(f"{a.report}: no timed INT8 comparison"
                        + (f" of {a.precision} vs {a.baseline or 'fp32'}" if a.precision else ""))
    return result


# ------------------------------------------------------------------------------- calibrate, accuracy


def calibrate(report: Any = None, **flags: Any):
    """``roofline calibrate``: a host :class:`~roofline.spec.calibration.Calibration` fitted from validate
    ``report`` files of one host, or (``records``) a software stack's
    :class:`~roofline.spec.stack.StackProfile` fitted from measurement records.

    Arguments: records, stack, cpu, model."""
    from roofline.catalog.records import load_records
    from roofline.catalog.reports import load_report

    a = checked(A.CALIBRATE, {"report": report, **flags})
    reports = a.report or []
    if a.records is not None:
        if reports:
            raise UserError("give either validate reports (a host calibration) or --records (a stack profile), not both")
        from roofline.fidelity.accuracy import fit_profile

        command = "roofline calibrate --records" + "".join(f" {p}" for p in a.records) + \
            (f" --stack {a.stack}" if a.stack != "torch-inductor" else "")
        return fit_profile(load_records(a.records or None), a.stack, command)
    if not reports:
        raise UserError("calibrate needs validate reports (a host calibration) or --records (a stack profile)")
    from roofline.fidelity.calibrate import fit_calibration

    loaded = [(load_report(path), path) for path in reports]
    platform = report_platform(loaded[0][0], a.cpu, loaded[0][1])
    for r, path in loaded[1:]:
        if r.platform.name != platform.name or r.host.cpu_model != loaded[0][0].host.cpu_model:
            raise UserError(f"{path}: measured on '{r.platform.name}' ({r.host.cpu_model}), not on the host of "
                            f"{loaded[0][1]} ({loaded[0][0].host.cpu_model}): calibrate one host at a time")
    return fit_calibration([(r, report_spec(r, a.model, path), path) for r, path in loaded], platform)


def _refuse_server_summary(path: str) -> None:
    """An MLPerf Server summary is refused by ``records add``: its rate is the highest meeting a p99 latency bound
    under Poisson arrivals, a figure of ``roofline plan``'s simulation, not the throughput figure the record would
    hold (it was written as one and scored as an Offline run)."""
    from roofline.catalog.mlperf_log import is_summary, parse_summary
    from roofline.files.reading import read_bytes

    text = read_bytes(path).decode("utf-8-sig", "replace")
    if not is_summary(text):
        return
    summary = parse_summary(text, path)
    if summary.scenario == "Server":
        raise UserError(f"{path}: a Server run: its scheduled rate is the highest meeting the latency bound "
                        f"({summary.parameters.get('target_latency (ns)', '?')} ns), a figure of roofline plan, not a "
                        "throughput; records add writes Offline runs (a Server record also needs scenario, "
                        "latency_bound_s and server_latencies: see validation/records/corpus/*-server.toml)")


def records_add(file: Any = None, **flags: Any):
    """``roofline records add FILE``: a llama-bench result or an MLPerf summary as a measurement record; returns the
    :class:`~roofline.fidelity.measured.Measured` (its ``record``, and what each field rests on) and the record's
    TOML text, which ``roofline accuracy --records`` reads."""
    from roofline.catalog.write import record_toml

    a = checked(A.RECORDS, {"action": "add", "file": file, **flags})
    _require("records add", a, "file")
    _refuse_server_summary(a.file)
    measured = read_measured_args(a.file, a)
    header = (f"{measured.record.description}\nwritten by roofline records add from {a.file} "
              f"({measured.origin.format}); every field's source is in its comment, 'assumed' where the file does "
              "not state it")
    text = record_toml(measured.record, measured.comments, header)
    _loads_back(text, str(a.file))
    return measured, text


def _loads_back(text: str, source: str) -> None:
    """``records add`` writes only what its reader accepts: the record's TOML parsed and validated as
    ``accuracy --records`` will, else a one-line UserError (never a file the folder's next reading refuses)."""
    from roofline.catalog.validate import validate
    from roofline.errors import SpecError
    from roofline.files.reading import parse_toml
    from roofline.spec.record import Record

    try:
        validate(Record, parse_toml(text.encode("utf-8"), source), source)
    except (SpecError, UnicodeEncodeError) as e:
        raise UserError(f"{source}: the record made from it would not load back ({e}); nothing written") from None


def accuracy(records: list[str] | str | None = None):
    """``roofline accuracy``: every measurement record (files or folders; default: the built-in ones) against
    the ceiling and the realistic estimate, leave-one-platform-out; returns the
    :class:`~roofline.results.accuracy.AccuracyResult`."""
    from pathlib import Path

    from roofline.catalog import builtin_dir
    from roofline.catalog.records import load_records, records_dir
    from roofline.catalog.results_cache import cached
    from roofline.fidelity.accuracy import accuracy as run_accuracy
    from roofline.results.accuracy import AccuracyResult

    a = checked(A.ACCURACY, {"records": records})
    command = "roofline accuracy" + ("".join(f" {p}" for p in a.records) if a.records else "")
    paths = [Path(p).expanduser() for p in a.records] if a.records else [records_dir()]
    loaded = load_records(a.records or None)  # bad input is refused before the cache is looked at
    inputs = list(dict.fromkeys([*paths, builtin_dir("results"), *(Path(r.path).parent for r in loaded)]))
    return cached(AccuracyResult, "accuracy", inputs, lambda: run_accuracy(loaded, command))


# ------------------------------------------------------------------------------- plan


def plan(model: Any = None, cpu: Any = None, **flags: Any):
    """``roofline plan``: instance layouts, requests per second per server under the SLO, servers needed and cost,
    per CPU (``cpu``: one, a list, or a comma-separated string); returns the
    :class:`~roofline.results.plan.PlanResult`.

    Arguments: precision, scenario, target_rps, p99_ms, price_per_hour, utilization, seq_len, seq_len_mean,
    seq_len_dist, seq_len_sigma, seq_len_histogram, max_batch_tokens, batch_watermark_tokens, max_wait_ms,
    output_len, ttft_ms, tpot_ms, concurrency, memory_gb, max_sequences, kv_dtype, phase, stack, cores, instance_cores,
    tensor_parallel, memory_model, ceiling, bandwidth, seed, commands, engine, price_per_kwh, server_overhead_w
    (``roofline plan --help``)."""
    from roofline.capacity import PlanOptions
    from roofline.capacity import plan as capacity_plan
    from roofline.catalog import resolve
    from roofline.model.build import CeilingSpec
    from roofline.model.energy import plan_with_energy

    a = checked(A.PLAN, {"model": model, "cpu": cpu, **flags})
    _require("plan", a, "model", "cpu")
    platforms = [with_sockets(with_channels(p, a), a) for p in resolve.platforms(a.cpu)]
    spec = resolve.model(a.model)
    ms = lambda v: None if v is None else v / 1e3  # noqa: E731
    options = PlanOptions(
        lengths=_request_lengths(a, spec), scenario=a.scenario, phase=a.phase,
        max_batch_tokens=a.max_batch_tokens, batch_watermark_tokens=a.batch_watermark_tokens,
        max_wait_s=a.max_wait_ms / 1e3, p99_s=ms(a.p99_ms),
        ttft_s=ms(a.ttft_ms), tpot_s=ms(a.tpot_ms), target_rps=a.target_rps, utilization=a.utilization,
        prices=a.price_per_hour, output_len=a.output_len, memory_gb=a.memory_gb, max_sequences=a.max_sequences,
        kv_dtype=a.kv_dtype, source=efficiency_source(a), cores=a.cores, instance_cores=a.instance_cores,
        ceiling=CeilingSpec(memory_model=a.memory_model, bandwidth=a.bandwidth, ceiling=a.ceiling), seed=a.seed,
        users=tuple(a.concurrency) if a.get("concurrency") else None,
        tensor_parallel=a.get("tensor_parallel") or 1,
    )
    if a.get("engine") and not a.get("commands"):
        raise UserError("--engine chooses the engine of --commands: give --commands too")
    result = capacity_plan(platforms, spec, a.precision, options)
    result = plan_with_energy(result, platforms, overhead_w=a.server_overhead_w, price_per_kwh=a.price_per_kwh)
    if a.get("commands"):
        from roofline.capacity.deploy import with_commands

        result = with_commands(result, platforms, spec, a.get("engine"))
    return result


DEFAULT_SEQ_LEN = 256


def _request_lengths(a: Values, model):
    """``seq_len`` (fixed), ``seq_len_mean`` (a truncated lognormal) or ``seq_len_histogram`` (a file)."""
    import math

    from roofline.capacity.options import DEFAULT_OUTPUT_LEN
    from roofline.serving.request_lengths import fixed_lengths, histogram_lengths, lognormal_lengths

    given = [f for f, v in (("--seq-len", a.seq_len), ("--seq-len-mean", a.seq_len_mean),
                            ("--seq-len-histogram", a.seq_len_histogram)) if v is not None]
    if len(given) > 1:
        raise UserError(f"{given[0]} and {given[1]}: give one way of stating the request lengths")
    if a.seq_len_mean is None and (a.seq_len_dist or a.seq_len_sigma is not None):
        raise UserError(f"{'--seq-len-dist' if a.seq_len_dist else '--seq-len-sigma'} shapes the distribution of "
                        "--seq-len-mean; give --seq-len-mean")
    if a.seq_len_histogram is not None:
        from roofline.catalog.length_histogram import read_length_histogram

        lengths, weights = read_length_histogram(a.seq_len_histogram, max_length=model.max_position_embeddings)
        return histogram_lengths(lengths, weights)
    if a.seq_len_mean is not None:
        room = model.max_position_embeddings  # a decoder's prompt leaves room for the output
        if model.family == "decoder" and a.phase in (None, "decode"):
            room -= DEFAULT_OUTPUT_LEN if a.output_len is None else a.output_len
        hi = min(math.ceil(4 * a.seq_len_mean), room)
        if not a.seq_len_mean < hi:
            raise UserError(f"--seq-len-mean {a.seq_len_mean:g}: must be below {hi:,} tokens ({model.name}'s "
                            f"{model.max_position_embeddings:,} positions, less any output; the lognormal is "
                            "truncated there)")
        if not a.seq_len_mean > 1:
            raise UserError(f"--seq-len-mean {a.seq_len_mean:g}: a distribution of lengths needs a mean above 1 "
                            "token; use --seq-len 1")
        sigma = 0.5 if a.seq_len_sigma is None else a.seq_len_sigma
        return lognormal_lengths(a.seq_len_mean, sigma, 1, hi)
    return fixed_lengths(DEFAULT_SEQ_LEN if a.seq_len is None else a.seq_len)


# ------------------------------------------------------------------------------- sweep


def sweep_grid(a: Values):
    """The checked sweep arguments as its grid, every name, axis and model limit checked before anything is
    evaluated: ``(models, platforms, precisions, batches, seq_lens)``, the two axes as
    :class:`~roofline.model.sweep.AxisValues`."""
    import math

    from roofline.catalog import resolve
    from roofline.model.sweep import AxisValues
    from roofline.model.workload import make_workload
    from roofline.spec.precision import get_recipe

    _require("sweep", a, "model", "cpu")
    precisions = a.precision or ["fp32", "int8-static"]
    size = lambda axis: sum(len(r) for r in axis) if axis else 1  # noqa: E731
    points = math.prod([len(a.model), len(a.cpu), len(precisions), size(a.batch), size(a.seq_len)])
    if points > A.MAX_SWEEP_POINTS:
        raise UserError(f"the grid has {points:,} points, more than the {A.MAX_SWEEP_POINTS:,} a sweep evaluates; "
                        "narrow --batch or --seq-len (a step, e.g. 1:4096:64) or split the sweep")
    for p in precisions:
        get_recipe(p)
    models = [resolve.model(m) for m in a.model]
    platforms = [resolve.platform(c)[0] for c in a.cpu]
    batches, seqs = AxisValues(a.batch or [1]), AxisValues(a.seq_len or [256])
    for m in models:  # every model's limits (positions, phase, context), on the largest point
        make_workload(m, a.phase, batches.max(), seqs.max(), a.context)
    return models, platforms, precisions, batches, seqs


def grid_words(models, platforms, precisions, batches, seqs) -> str:
    """``2 models x 1 CPU x 2 precisions x 2 batches x 1 sequence length``"""
    axes = [(len(models), "model", "models"), (len(platforms), "CPU", "CPUs"),
            (len(precisions), "precision", "precisions"), (len(batches), "batch", "batches"),
            (len(seqs), "sequence length", "sequence lengths")]
    return " x ".join(f"{n} {one if n == 1 else many}" for n, one, many in axes)


def sweep(model: Any = None, cpu: Any = None, **flags: Any):
    """``roofline sweep``: the grid of models x CPUs x precisions x batch x sequence as a
    :class:`~roofline.results.sweep.SweepTable` of numpy columns (the CSV's, units in the names), evaluated
    block by block when it is read: ``len(t)``, ``t["step_time_s"]``, ``t.to_pandas()``, ``t.to_arrow()``,
    ``t.write("grid.parquet")``.

    Arguments: precision, batch, seq_len (lists, or ``start:stop[:step]`` strings), phase, context, bandwidth,
    memory_model, cores, instance_cores, sockets, server_overhead_w."""
    return sweep_of(checked(A.SWEEP, {"model": model, "cpu": cpu, **flags}))


def sweep_of(a: Values):
    """The sweep table of checked arguments (``sweep`` and the command line's, which streams it to a file)."""
    from roofline.model.build import CeilingSpec, LayoutSpec
    from roofline.model.sweep import sweep_table

    models, platforms, precisions, batches, seqs = sweep_grid(a)
    return sweep_table(platforms, models, precisions, batches, seqs,
                       grid=grid_words(models, platforms, precisions, batches, seqs), phase=a.phase,
                       context=a.context, ceiling=CeilingSpec(memory_model=a.memory_model, bandwidth=a.bandwidth, ceiling=a.ceiling),
                       layout=LayoutSpec(sockets=a.get("sockets"), cores=a.cores, instance_cores=a.instance_cores),
                       overhead_w=a.server_overhead_w)
