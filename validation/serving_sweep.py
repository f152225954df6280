"""A closed-loop serving sweep of a ``llama-server``: at each concurrency ``N`` a server with ``N`` slots, ``N``
clients each sending its requests one after another (fixed prompt and output lengths, random prompt tokens, no
prompt reuse), as ``vllm bench serve --max-concurrency N`` drives a server.

Each concurrency's result is written as one line of ``vllm bench serve --save-result --append-result`` JSON (its
keys and meanings: ``roofline.catalog.vllm_serve``), so ``roofline check --from`` and ``roofline records add`` read
it as they read vLLM's; the extra keys say how it was run (``server_command``, ``threads``, ``prompt_len``,
``output_len``, ``requests_per_client``). TTFT is the time from sending a request to its first streamed token; TPOT
``(E2E - TTFT) / (output tokens - 1)``; the throughputs are the tokens over the time from the first request sent to
the last answer received.

    python -m roofline.validation.serving_sweep --server PATH/llama-server --model M.gguf \\
        --concurrency 1,2,4,8 --prompt-len 128 --output-len 64 --threads 2 -o sweep.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path


@dataclass
class Request:
    ttft_s: float
    e2e_s: float
    output_tokens: int
    prompt_tokens: int


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_ready(port: int, proc: subprocess.Popen, timeout_s: float = 300.0) -> None:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"llama-server exited with {proc.returncode} before it was ready")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise RuntimeError("llama-server was not ready in time")


def _complete(port: int, prompt: list[int], output_len: int) -> Request:
    """One streamed completion: ``output_len`` tokens whatever the model says (``ignore_eos``), greedy."""
    body = json.dumps({"prompt": prompt, "n_predict": output_len, "ignore_eos": True, "stream": True,
                       "cache_prompt": False, "temperature": 0.0, "samplers": ["top_k"], "top_k": 1}).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}/completion", data=body,
                                 headers={"Content-Type": "application/json"})
    t0 = time.perf_counter()
    ttft = None
    tokens = prompt_n = 0
    with urllib.request.urlopen(req, timeout=3600) as r:
        for raw in r:
            line = raw.decode().strip()
            if not line.startswith("data:"):
                continue
            d = json.loads(line[5:])
            if d.get("stop"):
                timings = d.get("timings") or {}
                tokens = int(timings.get("predicted_n", d.get("tokens_predicted", tokens)))
                prompt_n = int(timings.get("prompt_n", d.get("tokens_evaluated", 0)))
                break
            if ttft is None:
                ttft = time.perf_counter() - t0
            tokens += 1
    e2e = time.perf_counter() - t0
    return Request(ttft if ttft is not None else e2e, e2e, tokens, prompt_n)


def _percentiles(name: str, values_s: list[float]) -> dict[str, float]:
    ms = sorted(v * 1e3 for v in values_s)
    k = max(0, min(len(ms) - 1, round(0.99 * len(ms) + 0.5) - 1))  # nearest rank
    return {f"mean_{name}_ms": statistics.fmean(ms), f"median_{name}_ms": statistics.median(ms),
            f"std_{name}_ms": statistics.pstdev(ms), f"p99_{name}_ms": ms[k]}


def run_one(server: str, model: str, n: int, *, prompt_len: int, output_len: int, threads: int,
            requests_per_client: int, vocab: int, seed: int, extra: list[str]) -> dict:
    port = _free_port()
    ctx = n * (prompt_len + output_len + 16)
    cmd = [server, "-m", model, "-t", str(threads), "-tb", str(threads), "--parallel", str(n), "-c", str(ctx),
           "--port", str(port), "--host", "127.0.0.1", "--no-webui", *extra]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_ready(port, proc)
        rng = random.Random(seed * 1000 + n)
        prompt = lambda: [rng.randrange(100, vocab) for _ in range(prompt_len)]  # noqa: E731
        _complete(port, prompt(), 4)  # warm-up: pages in the weights, builds the graphs
        prompts = [[prompt() for _ in range(requests_per_client)] for _ in range(n)]
        done: list[Request] = []
        lock = threading.Lock()

        def client(mine: list[list[int]]) -> None:
            for p in mine:
                r = _complete(port, p, output_len)
                with lock:
                    done.append(r)

        workers = [threading.Thread(target=client, args=(prompts[i],)) for i in range(n)]
        t0 = time.perf_counter()
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        duration = time.perf_counter() - t0
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
    out_tokens = sum(r.output_tokens for r in done)
    in_tokens = sum(r.prompt_tokens for r in done)
    tpot = [(r.e2e_s - r.ttft_s) / (r.output_tokens - 1) for r in done if r.output_tokens > 1]
    result = {
        "date": datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S"), "backend": "llama-server",
        "model_id": Path(model).name, "num_prompts": len(done), "request_rate": "inf", "burstiness": 1.0,
        "max_concurrency": n, "duration": duration, "completed": len(done), "failed": 0,
        "total_input_tokens": in_tokens, "total_output_tokens": out_tokens,
        "request_throughput": len(done) / duration, "output_throughput": out_tokens / duration,
        "total_token_throughput": (in_tokens + out_tokens) / duration,
        **_percentiles("ttft", [r.ttft_s for r in done]), **_percentiles("tpot", tpot),
        **_percentiles("e2el", [r.e2e_s for r in done]),
        # no path of this machine: the binary and the model by their names, the port as a placeholder
        "server_command": shlex.join([Path(server).name, "-m", Path(model).name, *cmd[3:]]).replace(str(port), "PORT"),
        "threads": threads,
        "prompt_len": prompt_len, "output_len": output_len, "requests_per_client": requests_per_client,
    }
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--server", required=True, help="the llama-server binary")
    ap.add_argument("--model", required=True, help="a GGUF file")
    ap.add_argument("--concurrency", default="1,2,4,8", help="comma-separated clients (each a server of as many slots)")
    ap.add_argument("--prompt-len", type=int, default=128)
    ap.add_argument("--output-len", type=int, default=64)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--requests-per-client", type=int, default=4)
    ap.add_argument("--vocab", type=int, default=128256, help="prompt tokens are drawn below it")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--server-arg", action="append", default=[], help="one more llama-server argument (repeat)")
    ap.add_argument("-o", "--output", required=True, help="the JSON lines file to append to")
    a = ap.parse_args(argv)
    for n in (int(x) for x in a.concurrency.split(",")):
        r = run_one(a.server, a.model, n, prompt_len=a.prompt_len, output_len=a.output_len, threads=a.threads,
                    requests_per_client=a.requests_per_client, vocab=a.vocab, seed=a.seed, extra=a.server_arg)
        with open(a.output, "a") as f:
            f.write(json.dumps(r) + "\n")
        print(f"N={n}: {r['output_throughput']:.1f} tok/s, TTFT mean {r['mean_ttft_ms']:.0f} ms, TPOT mean "
              f"{r['mean_tpot_ms']:.1f} ms, {r['completed']} requests in {r['duration']:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


def records_from(results: Path, out_dir: Path, *, cpu: str, model: str, precision: str, stack: str, date: str,
                 engine: str, header: str) -> list[Path]:
    """One concurrency record per line of a sweep's results (``scenario = "concurrency"``): its output tokens per
    second, and its mean and p99 TTFT and TPOT, each citing the results file's line; ``header``: the comment that
    says where and how the sweep ran (the host, the build, the model file)."""
    out = []
    rel = Path("..") / "results" / results.name
    for line_no, line in enumerate(results.read_text().splitlines(), 1):
        d = json.loads(line)
        n = int(d["max_concurrency"])
        prompt = round(d["total_input_tokens"] / d["completed"])
        output = round(d["total_output_tokens"] / d["completed"])
        name = f"{results.stem.rsplit('-', 3)[0]}-c{n}"
        rows = [("output_tokens_per_s", None, d["output_throughput"], "output_throughput"),
                ("ttft", "mean", d["mean_ttft_ms"] / 1e3, "mean_ttft_ms"),
                ("ttft", "p99", d["p99_ttft_ms"] / 1e3, "p99_ttft_ms"),
                ("tpot", "mean", d["mean_tpot_ms"] / 1e3, "mean_tpot_ms"),
                ("tpot", "p99", d["p99_tpot_ms"] / 1e3, "p99_tpot_ms")]
        text = [header.rstrip(), "schema_version = 1",
                f'description = "{model} in {precision} behind a llama-server of {n} slot(s), {n} closed-loop '
                f'client(s): {prompt}-token prompts, {output} output tokens each, {d["threads"]} threads"',
                f'source = "python -m roofline.validation.serving_sweep: {rel.as_posix()} line {line_no}"',
                f'date = "{date}"', f'stack = "{stack}"', f'engine = "{engine}"', f'model = "{model}"',
                "quantize_lm_head = true",
                "flash_attention = true  # llama-server's default flash_attn 'auto', which the CPU backend resolves "
                "to on (platforms/stacks/llama.cpp.toml, [unfused_attention])",
                f'threads = {d["threads"]}', 'scenario = "concurrency"',
                f"concurrency = {n}", f"prompt_len = {prompt}", f"output_len = {output}",
                f'num_prompts = {d["completed"]}', f"max_sequences = {n}",
                f'not_stated = ["nothing: every setting is in the server command, {d["server_command"]}"]', "",
                "[platform]", f'name = "{cpu}"', f'cores = {d["threads"]}', f'instance_cores = {d["threads"]}', ""]
        for kind, stat, value, key in rows:
            text += ["[[measurements]]", f'kind = "{kind}"', f'precision = "{precision}"', f"value = {value!r}"]
            if stat:
                text.append(f'statistic = "{stat}"')
            text += ['kv_dtype = "fp16"', f'name = "{key} at concurrency {n}"', f"line = {line_no}",
                     f'quote = "\\"{key}\\": {d[key]!r}"', ""]
        path = out_dir / f"{name}.toml"
        path.write_text("\n".join(text))
        out.append(path)
    return out
