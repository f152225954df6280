"""The wait Intel's MLPerf Llama-3.1-8B Server client adds before a query reaches SGLang.

Intel's v5.1 harness (``closed/Intel/code/llama3_1-8b/pytorch-cpu/SUT_sglang.py``, ``SUTServer.query_batcher``, read
at https://github.com/ntuhpc/inference_results_v5.1/blob/a634ab772637c2d940cfef45fae86553211f525b/closed/Intel/code/llama3_1-8b/pytorch-cpu/SUT_sglang.py,
a fork holding the submission as published; ``run_server.sh`` runs it with ``BATCH_SIZE`` 8, so the batcher is on)
does not send a query when loadgen issues it. It estimates each prompt's prefill time from its length (0.575 to
0.675 ms a token), groups queries of like length, and sends a group once its estimate plus its oldest query's wait
passes ``time_left - time_limit_fin`` = 1.8 - 0.35 = 1.45 s. A query whose estimate alone passes 1.8 s goes at
once. Loadgen's TTFT counts that wait; the decoder plan, which sends each request as it arrives, does not.

:func:`dispatch_times` is that policy as a function of the arrival times and prompt lengths (the batcher's
decisions depend on nothing else: not on the servers' state), re-stated here from the source, event by event:

- on arrival, a query of ``L`` tokens has the estimate ``c = v(L) L`` with ``v`` 0.575 ms above 1,600 tokens,
  0.625 ms above 1,000, else 0.675 ms; ``c > 1.8 s`` sends it alone at once;
- otherwise it joins the first open group of its class (``L <= 1000``: class 0; ``1000 < L <= 1600``: class 1;
  longer prompts never join, and one above 1,900 tokens always opens its own group) where
  ``(L + the group's tokens) v' + the group's oldest wait < 1.8 - 0.25`` (``v'`` 0.675 ms for class 1; for class 0
  0.625 ms while the group holds one or two queries, else 0.575 ms), or opens a group of its own;
- a group is sent as soon as the sum of its members' estimates plus its oldest member's wait exceeds 1.45 s (the
  batcher polls without sleeping, so no later than that).

    python -m roofline.validation.mlperf_client_hold --rate 3.53 \\
        --lengths validation/records/lengths/mlperf-llama3.1-8b-cnndm-inputs.txt

prints the hold (dispatch minus arrival) over Poisson arrivals at the rate: its mean, median, p99 and maximum.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from roofline.catalog.length_histogram import read_length_histogram
from roofline.errors import UserError

#: seconds: the batcher's budget (``time_left``), its send margin (``time_limit_fin``) and join margin
#: (``time_limit_add``)
TIME_LEFT, LIMIT_FIN, LIMIT_ADD = 1.8, 0.35, 0.25


#: seconds a prompt token, the batcher's prefill estimate on arrival, by length class (0, 1, 2)
ARRIVAL_RATE = (0.000675, 0.000625, 0.000575)


def length_class(length: int) -> int:
    """0 up to 1,000 tokens, 1 up to 1,600, 2 above (a class-2 query never joins a group)."""
    return 2 if length > 1600 else 1 if length > 1000 else 0


@dataclass
class _Group:
    members: list[int]
    opened_s: float
    estimate_s: float
    tokens: int
    cls: int

    def join_rate(self) -> float:
        if self.cls == 1:
            return 0.000675
        return 0.000625 if len(self.members) in (1, 2) else 0.000575


def dispatch_times(arrival_s: ArrayLike, lengths: ArrayLike) -> np.ndarray:
    """Each query's send time under the batcher (module docstring); ``arrival_s`` non-decreasing."""
    arrival = np.asarray(arrival_s, dtype=float)
    lens = np.asarray(lengths, dtype=int)
    if arrival.shape != lens.shape or arrival.ndim != 1:
        raise ValueError("arrival_s and lengths: one value per query")
    if np.any(np.diff(arrival) < 0):
        raise ValueError("arrival_s must be non-decreasing")
    sent = np.full(arrival.shape, np.nan)
    groups: list[_Group] = []
    send_at = TIME_LEFT - LIMIT_FIN

    def due(g: _Group) -> float:  # the time its estimate plus its oldest member's wait reaches the margin
        return g.opened_s + (send_at - g.estimate_s)

    def flush(now: float) -> None:
        keep = []
        for g in groups:
            if due(g) <= now:
                sent[g.members] = now
            else:
                keep.append(g)
        groups[:] = keep

    i, n = 0, len(arrival)
    while i < n or groups:
        next_arrival = arrival[i] if i < n else np.inf
        next_send = min((due(g) for g in groups), default=np.inf)
        if next_send < next_arrival:
            flush(next_send)
            continue
        now, length = float(next_arrival), int(lens[i])
        cls = length_class(length)
        estimate = ARRIVAL_RATE[cls] * length
        if estimate > TIME_LEFT:
            sent[i] = now
        else:
            joined = False
            if cls < 2:  # a prompt above 1,600 tokens (and so any above 1,900) opens a group of its own
                for g in groups:
                    if g.cls == cls and ((length + g.tokens) * g.join_rate() + (now - g.opened_s)
                                         < TIME_LEFT - LIMIT_ADD):
                        g.members.append(i)
                        g.estimate_s += estimate
                        g.tokens += length
                        joined = True
                        break
            if not joined:
                groups.append(_Group([i], now, estimate, length, cls))
        i += 1
        flush(now)
    return sent


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rate", type=float, required=True, help="queries per second (loadgen's scheduled rate)")
    ap.add_argument("--lengths", required=True, help="prompt-length histogram: 'length count' lines")
    ap.add_argument("--queries", type=int, default=50_000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if not (np.isfinite(args.rate) and 0 < args.rate <= 1e6) or not 1 <= args.queries <= 10_000_000:
        print("mlperf_client_hold: --rate must be above 0 (queries per second, at most 1e6) and --queries 1 to 1e7",
              file=sys.stderr)
        return 2
    try:
        hist = read_length_histogram(args.lengths, "--lengths")
    except UserError as e:
        print(f"mlperf_client_hold: {e}", file=sys.stderr)
        return 2
    rng = np.random.default_rng(args.seed)
    lengths, counts = (np.asarray(v, dtype=float) for v in hist)
    weights = counts / counts.sum()
    arrival = np.cumsum(rng.exponential(1.0 / args.rate, args.queries))
    lens = rng.choice(lengths, args.queries, p=weights)
    hold = dispatch_times(arrival, lens) - arrival
    print(f"{args.queries} Poisson arrivals at {args.rate:g}/s, lengths from {args.lengths} (seed {args.seed}): "
          f"hold mean {hold.mean() * 1e3:.0f} ms, median {np.median(hold) * 1e3:.0f} ms, "
          f"p99 {np.quantile(hold, 0.99) * 1e3:.0f} ms, max {hold.max() * 1e3:.0f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
