"""What llama.cpp's CPU backend pays per call and per GEMM launch beyond the arithmetic the roofline counts, measured.

Llama models so small that their arithmetic takes a few microseconds (hidden 128, 2 heads, MLP 256, a vocabulary
of 320, every weight matrix in Q8_0, random weights by :mod:`roofline.validation.gguf_writer`), of 1, 2, 4, 8 and 16 layers,
each timed by ``llama-bench -p 0 -n 64 -r 10 -t 1``. On one thread ggml's graph walk passes no barrier
(``ggml_barrier`` returns at once when the pool has one thread): what a token costs beyond its counted work is the
engine's own. With ``t(L)`` the seconds per token of the model of ``L`` layers and ``c(L)`` its attainable
ceiling on this platform (the work the roofline counts; no fitted efficiency, so the figure does not depend on a
stack profile), a least-squares line ``t(L) - c(L) = a + b L`` gives

- ``call_s = a``: one graph call's fixed cost (building and allocating the graph, the output copy);
- ``per_op_s = b / G``: a layer's node dispatch spread over its ``G`` GEMM launches (7 in a dense Llama layer:
  Q, K, V, output, gate, up, down), the unit :class:`~roofline.model.realistic.StepParts` counts launches in.

``python -m roofline.validation.llamacpp_dispatch --bin DIR --cpu PLATFORM --out FILE.json`` writes the llama-bench rows,
the ceilings and the fit. Time it on a quiet machine: nothing else running.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

LAYERS = (1, 2, 4, 8, 16)
#: the micro models' shape: the smallest llama.cpp takes for Q8_0 (rows of whole 32-weight blocks) with two heads
CONFIG = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 128,
          "intermediate_size": 256, "num_attention_heads": 2, "num_key_value_heads": 2, "vocab_size": 320,
          "max_position_embeddings": 4096, "rms_norm_eps": 1e-5, "tie_word_embeddings": False,
          "torch_dtype": "bfloat16"}
#: GEMM launches per dense Llama layer: Q, K, V, output, gate, up, down
GEMMS_PER_LAYER = 7
TOKENS = 64


def line_fit(layers: np.ndarray, excess_s: np.ndarray) -> tuple[float, float]:
    """``(a, b)`` of the least-squares line ``excess = a + b L``."""
    b, a = np.polyfit(np.asarray(layers, dtype=float), np.asarray(excess_s, dtype=float), 1)
    return float(a), float(b)


def ceilings(folder: Path, cpu: str, layers: tuple[int, ...]) -> dict[int, float]:
    """The attainable ceiling's seconds per token of each micro model on ``cpu``, one core, at the mean context of a
    ``tg64`` (32 cells), KV cache in f16, output matrix in Q8_0, as llama.cpp runs it."""
    import roofline

    out = {}
    for n in layers:
        r = roofline.estimate(model=str(folder / f"micro-L{n}.json"), cpu=cpu, precision="q8_0", phase="decode",
                              context=TOKENS // 2, instance_cores=1, cores=1, sockets=1, kv_dtype="fp16",
                              stack="llama.cpp", quantize_lm_head=True)
        out[n] = r.precisions["q8_0"].step_time_s
    return out


def write_models(folder: Path, layers: tuple[int, ...]) -> list[Path]:
    from roofline.validation.gguf_writer import write_random_gguf

    from roofline.catalog import load_model

    paths = []
    for n in layers:
        cfg = folder / f"micro-L{n}.json"
        cfg.write_text(json.dumps({**CONFIG, "num_hidden_layers": n}))
        path = folder / f"micro-L{n}-q8_0.gguf"
        write_random_gguf(path, load_model(str(cfg)), "q8_0")
        paths.append(path)
    return paths


def summarise(rows: list[dict], ceiling_s: dict[int, float]) -> dict:
    """The fit from llama-bench's JSON rows (one per model, one thread) and the ceilings."""
    per = {}
    for r in rows:
        n = int(Path(r["model_filename"]).name.split("-L")[1].split("-")[0])
        per[n] = {"tokens_per_s": r["avg_ts"], "stddev_tokens_per_s": r["stddev_ts"], "threads": r["n_threads"],
                  "seconds_per_token": 1.0 / r["avg_ts"], "ceiling_s": ceiling_s[n]}
    layers = np.array(sorted(per))
    excess = np.array([per[n]["seconds_per_token"] - per[n]["ceiling_s"] for n in layers])
    a, b = line_fit(layers, excess)
    return {"layers": {str(n): per[n] for n in layers}, "call_s": a, "per_layer_s": b,
            "per_op_s": b / GEMMS_PER_LAYER, "gemms_per_layer": GEMMS_PER_LAYER}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bin", required=True, help="the folder holding llama-bench (and its libraries)")
    p.add_argument("--cpu", required=True, help="this host's platform (its ceilings are subtracted)")
    p.add_argument("--out", required=True, help="the result, JSON")
    p.add_argument("--reps", type=int, default=10)
    a = p.parse_args(argv)
    binary = Path(a.bin) / "llama-bench"
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        models = write_models(folder, LAYERS)
        cmd = [str(binary), "-m", ",".join(str(m) for m in models), "-p", "0", "-n", str(TOKENS), "-t", "1",
               "-r", str(a.reps), "-o", "json"]
        run = subprocess.run(cmd, capture_output=True, text=True, check=True,
                             env={"LD_LIBRARY_PATH": str(Path(a.bin).resolve()), "PATH": "/usr/bin:/bin"})
        rows = json.loads(run.stdout)
        result = summarise(rows, ceilings(folder, a.cpu, LAYERS))
    result.update(cpu=a.cpu, command="llama-bench -m micro-L{1,2,4,8,16}-q8_0.gguf -p 0 -n 64 -t 1 "
                  f"-r {a.reps} -o json", build_commit=rows[0].get("build_commit"),
                  cpu_info=rows[0].get("cpu_info"), model_config=CONFIG, bench=rows)
    for r in result["bench"]:  # no path of this machine in the result
        r["model_filename"] = Path(r["model_filename"]).name
    from roofline.files.writing import write_text

    write_text(a.out, json.dumps(result, indent=1) + "\n")  # whole or not at all
    print(f"call {result['call_s'] * 1e6:.1f} us, per layer {result['per_layer_s'] * 1e6:.2f} us, "
          f"per GEMM launch {result['per_op_s'] * 1e6:.2f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
