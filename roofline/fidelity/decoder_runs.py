"""MLPerf LLM Offline and Server runs as predictions of ``roofline plan`` (continuous batching).

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
    """A decoder's MLPerf run the decoder plan predicts (its record names the profile that prices it)."""
    return rec.record.priced_by is not None


def run_rate(rec: LoadedRecord) -> Measurement:
    """The run's samples per second: its first throughput figure (MLPerf's metric; a Server run's scheduled
    rate, listed before its completed one)."""
    found = [m for m in rec.record.measurements if FigureKind(m.kind) is FigureKind.THROUGHPUT]
    if not found:
        raise SpecError(str(rec.path), "measurements", "a decoder's MLPerf run needs its samples per second "
                        "(kind = \"throughput\")")
    return found[0]


@dataclass(frozen=True)
class DecoderRunPrediction:
    rps: float
    """the plan's requests per second per server of the run's layout (realistic service times)"""
    ceiling_rps: float
    """the same at the attainable ceiling's service times"""
    instances: int
    """instances per server"""
    latencies_s: tuple[dict[tuple[FigureKind, Statistic], float], ...]
    """Server runs': the plan's TTFT and TPOT (mean, p99) at each rate asked (none: an Offline run)"""


def predict_decoder_run(rec: LoadedRecord, profile: StackProfile, rates: tuple[float, ...] = (),
                        seed: int = 0) -> DecoderRunPrediction:
    """The decoder plan of the run's layout, priced by ``profile`` (see the module docstring); a Server run's
    latencies at each of ``rates`` (requests per second per server: runs alike in all but their rate), by default
    at its own."""
    from roofline.capacity import PlanOptions
    from roofline.capacity import plan as capacity_plan
    from roofline.capacity.decoder import decoder_stats_at
    from roofline.capacity.options import resolve
    from roofline.model.recipes import precision_recipe
    from roofline.serving.request_lengths import histogram_lengths

    r = rec.record
    platform = load_platform(r.platform.name)
    if r.platform.sockets and r.platform.sockets != int(platform.sockets.known_value):
        platform = with_sockets(platform, r.platform.sockets)
    model = load_model(r.model)
    m = run_rate(rec)
    path = (Path(rec.path).parent / str(r.request_lengths)).resolve()
    values, weights = read_length_histogram(path, "request_lengths", model.max_position_embeddings)
    server = r.scenario is Scenario.SERVER
    options = PlanOptions(lengths=histogram_lengths(values, weights), scenario=r.scenario,
                          ttft_s=r.latency_bound_s if server else None, tpot_s=r.tpot_bound_s if server else None,
                          output_len=r.output_len, max_sequences=r.max_sequences, max_batch_tokens=r.max_batch_tokens,
                          kv_dtype=m.kv_dtype, source=EfficiencySource(stack=profile), cores=r.platform.cores,
                          instance_cores=r.platform.instance_cores, seed=seed)
    cpu = capacity_plan([platform], model, m.precision, options).cpus[0]
    best = cpu.best
    latencies: tuple[dict[tuple[FigureKind, Statistic], float], ...] = ()
    if server:
        o = resolve(model, dataclasses.replace(
            options, source=options.source.for_recipe(precision_recipe(m.precision, model))), 1)
        at = rates or (m.value,)
        st = decoder_stats_at(platform, model, m.precision, o, at)
        latencies = tuple({(FigureKind.TTFT, Statistic.MEAN): float(st.mean_ttft_s[0, g]),
                           (FigureKind.TTFT, Statistic.P99): float(st.ttft_p99_s[0, g]),
                           (FigureKind.TPOT, Statistic.MEAN): float(st.mean_tpot_s[0, g]),
                           (FigureKind.TPOT, Statistic.P99): float(st.tpot_p99_s[0, g])} for g in range(len(at)))
    return DecoderRunPrediction(best.rps_per_server if cpu.meets or not server else 0.0,
                                best.rps_per_server_ceiling, best.instances_per_server, latencies)


def stated_latencies(rec: LoadedRecord) -> dict[tuple[FigureKind, Statistic], float]:
    """A Server run's TTFT and TPOT figures, by kind and statistic (seconds)."""
    return {(FigureKind(m.kind), Statistic(m.statistic)): m.value for m in rec.record.measurements
            if FigureKind(m.kind) in (FigureKind.TTFT, FigureKind.TPOT) and m.statistic is not None}
