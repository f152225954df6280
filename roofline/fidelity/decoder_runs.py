"""Decoder serving runs as predictions of ``roofline plan`` (continuous batching): MLPerf LLM Offline and Server
runs, and closed-loop concurrency runs.

A decoder's MLPerf run serves the whole data set through engine instances that batch continuously: prompts of
the data set's lengths (``request_lengths``), ``output_len`` tokens each, at most ``max_sequences`` running per
instance, prefill steps of at most ``max_batch_tokens`` prompt tokens. Its predicted figure is the decoder plan
of the run's layout (its ``instance_cores`` per instance, as many instances per socket as its ``cores`` hold, its
sockets), priced by the stack profile ``priced_by`` names (the engine has none of its own; the record says why)
fitted without the run's platform (leave-one-platform-out, as every other figure):

    Offline:  predicted = the plan's offline requests per second per server
    Server:   predicted = the plan's server capacity: the highest Poisson rate whose simulated p99 TTFT and p99
              TPOT meet the run's bounds (``latency_bound_s``, ``tpot_bound_s``)

against the run's samples per second (its first throughput figure: MLPerf's metric, Server's scheduled rate).
The same plan at the attainable ceiling's service times gives the run's ceiling: a run faster than it means the
model or its inputs are wrong, as for every other figure. A Server run's TTFT and TPOT figures (their mean and
p99, as loadgen states them) are predicted by the same plan simulated at the run's scheduled rate.

A concurrency run (``scenario = "concurrency"``: ``concurrency`` clients, each sending its next request when its
last is answered, to a server of ``max_sequences`` slots per instance; ``vllm bench serve --max-concurrency``, a
llama-server of that many slots) is the plan's concurrency scenario of its layout at that many users: its output
tokens per second per server against the run's, its TTFT and TPOT against the run's means; priced by the run's own
stack's profile (or ``priced_by``'s) refitted without its platform.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from roofline.catalog import load_model, load_platform
from roofline.catalog.length_histogram import read_length_histogram
from roofline.catalog.records import LoadedRecord
from roofline.errors import SpecError
from roofline.model.efficiency import EfficiencySource
from roofline.spec.platform import with_sockets
from roofline.spec.record import Measurement
from roofline.spec.stack import StackProfile
from roofline.spec.vocab import FigureKind, Scenario, Statistic


def is_decoder_run(rec: LoadedRecord) -> bool:
    """A decoder's serving run the decoder plan predicts: an MLPerf run whose record names the profile that prices
    it, or a closed-loop concurrency run of serving figures."""
    r = rec.record
    return r.priced_by is not None or (r.scenario is Scenario.CONCURRENCY and any(
        FigureKind(m.kind).is_serving for m in r.measurements))


def pricing_stack(rec: LoadedRecord) -> str:
    """The stack whose profile prices the run: the one its record names (``priced_by``), else its own."""
    return rec.record.priced_by or rec.record.stack


def run_rate(rec: LoadedRecord) -> Measurement:
    """The run's figure: an MLPerf run's samples per second (its first throughput figure: MLPerf's metric, a Server
    run's scheduled rate, listed before its completed one), a concurrency run's output tokens per second."""
    want = FigureKind.OUTPUT_TOKENS_PER_S if rec.record.scenario is Scenario.CONCURRENCY else FigureKind.THROUGHPUT
    found = [m for m in rec.record.measurements if FigureKind(m.kind) is want]
    if not found:
        raise SpecError(str(rec.path), "measurements", f"a decoder's serving run needs its {want.value} figure")
    return found[0]


def rate_unit(rec: LoadedRecord) -> str:
    return "output tokens/s" if rec.record.scenario is Scenario.CONCURRENCY else "requests/s"


@dataclass(frozen=True)
class DecoderRunPrediction:
    rps: float
    """the plan's figure of the run's layout (realistic service times): requests per second per server, or a
    concurrency run's output tokens per second per server"""
    ceiling_rps: float
    """the same at the attainable ceiling's service times"""
    instances: int
    """instances per server"""
    latencies_s: tuple[dict[tuple[FigureKind, Statistic], float], ...]
    """an MLPerf Server run's: the plan's TTFT and TPOT (mean, p99) at each rate asked; a concurrency run's: its
    TTFT and TPOT (the plan's one value each, against the means); none: an Offline run"""


def predict_decoder_run(rec: LoadedRecord, profile: StackProfile, rates: tuple[float, ...] = (),
                        seed: int = 0) -> DecoderRunPrediction:
    """The decoder plan of the run's layout, priced by ``profile`` (see the module docstring); an MLPerf Server
    run's latencies at each of ``rates`` (requests per second per server: runs alike in all but their rate), by
    default at its own."""
    from roofline.capacity import PlanOptions
    from roofline.capacity import plan as capacity_plan
    from roofline.capacity.decoder import decoder_stats_at, decoder_users_at
    from roofline.capacity.options import resolve
    from roofline.model.recipes import precision_recipe
    from roofline.serving.request_lengths import fixed_lengths, histogram_lengths

    r = rec.record
    platform = load_platform(r.platform.name)
    if r.platform.sockets and r.platform.sockets != int(platform.sockets.known_value):
        platform = with_sockets(platform, r.platform.sockets)
    model = load_model(r.model)
    m = run_rate(rec)
    if r.request_lengths:
        path = (Path(rec.path).parent / str(r.request_lengths)).resolve()
        lengths = histogram_lengths(*read_length_histogram(path, "request_lengths", model.max_position_embeddings))
    else:
        lengths = fixed_lengths(r.prompt_len or r.seq_len)
    server = r.scenario is Scenario.SERVER
    concurrency = r.scenario is Scenario.CONCURRENCY
    options = PlanOptions(lengths=lengths, scenario=r.scenario,
                          ttft_s=r.latency_bound_s if server else None, tpot_s=r.tpot_bound_s if server else None,
                          output_len=r.output_len, max_sequences=r.max_sequences, max_batch_tokens=r.max_batch_tokens,
                          kv_dtype=m.kv_dtype, source=EfficiencySource(stack=profile), cores=r.platform.cores,
                          instance_cores=r.platform.instance_cores, seed=seed,
                          users=(int(r.concurrency),) if concurrency and r.concurrency else None)
    if server or concurrency:
        o = resolve(model, dataclasses.replace(
            options, source=options.source.for_recipe(precision_recipe(m.precision, model))), 1)
    if concurrency:
        real, ceil, instances = decoder_users_at(platform, model, m.precision, o, int(r.concurrency or 1))
        return DecoderRunPrediction(float(real.tokens_per_s[0, 0]), float(ceil.tokens_per_s[0, 0]), instances,
                                    ({(FigureKind.TTFT, Statistic.MEAN): float(real.ttft_s[0, 0]),
                                      (FigureKind.TPOT, Statistic.MEAN): float(real.tpot_s[0, 0])},))
    cpu = capacity_plan([platform], model, m.precision, options).cpus[0]
    best = cpu.best
    latencies: tuple[dict[tuple[FigureKind, Statistic], float], ...] = ()
    if server:
        at = rates or (m.value,)
        st = decoder_stats_at(platform, model, m.precision, o, at)
        latencies = tuple({(FigureKind.TTFT, Statistic.MEAN): float(st.mean_ttft_s[0, g]),
                           (FigureKind.TTFT, Statistic.P99): float(st.ttft_p99_s[0, g]),
                           (FigureKind.TPOT, Statistic.MEAN): float(st.mean_tpot_s[0, g]),
                           (FigureKind.TPOT, Statistic.P99): float(st.tpot_p99_s[0, g])} for g in range(len(at)))
    return DecoderRunPrediction(best.rps_per_server if cpu.meets or not server else 0.0,
                                best.rps_per_server_ceiling, best.instances_per_server, latencies)


def stated_latencies(rec: LoadedRecord) -> dict[tuple[FigureKind, Statistic], float]:
    """A run's TTFT and TPOT figures, by kind and statistic (seconds)."""
    return {(FigureKind(m.kind), Statistic(m.statistic)): m.value for m in rec.record.measurements
            if FigureKind(m.kind) in (FigureKind.TTFT, FigureKind.TPOT) and m.statistic is not None}
