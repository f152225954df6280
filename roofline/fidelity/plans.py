"""MLPerf Server figures as predictions of ``roofline plan``.

A Server run sustains a Poisson arrival rate under a p99 latency bound; the record states the bound
(``latency_bound_s``), the instance layout, a histogram of its request lengths (``request_lengths``,
SQuAD's for BERT) and its harness's batching (``max_batch_tokens`` and ``batch_watermark_tokens``:
Intel's BERT harness closes a batch once it holds 1,300 tokens, never past 1,560). Its predicted figure
is the plan's server-scenario capacity of that layout at that batching: the highest Poisson rate whose
simulated p99 (queueing, batching and service at the stack profile's realistic service times) meets the
bound, the profile refitted without the record's platform (leave-one-platform-out, as every other
figure). Over the same plan's offline capacity (the same batching) it is the plan's server/offline
capacity ratio, compared with the measured ratio of the run and its Offline twin (the record of the same
submission and system, its file named ``...-offline`` beside ``...-server``; Intel's harness runs 8-core
instances in the server scenario and 4-core ones offline, each its best, so the measured ratio is of the
two best layouts, and the plan's is of the same two: its server capacity of the Server run's layout over
its offline capacity of the Offline twin's).

A Server record may also state loadgen's p50 and p99 latency at its scheduled rate
(``server_latencies``): the plan's simulation of the run's layout at that rate (the same profile) predicts
them. With an error band the plan is simulated at every service time ``1 + band`` times longer and shorter
too, and the ratio at those two ends is the plan's range (near the p99 bound it can be much wider than the
band).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from roofline.capacity import PlanOptions
from roofline.capacity.encoder import ServerCase, server_checks
from roofline.catalog import load_model, load_platform
from roofline.catalog.length_histogram import read_length_histogram
from roofline.catalog.records import LoadedRecord
from roofline.errors import SpecError
from roofline.model.efficiency import EfficiencySource
from roofline.serving.request_lengths import fixed_lengths, histogram_lengths
from roofline.spec.record import Measurement
from roofline.spec.stack import StackProfile
from roofline.spec.vocab import FigureKind, Scenario


@dataclass(frozen=True)
class ServerPrediction:
    rps: float
    """the plan's server-scenario capacity of the record's layout (realistic)"""
    offline_rps: float
    """the same plan's offline capacity of the ``offline_instance_cores`` layout"""
    instance_cores: int
    offline_instance_cores: int | None
    """the layout of ``offline_rps`` (the Offline twin's; None: not asked, ``offline_rps`` NaN)"""
    latency_s: dict[int, float | None]
    """the plan's p50 and p99 latency at the record's own rate (None: the record states no latency)"""
    band: float | None = None
    """the error band the capacity was also simulated at the ends of (None: not asked)"""
    rps_band: tuple[float, float] | None = None
    """``rps`` with the realistic service times ``1 + band`` times longer, then shorter"""

    @property
    def ratio(self) -> float:
        return self.rps / self.offline_rps if self.offline_rps > 0 else 0.0

    @property
    def ratio_band(self) -> tuple[float, float] | None:
        """The ratio at the band's two ends, lowest first: each end's server capacity over the offline capacity
        at the same service times (which scales as their inverse: ``offline_rps / (1 + band)`` at the longer)."""
        if self.rps_band is None or self.band is None or not self.offline_rps > 0:
            return None
        k = 1 + self.band
        ends = (self.rps_band[0] * k / self.offline_rps, self.rps_band[1] / (k * self.offline_rps))
        return min(ends), max(ends)


def is_server(rec: LoadedRecord) -> bool:
    return rec.record.scenario is Scenario.SERVER


def _throughput(rec: LoadedRecord) -> Measurement:
    (m,) = [m for m in rec.record.measurements if FigureKind(m.kind) is FigureKind.THROUGHPUT]
    return m


def rate_of(rec: LoadedRecord) -> float:
    """A Server (or Offline) record's samples per second: its throughput figure."""
    return _throughput(rec).value


def offline_twin(rec: LoadedRecord, records: dict[str, LoadedRecord]) -> LoadedRecord | None:
    """The Offline record of the same submission and system (``...-server`` -> ``...-offline``)."""
    if not rec.id.endswith("-server"):
        return None
    twin = records.get(rec.id[: -len("-server")] + "-offline")
    return twin if twin is not None and twin.record.scenario is Scenario.OFFLINE else None


@dataclass(frozen=True)
class ServerGroup:
    """Server records alike in all but their rate, to predict with one profile: the first one's layout, and
    each one's ``(rate, sockets used)``."""

    rec: LoadedRecord
    profile: StackProfile
    offline_instance_cores: int | None = None
    """the Offline twin's layout (None: no offline capacity wanted)"""
    rates: tuple[tuple[float, int | None], ...] = ()
    """default: the record's own"""
    band: float | None = None
    """also the capacity with the realistic service times ``1 + band`` times longer and shorter"""


def predict_servers(groups: Sequence[ServerGroup], seed: int = 0) -> list[list[ServerPrediction]]:
    """Per group, the plan's server capacity of the records' layout, its offline capacity of the Offline twin's
    layout, both with the group's profile, and each record's latencies at its own rate: one prediction per rate,
    every group simulated in one call."""
    lengths: dict[str, object] = {}  # one request-length object per histogram: groups sharing it simulate together
    cases, meta = [], []
    for g in groups:
        rec, r = g.rec, g.rec.record
        platform = load_platform(r.platform.name)
        model = load_model(r.model)
        m = _throughput(rec)
        if r.request_lengths:
            path = (Path(rec.path).parent / r.request_lengths).resolve()
            if str(path) not in lengths:
                values, weights = read_length_histogram(path, "request_lengths", model.max_position_embeddings)
                lengths[str(path)] = histogram_lengths(values, weights)
            dist = lengths[str(path)]
        else:
            dist = fixed_lengths(r.seq_len)
        want = r.platform.instance_cores or 4
        options = PlanOptions(lengths=dist, scenario=Scenario.SERVER, p99_s=r.latency_bound_s,
                              source=EfficiencySource(stack=g.profile), cores=r.platform.cores,
                              instance_cores=want, seed=seed, max_batch_tokens=r.max_batch_tokens,
                              batch_watermark_tokens=r.batch_watermark_tokens)
        _check_layout(rec, platform, options, want)
        if g.offline_instance_cores is not None:
            _check_layout(rec, platform, options, g.offline_instance_cores)
        at = list(g.rates) or [(m.value, r.platform.sockets)]
        # each rate as the plan's whole server sees it (a run on fewer sockets than the platform's)
        whole = tuple(rate * (platform.sockets.value / share if share else 1.0) for rate, share in at)
        cases.append(ServerCase(platform, model, m.precision, options, g.offline_instance_cores,
                                whole if r.server_latencies else (), g.band))
        meta.append((want, len(at)))
    out = []
    for g, check, (want, n) in zip(groups, server_checks(cases), meta):
        latencies = check.latencies_s or [(None, None)] * n
        out.append([ServerPrediction(check.rps, check.offline_rps, want, g.offline_instance_cores, {50: p50, 99: p99},
                                     g.band, check.rps_band)
                    for p50, p99 in latencies])
    return out


def _check_layout(rec: LoadedRecord, platform, options: PlanOptions, want: int) -> None:
    cores = options.cores or platform.cores_per_socket.value
    if not 1 <= want <= cores:
        raise SpecError(str(rec.path), "platform.instance_cores", f"{want}: an instance of {want} cores on "
                        f"{rec.record.platform.name}, whose sockets have {cores} cores")
