"""A measurement file as a record: llama-bench's results (``-o json``, ``jsonl``, ``csv``, the markdown table),
llama-batched-bench's (its table, ``--output-format jsonl``), MLPerf's ``mlperf_log_summary.txt`` (with its system
description), the serving benchmarks' (``vllm bench serve --save-result``, SGLang's ``bench_serving --output-file``,
GuideLLM's JSON report) and OpenVINO ``benchmark_app``'s (its JSON report, its logged summary), turned into the
:class:`~roofline.spec.record.Record` ``roofline records add`` writes and ``roofline check --from`` compares.

What the file states is taken from it (the model's type and parameters, the GGUF file type, the threads, the
pp and tg lengths, the KV cache type; the scenario, the rate, the benchmark and the system; a serving run's token
totals and concurrency); what it does not state is asked for by a flag (``--cpu``; ``--model`` when the file names
the model only by a path; ``--precision``, ``--batch``, ``--seq-len``, ``--cores`` where a tool never states them),
and the error names the flag; what neither gives is assumed, and each assumption is said (:class:`Input`,
``assumed``, with why). The parsing itself is in :mod:`roofline.catalog` (``llama_bench``, ``batched_bench``,
``mlperf_log``, ``vllm_serve``, ``sglang_serve``, ``guidellm_report``, ``openvino_benchmark``).

llama-bench's tests become ``tokens_per_s`` figures on one instance of the run's threads: ``pp N`` a prefill of
N tokens, ``tg N`` decode at the mean context of N tokens generated from an empty cache (``N / 2``, plus the
test's depth). MLPerf's offline and server rates and benchmark_app's FPS become a ``throughput`` figure of the whole
server. A serving run's output tokens/s and ``batch / mean TPOT`` become decode figures at its concurrency, its
input tokens/s a prefill figure; its latencies are reported as read.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from roofline.catalog import batched_bench, guidellm_report, openvino_benchmark, resolve, sglang_serve, vllm_serve
from roofline.catalog.batched_bench import BatchedFile, parse_batched_bench
from roofline.catalog.llama_bench import BenchFile, BenchTest, detect, flash_attention, parse_llama_bench
from roofline.catalog.mlperf_log import MlperfSummary, MlperfSystem, is_summary, parse_summary, read_system
from roofline.catalog.serving_bench import ServingFile, ServingRun, first_object
from roofline.errors import SpecError, UserError
from roofline.files.reading import read_bytes
from roofline.results.check import MeasuredFrom, MeasuredInput
from roofline.results.estimate import LeftOut
from roofline.spec.model import ModelSpec
from roofline.spec.platform import Platform
from roofline.spec.record import Measurement, Record, RecordPlatform

#: the stacks the readers assign: a missing profile of one of them is no error (the realistic estimate is
#: then the ceiling plus the priced terms, and the result says so)
ENGINE_STACKS = ("llama.cpp", "intel-mlperf", "vllm", "sglang")
#: what ``check --from`` and ``records add`` read, named in the error for any other file
FORMATS = ("llama-bench JSON/JSONL/CSV/markdown, llama-batched-bench table/JSONL, MLPerf summary, vllm bench serve "
           "JSON, SGLang bench_serving JSONL, GuideLLM JSON, benchmark_app report/JSON")
#: llama.cpp's names of a file's weight type (``llama_model_ftype_name``) and the precision priced for it
FILE_TYPES = {"Q8_0": "q8_0", "Q4_0": "q4_0", "Q4_1": "q4_1", "Q5_0": "q5_0", "Q5_1": "q5_1", "Q6_K": "q6_k",
              "Q4_K - Small": "q4_k_s", "Q4_K - Medium": "q4_k_m", "Q5_K - Small": "q5_k", "Q5_K - Medium": "q5_k",
              "IQ4_NL - 4.5 bpw": "iq4_nl", "IQ4_XS - 4.25 bpw": "iq4_xs", "Q2_K - Medium": "q2_k", "Q2_K - Small": "q2_k_s",
              "Q3_K - Small": "q3_k", "BF16": "bf16", "F16": "f16", "all F32": "fp32",
              "IQ1_S - 1.5625 bpw": "iq1_s", "IQ1_M - 1.75 bpw": "iq1_m", "IQ2_XXS - 2.0625 bpw": "iq2_xxs",
              "IQ2_XS - 2.3125 bpw": "iq2_xs", "IQ2_S - 2.5 bpw": "iq2_s", "IQ3_XXS - 3.0625 bpw": "iq3_xxs",
              "IQ3_S - 3.4375 bpw": "iq3_s", "IQ2_M - 2.7 bpw": "iq2_s", "IQ3_XS - 3.3 bpw": "iq3_s",
              "IQ3_S mix - 3.66 bpw": "iq3_s"}
#: what llama.cpp's IQ4_NL and IQ4_XS mixes raise (``llama-quant.cpp``, ``llama_tensor_get_type_impl``)
_IQ4_MIX = ("Q5_K in attn_v (4 or more query heads per KV head) and, without an imatrix, in the first eighth of the "
            "layers' ffn_down")
#: what llama.cpp's IQ1 and IQ2 mixes raise (``llama-quant.cpp``, ``llama_tensor_get_type_impl`` at 0c1e570)
_IQ2_MIX = ("Q5_K in the output matrix, Q2_K (IQ3_S for IQ2_S) in token_embd, attn_v and the first eighth of the layers' "
            "ffn_down, Q4_K in attn_v with 4 or more query heads per KV head, and IQ2_XXS (IQ3_S for IQ2_S) in the IQ1 "
            "types' attn_output")
#: file types priced as one type throughout, though llama.cpp's mix of that name raises some tensors
MIXED_AS_ONE = {"Q5_K - Small": "Q6_K in some tensors",
                "Q5_K - Medium": "Q6_K in some attn_v and ffn_down tensors",
                "IQ4_NL - 4.5 bpw": _IQ4_MIX, "IQ4_XS - 4.25 bpw": _IQ4_MIX,
                "Q2_K - Medium": "Q3_K in ffn_down and attn_output, and Q4_K (4 or more query heads per KV head) or "
                                 "Q3_K in attn_v",
                **dict.fromkeys(("IQ1_S - 1.5625 bpw", "IQ1_M - 1.75 bpw", "IQ2_XXS - 2.0625 bpw", "IQ2_XS - 2.3125 bpw",
                                 "IQ2_S - 2.5 bpw"), _IQ2_MIX),
                "IQ3_XXS - 3.0625 bpw": "Q5_K in the output matrix, IQ3_S in token_embd and attn_output, Q4_K (4 or more "
                                        "query heads per KV head) or IQ3_S in attn_v, IQ2_S in attn_q and attn_k "
                                        "(llama-quant.cpp, llama_tensor_get_type_impl at 0c1e570)",
                "IQ3_S - 3.4375 bpw": "Q6_K in the output matrix and Q4_K in attn_v with 4 or more query heads per KV "
                                      "head (llama-quant.cpp, llama_tensor_get_type_impl at 0c1e570)",
                # IQ2_M: the IQ2_S mix's rules (llama_tensor_get_type_impl names both alike), IQ2_S as its type
                "IQ2_M - 2.7 bpw": _IQ2_MIX,
                "IQ3_XS - 3.3 bpw": "Q6_K in the output matrix, Q4_K in attn_v with 4 or more query heads per KV head, "
                                    "IQ3_XXS in attn_q, attn_k and the middle three quarters of the layers' ffn_gate "
                                    "and ffn_up (llama-quant.cpp, llama_tensor_get_type_impl at 0c1e570)",
                "IQ3_S mix - 3.66 bpw": "Q6_K in the output matrix, Q4_K in attn_v, attn_output and the first eighth of "
                                        "the layers' ffn_down (llama.cpp's IQ3_M; llama-quant.cpp, "
                                        "llama_tensor_get_type_impl at 0c1e570)"}
#: file types that name a llama.cpp mix (their :data:`FILE_TYPES` precision), which ``llama-quantize --pure`` writes
#: with one type throughout under the same name: that type, the file's stated size deciding (:func:`_mix_or_pure`)
PURE_OF_MIX = {"Q4_K - Small": "q4_k", "Q4_K - Medium": "q4_k", "Q2_K - Small": "q2_k"}
KV_TYPES = {"f16": "fp16", "bf16": "bf16", "f32": "fp32", "q8_0": "int8"}
#: MLPerf benchmarks and the catalog model each runs
BENCHMARKS = {"bert-99": "bert-large", "bert-99.9": "bert-large"}
#: MLPerf BERT's workload as the records price Intel's harness (validation/records/mlperf-*-bert99-offline.toml)
BERT_BATCH, BERT_SEQ_LEN, BERT_INSTANCE_CORES = 8, 172, 4
BERT_WHY = ("MLPerf BERT-99: SQuAD 1.1 samples of 172 tokens on average at length 384, packed 8 to a call of a "
            "4-core instance by Intel's harness (as validation/records/mlperf-*-bert99-offline.toml)")


@dataclass(frozen=True)
class Given:
    """What the command line (or the API's keywords) says beside the file."""

    cpu: Any = None
    model: Any = None
    precision: str | None = None
    cores: int | None = None
    """the threads of the run, when the file does not state them"""
    batch: int | None = None
    seq_len: int | None = None
    instance_cores: int | None = None
    stack: str | None = None
    system: str | None = None
    """an MLPerf system description (default: the results tree's ``systems/<system>.json``)"""


@dataclass(frozen=True)
class Measured:
    """A measurement file as a record, with everything it rests on."""

    record: Record
    platform: Platform
    spec: ModelSpec
    origin: MeasuredFrom
    comments: dict[str, str] = field(default_factory=dict)
    """``field`` (or ``platform.field``, ``measurements.N.field``) -> why it holds what it holds"""
    spreads: tuple[float | None, ...] = ()
    """each measurement's relative standard deviation, when stated"""


class _Inputs:
    """The inputs of a conversion, in order, and the comments a record file gets for them."""

    def __init__(self) -> None:
        self.items: list[MeasuredInput] = []
        self.comments: dict[str, str] = {}

    def add(self, what: str, value: Any, source: str, detail: str, key: str | None = None) -> None:
        self.items.append(MeasuredInput(what, str(value), source, detail))  # type: ignore[arg-type]
        if key:
            self.comments[key] = f"{source}: {detail}" if source != "file" else detail


def read_measured(path: str, given: Given = Given()) -> Measured:
    """The file at ``path`` (llama-bench or MLPerf, told apart by its text) as a record."""
    raw = read_bytes(Path(path), path)
    text = raw.decode("utf-8", errors="replace")
    first = first_object(text)
    if vllm_serve.detect(first):
        return _from_serving(vllm_serve.parse_vllm_serve(raw, path), given)
    if sglang_serve.detect(first):
        return _from_serving(sglang_serve.parse_sglang_serve(raw, path), given)
    if guidellm_report.detect(first):
        return _from_serving(guidellm_report.parse_guidellm(raw, path), given)
    if openvino_benchmark.detect(text, first):
        return _from_benchmark_app(openvino_benchmark.parse_benchmark_app(raw, path), given)
    if first is not None and batched_bench.detect(text) is None and "avg_ts" not in first:
        raise SpecError(path, "", f"not a format roofline reads ({FORMATS})")
    if is_summary(text):
        return _from_mlperf(parse_summary(text, path), given)
    if batched_bench.detect(text) is not None:
        return _from_batched_bench(parse_batched_bench(raw, path), given)
    if detect(text) is not None:
        return _from_llama_bench(parse_llama_bench(raw, path), given)
    raise SpecError(path, "", f"not a format roofline reads ({FORMATS})")


# ------------------------------------------------------------------------------- shared


def _platform(given: Given, inputs: _Inputs, why_needed: str) -> tuple[Platform, str]:
    """The platform and how a record names it (a catalog name, else the file's absolute path)."""
    if given.cpu is None:
        raise UserError(f"{why_needed}; give --cpu NAME (roofline platforms) or a platform file (roofline probe -o "
                        "host.toml writes one of this host)")
    platform, file = resolve.platform(given.cpu)
    if isinstance(given.cpu, Platform):
        ref = platform.name
    elif given.cpu.endswith(".toml") or os.sep in given.cpu or given.cpu == "host":
        ref = str(Path(file).resolve())
    else:
        ref = given.cpu
    inputs.add("platform", ref, "flag", f"--cpu {given.cpu if isinstance(given.cpu, str) else platform.name}",
               "platform.name")
    return platform, ref


def _model_ref(given: Given) -> tuple[ModelSpec, str]:
    spec = resolve.model(given.model)
    if isinstance(given.model, ModelSpec):
        return spec, spec.name
    ref = given.model
    if ref.endswith((".toml", ".json", ".gguf")) or os.sep in ref:
        ref = str(Path(ref).expanduser().resolve())
    return spec, ref


def _params(spec: ModelSpec) -> int:
    from roofline.model.footprint import footprint

    return footprint(spec, "fp32").params


def _mix_or_pure(file_type: str, size: float | None, spec: ModelSpec) -> tuple[str, str]:
    """The precision of a file type that names a mix (:data:`PURE_OF_MIX`) and why: the mix or its single type,
    whichever's weight bytes on ``spec`` (every tensor, :func:`~roofline.spec.gguf_mix.tensor_types`) are nearer the
    file's stated ``model_size``; the mix when the file states no size."""
    from roofline.spec.gguf_mix import tensor_types

    mix, pure = FILE_TYPES[file_type], PURE_OF_MIX[file_type]
    if not size:
        return mix, f" (llama.cpp's {mix} rule; the file states no size to tell it from a --pure {pure} file)"
    nbytes = {p: sum(t.bytes for t in tensor_types(p, spec)) for p in (mix, pure)}
    pick = min(nbytes, key=lambda p: abs(nbytes[p] - size))
    other = pure if pick == mix else mix
    what = f"llama.cpp's {mix} rule" if pick == mix else "one type throughout (llama-quantize --pure)"
    return pick, (f" (its stated size, {size / 2**30:.3g} GiB, is nearer the {pick} file's {nbytes[pick] / 2**30:.3g} "
                  f"GiB than the {other} file's {nbytes[other] / 2**30:.3g} GiB: {what})")


def flash_setting(values: list[str | None], inputs: _Inputs, where: str) -> bool | None:
    """llama.cpp's flash attention as a file states it (``1``/``on``: on, ``0``/``off``: off; ``-1``/``auto``, or
    tests that disagree: not stated, so the stack's rule decides by the build's date), said among the inputs."""
    on, said = flash_attention(values)
    if on is not None:
        inputs.add("flash attention", "on" if on else "off", "file", f"{where}: {', '.join(sorted(said))}",
                   "flash_attention")
        return on
    inputs.add("flash attention", "the build's default", "assumed",
               f"{where}: {', '.join(sorted(said)) or 'not stated'}; off before llama.cpp's auto default "
               "(platforms/stacks/llama.cpp.toml, unfused_attention), on after", "flash_attention")
    return None


def _stack(given: Given, engine: str, inputs: _Inputs, why: str) -> str:
    if given.stack:
        inputs.add("stack", given.stack, "flag", "--stack", "stack")
        return given.stack
    inputs.add("stack", engine, "assumed", why, "stack")
    return engine


# ------------------------------------------------------------------------------- serving benchmarks

#: each serving tool's engine (the stack its rates are priced with), and why
SERVING_ENGINES = {vllm_serve.TOOL: ("vllm", "vllm bench serve benchmarks a vLLM server (its CPU backend here)"),
                   sglang_serve.TOOL: ("sglang", "sglang.bench_serving benchmarks an SGLang server"),
                   guidellm_report.TOOL: ("unknown", "GuideLLM benchmarks any OpenAI-compatible server: --stack "
                                          "names it")}


def _serving_model(file: ServingFile, given: Given, inputs: _Inputs) -> tuple[ModelSpec, str]:
    """--model, else the catalog model the file's ``model_id`` names (its last path part, lower case)."""
    if given.model is not None:
        spec, ref = _model_ref(given)
        named = {r.model for r in file.runs if r.model}
        inputs.add("model", ref, "flag", "--model" + (f" (the file says '{sorted(named)[0]}')" if named else ""),
                   "model")
        return spec, ref
    named = sorted({r.model for r in file.runs if r.model})
    for name in named[:1]:
        base = name.rstrip("/").rsplit("/", 1)[-1].lower()
        for candidate in (base, re.sub(r"-(instruct|chat|hf|it)$", "", base)):
            if not re.fullmatch(r"[a-z0-9][a-z0-9._-]*", candidate) or candidate.endswith((".gguf", ".json", ".toml")):
                continue  # a catalog name only, never a file of this machine
            try:
                spec = resolve.model(candidate)
            except UserError:
                continue
            inputs.add("model", candidate, "file", f"{file.runs[0].keys.get('model', 'model')} '{name}'",
                       "model")
            return spec, candidate
    what = f"as '{named[0]}', no catalog model" if named else "not at all"
    raise UserError(f"{file.path}: {file.tool} names the model {what}; give --model NAME (roofline models), a "
                    "config.json or the .gguf file")


def _serving_batch(run: ServingRun, given: Given, path: str) -> tuple[int, str, str]:
    """The sequences decoded together: --batch; else the requests in flight the file states (the client's cap, or
    the measured mean rounded up); else every request, when all were sent at once."""
    if given.batch is not None:
        return given.batch, "flag", "--batch"
    if run.max_concurrency is not None and run.strategy in ("synchronous", "concurrent"):
        return min(run.max_concurrency, run.completed), "file", (
            f"{run.keys['concurrency'] if run.strategy == 'concurrent' else 'config.strategy.type_'} "
            f"({run.where}): {run.strategy}, {run.max_concurrency} request{'s' if run.max_concurrency > 1 else ''} "
            "always in flight")
    if run.concurrency is not None:
        b = max(1, math.ceil(run.concurrency - 1e-9))
        return min(b, run.completed), "file", (f"{run.keys['concurrency']} {run.concurrency:.4g} ({run.where}): the "
                                               "mean of requests in flight, rounded up")
    if run.max_concurrency is not None:
        return min(run.max_concurrency, run.completed), "file", (
            f"max_concurrency {run.max_concurrency} ({run.where}): the client's cap on requests in flight"
            + (f", more than the {run.completed} requests" if run.max_concurrency > run.completed else ""))
    if run.request_rate is not None and math.isinf(run.request_rate):
        return run.completed, "assumed", (f"every one of the {run.completed} requests in flight: all were sent at "
                                          "once (request rate inf, no max_concurrency); the server's own limit "
                                          "(--max-num-seqs) may be lower: give --batch")
    raise UserError(f"{path}: {run.where}: the file states no concurrency (requests sent at "
                    f"{run.request_rate if run.request_rate is not None else 'an unstated rate'}/s, no "
                    "max_concurrency); give --batch N, the sequences the server decoded together")


def _from_serving(file: ServingFile, given: Given) -> Measured:
    """Each run's output tokens/s a decode figure of its concurrency's sequences at the mean context ``input +
    output / 2``; its input tokens/s a prefill figure of prompts of the mean input length; its mean TPOT a decode
    figure ``B / TPOT``. TTFT, ITL and end-to-end latencies are reported as read, not priced."""
    path = file.path
    inputs = _Inputs()
    left_out: list[LeftOut] = []
    inputs.add("file", path, "file", f"{file.tool} {file.format}" + (f", {file.version}" if file.version else ""))
    spec, model_ref = _serving_model(file, given, inputs)
    if spec.family != "decoder":
        raise UserError(f"--model {spec.name}: an encoder; {file.tool} benchmarks a generating server")
    if not given.precision:
        raise UserError(f"{path}: {file.tool} does not state the weights' precision; give --precision (bf16, "
                        "int8-dynamic, int8-weight-only, ...)")
    inputs.add("precision", given.precision, "flag", "--precision")
    platform, cpu_ref = _platform(given, inputs, f"{path}: {file.tool} does not name the CPU")
    per_socket = int(platform.cores_per_socket.value)
    if given.cores is not None:
        if given.cores > per_socket:
            raise UserError(f"--cores {given.cores}: {platform.name} has {per_socket} cores per socket; a server over "
                            "more than one socket is priced by estimate --sockets 2, not by this reader")
        n = given.cores
        inputs.add("threads", n, "flag", "--cores", "platform.cores")
    else:
        n = per_socket
        inputs.add("threads", n, "assumed", f"one socket's {n} cores (the file states no threads): give --cores N, "
                   "the threads the server ran", "platform.cores")
    inputs.add("layout", f"1 server process of {n} cores on 1 socket", "assumed", "one engine process on one "
               "socket's cores, as --tokens-per-s prices one", "platform.sockets")
    inputs.add("KV cache", "the activation dtype", "assumed", "the file states no cache type (vLLM's and SGLang's "
               "default: the model's dtype)")
    inputs.add("lm_head", "unquantized", "assumed", "the output matrix in the model's dtype (the default of the "
               "engines' quantization recipes)", "quantize_lm_head")
    if given.instance_cores is not None:
        raise UserError(f"--instance-cores: {file.tool} measures one server process; --cores gives its threads")
    inputs.add("decode context", "input + output / 2", "assumed", "each request's prompt, then half its generated "
               "tokens (the mean of its decode steps), from the file's token totals over its completed requests")
    inputs.add("prefill batch", "the decode batch", "assumed", "prompts arrive while the others decode and are "
               "batched with them (continuous batching)")
    engine, why = SERVING_ENGINES[file.tool]
    stack = _stack(given, engine, inputs, why)

    measurements = []
    for k, run in enumerate(file.runs):
        b, source, detail = _serving_batch(run, given, path)
        inputs.add(f"batch ({run.where})", b, source, detail)  # type: ignore[arg-type]
        prompt = float(given.seq_len) if given.seq_len is not None else run.mean_input_len
        seq = max(1, round(prompt))
        context = round(prompt + run.mean_output_len / 2)
        lengths = (f"{run.input_tokens:,} input and {run.output_tokens:,} output tokens over {run.completed:,} "
                   f"requests ({run.keys['input_tokens']}, {run.keys['output_tokens']}, {run.keys['completed']})")
        inputs.add(f"lengths ({run.where})", f"{run.mean_input_len:.4g} in, {run.mean_output_len:.4g} out", "file",
                   lengths)
        if given.seq_len is not None:
            inputs.add(f"prompt ({run.where})", given.seq_len, "flag", "--seq-len, over the file's mean prompt")
        tag = f" #{k + 1}" if len(file.runs) > 1 else ""  # the file's k-th run (its where is in the note)
        figures = [("output", "decode", run.output_throughput, f"{run.keys['output_throughput']} ({run.where})")]
        if run.input_throughput:
            figures.append(("input", "prefill", run.input_throughput, f"{run.keys['input_throughput']} ({run.where})"))
        tpot = run.latencies_ms.get("mean_tpot_ms")
        if tpot:
            figures.append(("TPOT", "decode", b * 1000.0 / tpot, f"batch / mean_tpot_ms: {b} / {tpot:.4g} ms "
                            f"({run.where}), each sequence's token rate summed"))
        for what, phase, value, note in figures:
            key = f"measurements.{len(measurements)}"
            inputs.comments[f"{key}.value"] = note
            decode = phase == "decode"
            if decode:
                inputs.comments[f"{key}.context"] = (f"assumed: the prompt {prompt:.4g} + half "
                                                     f"the mean output {run.mean_output_len:.4g} tokens ({run.where})")
            measurements.append(Measurement(
                kind="tokens_per_s", precision=given.precision, value=value, phase=phase, batch=b,
                seq_len=None if decode else seq, context=context if decode else None,
                name=f"{what} B{b}{tag}", note=f"{file.tool} ({run.where}): {note}"))
        stats = {}
        for name, label in (("ttft", "TTFT"), ("itl", "ITL"), ("e2el", "end-to-end"), ("e2e_latency", "end-to-end")):
            got = [f"{stat} {run.latencies_ms[f'{stat}_{name}_ms']:.4g} ms" for stat in ("mean", "median", "p99")
                   if f"{stat}_{name}_ms" in run.latencies_ms]
            if got:
                stats[label] = ", ".join(got)
        if stats:
            left_out.append(LeftOut(f"latencies ({run.where})", "; ".join(f"{k} {v}" for k, v in stats.items())
                                    + ": as read, not priced: a TTFT holds the request's wait in the queue and, with "
                                    "continuous batching, other requests' steps (roofline plan simulates the queue); "
                                    "the mean TPOT is compared, as a decode rate"))
        if run.request_rate is not None and not math.isinf(run.request_rate):
            left_out.append(LeftOut(f"request rate ({run.where})", f"the client sent {run.request_rate:g} requests/s: "
                                    "the rates are what that load drew, at most what the server could do"))
    first = file.runs[0]
    b0 = measurements[0].batch or 1
    inputs.comments["batch"] = f"the first run's ({first.where}); each figure states its own"
    inputs.comments["seq_len"] = f"the mean prompt of the first run ({first.where}): {first.keys['input_tokens']} / " \
                                 f"{first.keys['completed']}"
    record = Record(
        description=f"{file.tool} of {spec.name} in {given.precision}, {len(file.runs)} run"
                    f"{'s' if len(file.runs) > 1 else ''}, {n} cores, on {platform.name}",
        source=f"{file.tool}: {path} ({file.format}" + (f", {first.date}" if first.date else "") + ")",
        stack=stack, platform=RecordPlatform(name=cpu_ref, cores=n, sockets=1, instance_cores=n), model=model_ref,
        batch=b0, seq_len=max(1, round(first.mean_input_len)), measurements=tuple(measurements))
    return Measured(record, platform, spec, MeasuredFrom(path, f"{file.tool} {file.format}", file.tool + (
        f" {file.version}" if file.version else ""), inputs.items, left_out), inputs.comments)


# ------------------------------------------------------------------------------- OpenVINO benchmark_app


def _from_benchmark_app(app: openvino_benchmark.BenchmarkApp, given: Given) -> Measured:
    """The run's FPS (samples per second of the whole platform) as a ``throughput`` figure of its streams
    (instances) of ``batch`` samples of ``--seq-len`` tokens; its latencies reported as read, not priced."""
    path = app.path
    inputs = _Inputs()
    inputs.add("file", path, "file", f"benchmark_app {app.format}" + (f", {app.api} API" if app.api else ""))
    if app.device and not app.device.upper().startswith("CPU"):
        raise SpecError(path, "configuration_setup: target device", f"{app.device}: roofline prices CPUs")
    inputs.add("samples/s", f"{app.fps:g}", "file", f"{app.fps_where} (FPS: batch x iterations / duration)")
    if given.model is None:
        named = f"the topology '{app.topology}'" if app.topology else "no model"
        raise UserError(f"{path}: benchmark_app names {named}, not a catalog model; give --model NAME (roofline "
                        "models) or a config.json")
    spec, model_ref = _model_ref(given)
    if spec.family != "encoder":
        raise UserError(f"--model {spec.name}: a decoder; --from reads encoder benchmarks' samples per second")
    inputs.add("model", model_ref, "flag", "--model" + (f" (topology '{app.topology}')" if app.topology else ""),
               "model")
    if not given.precision:
        raise UserError(f"{path}: benchmark_app does not state the model's precision (its report says UNSPECIFIED); "
                        "give --precision (fp32, bf16, int8-static, ...)")
    inputs.add("precision", given.precision, "flag", "--precision")
    platform, cpu_ref = _platform(given, inputs, f"{path}: benchmark_app does not name the CPU")
    if given.seq_len is not None:
        seq_len = given.seq_len
        inputs.add("tokens per sample", seq_len, "flag", "--seq-len", "seq_len")
    else:
        m = re.search(r"\[\s*\d+\s*,\s*(\d+)\s*\]", app.shape or "")
        if not m:
            raise UserError(f"{path}: benchmark_app's report states no input shape (-shape); give --seq-len N, the "
                            "tokens per sample")
        seq_len = int(m.group(1))
        inputs.add("tokens per sample", seq_len, "file", f"cmd_options shape '{app.shape}'", "seq_len")
    if given.batch is not None:
        batch = given.batch
        inputs.add("batch", batch, "flag", "--batch", "batch")
    elif app.batch:
        batch = app.batch
        inputs.add("batch", batch, "file", app.where["batch"], "batch")
    else:
        batch = 1
        inputs.add("batch", 1, "assumed", "benchmark_app's default, the model's own batch (1 for most exported "
                   "models): give --batch", "batch")
    sockets = int(platform.sockets.value)
    per_socket = given.cores or int(platform.cores_per_socket.value)
    total = sockets * per_socket
    inputs.add("cores", f"{per_socket} per socket, {sockets} socket{'s' if sockets > 1 else ''}",
               "flag" if given.cores else "assumed", "--cores" if given.cores else "the CPU plugin's default: every "
               "core of the platform (give --cores N per socket)", "platform.cores")
    if given.instance_cores is not None:
        instance_cores = given.instance_cores
        inputs.add("cores per instance", instance_cores, "flag", "--instance-cores", "platform.instance_cores")
    elif app.streams:
        instance_cores = max(1, total // app.streams)
        inputs.add("cores per instance", instance_cores, "file", f"{total} cores / {app.streams} streams "
                   f"({app.where['streams']}): a stream is an instance", "platform.instance_cores")
    else:
        raise UserError(f"{path}: the file states no number of streams; give --instance-cores N, the cores of each "
                        "stream")
    stack = _stack(given, "openvino", inputs, "benchmark_app runs OpenVINO's CPU plugin")
    left_out = []
    got = [f"{label} {app.values[k]:.4g} ms" for k, label in (("median_ms", "median"), ("mean_ms", "mean"),
                                                                ("min_ms", "min"), ("max_ms", "max"))
           if k in app.values]
    if got:
        left_out.append(LeftOut("latency", ", ".join(got) + ": as read, not priced: one inference among the streams "
                                "in flight at once; the comparison is of the rate"))
    inputs.comments["measurements.0.value"] = f"{app.fps_where} (FPS)"
    record = Record(
        description=f"OpenVINO benchmark_app of {spec.name} in {given.precision}, batch {batch}, on {platform.name}",
        source=f"benchmark_app {app.format}: {path} ({app.fps_where}: {app.fps:g} FPS)",
        stack=stack, platform=RecordPlatform(name=cpu_ref, cores=given.cores, instance_cores=instance_cores),
        model=model_ref, batch=batch, seq_len=seq_len,
        measurements=(Measurement(kind="throughput", precision=given.precision, value=app.fps, name="benchmark_app",
                                  note="samples/s of the whole platform (benchmark_app's FPS)"),))
    return Measured(record, platform, spec, MeasuredFrom(path, f"benchmark_app {app.format}", "OpenVINO benchmark_app",
                                                         inputs.items, left_out), inputs.comments, (None,))


# ------------------------------------------------------------------------------- llama-batched-bench


def _from_batched_bench(bench: BatchedFile, given: Given) -> Measured:
    """Each row's ``S_TG`` a decode figure of ``B`` sequences at the mean depth ``PP + TG / 2``, its ``S_PP`` a
    prefill figure of ``B`` prompts of ``PP`` tokens (one, with a shared prompt)."""
    path = bench.path
    inputs = _Inputs()
    inputs.add("file", path, "file", f"llama-batched-bench ({'its table' if bench.format == 'md' else 'jsonl'})")
    if given.model is None:
        raise UserError(f"{path}: llama-batched-bench does not name the model in its table; give --model NAME "
                        "(roofline models), a config.json or the .gguf file")
    spec, model_ref = _model_ref(given)
    if spec.family != "decoder":
        raise UserError(f"--model {spec.name}: an encoder; llama-batched-bench runs decoders")
    inputs.add("model", model_ref, "flag", "--model", "model")
    if not given.precision:
        raise UserError(f"{path}: llama-batched-bench does not name the weight type; give --precision (q4_0, q4_k_m, "
                        "q8_0, ...)")
    inputs.add("precision", given.precision, "flag", "--precision")
    platform, cpu_ref = _platform(given, inputs, f"{path}: llama-batched-bench does not name the CPU")
    gpu = bench.settings.get("n_gpu_layers")
    if gpu is not None and gpu > 0:
        raise SpecError(path, "n_gpu_layers", f"{gpu}: layers offloaded to a GPU; roofline prices CPUs")
    n = bench.threads
    if n is not None:
        if given.cores is not None and given.cores != n:
            raise UserError(f"--cores {given.cores}: the file says the run used {n} threads (n_threads); drop --cores")
        inputs.add("threads", n, "file", "n_threads", "platform.cores")
    elif given.cores is not None:
        n = given.cores
        inputs.add("threads", n, "flag", "--cores (the paste has no header line)", "platform.cores")
    else:
        raise UserError(f"{path}: the paste has no n_threads (the 'main: n_kv_max = ...' line); give --cores N")
    if n > platform.cores_per_socket.value:
        raise UserError(f"{path}: {n} threads on {platform.name}'s {platform.cores_per_socket.value} cores per socket: "
                        "a run over more than one socket is priced with --sockets 2 by estimate, not by this reader")
    inputs.add("layout", f"1 instance of {n} cores on 1 socket", "assumed", "llama-batched-bench runs one process, "
               "its threads on one socket's cores", "platform.sockets")
    inputs.add("KV cache", "fp16", "assumed", "f16, llama.cpp's default (the table states no cache type)")
    shared = bench.shared_prompt
    flash = bench.settings.get("flash_attn")
    measurements = []
    for r in bench.rows:
        for what, phase, rate in (("S_PP", "prefill", r.s_pp), ("S_TG", "decode", r.s_tg)):
            if not rate or (phase == "prefill" and not r.pp) or (phase == "decode" and not r.tg):
                continue
            decode = phase == "decode"
            b = r.b if decode or not shared else 1
            key = f"measurements.{len(measurements)}"
            inputs.comments[f"{key}.value"] = f"{what} t/s ({r.where})"
            if decode:
                inputs.comments[f"{key}.context"] = (f"PP + TG / 2 ({r.where}): each of the {r.b} sequences' prompt, "
                                                     f"then half its {r.tg} generated tokens, the mean of the steps")
            measurements.append(Measurement(
                kind="tokens_per_s", precision=given.precision, value=rate, phase=phase, batch=b,
                seq_len=None if decode else r.pp, context=int(r.decode_context) if decode else None, kv_dtype="fp16",
                name=f"{what} PP {r.pp} TG {r.tg} B {r.b}",
                note=f"llama-batched-bench ({r.where}): {'T_TG' if decode else 'T_PP'} "
                     f"{r.t_tg if decode else r.t_pp:g} s" + (", one shared prompt" if shared and not decode else "")))
    if not measurements:
        raise SpecError(path, "", "no row with a prefill or generation rate")
    left_out: list[LeftOut] = []
    fa = flash_setting([None if flash is None else str(flash)], inputs, "the header's flash_attn")
    stack = _stack(given, "llama.cpp", inputs, "llama-batched-bench benchmarks llama.cpp")
    record = Record(
        description=f"llama-batched-bench of {spec.name} in {given.precision}, B = "
                    f"{', '.join(str(b) for b in sorted({r.b for r in bench.rows}))}, {n} threads, on {platform.name}",
        source=f"llama-batched-bench: {path} ({n} threads" + (", shared prompt" if shared else "") + ")",
        stack=stack, platform=RecordPlatform(name=cpu_ref, cores=n, sockets=1, instance_cores=n), model=model_ref,
        batch=1, seq_len=max(r.pp for r in bench.rows) or 1, quantize_lm_head=True, flash_attention=fa,
        measurements=tuple(measurements))
    return Measured(record, platform, spec, MeasuredFrom(path, "llama-batched-bench", "llama-batched-bench",
                                                         inputs.items, left_out), inputs.comments)


# ------------------------------------------------------------------------------- llama-bench


def _from_llama_bench(bench: BenchFile, given: Given) -> Measured:
    path = bench.path
    inputs = _Inputs()
    left_out: list[LeftOut] = []
    tests: list[BenchTest] = []
    for t in bench.tests:
        if t.backends and t.backends.upper() not in ("CPU", "BLAS", "CPU,BLAS"):
            raise SpecError(path, f"{t.where}: backends", f"{t.backends}: roofline prices CPUs; this test ran on "
                            "another device")
        if t.n_prompt and t.n_gen:
            left_out.append(LeftOut(f"{t.test} ({t.where})", "a prompt and a generation timed as one rate (-pg): "
                                    "compare the pp and tg tests"))
            continue
        tests.append(t)
    if not tests:
        raise SpecError(path, "", "no pp or tg test to compare (only -pg tests)")
    archs = sorted({t.architecture for t in tests})
    if len(archs) > 1:
        raise SpecError(path, "model_type", f"tests of {len(archs)} models ({', '.join(archs)}); one record holds one "
                        "model: give the file of one model's tests")
    threads = sorted({t.n_threads for t in tests if t.n_threads is not None})
    if len(threads) > 1:
        raise SpecError(path, "n_threads", f"tests at {', '.join(map(str, threads))} threads; one record holds one "
                        "layout: give one thread count's tests (llama-bench -t N)")
    first = tests[0]
    inputs.add("file", path, "file", f"llama-bench {bench.format_name}" + (
        f", build {first.build_commit}" if first.build_commit else ""))

    # the model: --model, else the GGUF file it names when that file is here
    files = sorted({t.model_filename for t in tests if t.model_filename})
    if given.model is not None:
        spec, model_ref = _model_ref(given)
        inputs.add("model", model_ref, "flag", f"--model (the file says '{archs[0]}'"
                   + (f", {files[0]}" if files else "") + ")", "model")
    elif len(files) == 1 and Path(files[0]).is_file():
        spec, model_ref = resolve.model(files[0]), files[0]
        inputs.add("model", model_ref, "file", f"model_filename {files[0]} ({first.where}): its GGUF header", "model")
    else:
        named = f"by its path ({files[0]}, not on this machine)" if files else "only as its type"
        raise UserError(f"{path}: the file names the model {named} and '{archs[0]}'; give --model NAME (roofline "
                        "models), a config.json or the .gguf file")
    if spec.family != "decoder":
        raise UserError(f"--model {spec.name}: an encoder; llama-bench runs decoders")
    stated = next((t.model_n_params for t in tests if t.model_n_params), None)
    if stated:
        mine = _params(spec)
        exact = bench.format != "md"  # the table rounds to three figures
        if abs(mine / stated - 1) > (0.01 if exact else 0.006):
            raise UserError(f"--model {spec.name}: {mine:,} parameters; the run's model has {stated:,.0f} "
                            f"({first.where}: model_n_params); give the model that ran")
        inputs.add("parameters", f"{stated:,.0f}", "file", f"model_n_params ({first.where}), "
                   f"{spec.name} has {mine:,}")

    platform, cpu_ref = _platform(given, inputs, f"{path}: llama-bench names the CPU only as "
                                  f"'{first.cpu_info or 'unknown'}', not a platform")
    # threads: the file's, else --cores
    if threads:
        if given.cores is not None and given.cores != threads[0]:
            raise UserError(f"--cores {given.cores}: the file says the tests ran with {threads[0]} threads "
                            f"({first.where}: n_threads); drop --cores")
        n = threads[0]
        inputs.add("threads", n, "file", f"n_threads ({first.where})", "platform.cores")
    elif given.cores is not None:
        n = given.cores
        inputs.add("threads", n, "flag", "--cores (the table has no threads column)", "platform.cores")
    else:
        raise UserError(f"{path}: the table has no threads column; give --cores N, the threads llama-bench ran with")
    cores_per_socket = platform.cores_per_socket.value
    if n > cores_per_socket:
        raise UserError(f"{path}: {n} threads on {platform.name}'s {cores_per_socket} cores per socket: a run over "
                        "more than one socket (or on hyperthreads) is not modelled; give a run of at most one socket")
    inputs.add("layout", f"1 instance of {n} cores on 1 socket", "assumed", "llama-bench runs one process, its "
               "threads on one socket's cores", "platform.sockets")

    # precision per test: --precision, else the file type
    types = sorted({t.file_type for t in tests})
    precision_of: dict[str, str] = {}
    if given.precision:
        if len(types) > 1:
            raise UserError(f"--precision {given.precision}: the file holds {len(types)} file types "
                            f"({', '.join(types)}); --precision names one: give one type's tests")
        precision_of[types[0]] = given.precision
        inputs.add("precision", given.precision, "flag", f"--precision (the file type is '{types[0]}')")
    else:
        for ft in types:
            if ft not in FILE_TYPES:
                raise UserError(f"{path}: file type '{ft}' has no precision priced here; give --precision NAME (one "
                                f"of {', '.join(sorted(set(FILE_TYPES.values())))}, the nearest)")
            precision_of[ft], note = FILE_TYPES[ft], ""
            if ft in PURE_OF_MIX:
                size = next((t.model_size for t in tests if t.file_type == ft and t.model_size), None)
                precision_of[ft], note = _mix_or_pure(ft, size, spec)
            elif ft in MIXED_AS_ONE:
                note = f" (priced as {FILE_TYPES[ft]} throughout; llama.cpp's mix has {MIXED_AS_ONE[ft]})"
            inputs.add("precision", precision_of[ft], "file", f"model_type '{archs[0]} {ft}'{note}")

    kv_by_test: dict[str, str] = {}
    for t in tests:
        kinds = {KV_TYPES.get(x or "f16") for x in (t.type_k, t.type_v)}
        if None in kinds:
            raise SpecError(path, f"{t.where}: type_k", f"{t.type_k}/{t.type_v}: a KV cache type priced here is one "
                            f"of {', '.join(KV_TYPES)}")
        from roofline.units import DTYPE_BYTES

        kv_by_test[t.where] = max(kinds, key=lambda k: DTYPE_BYTES[k])  # type: ignore[arg-type]
    stated_kv = [t for t in tests if t.type_k]
    kv_values = sorted(set(kv_by_test.values()))
    if stated_kv:
        inputs.add("KV cache", "/".join(kv_values), "file", f"type_k, type_v ({stated_kv[0].where})")
    else:
        inputs.add("KV cache", "/".join(kv_values), "assumed", "f16, llama-bench's default (the table has no "
                   "type_k column)")
    inputs.add("batch", 1, "assumed", "llama-bench runs one sequence", "batch")
    if any(t.n_gen for t in tests):
        inputs.add("tg context", "N / 2 (+ depth)", "assumed", "tg N generates N tokens from an empty cache (or "
                   "the test's depth): the mean context of its steps")
    inputs.add("lm_head", "quantized", "assumed", "llama.cpp stores the output matrix quantized with the rest; "
               "priced in the tests' type", "quantize_lm_head")
    flash = flash_setting([t.flash_attn for t in tests], inputs, "the tests' flash_attn")
    stack = _stack(given, "llama.cpp", inputs, "llama-bench benchmarks llama.cpp")

    measurements, spreads = [], []
    for i, t in enumerate(tests):
        prefill = bool(t.n_prompt)
        key = f"measurements.{i}"
        inputs.comments[f"{key}.value"] = f"avg_ts ({t.where})"
        inputs.comments[f"{key}.precision"] = (f"flag: --precision (the file type is '{t.file_type}')" if given.precision
                                               else f"model_type '{t.model_type}' ({t.where})")
        inputs.comments[f"{key}.kv_dtype"] = (f"type_k {t.type_k}, type_v {t.type_v}" if t.type_k
                                              else "assumed: f16, llama-bench's default")
        if not prefill:
            inputs.comments[f"{key}.context"] = (f"assumed: {t.test} generates {t.n_gen} tokens after {t.n_depth}: the "
                                                 "mean context of its steps")
        elif t.n_depth:
            inputs.comments[f"{key}.context"] = f"n_depth ({t.where}): tokens in the cache before the prompt"
        # llama.cpp runs a prompt longer than n_ubatch as micro-batches of n_ubatch tokens (the GEMMs' M), each at
        # the context the ones before it left: priced as one of n_ubatch tokens at their mean context,
        # n_depth + (n_prompt - n_ubatch) / 2 (exact for the GEMMs, and for attention, linear in the context)
        chunked = prefill and t.n_ubatch is not None and t.n_prompt > t.n_ubatch
        prompt, depth = (t.n_ubatch, t.n_depth + (t.n_prompt - t.n_ubatch) // 2) if chunked else (t.n_prompt, t.n_depth)
        if chunked:
            inputs.comments[f"{key}.seq_len"] = f"n_ubatch ({t.where}): {t.test} runs in micro-batches of {t.n_ubatch}"
            inputs.comments[f"{key}.context"] = (f"the micro-batches' mean context: n_depth {t.n_depth} + (n_prompt "
                                                 f"{t.n_prompt} - n_ubatch {t.n_ubatch}) / 2")
        reps = f"mean of {t.repetitions} repetitions" if t.repetitions else "mean of its repetitions"
        sd = f", standard deviation {t.stddev_ts:.3g} t/s" if t.stddev_ts is not None else ""
        measurements.append(Measurement(
            kind="tokens_per_s", precision=precision_of[t.file_type], value=t.avg_ts, name=t.test,
            phase="prefill" if prefill else "decode", seq_len=prompt if prefill else None,
            context=(depth or None) if prefill else t.n_depth + t.n_gen // 2, kv_dtype=kv_by_test[t.where],
            note=f"llama-bench {t.test} ({t.where}): {reps}{sd}"))
        spreads.append(t.stddev_ts / t.avg_ts if t.stddev_ts is not None else None)
    pp = next((t.n_prompt for t in tests if t.n_prompt), 512)
    date = (first.test_time or "")[:10]
    where = f", {first.test_time}" if first.test_time else ""
    record = Record(
        description=f"llama-bench {', '.join(dict.fromkeys(t.test for t in tests))} of {spec.name} in "
                    f"{', '.join(dict.fromkeys(precision_of[t.file_type] for t in tests))}, {n} threads, on "
                    f"{platform.name} ({platform.description})",
        source=f"llama-bench {bench.format_name}: {path} (" + ", ".join(filter(None, [
            f"build {first.build_commit}" if first.build_commit else (f"build {bench.build}" if bench.build else ""),
            f"cpu_info '{first.cpu_info}'" if first.cpu_info else "", f"{n} threads"])) + f"{where})",
        stack=stack, platform=RecordPlatform(name=cpu_ref, cores=n, sockets=1, instance_cores=n), model=model_ref,
        batch=1, seq_len=pp, quantize_lm_head=True, flash_attention=flash, measurements=tuple(measurements),
        date=date)
    tool = f"llama-bench build {first.build_commit or bench.build or 'unknown'}"
    return Measured(record, platform, spec, MeasuredFrom(path, f"llama-bench {bench.format_name}", tool, inputs.items,
                                                         left_out), inputs.comments, tuple(spreads))


# ------------------------------------------------------------------------------- MLPerf


def _catalog_platform(system: MlperfSystem) -> str | None:
    """The catalog platform whose description names the system's processor model (``8480+``, ``6980P``)."""
    from roofline.catalog import all_platforms

    tokens = [t for t in re.findall(r"[0-9][0-9A-Za-z+]*", system.processor) if len(t) >= 4]
    for p in all_platforms():
        words = set(re.findall(r"[0-9A-Za-z+]+", p.description))
        if tokens and any(t in words for t in tokens) and p.sockets.kind != "measured":
            return p.name
    return None


def _from_mlperf(s: MlperfSummary, given: Given) -> Measured:
    path = s.path
    inputs = _Inputs()
    left_out: list[LeftOut] = []
    if s.mode != "PerformanceOnly":
        raise SpecError(path, "Mode", f"{s.mode or 'missing'}: only a performance run (PerformanceOnly) measures speed")
    if not s.valid:
        raise SpecError(path, f"line {s.result_line}" if s.result_line else "Result is",
                        "the run is not VALID: an invalid run is not a result")
    if s.scenario not in ("Offline", "Server"):
        raise SpecError(path, "Scenario", f"{s.scenario}: check compares the Offline and Server scenarios' samples per "
                        "second (a stream scenario's figure is a latency)")
    if s.tokens_per_s is not None:
        raise SpecError(path, f"line {s.tokens_per_s.line}", "a benchmark rated in tokens per second (an LLM): compare "
                        "its tokens/s with --tokens-per-s; --from reads encoder benchmarks' samples per second")
    if s.samples_per_s is None:
        raise SpecError(path, "Samples per second", "missing: loadgen writes the rate of a performance run")
    inputs.add("file", path, "file", f"MLPerf loadgen summary, SUT '{s.sut_name or '?'}'")
    inputs.add("scenario", s.scenario, "file", "Scenario")
    what = "Samples per second" if s.scenario == "Offline" else "Scheduled samples per second"
    inputs.add("samples/s", f"{s.samples_per_s.value:g}", "file", f"{what} (line {s.samples_per_s.line})")

    # the system: --system, else the results tree's systems/<system>.json
    system: MlperfSystem | None = None
    if given.system:
        system = read_system(given.system)
        inputs.add("system", given.system, "flag", f"--system: {system.system_name}")
    elif s.system_file is not None and s.system_file.is_file():
        system = read_system(s.system_file)
        inputs.add("system", str(s.system_file), "file", f"the results tree's systems/{s.system}.json")
    if system is not None:
        if (system.nodes or 1) > 1:
            raise SpecError(system.path, "number_of_nodes", f"{system.nodes} nodes: a multi-node system is not modelled")
        if system.accelerators_per_node:
            raise SpecError(system.path, "accelerators_per_node", f"{system.accelerators_per_node}: roofline prices CPUs")

    # the platform: --cpu, else the catalog platform of the system's processor
    if given.cpu is not None:
        platform, cpu_ref = _platform(given, inputs, "")
    else:
        name = _catalog_platform(system) if system else None
        if name is None:
            why = (f"{system.path}: processor '{system.processor}' is no catalog platform" if system else
                   f"{path}: no system description (--system FILE, or the results tree's systems/ folder)")
            raise UserError(f"{why}; give --cpu NAME (roofline platforms)")
        platform, _ = resolve.platform(name)
        cpu_ref = name
        inputs.add("platform", name, "file", f"host_processor_model_name '{system.processor}'", "platform.name")
    sockets = cores = None
    if system is not None:
        if system.processors_per_node and system.processors_per_node != platform.sockets.value:
            sockets = system.processors_per_node
            inputs.add("sockets", sockets, "file", "host_processors_per_node", "platform.sockets")
        if system.cores_per_processor and system.cores_per_processor != platform.cores_per_socket.value:
            if system.cores_per_processor > platform.cores_per_socket.value:
                raise SpecError(system.path, "host_processor_core_count", f"{system.cores_per_processor} cores per "
                                f"processor; {platform.name} has {platform.cores_per_socket.value}: give --cpu")
            cores = system.cores_per_processor
            inputs.add("cores per socket", cores, "file", "host_processor_core_count", "platform.cores")

    # the model: --model, else the benchmark the results tree names
    if given.model is not None:
        spec, model_ref = _model_ref(given)
        inputs.add("model", model_ref, "flag", "--model", "model")
    elif s.benchmark in BENCHMARKS:
        model_ref = BENCHMARKS[s.benchmark]
        spec = resolve.model(model_ref)
        inputs.add("model", model_ref, "file", f"benchmark {s.benchmark} (the results tree's path)", "model")
    else:
        named = f"benchmark '{s.benchmark}'" if s.benchmark else "no benchmark (the path is no results tree)"
        raise UserError(f"{path}: {named}: give --model NAME (roofline models)")
    if spec.family != "encoder":
        raise UserError(f"--model {spec.name}: a decoder; --from reads encoder benchmarks' samples per second")

    bert = s.benchmark in BENCHMARKS or spec.name == "bert-large"
    intel = system is not None and "pytorch" in (system.framework or "").lower() and "xeon" in system.processor.lower()
    stack = _stack(given, "intel-mlperf" if intel else (system.framework or "unknown").lower() if system else "unknown",
                   inputs, "Intel's PyTorch harness (closed/Intel/code; partners ship it): a PyTorch submission on Xeon"
                   if intel else "the system's framework" if system else "no system description names the software "
                   "(--stack NAME)")
    if given.precision:
        precision = given.precision
        inputs.add("precision", precision, "flag", "--precision")
    else:
        name = (system.system_name if system else s.system or "").upper()
        precision = "int8-full" if "INT8" in name else "bf16" if "BF16" in name else "fp32" if "FP32" in name else ""
        if not precision:
            raise UserError(f"{path}: the system's name says no precision; give --precision NAME")
        inputs.add("precision", precision, "assumed", f"the system's name ({name}); "
                   + ("INT8 end to end, as Intel's BERT harness runs it" if precision == "int8-full" else "its dtype"))

    def workload(value: int | None, flag: str, default: int, key: str, what: str) -> int:
        if value is not None:
            inputs.add(what, value, "flag", flag, key)
            return value
        if not bert:
            raise UserError(f"{path}: no default {what} for {spec.name} here; give {flag}")
        inputs.add(what, default, "assumed", BERT_WHY, key)
        return default

    batch = workload(given.batch, "--batch", BERT_BATCH, "batch", "batch")
    seq_len = workload(given.seq_len, "--seq-len", BERT_SEQ_LEN, "seq_len", "tokens per sample")
    instance_cores = workload(given.instance_cores, "--instance-cores", BERT_INSTANCE_CORES, "platform.instance_cores",
                              "cores per instance")
    if s.scenario == "Server":
        left_out.append(LeftOut("the server scenario's latency constraint", "its rate is the highest meeting a p99 "
                                "bound under Poisson arrivals: at most the offline throughput the ceiling bounds "
                                "(roofline plan simulates the queue)"))
    if s.latency_ns:
        left_out.append(LeftOut("latency percentiles", "loadgen's per-query latencies; the comparison is of the rate"))
    figure = "samples/s of the whole server" + (" (the server scenario's scheduled rate)" if s.scenario == "Server"
                                                else "")
    inputs.comments["measurements.0.value"] = f"{what} (line {s.samples_per_s.line})"
    inputs.comments["measurements.0.precision"] = next(f"{i.source}: {i.detail}" if i.source != "file" else i.detail
                                                       for i in inputs.items if i.what == "precision")
    record = Record(
        description=f"MLPerf {s.benchmark or spec.name} {s.scenario}, {system.system_name if system else platform.name}"
                    f" ({platform.description}), {stack}",
        source=f"{path} ({what}: {s.samples_per_s.value:g}, line {s.samples_per_s.line}"
               + (f"; system {system.path}" if system else "") + ")",
        stack=stack, platform=RecordPlatform(name=cpu_ref, cores=cores, sockets=sockets, instance_cores=instance_cores),
        model=model_ref, batch=batch, seq_len=seq_len,
        measurements=(Measurement(kind="throughput", precision=precision, value=s.samples_per_s.value,
                                  name=s.scenario, note=figure),))
    return Measured(record, platform, spec,
                    MeasuredFrom(path, "MLPerf loadgen summary", f"MLPerf loadgen, SUT '{s.sut_name or '?'}'",
                                 inputs.items, left_out), inputs.comments, (None,))
