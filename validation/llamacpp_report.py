"""Rich tables of a llama.cpp validation: pp and tg against their ceilings, and Q4 against Q8."""

from __future__ import annotations

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from roofline.report.fmt import sig
from roofline.results.llamacpp import LlamaCppResult


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f}%"


def render_llamacpp(r: LlamaCppResult) -> RenderableType:
    h = r.host
    head = Text.assemble(
        (f"validate {r.model} on llama.cpp", "bold"), f"  {r.layers} layers, random weights\n",
        f"host: {h.cpu_model} ({h.microarchitecture}), {h.threads} threads of {h.cores} cores; llama-cpp-python "
        f"{h.llama_cpp_python}, gguf {h.gguf}\n",
        f"llama.cpp: {h.system_info}\n",
        f"measured platform {r.platform.name} ({r.platform.date or r.platform.file})"
        + (f"; datasheet {r.datasheet.name}" if r.datasheet else "; no datasheet platform matches this host"),
    )
    t = Table(title="Token rates (median of repetitions) against the roofline ceilings of the measured host "
              "(and of its datasheet)", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False,
              collapse_padding=True)
    for c in ("precision", "file MB", "test", "tokens/s", "spread", "ceiling", "bound", "of ceiling", "sheet",
              "of sheet"):
        t.add_column(c, justify="left" if c in ("precision", "test", "bound") else "right", no_wrap=True)
    for run in r.runs:
        for i, x in enumerate((run.pp, run.tg)):
            t.add_row(run.precision if i == 0 else "", sig(run.file_bytes / 1e6) if i == 0 else "", x.test,
                      sig(x.tokens_per_s), f"{100 * x.spread:.0f}%", sig(x.ceiling_tokens_per_s), x.ceiling_bound,
                      _pct(x.achieved_fraction),
                      sig(x.ceiling_datasheet_tokens_per_s) if x.ceiling_datasheet_tokens_per_s else "-",
                      _pct(x.achieved_fraction_datasheet))
    parts: list[RenderableType] = [head, t]
    bw = Table(title="Generation as weight bandwidth: weights read per token x tg rate", title_justify="left",
               box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    for c in ("precision", "weights MB/token", "KV MB/token", "GB/s of weights"):
        bw.add_column(c, justify="left" if c == "precision" else "right")
    for run in r.runs:
        bw.add_row(run.precision, sig(run.weight_bytes_per_token / 1e6), sig(run.kv_bytes_per_token / 1e6),
                   sig(run.tg_weight_bytes_per_s / 1e9))
    parts.append(bw)
    if r.comparisons:
        c = Table(title="Smaller weights: measured speedups against the ratio of bytes and the ceilings",
                  title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
        for col in ("precision", "vs", "bytes ratio", "tg ceiling", "tg measured", "pp measured"):
            c.add_column(col, justify="left" if col in ("precision", "vs") else "right")
        for x in r.comparisons:
            c.add_row(x.precision, x.baseline, f"{x.bytes_ratio:.2f}x", f"{x.ceiling_speedup:.2f}x",
                      f"{x.tg_speedup:.2f}x", f"{x.pp_speedup:.2f}x")
        parts.append(c)
    parts.append(Text("settings: " + ", ".join(f"{k} {v}" for k, v in r.settings.items())))
    parts += [Text(f"note: {n}") for n in r.notes]
    return Group(*parts)
