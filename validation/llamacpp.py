"""``roofline validate --engine llama.cpp``: token rates of llama.cpp itself against the ceilings.

For each GGUF precision (``q8_0``, ``q4_0``, ``q4_k``, ...):

1. write the model with random weights in that type (:mod:`roofline.validation.gguf_writer`);
2. load it with ``llama_cpp`` (llama-cpp-python, the ``llamacpp`` extra), ``n_threads`` and
   ``n_threads_batch`` = N, the process pinned to N CPUs, flash attention off (``--flash-attention on``: on);
3. measure as ``llama-bench`` does: a warm-up, then ``pp N`` (a prompt of N random tokens decoded
   in batches of ``n_batch``, cache cleared first) and ``tg N`` (N tokens decoded one at a time from
   an empty cache), each repeated, median and spread;
4. compare tg with the decode ceiling (``estimate(phase='decode')`` at the tg test's mean context:
   the weights read per token plus the KV cache, f16 as llama.cpp keeps it, over the measured
   bandwidth) and pp with the prefill ceiling (``estimate(phase='prefill')``), both on the
   measured platform, and on the datasheet platform scaled to the threads when the host matches one.

The lm_head is quantized in the file (llama.cpp quantizes output.weight) and in the ceilings.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import os
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from roofline import __version__
from roofline.catalog import find_file, load_model_file
from roofline.errors import UserError
from roofline.files.reading import portable_path
from roofline.results.llamacpp import (
    BatchedResult,
    Comparison,
    DepthResult,
    LlamaCppHost,
    LlamaCppResult,
    LlamaCppRun,
    RateResult,
)
from roofline.results.validate import PlatformRef
from roofline.spec.gguf_types import LLAMA_CPP
from roofline.spec.model import ModelSpec
from roofline.spec.platform import Platform
from roofline.spec.precision import RECIPES

DEFAULT_PRECISIONS = ("q8_0", "q4_0", "q4_k")


@dataclass
class LlamaCppOptions:
    model: str
    cpu: str = "host"
    precisions: list[str] = field(default_factory=lambda: list(DEFAULT_PRECISIONS))
    threads: int | None = None
    layers: int | None = None
    pp: int = 512
    tg: int = 128
    reps: int = 5
    n_batch: int = 512
    gguf_dir: str | None = None
    """where to write the GGUF files (default: a temporary folder); they are deleted after each run
    unless ``keep_gguf``"""
    keep_gguf: bool = False
    seed: int = 0
    command: str = ""
    parallel: list[int] = field(default_factory=list)
    """decode that many sequences at once, as llama-batched-bench does (each a prompt of ``parallel_pp`` tokens, then
    ``tg`` steps of one token each); empty: none"""
    parallel_pp: int = 128
    depth: int = 0
    """also the pp and tg tests after this many tokens in the cache (0: none)"""
    flash_attention: bool = False
    """run attention as llama.cpp's fused kernel (``-fa on``); off: its separate matmuls and softmax"""


def require_llama_cpp():
    try:
        import llama_cpp
    except ImportError:
        raise UserError("--engine llama.cpp needs llama-cpp-python and gguf: pip install 'roofline[llamacpp]' "
                        "(it compiles llama.cpp: about 7 minutes on 2 cores)") from None
    return llama_cpp


def check_options(o: LlamaCppOptions) -> None:
    for p in o.precisions:
        r = RECIPES.get(p)
        if r is None or r.block is None or r.block.engine != LLAMA_CPP:
            raise UserError(f"--precision {p}: the llama.cpp validation writes single-type GGUF files of llama.cpp's "
                            f"types; one of {', '.join(n for n, x in RECIPES.items() if x.block and x.block.engine == LLAMA_CPP)}")
    for flag, v in (("--pp", o.pp), ("--tg", o.tg), ("--reps", o.reps), ("--n-batch", o.n_batch)):
        if v < 1:
            raise UserError(f"{flag} {v}: must be at least 1")
    if any(b < 1 for b in o.parallel):
        raise UserError(f"--parallel {','.join(map(str, o.parallel))}: each at least 1")
    if o.depth < 0:
        raise UserError(f"--depth {o.depth}: 0 or more")


def validation_model(name: str, layers: int | None) -> ModelSpec:
    from roofline.validation.gguf_writer import check_writable

    spec = load_model_file(find_file("models", name))
    if layers is not None:
        if layers > spec.num_hidden_layers:
            raise UserError(f"--layers {layers}: {spec.name} has {spec.num_hidden_layers}")
        spec = dataclasses.replace(spec, name=f"{spec.name}-{layers}l", num_hidden_layers=layers,
                                   dense_layers=tuple(i for i in spec.dense_layers if i < layers))
    check_writable(spec)
    return spec


def resolve_platforms(cpu: str, threads: int) -> tuple[Platform, Path, tuple[Platform, str] | None, list[str]]:
    """The measured platform (a probe: ``host`` = this host's cached probe at ``threads``, or a file)
    and the datasheet platform scaled to the threads, if the host matches one."""
    from roofline.validation.host import detect_host
    from roofline.validation.platforms import datasheet_for, probe_path, resolve_measured

    notes = []
    if cpu == "host" and not probe_path(threads).is_file():
        try:
            import torch  # noqa: F401
        except ImportError:
            raise UserError(f"--cpu host: no probe of this host at {threads} threads yet ({probe_path(threads)}); "
                            f"run `roofline probe --threads {threads}` (validate extra) or give a probe file with "
                            "--cpu FILE") from None
    measured, path, fresh = resolve_measured(cpu, threads, False, False, lambda s: None)
    cores = int(measured.sockets.value * measured.cores_per_socket.value)
    if cores != threads:
        notes.append(f"the measured platform {path.name} has {cores} cores; llama.cpp ran {threads} threads")
    if cpu == "host":
        notes.append(f"measured platform: {'a fresh' if fresh else 'the cached'} probe of this host, {portable_path(path)}")
    sheet = datasheet_for(detect_host(), threads, measured)
    return measured, path, sheet, notes


def _estimate(platform: Platform, model: ModelSpec, precision: str, phase: str, *, seq_len: int, context: int):
    """One precision's estimate of one llama.cpp process on every core: the lm_head quantized, an f16 KV cache."""
    from roofline.model.build import LayoutSpec, StepOptions
    from roofline.model.estimate import EstimateQuery, estimate
    from roofline.model.workload import WorkloadSpec

    one = int(platform.cores_per_socket.value)  # one process on every core: one instance of them all
    q = EstimateQuery(precisions=[precision], baseline=precision,
                      workload=WorkloadSpec(phase=phase, batch=1, seq_len=seq_len, context=context),
                      layout=LayoutSpec(instance_cores=one),
                      options=StepOptions(kv_dtype="fp16", quantize_lm_head=True))
    return estimate(platform, model, q).precisions[precision]


def ceilings(platform: Platform, model: ModelSpec, precision: str, *, pp: int, tg: int) -> dict:
    """Decode ceiling at the tg test's mean context (it starts from an empty cache) and prefill
    ceiling of a pp prompt, with the lm_head quantized and an f16 KV cache, as llama.cpp runs."""
    dec = _estimate(platform, model, precision, "decode", seq_len=pp, context=tg // 2)
    pre = _estimate(platform, model, precision, "prefill", seq_len=pp, context=0)
    pre_bound = "compute" if sum(g.time_s for g in pre.gemms if g.bound == "compute") > pre.gemm_time_s / 2 \
        else "memory"
    return dict(tg=dec.decode.tokens_per_s, tg_bound=dec.decode.bound, weight_bytes=dec.decode.weight_bytes,
                kv_bytes=dec.decode.kv_cache_bytes, pp=pp / pre.step_time_s, pp_bound=pre_bound)


def _pin(threads: int) -> list[int]:
    """Pin this process to ``threads`` of the CPUs it may run on (the first ones)."""
    if not hasattr(os, "sched_getaffinity"):
        return []
    cpus = sorted(os.sched_getaffinity(0))
    if threads > len(cpus):
        raise UserError(f"--threads {threads}: this process may run on {len(cpus)} CPUs")
    chosen = cpus[:threads]
    os.sched_setaffinity(0, chosen)
    return chosen


def _rate(test: str, tokens: int, seconds: list[float], ceiling: float, bound: str,
          sheet_ceiling: float | None) -> RateResult:
    rates = [tokens / s for s in seconds]
    med = statistics.median(rates)
    return RateResult(
        test=test, tokens=tokens, samples_tokens_per_s=rates, tokens_per_s=med,
        spread=(max(rates) - min(rates)) / med, ceiling_tokens_per_s=ceiling, ceiling_bound=bound,
        achieved_fraction=med / ceiling, ceiling_datasheet_tokens_per_s=sheet_ceiling,
        achieved_fraction_datasheet=med / sheet_ceiling if sheet_ceiling else None,
    )


def bench(llm, vocab: int, *, pp: int, tg: int, reps: int, seed: int) -> tuple[list[float], list[float]]:
    """llama-bench's pp and tg tests on a loaded ``llama_cpp.Llama``: (pp seconds, tg seconds) per repetition."""
    import random

    rnd = random.Random(seed)
    token = lambda: rnd.randrange(259, vocab)  # noqa: E731  (past the special and byte tokens)
    # warm-up, as llama-bench does: a short prompt and one generated token
    llm.reset()
    llm.eval([token() for _ in range(min(pp, 32))])
    llm.eval([token()])
    pp_s, tg_s = [], []
    for _ in range(reps):
        prompt = [token() for _ in range(pp)]
        llm.reset()
        t0 = time.perf_counter()
        llm.eval(prompt)
        pp_s.append(time.perf_counter() - t0)
        gen = [token() for _ in range(tg)]
        llm.reset()
        t0 = time.perf_counter()
        for t in gen:
            llm.eval([t])
        tg_s.append(time.perf_counter() - t0)
    return pp_s, tg_s


class _Raw:
    """llama.cpp's C API on one model file, as llama-batched-bench drives it: a context holding ``seqs`` sequences, a
    batch of up to ``n_batch`` tokens, and timed calls of ``llama_decode``."""

    def __init__(self, llama_cpp, path: str, *, n_ctx: int, n_batch: int, seqs: int, threads: int,
                 flash: bool = False) -> None:
        self.lc = llama_cpp
        mp = llama_cpp.llama_model_default_params()
        mp.use_mmap = True
        self.model = llama_cpp.llama_model_load_from_file(path.encode(), mp)
        if not self.model:
            raise UserError(f"llama.cpp could not load {path}")
        cp = llama_cpp.llama_context_default_params()
        cp.n_ctx, cp.n_batch, cp.n_ubatch, cp.n_seq_max = n_ctx, n_batch, n_batch, seqs
        cp.n_threads = cp.n_threads_batch = threads
        cp.flash_attn_type = (getattr(llama_cpp, "LLAMA_FLASH_ATTN_TYPE_ENABLED", 1) if flash else
                              getattr(llama_cpp, "LLAMA_FLASH_ATTN_TYPE_DISABLED", 0))
        self.ctx = llama_cpp.llama_init_from_model(self.model, cp)
        if not self.ctx:
            llama_cpp.llama_model_free(self.model)
            raise UserError(f"llama.cpp could not make a context of {n_ctx} tokens for {seqs} sequences")
        self.n_batch = n_batch
        self.batch = llama_cpp.llama_batch_init(max(n_batch, seqs), 0, seqs)
        self.memory = llama_cpp.llama_get_memory(self.ctx)

    def clear(self) -> None:
        self.lc.llama_memory_clear(self.memory, False)

    def decode(self, tokens: list[tuple[int, int, int]]) -> float:
        """``(token, position, sequence)`` triples in batches of ``n_batch``, the logits of each sequence's last one
        kept; seconds until every batch is done."""
        t0 = time.perf_counter()
        for start in range(0, len(tokens), self.n_batch):
            chunk = tokens[start:start + self.n_batch]
            b = self.batch
            b.n_tokens = len(chunk)
            for i, (tok, pos, seq) in enumerate(chunk):
                b.token[i], b.pos[i], b.n_seq_id[i], b.logits[i] = tok, pos, 1, False
                b.seq_id[i][0] = seq
            b.logits[len(chunk) - 1] = True
            if self.lc.llama_decode(self.ctx, b) != 0:
                raise UserError("llama_decode failed (the context too small for the test?)")
        self.lc.llama_synchronize(self.ctx)
        return time.perf_counter() - t0

    def close(self) -> None:
        self.lc.llama_batch_free(self.batch)
        self.lc.llama_free(self.ctx)
        self.lc.llama_model_free(self.model)


def bench_parallel(raw: _Raw, token: Callable[[], int], sequences: list[int], *, pp: int, tg: int, reps: int
                   ) -> dict[int, tuple[list[float], list[float]]]:
    """llama-batched-bench's test for each ``B`` of ``sequences``: ``B`` prompts of ``pp`` tokens (the prefill), then
    ``tg`` steps of one token of each sequence (the decode): ``{B: (prefill seconds, decode seconds)}`` per
    repetition, the B values interleaved within each repetition (a slow spell of the host hits them alike)."""
    out: dict[int, tuple[list[float], list[float]]] = {b: ([], []) for b in sequences}
    raw.clear()  # warm-up, as llama-batched-bench: 16 tokens of one sequence
    raw.decode([(token(), i, 0) for i in range(16)])
    for _ in range(reps):
        for b in sequences:
            raw.clear()
            out[b][0].append(raw.decode([(token(), i, j) for j in range(b) for i in range(pp)]))
            t = 0.0
            for step in range(tg):
                t += raw.decode([(token(), pp + step, j) for j in range(b)])
            out[b][1].append(t)
    return out


def bench_depth(raw: _Raw, token: Callable[[], int], *, depth: int, pp: int, tg: int, reps: int
                ) -> tuple[list[float], list[float]]:
    """llama-bench's ``pp N @ d D`` and ``tg N @ d D``: ``depth`` tokens put in the cache untimed, then a prompt of
    ``pp`` (timed), and, from the same depth again, ``tg`` tokens one at a time (timed)."""
    pp_s, tg_s = [], []
    for _ in range(reps):
        raw.clear()
        raw.decode([(token(), i, 0) for i in range(depth)])
        pp_s.append(raw.decode([(token(), depth + i, 0) for i in range(pp)]))
        raw.clear()
        raw.decode([(token(), i, 0) for i in range(depth)])
        tg_s.append(sum(raw.decode([(token(), depth + i, 0)]) for i in range(tg)))
    return pp_s, tg_s


def _batched(sequences: list[int], results: dict[int, tuple[list[float], list[float]]], pp: int, tg: int
             ) -> list[BatchedResult]:
    out = []
    for b in sequences:
        pre, dec = results[b]
        pre_r = [b * pp / s for s in pre]
        dec_r = [b * tg / s for s in dec]
        med = statistics.median(dec_r)
        out.append(BatchedResult(sequences=b, prompt=pp, generated=tg, prefill_samples_tokens_per_s=pre_r,
                                 prefill_tokens_per_s=statistics.median(pre_r), decode_samples_tokens_per_s=dec_r,
                                 decode_tokens_per_s=med, decode_spread=(max(dec_r) - min(dec_r)) / med))
    return out


def run_llamacpp(o: LlamaCppOptions, progress: Callable[[str], None] = lambda s: None) -> LlamaCppResult:
    llama_cpp = require_llama_cpp()
    from roofline.validation.gguf_writer import write_random_gguf
    from roofline.validation.host import detect_host

    check_options(o)
    host = detect_host()
    threads = o.threads or host.cores
    model = validation_model(o.model, o.layers)
    if o.pp + o.tg > model.max_position_embeddings:
        raise UserError(f"--pp {o.pp} + --tg {o.tg}: {model.name} has {model.max_position_embeddings} positions")
    measured, measured_file, sheet, notes = resolve_platforms(o.cpu, threads)
    pinned = _pin(threads)
    n_ctx = o.pp + o.tg + 64
    settings = {"n_ctx": str(n_ctx), "n_batch": str(min(o.n_batch, o.pp)), "n_ubatch": str(min(o.n_batch, o.pp)),
                "flash_attn": "on" if o.flash_attention else "off", "kv_type": "f16", "use_mmap": "on", "repetitions": str(o.reps),
                "warm-up": "a prompt of min(pp, 32) tokens and one generated token", "seed": str(o.seed),
                **({"parallel": ",".join(map(str, o.parallel)), "parallel_pp": str(o.parallel_pp),
                    "parallel_kv": "one stream per sequence (llama.cpp's default, as llama-batched-bench without "
                                   "-kvu)"} if o.parallel else {}),
                **({"depth": str(o.depth)} if o.depth else {}),
                "pinned_cpus": ",".join(map(str, pinned)) or "not pinned"}
    runs: list[LlamaCppRun] = []
    folder = Path(o.gguf_dir) if o.gguf_dir else Path(tempfile.mkdtemp(prefix="roofline-gguf-"))
    folder.mkdir(parents=True, exist_ok=True)
    for precision in o.precisions:
        path = folder / f"{model.name}-{precision}.gguf"
        progress(f"{precision}: writing {path.name}")
        written = write_random_gguf(path, model, precision, seed=o.seed)
        try:
            progress(f"{precision}: loading")
            t0 = time.perf_counter()
            llm = llama_cpp.Llama(model_path=str(path), n_ctx=n_ctx, n_batch=min(o.n_batch, o.pp),
                                  n_ubatch=min(o.n_batch, o.pp), n_threads=threads, n_threads_batch=threads,
                                  use_mmap=True, flash_attn=o.flash_attention, verbose=False, seed=o.seed)
            load_s = time.perf_counter() - t0
            progress(f"{precision}: pp{o.pp} and tg{o.tg} x {o.reps}")
            pp_s, tg_s = bench(llm, model.vocab_size, pp=o.pp, tg=o.tg, reps=o.reps, seed=o.seed)
            llm.close()
            batched, depth = _extra_tests(llama_cpp, str(path), o, model, threads)
        finally:
            if not o.keep_gguf:
                path.unlink(missing_ok=True)
        c = ceilings(measured, model, precision, pp=o.pp, tg=o.tg)
        cs = ceilings(sheet[0], model, precision, pp=o.pp, tg=o.tg) if sheet else None
        pp_r = _rate(f"pp{o.pp}", o.pp, pp_s, c["pp"], c["pp_bound"], cs["pp"] if cs else None)
        tg_r = _rate(f"tg{o.tg}", o.tg, tg_s, c["tg"], c["tg_bound"], cs["tg"] if cs else None)
        runs.append(LlamaCppRun(
            precision=precision, ggml_types=dict(Counter(t.type for t in written.tensors)),
            file_bytes=written.nbytes, write_s=written.seconds, load_s=load_s,
            weight_bytes_per_token=c["weight_bytes"], kv_bytes_per_token=c["kv_bytes"], pp=pp_r, tg=tg_r,
            tg_weight_bytes_per_s=tg_r.tokens_per_s * c["weight_bytes"], batched=batched,
            depth=None if depth is None else DepthResult(
                depth=o.depth,
                pp=_rate(f"pp{o.pp} @ d{o.depth}", o.pp, depth[0], *_depth_ceiling(measured, model, precision, o, True)),
                tg=_rate(f"tg{o.tg} @ d{o.depth}", o.tg, depth[1], *_depth_ceiling(measured, model, precision, o, False))),
        ))
    if not o.gguf_dir and not o.keep_gguf:
        folder.rmdir()
    comparisons = _comparisons(runs)
    llc = measured.llc_domain_bytes
    smallest = min(r.weight_bytes_per_token for r in runs)
    if smallest < 4 * llc:
        notes.append(f"the smallest weight set read per token ({smallest / 1e6:.0f} MB) is under 4x the LLC "
                     f"({llc / 2**20:.0f} MiB): part of it may stay cached between tokens")
    return LlamaCppResult(
        tool=f"roofline {__version__}", date=_dt.datetime.now().isoformat(timespec="seconds"), command=o.command,
        engine="llama.cpp", model=model.name, layers=model.num_hidden_layers,
        host=LlamaCppHost(cpu_model=host.cpu_model, microarchitecture=host.microarchitecture, flags=host.flags,
                          threads=threads, cores=host.cores, llama_cpp_python=llama_cpp.__version__,
                          gguf=_version("gguf"), system_info=llama_cpp.llama_print_system_info().decode().strip()),
        platform=PlatformRef(name=measured.name, file=portable_path(measured_file),
                             kind="measured" if measured.sockets.kind == "measured" else "catalog",
                             date=measured.sockets.date if measured.sockets.kind == "measured" else None),
        datasheet=PlatformRef(name=sheet[0].name, file=portable_path(sheet[1]), kind="datasheet") if sheet else None,
        settings=settings, runs=runs, comparisons=comparisons, notes=notes,
    )


def _extra_tests(llama_cpp, path: str, o: LlamaCppOptions, model: ModelSpec, threads: int
                 ) -> tuple[list[BatchedResult], tuple[list[float], list[float]] | None]:
    """The ``--parallel`` and ``--depth`` tests on one file (none asked: nothing)."""
    import random

    if not o.parallel and not o.depth:
        return [], None
    rnd = random.Random(o.seed + 1)
    token = lambda: rnd.randrange(259, model.vocab_size)  # noqa: E731
    seqs = max(o.parallel or [1])
    per_seq = max(o.parallel_pp + o.tg, o.depth + max(o.pp, o.tg)) + 16
    raw = _Raw(llama_cpp, path, n_ctx=per_seq * seqs, n_batch=min(o.n_batch, 512), seqs=seqs, threads=threads,
               flash=o.flash_attention)
    try:
        batched = _batched(o.parallel, bench_parallel(raw, token, o.parallel, pp=o.parallel_pp, tg=o.tg,
                                                      reps=o.reps), o.parallel_pp, o.tg) if o.parallel else []
        depth = bench_depth(raw, token, depth=o.depth, pp=o.pp, tg=o.tg, reps=o.reps) if o.depth else None
    finally:
        raw.close()
    return batched, depth


def _depth_ceiling(platform: Platform, model: ModelSpec, precision: str, o: LlamaCppOptions, prefill: bool
                   ) -> tuple[float, str, None]:
    """The ceiling of the pp (``prefill``) or tg test at ``o.depth``: rate and bound."""
    e = _estimate(platform, model, precision, "prefill" if prefill else "decode", seq_len=o.pp,
                  context=o.depth if prefill else o.depth + o.tg // 2)
    return (o.pp / e.step_time_s if prefill else e.decode.tokens_per_s), e.bound, None


def _comparisons(runs: list[LlamaCppRun]) -> list[Comparison]:
    """Each precision against the widest one that ran (q8_0 when present)."""
    if len(runs) < 2:
        return []
    base = max(runs, key=lambda r: r.weight_bytes_per_token)
    return [Comparison(precision=r.precision, baseline=base.precision, tg_speedup=r.tg.tokens_per_s / base.tg.tokens_per_s,
                       ceiling_speedup=r.tg.ceiling_tokens_per_s / base.tg.ceiling_tokens_per_s,
                       bytes_ratio=base.weight_bytes_per_token / r.weight_bytes_per_token,
                       pp_speedup=r.pp.tokens_per_s / base.pp.tokens_per_s)
            for r in runs if r is not base]


def _version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "unknown"
