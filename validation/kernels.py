"""Per-shape kernels: each distinct GEMM of the workload, at its real M, in every precision."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from roofline.validation.budget import NO_DEADLINE, Deadline
from roofline.validation.canary import Canary
from roofline.validation.prepare import Prepared, prepare_variants
from roofline.validation.timing import Timing, profile_breakdown, profile_interleaved, time_interleaved

from roofline.model.shape import shape_ceiling
from roofline.model.suspect import suspect_input, violation_text
from roofline.results.validate import ShapeResult
from roofline.spec.platform import Platform
from roofline.spec.precision import VARIANT_RECIPES as RECIPE  # the recipe each variant is predicted with
from roofline.spec.vocab import Ceiling


@dataclass(frozen=True)
class Shape:
    name: str
    m: int
    n: int
    k: int


@dataclass
class TimingSettings:
    threads: int
    rounds: int = 5
    min_run_time: float = 0.2
    max_autotune: bool = False
    profile_repeats: int = 3
    canary: Canary | None = None
    """checks every timing round for contention (None: no check)"""
    deadline: Deadline = NO_DEADLINE
    """the run's overall deadline: contended rounds are re-run only while it allows"""


def timed_and_verified(prepared: dict[str, Prepared], make_input: Callable, s: TimingSettings,
                       breakdowns: dict | None = None) -> dict[str, Timing]:
    """Time the usable variants interleaved; a variant whose dominant GEMM op changes between a
    profile before and after timing (something recompiled) is flagged and its time dropped.
    ``breakdowns`` receives the profile taken after timing, per variant (the median of
    ``profile_repeats`` interleaved profiles)."""

    usable = {n: p.call for n, p in prepared.items() if p.usable}
    before = {n: profile_breakdown(c, make_input, iters=3).dominant_gemm for n, c in usable.items()}
    torch._dynamo.config.error_on_recompile = True
    try:
        timings = time_interleaved(usable, make_input, rounds=s.rounds, min_run_time=s.min_run_time, threads=s.threads,
                                   canary=s.canary, deadline=s.deadline)
    except Exception as e:  # a recompile during timing: nothing timed can be trusted
        for p in prepared.values():
            p.flags.append(f"error while timing: {type(e).__name__}: {(str(e).splitlines() or [''])[0][:200]}")
        return {}
    finally:
        torch._dynamo.config.error_on_recompile = False
    profiles = profile_interleaved(usable, make_input, iters=5, repeats=s.profile_repeats)
    for n, profile in profiles.items():
        if breakdowns is not None:
            breakdowns[n] = profile
        if profile.dominant_gemm != before[n]:
            prepared[n].flags.append(f"kernel changed during timing: {before[n]} -> {profile.dominant_gemm}")
            timings.pop(n, None)
    return timings


def run_shape(shape: Shape, precisions: list[str], platform: Platform, datasheet: Platform | None,
              s: TimingSettings, progress: Callable[[str], None] = lambda x: None,
              host_flags: dict[str, list[str]] | None = None) -> list[ShapeResult]:
    """Every precision of one GEMM shape; ``host_flags`` adds per-precision remarks (e.g. no native BF16)."""

    g = torch.Generator().manual_seed(1000 + shape.m + shape.n + shape.k)
    model = torch.nn.Linear(shape.k, shape.n)
    with torch.no_grad():
        model.weight.copy_(torch.randn(shape.n, shape.k, generator=g) / shape.k**0.5)
        model.bias.copy_(0.1 * torch.randn(shape.n, generator=g))
    model.eval()
    example = torch.randn(shape.m, shape.k, generator=g)
    calibration = [torch.randn(shape.m, shape.k, generator=g) for _ in range(4)]
    reference = example.double() @ model.weight.double().t() + model.bias.double()
    prepared = prepare_variants(model, example, calibration, reference, precisions,
                                max_autotune=s.max_autotune, progress=lambda v: progress(f"{shape.name} {v}"))
    progress(f"{shape.name}: timing")
    profiles: dict = {}
    timings = timed_and_verified(prepared, lambda: example.clone(), s, profiles)
    flops = 2.0 * shape.m * shape.n * shape.k
    out = []
    for name, p in prepared.items():
        ceiling = shape_ceiling(platform, RECIPE[name], shape.m, shape.n, shape.k)
        sheet = shape_ceiling(datasheet, RECIPE[name], shape.m, shape.n, shape.k) if datasheet else None
        sheet_bound = (shape_ceiling(datasheet, RECIPE[name], shape.m, shape.n, shape.k, ceiling=Ceiling.BOUND)
                       if datasheet else None)
        t = timings.get(name)
        measured = flops / t.seconds if t else None
        flags = list(p.flags) + list((host_flags or {}).get(name, [])) + ([t.contention] if t and t.contention else [])
        if not ceiling.native:
            flags.append(f"no native {RECIPE[name]} path on {platform.name}: predicted on {ceiling.compute_path}")
        violation = measured is not None and measured > ceiling.attainable_ops_per_s
        suspect = suspect_input(platform, ceiling.compute_path, ceiling.bound_by) if violation else None
        if suspect is not None:
            flags.append(violation_text(f"{measured / 1e9:.3g} Gops/s",
                                        f"{ceiling.attainable_ops_per_s / 1e9:.3g} ({ceiling.bound_by}-bound)", suspect))
        out.append(ShapeResult(
            name=shape.name, m=shape.m, n=shape.n, k=shape.k, precision=name, kernel=p.kernels.describe(),
            numerics_ok=p.numerics_ok, max_rel_error=p.rel_error, quantized=p.quantized,
            measured_ops_per_s=measured, spread=t.spread if t else None,
            predicted_ops_per_s=ceiling.attainable_ops_per_s,
            achieved_fraction=measured / ceiling.attainable_ops_per_s if measured else None,
            predicted_bound=ceiling.bound,
            predicted_datasheet_ops_per_s=sheet.attainable_ops_per_s if sheet else None,
            achieved_fraction_datasheet=measured / sheet.attainable_ops_per_s if (sheet and measured) else None,
            predicted_datasheet_bound_ops_per_s=sheet_bound.attainable_ops_per_s if sheet_bound else None,
            achieved_fraction_datasheet_bound=(measured / sheet_bound.attainable_ops_per_s
                                               if (sheet_bound and measured) else None),
            compile_s=p.compile_s, kernel_s=profiles[name].linear_s if name in profiles and t else None,
            other_s=profiles[name].attention_s + profiles[name].other_s if name in profiles and t else None,
            ceiling_violation=violation, suspect=suspect.input.value if suspect else None, flags=flags,
        ))
    return out
