"""Speed of the serving simulations on the size of a plan: 3 CPUs x 12 instance layouts.

Encoders (``roofline.serving.dynamic_batching``): for every (CPU, layout), the highest Poisson rate per
server whose simulated p99 meets the SLO (``max_rate``: 2 rounds x 8 candidate loads x 8
replications x 2,000 measured requests, every scenario in one vectorised loop per round), then
the latency-vs-load curve of each CPU's best layout. Decoders (``roofline.serving.continuous_batching``):
the same search with continuous batching. Service times are synthetic but shaped like the
roofline's: a batch's time grows sub-linearly in its size (memory-bound weights read once per
batch), an instance of ``C`` cores is about ``C`` times faster than one core.

    python tests/benchmarks/bench_queueing.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from roofline.serving.continuous_batching import DecodeStep, decoder_max_rate
from roofline.serving.dynamic_batching import BatchTable, latency_curve, max_rate
from roofline.serving.request_lengths import fixed_lengths, lognormal_lengths

CPUS = {  # cores per socket: 12 layouts (cores per instance) each; 2 sockets per server
    "64-core": (64, (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64)),
    "96-core": (96, (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 96)),
    "128-core": (128, (1, 2, 4, 8, 16, 32, 64, 128, 3, 6, 12, 24)),
}
SEQ, CAP = 256, 2048  # tokens per request, max tokens per batch (8 requests)


def encoder_scenarios() -> tuple[np.ndarray, BatchTable, list[str]]:
    inst, rows, names = [], [], []
    b = np.arange(1, CAP // SEQ + 1)
    for cpu, (cores, layouts) in CPUS.items():
        for c in layouts:
            one = 0.060 / c**0.9  # seconds for one request on c cores
            rows.append(one * (0.35 + 0.65 * b))  # weights read once per batch: sub-linear in b
            inst.append(2 * (cores // c))
            names.append(f"{cpu}/{c}c")
    return np.array(inst), BatchTable(np.array(rows)), names


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    inst, table, names = encoder_scenarios()
    print(f"{len(names)} scenarios (3 CPUs x 12 layouts), instances per server {inst.min()}-{inst.max()}")
    for label, lengths in (("fixed 256", fixed_lengths(SEQ)), ("lognormal mean 256", lognormal_lengths(SEQ, 0.5, 16, 512))):
        svc = table
        if not lengths.is_fixed:
            from roofline.serving.dynamic_batching import TokenTable

            tok = np.arange(16, CAP + 513, 16)
            svc = TokenTable(tok, table.times_s[:, :1] * (0.35 + 0.65 * tok[None, :] / SEQ))
        times = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            mr = max_rate(0.25, inst, svc, lengths, max_batch_tokens=CAP, max_wait_s=0.002)
            t1 = time.perf_counter()
            best = [int(np.argmax(mr.rate_rps[i * 12:(i + 1) * 12])) + i * 12 for i in range(3)]
            latency_curve(np.linspace(0.1, 0.95, 10)[None, :] * mr.offline_rps[best, None], inst[best],
                          _Sub(svc, best), lengths, max_batch_tokens=CAP, max_wait_s=0.002)
            times.append((t1 - t0, time.perf_counter() - t1))
        search = min(t for t, _ in times)
        curve = min(t for _, t in times)
        print(f"encoder, lengths {label}: max_rate over 36 scenarios {search:.2f} s, then the 10-point curves of "
              f"the 3 best layouts {curve:.2f} s (best of {args.repeats}; all: "
              f"{', '.join(f'{a:.2f}+{b:.2f}' for a, b in times)})")
        for i in range(3):
            k = int(np.argmax(mr.rate_rps[i * 12:(i + 1) * 12])) + i * 12
            print(f"  {names[k]:>14}: {mr.rate_rps[k]:8.1f} rps at p99 {mr.stats.p99_s[k, 0] * 1e3:6.1f} ms "
                  f"(offline {mr.offline_rps[k]:8.1f} rps, batch {mr.stats.batch_requests[k, 0]:.2f} requests)")
    inst, step, kv, prefill, names = decoder_scenarios()
    times = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        mr = decoder_max_rate(2.0, 0.15, inst, prefill, step, fixed_lengths(512), 128, kv)
        times.append(time.perf_counter() - t0)
    print(f"decoder (prompt 512, output 128): decoder_max_rate over 36 scenarios {min(times):.2f} s "
          f"(best of {args.repeats}; all: {', '.join(f'{t:.2f}' for t in times)})")
    for i in range(3):
        k = int(np.argmax(mr.rate_rps[i * 12:(i + 1) * 12])) + i * 12
        print(f"  {names[k]:>14}: {mr.rate_rps[k]:6.2f} rps, {mr.tokens_per_s[k]:7.0f} tokens/s at TTFT p99 "
              f"{mr.stats.ttft_p99_s[k, 0]:.2f} s, TPOT p99 {mr.stats.tpot_p99_s[k, 0] * 1e3:.0f} ms "
              f"(offline {mr.offline_tokens_per_s[k]:7.0f} tokens/s, {kv[k]} sequences per instance)")
    return 0


def decoder_scenarios():
    """A 7B-class decoder: a decode step reads the weights once (memory-bound, shared socket bandwidth)
    plus the KV cache; the KV capacity per instance is the DRAM left after one weight copy per socket."""
    inst, base, per_tok, pre_rate, kv, names = [], [], [], [], [], []
    kmax = 64
    b = np.arange(1, kmax + 1)
    for cpu, (cores, layouts) in CPUS.items():
        for c in layouts:
            n = cores // c  # instances per socket share its bandwidth
            bw = 300e9 / n
            base.append((7e9 / bw) * (1 + 0.004 * b))  # INT8 weights, a little activation traffic per sequence
            per_tok.append(np.full(kmax, 2 * 32 * 4096 * 2 / bw))  # K and V, 32 layers, fp16
            pre_rate.append(2 * 7e9 / (c * 2e12 * 0.5))  # seconds per prompt token: compute-bound
            inst.append(2 * n)
            kv.append(int(np.clip(400e9 / n / (640 * 2 * 32 * 4096 * 2), 1, kmax)))
            names.append(f"{cpu}/{c}c")
    pre = np.array(pre_rate)
    return (np.array(inst), DecodeStep(np.array(base), np.array(per_tok)), np.array(kv),
            lambda s, tok: 0.002 + pre[s] * tok, names)


class _Sub:
    def __init__(self, svc, idx):
        self.svc, self.idx = svc, np.asarray(idx)

    def __call__(self, s, b, t):
        return self.svc(self.idx[s], b, t)


if __name__ == "__main__":
    raise SystemExit(main())
