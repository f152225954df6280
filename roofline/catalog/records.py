"""Finding and loading measurement records (``validation/records/*.toml``, installed with the package)."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from roofline.catalog import builtin_dir, warn_skipped
from roofline.catalog.cache import load_validated
from roofline.errors import SpecError, UserError
from roofline.files.reading import is_dir, load_json, parse_toml, read_bytes, regular_file_problem, resolved
from roofline.spec.record import Measurement, Record

if TYPE_CHECKING:
    from roofline.results.llamacpp import LlamaCppResult


@dataclass(frozen=True)
class LoadedRecord:
    id: str
    """the file's stem"""
    path: Path
    record: Record
    dispatch: dict[str, float] | None = None
    """a validate report's measured dispatch costs (call_s, per_op_s)"""

    @property
    def measurements(self) -> tuple[Measurement, ...]:
        return self.record.measurements


def records_dir() -> Path:
    return builtin_dir("records")


def load_records(paths: list[str] | None = None) -> list[LoadedRecord]:
    """Every record file in the given files and folders (default: the built-in records)."""
    files: list[tuple[Path, bool]] = []  # (the file, found in a folder)
    for p in [str(records_dir())] if not paths else paths:
        path = Path(p).expanduser()
        if is_dir(path):
            for f in sorted(path.rglob("*.toml")):
                problem = regular_file_problem(f)
                if problem is None:
                    files.append((f, True))
                else:  # a FIFO or a device in a records folder is never opened
                    warn_skipped(f, problem)
        elif regular_file_problem(path) is None:
            files.append((path, False))
        else:
            raise SpecError(p, "", "no such record file or folder" if not os.path.lexists(path)
                            else regular_file_problem(path))
    where = ", ".join(paths or [str(records_dir())])
    if not files:
        raise SpecError(where, "", "no record files (*.toml) there")
    loaded, bad = [], []
    for f, in_folder in files:
        try:
            loaded.append(load_record(resolved(f)))
        except UserError as e:
            if not in_folder:  # a file named on its own is the user's: refused
                raise
            bad.append((f, e))  # one bad record in a folder is not fatal to the rest
    if not loaded:
        f, e = bad[0]
        more = (f" (and {len(bad) - 1} more record{'s' if len(bad) > 2 else ''} that cannot be used)"
                if len(bad) > 1 else "")
        if isinstance(e, SpecError):
            raise SpecError(e.path, e.field, e.reason + more)
        raise UserError(f"{f}: {e}{more}")
    for f, e in bad:
        own = isinstance(e, SpecError) and e.path == str(resolved(f))  # its path is in the warning already
        warn_skipped(f, (f"{e.field}: {e.reason}" if e.field else e.reason) if own else str(e))
    return loaded


def load_record(path: Path) -> LoadedRecord:
    record = load_validated(Record, path, lambda raw: parse_toml(raw, path))
    dispatch = None
    if record.report:
        report_path = resolved(path.parent / record.report)
        if regular_file_problem(report_path) is not None:
            raise SpecError(str(path), "report", f"{record.report} (relative to the record's folder): no such "
                            f"file ({report_path}); give the validate report's path from this record's folder")
        measurements, dispatch, flash = _report_figures(report_path, record)
        record = dataclasses.replace(record, measurements=record.measurements + measurements,
                                     flash_attention=record.flash_attention if flash is None else flash)
    return LoadedRecord(path.stem, path, record, dispatch)


def _clean(flags: list[str]) -> bool:
    """A row timed while the host was busy (validate's contention canary flagged it) is not a figure."""
    return not any(f.startswith("contention") for f in flags)


def _report_figures(path: Path, record: Record
                    ) -> tuple[tuple[Measurement, ...], dict[str, float] | None, bool | None]:
    """A validate report's timed, numerically checked, uncontended encoder runs (latency) and shapes (gemm); a llama.cpp
    report's prompt-processing and generation rates (tokens_per_s), and its flash attention setting (None: an encoder
    report)."""
    from roofline.catalog.validate import validate
    from roofline.results.validate import ValidateResult

    data = load_json(read_bytes(path), path)
    if isinstance(data, dict) and data.get("engine") == "llama.cpp":
        return _llamacpp_report(path, data, record)
    report = validate(ValidateResult, data, path)
    out = []
    for run in report.encoder:
        if run.latency_s and run.numerics_ok and _clean(run.flags):
            out.append(Measurement(kind="latency", precision=run.precision, value=run.latency_s,
                                   non_gemm_mode=run.non_gemm_mode, note=f"encoder, {run.kernel}",
                                   ceiling_violation=run.ceiling_violation))
            parts = (run.linear_block_s, run.attention_s, run.other_s)
            if all(p is not None for p in parts) and sum(parts) > 0:
                out.append(Measurement(kind="gemm_share", precision=run.precision, value=run.linear_block_s / sum(parts),
                                       non_gemm_mode=run.non_gemm_mode,
                                       note="the linear block's share of the profiler's self time (linear block, "
                                            "attention, other), as the paper's f_GEMM"))
    for s in report.shapes:
        if s.measured_ops_per_s and s.numerics_ok and _clean(s.flags):
            out.append(Measurement(kind="gemm", precision=s.precision, value=2.0 * s.m * s.n * s.k / s.measured_ops_per_s,
                                   name=s.name, m=s.m, n=s.n, k=s.k, note=s.kernel, ceiling_violation=s.ceiling_violation))
    if (report.layers, report.batch, report.seq_len) != (record.layers, record.batch, record.seq_len):
        raise SpecError(str(path), "layers", f"the report ran {report.layers} layers, batch {report.batch} x seq "
                        f"{report.seq_len}; the record says {record.layers}, {record.batch} x {record.seq_len}")
    return tuple(out), report.dispatch or None, None


def _llamacpp_report(path: Path, data: dict, record: Record
                     ) -> tuple[tuple[Measurement, ...], None, bool | None]:
    """A llama.cpp report's figures and its flash attention setting (``settings.flash_attn``: on or off), which a
    record that states its own must match."""
    from roofline.catalog.validate import validate
    from roofline.results.llamacpp import LlamaCppResult

    report = validate(LlamaCppResult, data, path)
    from roofline.catalog.llama_bench import flash_attention

    flash, said = flash_attention([report.settings.get("flash_attn")])
    if flash is not None and record.flash_attention is not None and flash != record.flash_attention:
        raise SpecError(str(path), "settings.flash_attn", f"{', '.join(sorted(said))}, where the record says "
                        f"flash_attention = {str(record.flash_attention).lower()}; make them agree")
    return _llamacpp_figures(path, report, record), None, flash


def _llamacpp_figures(path: Path, report: LlamaCppResult, record: Record) -> tuple[Measurement, ...]:
    """pp N: a prefill of N tokens in one batch; tg N: N tokens generated one at a time from an empty
    cache, so at a mean context of N / 2 (llama-bench's tests), with the KV cache in the run's type."""
    if report.layers != (record.layers or report.layers):
        raise SpecError(str(path), "layers", f"the report ran {report.layers} layers; the record says {record.layers}")
    kv = {"f16": "fp16", "bf16": "bf16", "f32": "fp32", "q8_0": "int8"}.get(report.settings.get("kv_type", "f16"), "fp16")
    out = []
    for run in report.runs:
        out.append(Measurement(kind="tokens_per_s", precision=run.precision, value=run.pp.tokens_per_s,
                               name=run.pp.test, phase="prefill", seq_len=run.pp.tokens, kv_dtype=kv,
                               note=f"llama.cpp {run.pp.test}, median of {len(run.pp.samples_tokens_per_s)}"))
        out.append(Measurement(kind="tokens_per_s", precision=run.precision, value=run.tg.tokens_per_s,
                               name=run.tg.test, phase="decode", context=run.tg.tokens // 2, kv_dtype=kv,
                               note=f"llama.cpp {run.tg.test}, median of {len(run.tg.samples_tokens_per_s)}"))
        for b in run.batched:
            reps = len(b.decode_samples_tokens_per_s)
            out.append(Measurement(kind="tokens_per_s", precision=run.precision, value=b.decode_tokens_per_s,
                                   name=f"S_TG PP {b.prompt} TG {b.generated} B {b.sequences}", phase="decode",
                                   batch=b.sequences, context=b.prompt + b.generated // 2, kv_dtype=kv,
                                   note=f"{b.sequences} sequences decoded together, median of {reps}",
                                   repeats=tuple(b.decode_samples_tokens_per_s)))
            out.append(Measurement(kind="tokens_per_s", precision=run.precision, value=b.prefill_tokens_per_s,
                                   name=f"S_PP PP {b.prompt} B {b.sequences}", phase="prefill", batch=b.sequences,
                                   seq_len=b.prompt, kv_dtype=kv, note=f"{b.sequences} prompts decoded together, median "
                                   f"of {len(b.prefill_samples_tokens_per_s)}",
                                   repeats=tuple(b.prefill_samples_tokens_per_s)))
        if run.depth is not None:
            d = run.depth
            out.append(Measurement(kind="tokens_per_s", precision=run.precision, value=d.pp.tokens_per_s,
                                   name=d.pp.test, phase="prefill", seq_len=d.pp.tokens, context=d.depth, kv_dtype=kv,
                                   note=f"llama.cpp {d.pp.test}, median of {len(d.pp.samples_tokens_per_s)}",
                                   repeats=tuple(d.pp.samples_tokens_per_s)))
            out.append(Measurement(kind="tokens_per_s", precision=run.precision, value=d.tg.tokens_per_s,
                                   name=d.tg.test, phase="decode", context=d.depth + d.tg.tokens // 2, kv_dtype=kv,
                                   note=f"llama.cpp {d.tg.test}, median of {len(d.tg.samples_tokens_per_s)}",
                                   repeats=tuple(d.tg.samples_tokens_per_s)))
    return tuple(out)
