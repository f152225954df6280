"""MLPerf Server figures as predictions of ``roofline plan``.

A Server run sustains a Poisson arrival rate under a p99 latency bound; the record states the bound
(``latency_bound_s``), the instance layout and a histogram of its request lengths
(``request_lengths``, SQuAD's for BERT). Its predicted figure is the plan's server-scenario capacity of
that layout: the highest Poisson rate whose simulated p99 (queueing, batching and service at the stack
profile's realistic service times) meets the bound, the profile refitted without the record's platform
(leave-one-platform-out, as every other figure). Over the same plan's offline capacity of that layout
it is the plan's server/offline capacity ratio, compared with the measured ratio of the run and its
Offline twin (the record of the same submission and system, its file named ``...-offline`` beside
``...-server``; Intel's harness runs 8-core instances in the server scenario and 4-core ones offline,
each its best, so the measured ratio is of the two best layouts).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from roofline.capacity import PlanOptions, plan
from roofline.catalog import load_model, load_platform
from roofline.catalog.length_histogram import read_length_histogram
from roofline.catalog.records import LoadedRecord
from roofline.errors import SpecError
from roofline.model.efficiency import EfficiencySource
from roofline.serving.request_lengths import fixed_lengths, histogram_lengths
from roofline.spec.stack import StackProfile
from roofline.spec.vocab import FigureKind, Scenario


@dataclass(frozen=True)
class ServerPrediction:
    rps: float
    """the plan's server-scenario capacity of the record's layout (realistic)"""
    offline_rps: float
    """the same plan's offline capacity of that layout"""
    instance_cores: int

    @property
    def ratio(self) -> float:
        return self.rps / self.offline_rps if self.offline_rps > 0 else 0.0


def is_server(rec: LoadedRecord) -> bool:
    return rec.record.scenario is Scenario.SERVER


def offline_twin(rec: LoadedRecord, records: dict[str, LoadedRecord]) -> LoadedRecord | None:
    """The Offline record of the same submission and system (``...-server`` -> ``...-offline``)."""
    if not rec.id.endswith("-server"):
        return None
    twin = records.get(rec.id[: -len("-server")] + "-offline")
    return twin if twin is not None and twin.record.scenario is Scenario.OFFLINE else None


def predict_server(rec: LoadedRecord, profile: StackProfile, seed: int = 0) -> ServerPrediction:
    """The plan's server and offline capacity of the record's layout with ``profile``'s service times."""
    r = rec.record
    platform = load_platform(r.platform.name)
    model = load_model(r.model)
    (m,) = [m for m in r.measurements if FigureKind(m.kind) is FigureKind.THROUGHPUT]
    if r.request_lengths:
        path = (Path(rec.path).parent / r.request_lengths).resolve()
        lengths, weights = read_length_histogram(path, "request_lengths", model.max_position_embeddings)
        dist = histogram_lengths(lengths, weights)
    else:
        dist = fixed_lengths(r.seq_len)
    options = PlanOptions(lengths=dist, scenario=Scenario.SERVER, p99_s=r.latency_bound_s,
                          source=EfficiencySource(stack=profile), cores=r.platform.cores,
                          instance_cores=r.platform.instance_cores or 4, seed=seed)
    result = plan([platform], model, m.precision, options)
    layouts = result.cpus[0].layouts
    want = r.platform.instance_cores or 4
    layout = min(layouts, key=lambda lay: (abs(lay.instance_cores - want), lay.instance_cores))
    if layout.instance_cores != want:
        raise SpecError(str(rec.path), "platform.instance_cores", f"{want}: plan has no layout of {want} cores per "
                        f"instance on {platform.name} (it has {', '.join(str(x.instance_cores) for x in layouts)})")
    return ServerPrediction(layout.rps_per_server, layout.offline_rps_per_server, layout.instance_cores)
