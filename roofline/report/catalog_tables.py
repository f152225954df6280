"""Rich rendering of catalog entries: a headline, then the numbers with their sources."""

from __future__ import annotations

from rich.console import RenderableType
from rich.text import Text

from roofline.report.fmt import sig, tera
from roofline.report.style import document, section, table
from roofline.spec.model import ModelSpec
from roofline.spec.platform import Platform
from roofline.spec.sourced import Sourced


def _best_paths(p: Platform) -> list[str]:
    best = []
    for dtype in ("fp32", "bf16", "int8"):
        names = p.paths_for(dtype)
        best.append(max(names, key=lambda n: p.nominal_peak(n, 1)) if names else "-")
    return best


def platform_list(items: list[Platform], brief: bool = False) -> RenderableType:
    t = table(["name", "description", "FP32 / BF16 / INT8 path", "DRAM GB/s"], left=("name", "description",
              "FP32 / BF16 / INT8 path"), wrap=("description", "FP32 / BF16 / INT8 path", "DRAM GB/s"))
    for p in items:
        used = p.dram.measured_gb_per_s if p.dram_kind() == "measured" else p.dram.theoretical_gb_per_s
        label = p.dram_kind() if used.kind in ("measured", "datasheet") else f"{p.dram_kind()}: {used.kind}"
        t.add_row(p.name, p.description, " / ".join(_best_paths(p)), f"{used.value:g} ({label})")
    head = Text(f"{len(items)} platforms: {', '.join(p.name for p in items)}", style="bold")
    hint = Text("roofline platforms show NAME: every number and its source; --cpu FILE.toml: your own")
    return document([head, hint], [section("Platforms (fastest path per dtype; DRAM per socket)", t)], brief=brief)


def _sourced_row(t, field: str, s: Sourced, unit: str = "") -> None:
    value = f"{s.value:g}{unit}" if s.known else "unknown"
    t.add_row(field, value, s.kind or "-", s.source or s.unknown or "")


def platform_headline(p: Platform) -> list[RenderableType]:
    sockets = int(p.sockets.value)
    peaks = []
    for dtype, name in zip(("FP32", "BF16", "INT8"), _best_paths(p)):
        if name != "-":
            peaks.append(f"{dtype} {tera(p.nominal_peak(name, sockets))}")
    dram = p.dram_bytes_per_s(sockets) / 1e9
    llc = f"LLC {p.llc.size_mib.value:g} MiB per socket" if p.llc.size_mib.known else "LLC unknown"
    return [Text.assemble((p.name, "bold"), f": {p.description}"),
            Text(f"peaks at the nominal clock, {sockets} socket(s): {', '.join(peaks)} Tops/s; DRAM {sig(dram)} GB/s "
                 f"({p.dram_kind()}); {llc}")]


def render_platform(p: Platform, brief: bool = False) -> RenderableType:
    t = table(["field", "value", "kind", "source"], left=("field", "value", "kind", "source"), wrap=("source",))
    _sourced_row(t, "sockets", p.sockets)
    _sourced_row(t, "cores_per_socket", p.cores_per_socket)
    for name, group in (("frequency_ghz", p.frequency_ghz), ("all_core_turbo_ghz", p.all_core_turbo_ghz),
                        ("max_turbo_ghz", p.max_turbo_ghz)):
        for k, f in group.items():
            _sourced_row(t, f"{name}.{k}", f, " GHz")
    for name, c in p.compute.items():
        _sourced_row(t, f"compute.{name}" + (" (emulated)" if c.emulated else ""), c.ops_per_cycle, " ops/clk")
    _sourced_row(t, "dram.theoretical", p.dram.theoretical_gb_per_s, " GB/s")
    _sourced_row(t, "dram.measured", p.dram.measured_gb_per_s, " GB/s")
    _sourced_row(t, "dram.capacity", p.dram.capacity_gb, " GB")
    if p.dram.read_gb_per_s_per_core.known:
        _sourced_row(t, "dram.read_per_core", p.dram.read_gb_per_s_per_core, " GB/s")
    for tier in p.memory_tiers:  # a second memory tier beside DRAM (roofline/calc/tiers.py)
        t.add_row(f"memory_tiers.{tier.name}.use", str(tier.use), "", "how it holds the pages (docs/formulas.md)")
        _sourced_row(t, f"memory_tiers.{tier.name}.capacity", tier.capacity_gb, " GB")
        _sourced_row(t, f"memory_tiers.{tier.name}.theoretical", tier.theoretical_gb_per_s, " GB/s")
        _sourced_row(t, f"memory_tiers.{tier.name}.measured", tier.measured_gb_per_s, " GB/s")
        if tier.interleave_share is not None:
            t.add_row(f"memory_tiers.{tier.name}.interleave_share", f"{tier.interleave_share:g}", "",
                      "its share of the pages")
    _sourced_row(t, "llc.size", p.llc.size_mib, " MiB")
    t.add_row("llc.domains_per_socket", str(p.llc.domains_per_socket), "", "LLC slices cores cannot share")
    _sourced_row(t, "llc.read", p.llc.read_gb_per_s, " GB/s")
    if p.llc.read_gb_per_s_per_core.known:
        _sourced_row(t, "llc.read_per_core", p.llc.read_gb_per_s_per_core, " GB/s")
    if p.l2 is not None:
        _sourced_row(t, "l2.size (per core)", p.l2.size_kib, " KiB")
        if p.l2.read_bytes_per_cycle.known:
            _sourced_row(t, "l2.read_bytes_per_cycle", p.l2.read_bytes_per_cycle, " B/cycle/core")
        if p.l2.read_gb_per_s.known:
            _sourced_row(t, "l2.read", p.l2.read_gb_per_s, " GB/s")
    if p.core_to_core_ns.known:  # else the core's table entry (roofline/spec/core_latency.py)
        _sourced_row(t, "core_to_core", p.core_to_core_ns, " ns")
    if p.power is not None:  # per socket: what the energy figures of estimate, plan and sweep are priced at
        for name in ("tdp_w", "idle_w", "measured_w"):
            if getattr(p.power, name).known or name != "measured_w":
                _sourced_row(t, f"power.{name}", getattr(p.power, name), " W")
    sockets = int(p.sockets.value)
    peaks = table(["path", "dtype", "peak Tops/s", "BP ops/B"], left=("path", "dtype"))
    for name, c in p.compute.items():
        peak = p.nominal_peak(name, sockets)
        peaks.add_row(name + (" (emulated: not priced)" if c.emulated else ""), c.dtype, tera(peak),
                      sig(peak / p.dram_bytes_per_s(sockets)))
    sections = [
        section("Numbers and their sources (per socket; ops/clk: per cycle per core)", t,
                [f"{p.vendor} {p.microarchitecture}; ISA: {' '.join(p.isa)}"]),
        section(f"Peaks at the nominal clock, all {sockets} socket(s); BP: balance point against DRAM "
                f"({p.dram_kind()})", peaks),
    ]
    if p.notes:
        sections.append(section("Notes", None, list(p.notes)))
    return document(platform_headline(p), sections, brief=brief)


def model_list(items: list[ModelSpec], brief: bool = False) -> RenderableType:
    t = table(["name", "family", "layers", "hidden", "heads (kv)", "FFN", "vocab", "measured"],
              left=("name", "family", "measured"), wrap=("measured",))
    for m in items:
        t.add_row(
            m.name, m.family, str(m.num_hidden_layers), str(m.hidden_size),
            f"{m.num_attention_heads} ({m.kv_heads})", str(m.intermediate_size), str(m.vocab_size),
            ", ".join(sorted({f"{x.platform} {x.precision}" for x in m.measured})) or "-",
        )
    encoders = sum(m.family == "encoder" for m in items)
    head = Text(f"{len(items)} models: {encoders} encoders, {len(items) - encoders} decoders", style="bold")
    hint = Text("roofline models show NAME; --model also takes a config.json, a folder, a .gguf file or a Hugging "
                "Face id in the local cache")
    return document([head, hint], [section("Models (measured: the platforms and baselines of the measured Amdahl inputs they carry)", t)],
                    brief=brief)


def model_headline(m: ModelSpec) -> list[RenderableType]:
    experts = f", {m.num_experts} experts ({m.num_experts_per_tok} per token)" if m.num_experts else ""
    return [Text.assemble((m.name, "bold"), f": {m.description}"),
            Text(f"{m.family}, {m.num_hidden_layers} layers, hidden {m.hidden_size}, {m.num_attention_heads} heads "
                 f"({m.kv_heads} key-value), FFN {m.intermediate_size}{experts}, vocab {m.vocab_size}")]


#: fields shown only where a model sets them: experts, windows, latent attention, prediction layers
_FEATURE_FIELDS = ("num_experts", "num_experts_per_tok", "moe_intermediate_size", "shared_expert_intermediate_size",
                   "dense_layers", "expert_bias", "sliding_window", "sliding_window_layers", "chunked_attention",
                   "attention_sinks", "kv_lora_rank", "q_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim",
                   "v_head_dim", "nextn_predict_layers")


def _short(v) -> str:
    if isinstance(v, (list, tuple)):
        items = list(v)
        return str(items) if len(items) <= 8 else f"{len(items)} layers: {', '.join(map(str, items[:6]))}, ..."
    return str(v)


def render_model(m: ModelSpec, brief: bool = False) -> RenderableType:
    t = table(["field", "value"], left=("field",))
    for field in ("family", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
                  "num_key_value_heads", "head_dim", "vocab_size", "max_position_embeddings", "type_vocab_size",
                  "hidden_act", "gated_mlp", "tie_word_embeddings", "qk_norm"):
        v = getattr(m, field)
        if field == "num_key_value_heads":
            v = m.kv_heads
        elif field == "head_dim":
            v = "- (multi-head latent attention: below)" if m.is_mla else m.head_size
        t.add_row(field, str(v))
    for field in _FEATURE_FIELDS:  # the architecture features the model has, each only where set
        v = getattr(m, field)
        if v not in (None, False, 0, ()):
            t.add_row(field, _short(v))
    sections: list[RenderableType] = [section("Architecture", t, [f"source: {m.source}"])]
    if m.measured:
        mt = table(["platform", "baseline", "batch", "seq", "f_GEMM", "non-GEMM speedup", "source"],
                   left=("platform", "baseline", "source"), wrap=("source",))
        for x in m.measured:
            s_non = ", ".join(f"{k} {v:g}x" for k, v in x.non_gemm_speedup.items()) or "-"
            mt.add_row(x.platform, x.precision, str(x.batch), str(x.seq_len), f"{x.f_gemm:g}", s_non, x.source)
        sections.append(section("Measured Amdahl inputs", mt))
    return document(model_headline(m), sections, brief=brief)
