"""``roofline validate``: per-shape kernels and the end-to-end encoder, against the ceilings."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable
from dataclasses import dataclass

import torch
from roofline.validation.budget import QUICK_VALIDATE_BUDGET_S, VALIDATE_BUDGET_S, Deadline
from roofline.validation.canary import Canary, load_probe_canary
from roofline.validation.gemm_peaks import bf16_native, int8_native
from roofline.validation.host import detect_host
from roofline.validation.kernels import Shape, TimingSettings, run_shape
from roofline.validation.platforms import datasheet_for, resolve_measured
from roofline.validation.prepare import MISCOMPILE, TOLERANCE
from roofline.validation.torch_env import inductor_cache, require_torchao, versions
from roofline.validation.variants import VARIANTS

from roofline import __version__
from roofline.calc.shapes import transformer_gemms
from roofline.catalog import find_file, load_model_file
from roofline.errors import UserError
from roofline.files.reading import portable_path
from roofline.results.validate import HostResult, PlatformRef, ValidateResult


@dataclass
class ValidateOptions:
    model: str
    cpu: str = "host"
    threads: int | None = None
    quick: bool = False
    batch: int = 1
    seq_len: int | None = None
    layers: int | None = None
    rounds: int | None = None
    min_run_time: float | None = None
    max_autotune: bool = False
    pt2e: bool = False
    reprobe: bool = False
    skip_shapes: bool = False
    skip_end_to_end: bool = False
    decode: bool | None = None
    """decode-shaped weight-only GEMMs; default: on for decoders"""


def distinct_shapes(spec, tokens: int) -> list[Shape]:
    g = transformer_gemms(tokens=tokens, hidden=spec.hidden_size, intermediate=spec.intermediate_size, layers=1,
                          heads=spec.num_attention_heads, kv_heads=spec.kv_heads, head_dim=spec.head_size,
                          gated_mlp=spec.gated_mlp)
    seen, out = set(), []
    for name, m, n, k in zip(g.names, g.m, g.n, g.k):
        if (m, n, k) not in seen:
            seen.add((m, n, k))
            out.append(Shape(name, int(m), int(n), int(k)))
    return out


def _clock_reader(cache, threads: int):
    """The canary's clock reading (the probe's add chain), or None without the compiled kernels."""
    from roofline.validation import native

    try:
        return native.ClockReader(native.load(cache), threads)
    except native.NativeUnavailable:
        return None


def _probe_clock(platform) -> float | None:
    """The add-chain clock of a probed platform (Hz); None for a catalog platform."""
    f = platform.frequency_ghz.get("measured")
    return f.value * 1e9 if f is not None and f.kind == "measured" else None


def run_validate(o: ValidateOptions, progress: Callable[[str], None] = lambda s: None) -> ValidateResult:
    from roofline.catalog.cache import cache_dir

    require_torchao()

    host = detect_host()
    threads = o.threads or host.cores
    if threads < 1:
        raise UserError(f"--threads {threads}: must be at least 1")
    torch.set_num_threads(threads)
    inductor_cache(cache_dir())
    spec = load_model_file(find_file("models", o.model))
    layers = o.layers or (2 if o.quick else spec.num_hidden_layers)
    seq_len = o.seq_len or (128 if o.quick else 256)
    if seq_len > spec.max_position_embeddings:
        raise UserError(f"--seq-len {seq_len}: {spec.name} has {spec.max_position_embeddings} positions")
    deadline = Deadline(QUICK_VALIDATE_BUDGET_S if o.quick else VALIDATE_BUDGET_S)
    progress("probe")
    measured, measured_file, fresh = resolve_measured(o.cpu, threads, o.reprobe, o.quick, progress)
    torch.set_num_threads(threads)  # the probe's kernels share the process's threads: compile and time with these
    progress("contention canary")
    canary = Canary(threads, clock_reader=_clock_reader(cache_dir(), threads),
                    probe_clock_hz=_probe_clock(measured))
    canary.anchor(load_probe_canary(measured_file))
    settings = TimingSettings(threads=threads, rounds=o.rounds or (3 if o.quick else 5),
                              min_run_time=o.min_run_time or (0.1 if o.quick else 0.2), max_autotune=o.max_autotune,
                              canary=canary, deadline=deadline)

    progress("dispatch overhead")
    from roofline.validation.timing import measure_dispatch

    dispatch = measure_dispatch(threads, canary=canary, deadline=deadline)
    dispatch_contended = canary.unresolved > 0
    sheet = datasheet_for(host, threads, measured)
    notes = []
    if dispatch_contended:
        notes.append("contention: the dispatch overhead was measured while the host was busy")
    date = measured.sockets.date if measured.sockets.kind == "measured" else None
    if o.cpu == "host":
        notes.append(f"measured platform: {'a fresh' if fresh else 'the cached'} probe of this host ({date}), "
                     f"{portable_path(measured_file)}")
    precisions = list(VARIANTS) + (["int8-static-pt2e"] if o.pt2e else [])
    if o.quick and not bf16_native(host):
        precisions.remove("bf16")
        notes.append("bf16 left out (--quick): no native BF16 instructions on this host, so BF16 runs emulated, not a "
                     "deployable precision here; a full validate measures it")

    host_flags = {}
    if not bf16_native(host):
        host_flags["bf16"] = ["no native BF16 instructions on this host: measured as it runs (emulated)"]
    if not int8_native(host):
        for p in precisions:
            if p.startswith("int8"):
                host_flags[p] = ["no VNNI or AMX on this host: INT8 runs on AVX2 byte multiplies, which saturate on "
                                 "full-range u8 inputs; the probe's INT8 peak is oneDNN's on 7-bit (reduce_range) "
                                 "activations"]
    shapes = []
    if not o.skip_shapes:
        for shape in distinct_shapes(spec, o.batch * seq_len):
            shapes += run_shape(shape, precisions, measured, sheet[0] if sheet else None, settings, progress,
                                host_flags)
    decode = []
    if o.decode if o.decode is not None else spec.family == "decoder":
        from roofline.validation.decode_kernels import run_decode_kernels

        ms = [1, 8] if o.quick else [1, 2, 4, 8]
        decode = run_decode_kernels(spec.hidden_size, spec.intermediate_size, ms, measured, settings, progress)
    end_to_end, encoder = [], []
    if spec.family == "decoder":
        notes.append("end to end: the encoder harness only; decoders get per-shape (prefill) and decode kernels")
    elif not o.skip_end_to_end:
        from roofline.validation.encoder import run_end_to_end

        end_to_end, encoder = run_end_to_end(spec, layers, o.batch, seq_len, precisions, measured, settings, progress)
    if o.quick:
        notes.append(f"--quick: {layers} of {spec.num_hidden_layers} layers, sequence {seq_len}, "
                     f"{settings.rounds} timing rounds")
    v = versions()
    rows = [*shapes, *decode, *encoder, *end_to_end]
    flagged = sum(any(f.startswith("contention:") for f in r.flags) for r in rows)
    contention = canary.summary(flagged_rows=flagged, dispatch_contended=dispatch_contended)
    if contention.throttled_samples and not flagged:
        notes.append(f"note: {contention.advice}")
    return ValidateResult(
        tool=f"roofline {__version__}", date=_dt.datetime.now().isoformat(timespec="seconds"), model=spec.name,
        quick=o.quick, batch=o.batch, seq_len=seq_len, layers=layers,
        host=HostResult(cpu_model=host.cpu_model, microarchitecture=host.microarchitecture, flags=host.flags,
                        threads=threads, cores=host.cores, sockets=host.sockets, hypervisor=host.hypervisor,
                        torch=v["torch"], torchao=v["torchao"], cpu_capability=torch.backends.cpu.get_cpu_capability()),
        platform=PlatformRef(name=measured.name, file=portable_path(measured_file),
                             kind="measured" if measured.sockets.kind == "measured" else "catalog", date=date),
        datasheet=PlatformRef(name=sheet[0].name, file=portable_path(sheet[1]), kind="datasheet") if sheet else None,
        dispatch=dispatch,
        tolerances={**{f"{k}_per_layer": v for k, v in TOLERANCE.items()}, "compiled_vs_eager_floor": MISCOMPILE},
        shapes=shapes, decode=decode, encoder=encoder, end_to_end=end_to_end, notes=notes, contention=contention,
    )
