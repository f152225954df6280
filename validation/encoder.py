"""End to end: a BERT-style encoder built in torch from the model's catalog config (random
weights, no downloads), compiled per precision and broken down the way the reference paper
does (linear block, attention, other).

The encoder takes hidden states (embeddings are not built): per layer a fused QKV projection,
``scaled_dot_product_attention``, the output projection, residual and LayerNorm, FFN up + GeLU,
FFN down, residual and LayerNorm (post-LN, as BERT). QKV is one GEMM, as in ``roofline estimate``.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn as nn
import torch.nn.functional as F
from roofline.validation.kernels import RECIPE, TimingSettings, timed_and_verified
from roofline.validation.prepare import prepare_variants

from roofline.calc.amdahl import amdahl
from roofline.model.harness import encoder_run
from roofline.model.suspect import gemm_bound, step_bound, suspect_input, violation_text
from roofline.results.validate import EncoderRun, EndToEndResult
from roofline.spec.model import ModelSpec
from roofline.spec.platform import Platform


class EncoderLayer(nn.Module):
    """One post-LN BERT layer: fused QKV, scaled-dot-product attention, output projection, residual and
    LayerNorm, FFN up + GeLU, FFN down, residual and LayerNorm."""

    def __init__(self, hidden: int, heads: int, head_dim: int, intermediate: int):
        super().__init__()
        self.heads, self.head_dim = heads, head_dim
        self.qkv = nn.Linear(hidden, 3 * heads * head_dim)
        self.attn_out = nn.Linear(heads * head_dim, hidden)
        self.ln1 = nn.LayerNorm(hidden)
        self.ffn_up = nn.Linear(hidden, intermediate)
        self.ffn_down = nn.Linear(intermediate, hidden)
        self.ln2 = nn.LayerNorm(hidden)

    def forward(self, x):
        b, s, _ = x.shape
        h, d = self.heads, self.head_dim
        q, k, v = self.qkv(x).view(b, s, 3, h, d).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, s, h * d)
        x = self.ln1(x + self.attn_out(a))
        return self.ln2(x + self.ffn_down(F.gelu(self.ffn_up(x))))


class Encoder(nn.Module):
    def __init__(self, spec: ModelSpec, layers: int):
        super().__init__()
        self.layers = nn.ModuleList(
            EncoderLayer(spec.hidden_size, spec.num_attention_heads, spec.head_size, spec.intermediate_size)
            for _ in range(layers))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def build_encoder(spec: ModelSpec, layers: int, seed: int = 0) -> Encoder:
    torch.manual_seed(seed)
    enc = Encoder(spec, layers)
    with torch.no_grad():  # BERT's initialisation: N(0, 0.02) weights, zero biases
        for m in enc.modules():
            if isinstance(m, nn.Linear):
                m.weight.normal_(0.0, 0.02)
                m.bias.zero_()
    return enc.eval()


def _mode(precision: str) -> str:
    """How a variant's non-GEMM work runs: under BF16 autocast for bf16, else FP32."""
    return "amp-bf16" if precision == "bf16" else "fp32"


#: the profiler's per-call total and the timed latency agree within this factor, or the run is flagged
PROFILE_AGREEMENT = 1.35


def run_end_to_end(spec: ModelSpec, layers: int, batch: int, seq_len: int, precisions: list[str],
                   platform: Platform, s: TimingSettings,
                   progress: Callable[[str], None] = lambda x: None) -> tuple[list[EndToEndResult], list[EncoderRun]]:
    model = build_encoder(spec, layers)
    g = torch.Generator().manual_seed(7)
    example = torch.randn(batch, seq_len, spec.hidden_size, generator=g)
    calibration = [torch.randn(batch, seq_len, spec.hidden_size, generator=g) for _ in range(4)]
    with torch.no_grad():
        reference = model.double()(example.double())
        model.float()
    prepared = prepare_variants(model, example, calibration, reference, precisions, layers=layers,
                                max_autotune=s.max_autotune, progress=lambda v: progress(f"encoder {v}"))
    progress("encoder: timing")
    make_input = lambda: example.clone()  # noqa: E731
    profiles: dict = {}
    timings = timed_and_verified(prepared, make_input, s, profiles)
    breakdown = {n: profiles[n] for n in timings}
    for n, bd in breakdown.items():
        if not 1 / PROFILE_AGREEMENT <= bd.total_s / timings[n].seconds <= PROFILE_AGREEMENT:
            prepared[n].flags.append(f"the profiler's total ({bd.total_s * 1e3:.3g} ms) is {bd.total_s / timings[n].seconds:.2f}x "
                                     "the timed latency: its breakdown is unreliable")

    # the ceiling of the encoder as validate runs it (one process on every core, one instance: a step is a forward)
    runs_at = {p: encoder_run(platform, spec, p, layers, batch, seq_len, _mode(p)) for p in precisions}
    gemm_s = {RECIPE[p]: float(h.step.gemm_time) for p, h in runs_at.items()}
    baselines = [b for b in ("fp32", "bf16") if b in timings]
    results = []
    for base in baselines:
        s_pred = {r: gemm_s[RECIPE[base]] / t for r, t in gemm_s.items()}
        b = breakdown[base]
        f = b.linear_s / b.total_s
        for name in precisions:
            if name == base or (base == "bf16" and not name.startswith("int8")):
                continue
            p = prepared[name]
            t = timings.get(name)
            contention = list(dict.fromkeys(x.contention for x in (timings[base], t) if x and x.contention))
            row = dict(precision=name, baseline=base, kernel=p.kernels.describe(), numerics_ok=p.numerics_ok,
                       max_rel_error=p.rel_error, flags=list(p.flags) + contention, latency_s=None, throughput_rps=None,
                       linear_block_s=None, attention_s=None, other_s=None, f_gemm=f, non_gemm_speedup=None,
                       predicted_gemm_speedup=s_pred.get(RECIPE[name]), ceiling=None, realized_speedup=None,
                       fraction_of_ceiling=None, linear_block_speedup=None, linear_fraction_of_gemm_ceiling=None)
            if t is not None:
                bd = breakdown[name]
                s_non = (b.total_s - b.linear_s) / (bd.total_s - bd.linear_s)
                s_gemm = row["predicted_gemm_speedup"]
                ceiling = float(amdahl(f, s_gemm, s_non))
                realized = timings[base].seconds / t.seconds
                lin = b.linear_s / bd.linear_s if bd.linear_s else None
                row.update(latency_s=t.seconds, throughput_rps=batch / t.seconds, linear_block_s=bd.linear_s,
                           attention_s=bd.attention_s, other_s=bd.other_s, non_gemm_speedup=s_non,
                           ceiling=ceiling, realized_speedup=realized, fraction_of_ceiling=realized / ceiling,
                           linear_block_speedup=lin,
                           linear_fraction_of_gemm_ceiling=lin / s_gemm if lin and s_gemm else None)
                h, hb = runs_at[name], runs_at[base]
                own, theirs = float(h.step.step_time) / t.seconds, float(hb.step.step_time) / timings[base].seconds
                if realized > ceiling and own > 1:  # above the ratio of ceilings, and this run beats its own
                    suspect = suspect_input(platform, h.res.path(h.recipe.compute_dtype).name, gemm_bound(h.step))
                    row.update(ceiling_violation=True, suspect=suspect.input.value)
                    row["flags"].append(violation_text(f"{realized:.2f}x over {base}", f"{ceiling:.2f}x", suspect)
                                        + f" ({name}'s own run beats its ceiling too)")
                elif realized > ceiling:
                    row["flags"].append(f"note: above the ceiling while neither run beats its own ({base} at "
                                        f"{theirs:.0%} of its ceiling, {name} at {own:.0%}): no peak or bandwidth is "
                                        "contradicted; the speedup ceiling also rests on the measured f_GEMM and s_non")
            results.append(EndToEndResult(**row))
    runs = []
    for n, p in prepared.items():
        t, bd = timings.get(n), breakdown.get(n)
        h = runs_at[n]
        ceiling_s = float(h.step.step_time)
        violation = t is not None and t.seconds < ceiling_s
        suspect = suspect_input(platform, h.res.path(h.recipe.compute_dtype).name, step_bound(h.step)) if violation else None
        extra = [violation_text(f"{t.seconds * 1e3:.3g} ms", f"{ceiling_s * 1e3:.3g} ms ({step_bound(h.step).value}-bound)",
                                suspect)] if suspect else []
        runs.append(EncoderRun(
            precision=n, kernel=p.kernels.describe(), numerics_ok=p.numerics_ok, max_rel_error=p.rel_error,
            latency_s=t.seconds if t else None, spread=t.spread if t else None,
            throughput_rps=batch / t.seconds if t else None,
            linear_block_s=bd.linear_s if bd else None, attention_s=bd.attention_s if bd else None,
            other_s=bd.other_s if bd else None, gemm_ops=bd.gemm_ops if bd else {},
            compile_s=p.compile_s, non_gemm_mode=_mode(n), ceiling_s=ceiling_s, ceiling_violation=violation,
            suspect=suspect.input.value if suspect else None,
            flags=list(p.flags) + ([t.contention] if t and t.contention else []) + extra,
        ))
    return results, runs
