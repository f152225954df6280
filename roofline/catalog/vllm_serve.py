"""Reading ``vllm bench serve --save-result`` files: one JSON object per run (``--append-result`` adds a line per
run). Pure parsing: the CPU, the model's catalog name and the precision are the caller's business.

The layout is vLLM's ``vllm/benchmarks/serve.py`` at commit 009e6d4a1cd6ba3fb2a9fc00f4ec06f5297232a1
(github.com/vllm-project/vllm): ``main_async`` writes ``date``, ``endpoint_type``, ``backend``, ``label``,
``model_id``, ``tokenizer_id``, ``num_prompts``, ``request_rate`` (``"inf"`` when unlimited), ``burstiness`` and
``max_concurrency`` (null without a cap), merged with what ``benchmark`` returns: ``duration``, ``completed``,
``failed``, ``total_input_tokens``, ``total_output_tokens``, ``request_throughput``, ``output_throughput``,
``total_token_throughput`` (input and output tokens over the duration), and, per ``process_one_metric``,
``mean_``/``median_``/``std_``/``pNN_`` of ``ttft``, ``tpot``, ``itl`` and ``e2el`` in ms.
"""

from __future__ import annotations

import re

from roofline.catalog.serving_bench import ServingFile, ServingRun, checked, json_documents, number, optional
from roofline.errors import SpecError
from roofline.files.reading import utf8_text

TOOL = "vllm bench serve"
#: the keys that tell a vllm bench serve result from other JSON
SIGNATURE = ("completed", "request_throughput", "total_token_throughput")
_LATENCY = re.compile(r"^(mean|median|std|p\d+(?:\.\d+)?)_(ttft|tpot|itl|e2el)_ms$")


def detect(d: dict | None) -> bool:
    return isinstance(d, dict) and all(k in d for k in SIGNATURE)


def parse_vllm_serve(raw: bytes, path: str) -> ServingFile:
    text = utf8_text(raw, path, "a vllm bench serve result")
    docs = json_documents(text, path)
    runs = []
    for where, d in docs:
        where = where or "the result"
        if not isinstance(d, dict):
            raise SpecError(path, where, "a vllm bench serve result is a JSON object")
        if not detect(d):
            missing = [k for k in SIGNATURE if k not in d]
            raise SpecError(path, f"{where}: {missing[0]}", "missing; vllm bench serve --save-result writes it")
        runs.append(_run(path, where, d))
    if not runs:
        raise SpecError(path, "", "no run in the file")
    return ServingFile(path, TOOL, "--save-result JSON" + (" (--append-result lines)" if len(runs) > 1 else ""),
                       tuple(runs))


def _run(path: str, where: str, d: dict) -> ServingRun:
    if d.get("total_output_tokens") is None or "output_throughput" not in d:
        raise SpecError(path, f"{where}: total_output_tokens", "missing: a pooling (embedding) run generates no "
                        "tokens; check --from reads generation runs")
    n = lambda key, **kw: number(path, f"{where}: {key}", d.get(key), **kw)  # noqa: E731
    output = n("output_throughput")
    total = n("total_token_throughput")
    if total < output:
        raise SpecError(path, f"{where}: total_token_throughput", f"{total:g} is below output_throughput {output:g}: "
                        "it counts the input tokens and the output tokens")
    cap = optional(path, d, "max_concurrency", where, whole=True, low=1)
    latencies = {k: number(path, f"{where}: {k}", v) for k, v in d.items() if _LATENCY.match(k) and v is not None}
    for key in ("model_id", "backend", "date"):
        if d.get(key) is not None and not isinstance(d[key], str):
            raise SpecError(path, f"{where}: {key}", f"{d[key]!r} is not a string")
    return checked(path, ServingRun(
        where=where, completed=int(n("completed", whole=True)), input_tokens=int(n("total_input_tokens", whole=True)),
        output_tokens=int(n("total_output_tokens", whole=True)), output_throughput=output,
        input_throughput=total - output, request_throughput=optional(path, d, "request_throughput", where),
        keys={"completed": "completed", "output_throughput": "output_throughput",
              "input_throughput": "total_token_throughput - output_throughput", "input_tokens": "total_input_tokens",
              "output_tokens": "total_output_tokens", "model": "model_id", "concurrency": "max_concurrency"},
        model=d.get("model_id"), backend=d.get("backend"),
        request_rate=optional(path, d, "request_rate", where, inf=True),
        max_concurrency=None if cap is None else int(cap),
        duration_s=optional(path, d, "duration", where), latencies_ms=latencies, date=d.get("date") or ""))
