"""Rich rendering of catalog entries."""

from __future__ import annotations

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from roofline.estimate.paths import path_peak
from roofline.report.fmt import sig, tera
from roofline.spec.model import ModelSpec
from roofline.spec.platform import Platform
from roofline.spec.sourced import Sourced


def platform_list(items: list[Platform]) -> Table:
    t = Table(title="Platforms (roofline platforms show NAME)", title_justify="left", box=box.SIMPLE_HEAD,
              pad_edge=False)
    for c in ("name", "description", "best FP32 / BF16 / INT8 path", "DRAM GB/s per socket"):
        t.add_column(c)
    for p in items:
        best = []
        for dtype in ("fp32", "bf16", "int8"):
            names = p.paths_for(dtype)
            best.append(max(names, key=lambda n: path_peak(p, n, 1)) if names else "-")
        used = p.dram.measured_gb_per_s if p.dram_kind() == "measured" else p.dram.theoretical_gb_per_s
        label = p.dram_kind() if used.kind in ("measured", "datasheet") else f"{p.dram_kind()}: {used.kind}"
        t.add_row(p.name, p.description, " / ".join(best), f"{used.value:g} ({label})")
    return t


def _sourced_row(t: Table, field: str, s: Sourced, unit: str = "") -> None:
    value = f"{s.value:g}{unit}" if s.known else "unknown"
    t.add_row(field, value, s.kind or "-", s.source or s.unknown or "")


def render_platform(p: Platform) -> RenderableType:
    head = Text.assemble((p.name, "bold"), f"  {p.description}\n", f"{p.vendor} {p.microarchitecture}; ISA: {' '.join(p.isa)}")
    t = Table(title="Numbers and their sources (per socket)", title_justify="left")
    for c in ("field", "value", "kind", "source"):
        t.add_column(c, overflow="fold")
    _sourced_row(t, "sockets", p.sockets)
    _sourced_row(t, "cores_per_socket", p.cores_per_socket)
    for k, f in p.frequency_ghz.items():
        _sourced_row(t, f"frequency_ghz.{k}", f, " GHz")
    for name, c in p.compute.items():
        _sourced_row(t, f"compute.{name} ({c.dtype}, {c.isa_class})", c.ops_per_cycle, " ops/cycle/core")
    _sourced_row(t, "dram.theoretical", p.dram.theoretical_gb_per_s, " GB/s")
    _sourced_row(t, "dram.measured", p.dram.measured_gb_per_s, " GB/s")
    _sourced_row(t, "dram.capacity", p.dram.capacity_gb, " GB")
    _sourced_row(t, "llc.size", p.llc.size_mib, " MiB")
    t.add_row("llc.domains_per_socket", str(p.llc.domains_per_socket), "", "LLC slices cores cannot share")
    _sourced_row(t, "llc.read", p.llc.read_gb_per_s, " GB/s")
    sockets = int(p.sockets.value)
    peaks = Table(title=f"Peaks, all {sockets} socket(s)", title_justify="left")
    for c in ("path", "dtype", "peak Tops/s", f"balance point vs DRAM ({p.dram_kind()}) ops/B"):
        peaks.add_column(c)
    for name, c in p.compute.items():
        peak = path_peak(p, name, sockets)
        peaks.add_row(name, c.dtype, tera(peak), sig(peak / p.dram_bytes_per_s(sockets)))
    parts: list[RenderableType] = [head, t, peaks]
    if p.notes:
        parts.append(Text("\n".join(f"note: {n}" for n in p.notes)))
    return Group(*parts)


def model_list(items: list[ModelSpec]) -> Table:
    t = Table(title="Models (roofline models show NAME)", title_justify="left")
    for c in ("name", "family", "layers", "hidden", "heads (kv)", "FFN", "vocab", "measured on"):
        t.add_column(c)
    for m in items:
        t.add_row(
            m.name, m.family, str(m.num_hidden_layers), str(m.hidden_size),
            f"{m.num_attention_heads} ({m.kv_heads})", str(m.intermediate_size), str(m.vocab_size),
            ", ".join(sorted({f"{x.platform} {x.precision}" for x in m.measured})) or "-",
        )
    return t


def render_model(m: ModelSpec) -> RenderableType:
    t = Table(title=f"{m.name}: {m.description}", title_justify="left", caption=f"source: {m.source}", caption_justify="left")
    t.add_column("field")
    t.add_column("value", justify="right")
    for field in ("family", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
                  "num_key_value_heads", "head_dim", "vocab_size", "max_position_embeddings", "type_vocab_size",
                  "hidden_act", "gated_mlp", "tie_word_embeddings", "qk_norm"):
        v = getattr(m, field)
        if field == "num_key_value_heads":
            v = m.kv_heads
        elif field == "head_dim":
            v = m.head_size
        t.add_row(field, str(v))
    parts: list[RenderableType] = [t]
    if m.measured:
        mt = Table(title="Measured Amdahl inputs", title_justify="left")
        for c in ("platform", "baseline", "batch", "seq", "f_GEMM", "non-GEMM speedup", "source"):
            mt.add_column(c, overflow="fold")
        for x in m.measured:
            s_non = ", ".join(f"{k} {v:g}x" for k, v in x.non_gemm_speedup.items()) or "-"
            mt.add_row(x.platform, x.precision, str(x.batch), str(x.seq_len), f"{x.f_gemm:g}", s_non, x.source)
        parts.append(mt)
    return Group(*parts)
