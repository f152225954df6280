"""What llama.cpp's CPU flash attention costs per score, measured against the roofline's attention ceiling.

llama.cpp runs attention with flash attention on (the CPU default since pull request #15434) in one of two
kernels of ``ggml_compute_forward_flash_attn_ext_f16`` (``ggml/src/ggml-cpu/ops.cpp``):

- the **vector** kernel (``..._f16_one_chunk``): one query row at a time, a ``ggml_vec_dot_f16`` per key, the
  online softmax's ``expf`` per score, a ``ggml_vec_mad`` of the value row; what a decode step runs, and every
  prefill before pull request #19012;
- the **tiled** kernel (``..._ext_tiled``, pull request #19012, 'ggml-cpu: Use tiled FA for prompt-processing',
  2026-01-22): 64 queries of one head against 64 keys at a time (``GGML_FA_TILE_Q``, ``GGML_FA_TILE_KV``), the
  keys and values widened to f32 per tile, two ``simd_gemm`` calls and a vectorised softmax; what a prefill of 64
  or more tokens runs.

With ``--flash off`` it measures the **unfused** graph instead (flash attention off, as llama.cpp ran it by default
before pull request #15434): three nodes per layer (``build_attn_mha`` in ``src/llama-graph.cpp``), a KQ
``ggml_mul_mat`` of the f16 keys that writes every score in f32, ``ggml_soft_max_ext`` over them, and a KQV
``ggml_mul_mat`` of the f16 values that reads them back; the factor then holds the scores' round trip through
memory as well. (The result's ceiling columns are the fused form's: the estimate prices every step fused.)

Llama models whose other work is small (16 layers, hidden 1024, MLP 256, a vocabulary of 320, Q8_0, random
weights by :mod:`roofline.validation.gguf_writer`) with heads of 64 and of 128 (16 and 8 query heads, 4 and 2 KV
heads: GQA 4, as Llama 3's small models; at 4,096 keys their f16 KV cache is 64 MB, beyond a 32 MB L3, as a real
model's is), timed by ``llama-bench -t T`` at KV depths ``d``:

- decode: ``-p 0 -n 32 -d d``: each token scores ``d + i`` cached keys per head and layer;
- prefill: ``-p 512 -n 0 -d d``: 512 queries score the ``d`` cached keys besides their own causal triangle.

Nothing but the attention grows with ``d`` (its KV reads with it, inside the measured time), so the least-squares
slope of the measured seconds over ``d``, over the scores a cached key adds (a decode token's ``layers x heads``,
a prompt's ``layers x heads x 512``), is the kernel's time per score, and times the ``T`` cores' FP32 vector peak
(the path the ceiling prices attention on) its ops per score: its scalar work (the mask's f16 conversion,
``expf``), the f16 to f32 widening, the register traffic of its small GEMMs, its stalls on the KV cache. The
ceiling counts ``4 d + s`` (``s``, the softmax's ops per score): their ratio is the kernel's factor, taken as the
geometric mean over the two head sizes (it hardly depends on the head: a score's work and its KV bytes both grow
with ``d``). The result also keeps the
attainable ceiling's seconds at each depth (``roofline.estimate``, one core per thread, no fitted efficiency) and
their slope's ratio to the measured one.

``python -m roofline.validation.llamacpp_attention --bin DIR --cpu PLATFORM --out FILE.json``. Time it on a
quiet machine: nothing else running.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from roofline.validation.llamacpp_dispatch import line_fit

from roofline.calc.aggregate import geometric_mean

DEPTHS = (0, 1024, 2048, 3072, 4096)
HEAD_DIMS = (64, 128)
#: the unfused graph's run adds heads of 256 (Gemma's): its cost per score has a part that does not grow with the
#: head (each score's own dot product's reduction, its softmax, its round trip through memory), which two head
#: sizes pin exactly and three check
UNFUSED_HEAD_DIMS = (64, 128, 256)
HIDDEN = 1024
LAYERS = 16
DECODE_TOKENS = 32
PROMPT = 512


def config(head_dim: int) -> dict:
    heads = HIDDEN // head_dim
    return {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": HIDDEN,
            "intermediate_size": 256, "num_attention_heads": heads, "num_key_value_heads": max(1, heads // 4),
            "head_dim": head_dim, "vocab_size": 320, "num_hidden_layers": LAYERS,
            "max_position_embeddings": 16384, "rms_norm_eps": 1e-5, "tie_word_embeddings": False,
            "torch_dtype": "bfloat16"}


def ceiling_s(cfg: Path, cpu: str, phase: str, depth: int, threads: int = 1) -> float:
    """The attainable ceiling's seconds of the timed work at ``depth``: a decode run's mean token (at depth
    ``d + n/2``), a prefill's 512 tokens after ``d`` cached ones; one core per thread, f16 KV cache, Q8_0 output
    matrix."""
    import roofline

    step = ({"context": depth + DECODE_TOKENS // 2} if phase == "decode"
            else {"seq_len": PROMPT, "context": depth})
    r = roofline.estimate(model=str(cfg), cpu=cpu, precision="q8_0", phase=phase, instance_cores=threads,
                          cores=threads, sockets=1, kv_dtype="fp16", stack="llama.cpp", quantize_lm_head=True, **step)
    return float(r.precisions["q8_0"].step_time_s)


def fp32_peak(cfg: Path, cpu: str, threads: int) -> float:
    """ops/s of the FP32 vector path on ``threads`` cores of ``cpu`` (the path the ceiling prices attention on)"""
    import roofline

    r = roofline.estimate(model=str(cfg), cpu=cpu, precision="q8_0", phase="decode", context=1,
                          instance_cores=threads, cores=threads, sockets=1, stack="llama.cpp")
    return max(p.peak_ops_per_s for p in r.platform.compute_paths if p.dtype == "fp32")


def summarise(rows: list[dict], ceilings: dict[tuple[int, str, int], float], peak: float) -> dict:
    """Per head size and phase: each depth's measured seconds (the median of the rounds' means) and the ceiling's, the
    slopes over the depth, and a score's
    ops at the FP32 path's ``peak``: the measured slope over the scores one cached key adds (a decode token's
    ``layers x heads``, a prompt's ``layers x heads x 512``)."""
    out: dict = {}
    for dh in head_dims(rows):
        heads = config(dh)["num_attention_heads"]
        for phase in ("decode", "prefill"):
            by_depth: dict[int, list[dict]] = {}
            for r in rows:
                if _head_dim(r) != dh:
                    continue
                if (phase == "decode") != (r["n_gen"] > 0):
                    continue
                by_depth.setdefault(r["n_depth"], []).append(r)
            pts = []
            for depth, rs in by_depth.items():  # each round's mean, then their median
                secs = [(r["n_gen"] or r["n_prompt"]) / r["avg_ts"] if phase == "prefill" else 1.0 / r["avg_ts"]
                        for r in rs]
                pts.append({"depth": depth, "seconds": float(np.median(secs)), "rounds_seconds": secs,
                            "ceiling_s": ceilings[(dh, phase, depth)]})
            pts.sort(key=lambda p: p["depth"])
            d = np.array([p["depth"] for p in pts])
            measured = line_fit(d, np.array([p["seconds"] for p in pts]))[1]
            ceiling = line_fit(d, np.array([p["ceiling_s"] for p in pts]))[1]
            scores = LAYERS * heads * (1 if phase == "decode" else PROMPT)
            out[f"{phase}-d{dh}"] = {"head_dim": dh, "phase": phase, "points": pts,
                                     "measured_s_per_key": measured, "ceiling_s_per_key": ceiling,
                                     "efficiency": ceiling / measured, "scores_per_key": scores,
                                     "ops_per_score": measured / scores * peak}
    return out


def ceiling_ops(head_dim: int) -> float:
    """a score's work at the ceiling, in ops on the FP32 path: ``4 d`` (its two products) and the softmax's"""
    from roofline.spec.op_costs import cost

    return 4.0 * head_dim + cost("softmax_ops_per_score")


def _head_dim(row: dict) -> int:
    return int(Path(row["model_filename"]).name.split("-d")[1].split("-")[0])


def head_dims(rows: list[dict]) -> list[int]:
    """the head sizes a run's rows cover"""
    return sorted({_head_dim(r) for r in rows})


def kernel_factors(kernels: dict) -> dict:
    """Per phase: the kernel's ops per score over the ceiling's at each head size, and their geometric mean (the
    factor the stack profile holds for a kernel whose cost grows with the head); and the least-squares split of the
    ops per score into ``f 4 d + g s`` (``s`` the softmax's counted ops): ``f`` the products' factor, ``g`` the
    factor of what a score costs whatever its head (with two head sizes, exact; with more, ``residual`` is the
    largest relative miss); ``f`` at least 1 (the products at the FP32 path's peak, the rest per score then their
    mean)."""
    from roofline.spec.op_costs import cost

    out = {}
    for phase in ("decode", "prefill"):
        dims = sorted(int(k.split("-d")[1]) for k in kernels if k.startswith(phase + "-"))
        ops = np.array([kernels[f"{phase}-d{dh}"]["ops_per_score"] for dh in dims])
        each = {dh: o / ceiling_ops(dh) for dh, o in zip(dims, ops)}
        s = cost("softmax_ops_per_score")
        basis = np.array([[4.0 * dh, s] for dh in dims])
        (f, g), *_ = np.linalg.lstsq(basis, ops, rcond=None)
        if f < 1.0:  # the products cannot beat the FP32 path's peak: at it, the rest per score
            f, g = 1.0, float(np.mean((ops - 4.0 * np.array(dims)) / s))
        miss = float(np.max(np.abs(basis @ np.array([f, g]) / ops - 1.0)))
        out[phase] = {"per_head_dim": {str(k): v for k, v in each.items()},
                      "factor": float(geometric_mean(list(each.values()))),
                      "split": {"matmul_factor": float(f), "softmax_factor": float(g), "residual": miss}}
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bin", required=True, help="the folder holding llama-bench (and its libraries)")
    p.add_argument("--cpu", required=True, help="this host's platform (its ceilings are the reference)")
    p.add_argument("--out", required=True, help="the result, JSON")
    p.add_argument("--reps", type=int, default=5, help="llama-bench repetitions per test (default 5)")
    p.add_argument("--rounds", type=int, default=3, help="times the whole set is run, one after another; each "
                   "point the median of the rounds (default 3: a guest's shared caches vary between runs)")
    p.add_argument("--threads", type=int, default=2, help="llama-bench threads, one per core (default 2)")
    p.add_argument("--flash", choices=("on", "off"), default="on",
                   help="llama-bench -fa: on, the flash attention kernels (default); off, the unfused graph's")
    a = p.parse_args(argv)
    from roofline.validation.gguf_writer import write_random_gguf
    dims = HEAD_DIMS if a.flash == "on" else UNFUSED_HEAD_DIMS

    from roofline.catalog import load_model

    binary = Path(a.bin) / "llama-bench"
    env = {"LD_LIBRARY_PATH": str(Path(a.bin).resolve()), "PATH": "/usr/bin:/bin"}
    depths = ",".join(str(d) for d in DEPTHS)
    rows: list[dict] = []
    ceilings: dict[tuple[int, str, int], float] = {}
    commands = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        models = []
        for dh in dims:
            cfg = folder / f"attn-d{dh}.json"
            cfg.write_text(json.dumps(config(dh)))
            model = folder / f"attn-d{dh}-q8_0.gguf"
            write_random_gguf(model, load_model(str(cfg)), "q8_0")
            models.append(model)
            peak = fp32_peak(cfg, a.cpu, a.threads)
            for depth in DEPTHS:
                for phase in ("decode", "prefill"):
                    ceilings[(dh, phase, depth)] = ceiling_s(cfg, a.cpu, phase, depth, a.threads)
        for rnd in range(a.rounds):
            for model in models:
                for tests in (["-p", "0", "-n", str(DECODE_TOKENS)], ["-p", str(PROMPT), "-n", "0"]):
                    cmd = [str(binary), "-m", str(model), *tests, "-d", depths, "-fa", a.flash, "-t", str(a.threads),
                           "-r", str(a.reps), "-o", "json"]
                    if rnd == 0:
                        commands.append(" ".join(["llama-bench", "-m", model.name, *cmd[3:]]))
                    run = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env)
                    rows += [{**r, "round": rnd} for r in json.loads(run.stdout)]
    result = {"cpu": a.cpu, "threads": a.threads, "flash_attention": a.flash == "on", "rounds": a.rounds, "commands": commands, "build_commit": rows[0].get("build_commit"),
              "cpu_info": rows[0].get("cpu_info"), "model_configs": {str(dh): config(dh) for dh in dims},
              "fp32_peak_ops_per_s": peak, "kernels": summarise(rows, ceilings, peak), "bench": rows}
    result["factors"] = kernel_factors(result["kernels"])
    for r in result["bench"]:  # no path of this machine in the result
        r["model_filename"] = Path(r["model_filename"]).name
    from roofline.files.writing import write_text

    write_text(a.out, json.dumps(result, indent=1) + "\n")  # whole or not at all
    for k, v in result["kernels"].items():
        print(f"{k}: {v['measured_s_per_key'] * 1e9:.2f} ns per cached key measured, "
              f"{v['ceiling_s_per_key'] * 1e9:.2f} at the ceiling: efficiency {v['efficiency']:.3f}")
    for k, v in result["factors"].items():
        each = ", ".join(f"{x:.2f} at d = {d}" for d, x in v["per_head_dim"].items())
        print(f"{k}: {v['factor']:.2f} x the ceiling's arithmetic per score ({each}); split: products "
              f"{v['split']['matmul_factor']:.2f}, softmax {v['split']['softmax_factor']:.1f}, largest miss "
              f"{v['split']['residual']:.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
