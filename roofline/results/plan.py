"""Result type of ``roofline plan`` (SI units: seconds, requests and tokens per second, bytes).

Schema 2 (this version): the plan simulates queueing and batching. Per layout the
scenario's rate per server from the realistic service time and from the ceiling; per CPU the best
layout, the fleet, the cost and a latency-vs-load curve. Keys kept from schema 1 with the same
meaning: ``cores_per_instance``, ``instances_per_socket``, ``server_rps``, ``bound``,
``time_split``, ``meets_latency``, ``servers_needed``, ``cost_per_million_requests``,
``latency_target_s``, ``utilization``, ``seq_len``. Gone: ``latency_s``, ``instance_rps``,
``socket_rps`` (a latency without queueing, and rates at a fixed batch) and ``batch``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from roofline.results import JsonResult
from roofline.results.deploy import Deployment
from roofline.results.energy import PlanEnergy
from roofline.spec import PYDANTIC_CONFIG

SCHEMA_VERSION = 2

Scenario = Literal["offline", "server"]


def batch_limits(max_batch_tokens: int, batch_watermark_tokens: int | None) -> str:
    """A plan's batching in words, as every report says it: ``up to 2,048 tokens``, ``, closed at 1,300`` where a
    watermark closes the batch first."""
    closed = f", closed at {batch_watermark_tokens:,}" if batch_watermark_tokens is not None else ""
    return f"up to {max_batch_tokens:,} tokens{closed}"


@dataclass(frozen=True)
class PlanLayout:
    """N instances of C cores on each socket, weights shared per socket, in the plan's scenario."""

    __pydantic_config__ = PYDANTIC_CONFIG

    scenario: Scenario
    instance_cores: int
    """cores per instance, C"""
    cores_per_instance: int
    """the same (the schema-1 name)"""
    instances_per_socket: int
    instances_per_server: int
    rps_per_server: float
    """offline: the most requests per second a server completes (every instance always busy); server: the
    highest Poisson rate whose simulated p99 latency (decoders: TTFT and TPOT p99) meets the SLO, 0 when
    none does. From the realistic service time"""
    rps_per_server_ceiling: float
    """the same from the ceiling's service time: the realistic plan never exceeds it"""
    server_rps: float
    """the same as rps_per_server (the schema-1 name)"""
    offline_rps_per_server: float
    """the offline capacity, realistic (the server scenario's rate stays below it)"""
    offline_rps_per_server_ceiling: float
    service_time_s: float
    """one request alone on an idle instance, realistic: a batch of one request of the (mean) length;
    decoders: its prefill and its other output tokens' decode steps at a running batch of one"""
    service_time_ceiling_s: float
    p50_s: float | None
    """latency (queueing, the batching wait and the service) at rps_per_server: the server scenario of
    an encoder; null offline (every request is there from the start) and for decoders (see ttft/tpot)"""
    p99_s: float | None
    p99_ci_s: list[float] | None
    """the simulation's 95% interval on p99 (sampling error across replications)"""
    bare_p99_s: float | None
    """p99 at vanishing load: a lone request's service time, plus the batching wait when it could have
    had company (decoders: null)"""
    utilization: float | None
    """busy fraction of the instances at rps_per_server (offline: 1)"""
    batch_tokens: float | None
    """mean tokens per instance call at rps_per_server (decoders: sequences per decode step, one token each)"""
    batch_requests: float | None
    """mean requests per batch (decoders: running sequences per decode step)"""
    bound: Literal["compute", "L2", "LLC", "DRAM"]
    """what bounds most of one request's ceiling step (decoders: one decode step at the running batch)"""
    time_split: dict[str, float]
    """seconds of that ceiling step on one instance by bound: compute, L2, LLC, DRAM"""
    meets_latency: bool | None
    """server scenario: a lone request meets the SLO (and so some rate does); null offline"""
    tokens_per_s_per_server: float | None = None
    """decoders: output tokens per second per server at rps_per_server"""
    tokens_per_s_per_server_ceiling: float | None = None
    ttft_p99_s: float | None = None
    """decoders: p99 time to first token (queueing and prefill) at rps_per_server"""
    ttft_p99_ci_s: list[float] | None = None
    tpot_p99_s: float | None = None
    """decoders: p99 time per output token (decode steps at the running batch, prefill stalls included)"""
    tpot_p99_ci_s: list[float] | None = None
    prefill_time_s: float | None = None
    """decoders: one prompt's prefill alone, realistic"""
    decode_step_s: float | None = None
    """decoders: one decode step of a lone sequence at its mean context, realistic"""
    max_concurrent_sequences: int | None = None
    """decoders: the running batch cap per instance, min(KV-cache capacity, --max-sequences)"""
    kv_capacity_sequences: int | None = None
    """decoders: sequences of prompt plus output the DRAM left after the weights holds, per instance"""
    note: str | None = None
    """why the layout cannot serve (no sequence fits the KV cache), when it cannot"""
    rps_per_server_band: list[float] | None = None
    """the best layout, server scenario with a stack profile's error band (the CPU's ``service_band``; null for
    the other layouts): rps_per_server with the realistic service times (decoders: prefill and decode steps)
    ``1 + band`` times longer, then ``1 + band`` times shorter. Under a p99 bound the rate can move much more than
    the service time: where the p99 barely rises with the load (batches grow with it), a few percent of service
    time moves the rate at which it crosses the bound far"""


@dataclass(frozen=True)
class CurvePoint:
    """The best layout at one offered load (a simulation of the server scenario)."""

    __pydantic_config__ = PYDANTIC_CONFIG

    offered_rps: float
    """Poisson arrivals per second per server"""
    utilization: float
    """encoders: busy fraction of the instances; decoders: the offered rate over the offline capacity"""
    p50_s: float | None = None
    """encoders: latency (queueing, batching wait, service)"""
    p99_s: float | None = None
    p99_ci_s: list[float] | None = None
    throughput_rps: float | None = None
    ttft_p50_s: float | None = None
    """decoders"""
    ttft_p99_s: float | None = None
    tpot_p50_s: float | None = None
    tpot_p99_s: float | None = None
    tokens_per_s: float | None = None
    mean_batch: float | None = None
    """decoders: running sequences per decode step"""


@dataclass(frozen=True)
class CeilingPlan:
    """The plan again with the ceiling's service times: an upper bound on what the realistic plan says."""

    __pydantic_config__ = PYDANTIC_CONFIG

    instance_cores: int
    instances_per_socket: int
    rps_per_server: float
    servers_needed: int | None
    tokens_per_s_per_server: float | None = None


@dataclass(frozen=True)
class Memory:
    """Decoders: the DRAM the KV cache gets."""

    __pydantic_config__ = PYDANTIC_CONFIG

    dram_bytes_per_socket: float
    source: str
    """--memory-gb, or the platform file's dram.capacity_gb and its source"""
    weight_bytes: float
    """one copy of the model per socket (roofline footprint), shared by the socket's instances"""
    kv_bytes_per_token: float
    tokens_per_sequence: float
    """the mean prompt plus the output length: a sequence's KV cache when it finishes"""


@dataclass(frozen=True)
class UsersPoint:
    """A decoder server with a fixed number of users, each with one request in flight (``--concurrency``), on its
    best layout for that many: the latencies each user sees and what the server produces."""

    __pydantic_config__ = PYDANTIC_CONFIG

    users: int
    """clients per server"""
    instance_cores: int
    instances_per_socket: int
    running: int
    """sequences the busiest instance decodes together (its users, at most its slots)"""
    ttft_s: float
    """time to first token: a wait for a slot (more users than slots) and the prefill of its group's prompts"""
    tpot_s: float
    """time per output token after the first"""
    user_tokens_per_s: float
    """one user's generation speed, ``1 / TPOT``"""
    tokens_per_s_per_server: float
    """output tokens per second of the server, every user together"""
    meets: bool | None = None
    """the latencies meet --ttft-ms and --tpot-ms (null: none given)"""
    ttft_s_band: list[float] | None = None
    """TTFT at the two ends of the realistic step times' error band: every step ``1 + band`` times longer, then
    ``1 + band`` times shorter (null: no band)"""
    tpot_s_band: list[float] | None = None


@dataclass(frozen=True)
class CpuPlan:
    __pydantic_config__ = PYDANTIC_CONFIG

    cpu: str
    description: str
    sockets: int
    cores_per_socket: int
    weights_llc_resident: bool
    layouts: list[PlanLayout]
    best: PlanLayout
    best_reason: str
    meets: bool
    """some layout serves the scenario (server: meets the SLO at some rate)"""
    servers_needed: int | None
    """ceil(target_rps / (best.rps_per_server x utilization)); null without a target, or when no layout meets"""
    price_per_hour: float | None
    cost_per_million_requests: float | None
    """price_per_hour / (best.rps_per_server x utilization x 3600) x 1e6, plus the energy's cost at --price-per-kwh
    (``energy``) when given"""
    ceiling: CeilingPlan | None
    """the same plan at the ceiling's service times (its own best layout)"""
    curve: list[CurvePoint]
    """the best layout's latency against offered load (server-scenario simulations)"""
    cost_per_million_tokens: float | None = None
    """decoders: per million output tokens"""
    memory: Memory | None = None
    notes: list[str] = field(default_factory=list)
    servers_needed_band: list[int | None] | None = None
    """servers_needed at the two ends of the best layout's rps_per_server_band: fewest, most (null: no band or no
    target; an end null: no rate meets the SLO there)"""
    path_class: str | None = None
    """the compute path class whose band ``service_band`` is (a decoder: its decode steps', or its prefill's where
    that band is wider); null without a stack profile"""
    service_band: float | None = None
    """server scenario: this CPU's error band, the one rps_per_server_band is at: the profile's
    (``PlanResult.service_band``), or its figures on ``path_class``'s median error where that is wider"""
    users: list[UsersPoint] = field(default_factory=list)
    """concurrency scenario: each user count asked, on its best layout"""
    max_users: UsersPoint | None = None
    """concurrency scenario with --ttft-ms or --tpot-ms: the most users one server holds within them (null: not
    even one)"""
    deploy: Deployment | None = None
    """``--commands``: the processes that deploy the best layout on one server and the benchmarks that check it
    (null: not asked, or no layout serves)"""
    energy: PlanEnergy | None = None
    """the best layout's power per server, joules per request (and token) and their cost at --price-per-kwh (null:
    not computed)"""
    tensor_parallel: int = 1
    """decoders: ranks the server's one instance is split over (each layout's instance_cores is then each socket's
    share of it, instances_per_socket 1); 1: instances within a socket"""

    def layout_label(self, instances_per_socket: int, instance_cores: int) -> str:
        """``N x C x S``: instances x cores per socket x sockets, and the split's ranks (``tp T``) where it has them"""
        split = f" tp {self.tensor_parallel}" if self.tensor_parallel > 1 else ""
        return f"{instances_per_socket} x {instance_cores} x {self.sockets}{split}"


@dataclass(frozen=True)
class Lengths:
    __pydantic_config__ = PYDANTIC_CONFIG

    kind: Literal["fixed", "lognormal", "histogram"]
    description: str
    mean: float
    min: int
    max: int


@dataclass(frozen=True)
class Simulation:
    """How the server scenario was simulated, and how sure its answers are."""

    __pydantic_config__ = PYDANTIC_CONFIG

    method: str
    seed: int
    replications: int
    requests_per_replication: int
    """measured requests per replication, at least (more for servers with many instances: enough for several
    full-batch service times)"""
    warmup_requests: int
    """requests simulated and discarded first, at least (the system starts empty)"""
    confidence: str
    """what the *_ci_s intervals are"""


@dataclass(frozen=True)
class PlanResult(JsonResult):
    """Output of ``roofline plan --json``."""

    __pydantic_config__ = PYDANTIC_CONFIG

    model: str
    precision: str
    phase: Literal["forward", "prefill", "decode"]
    """forward (encoders), prefill (prompts only, dynamic batching), decode (decoders: continuous batching)"""
    scenario: Scenario
    stack: str | None
    """the software-stack profile of the realistic service time (null: a calibration instead, or none: the
    ceiling plus the priced terms)"""
    lengths: Lengths
    """request lengths (decoders: prompt lengths)"""
    seq_len: int
    """the fixed length, or the mean rounded (the schema-1 key)"""
    output_len: int | None
    """decoders: output tokens per request"""
    max_batch_tokens: int
    """encoders: tokens per batch at most; decoders: prompt tokens per prefill step at most (one prompt always fits)"""
    max_wait_s: float | None
    """encoders: the longest the oldest waiting request waits for a batch to fill"""
    target_rps: float | None
    latency_target_s: float | None
    """the p99 SLO of the server scenario (encoders)"""
    ttft_target_s: float | None
    tpot_target_s: float | None
    utilization: float
    """planned utilization of the scenario's rate per server (1: the rate itself; lower: extra headroom)"""
    simulation: Simulation
    cpus: list[CpuPlan]
    notes: list[str] = field(default_factory=list)
    calibration: str | None = None
    """the calibration (a measured host's efficiencies) of the realistic service time, instead of a stack profile"""
    service_band: float | None = None
    """server scenario: the stack profile's error band on unseen CPUs (its leave-one-platform-out median |error|,
    or the cross-stack one); each CPU's best layout's rate is also given at the two ends of that CPU's band
    (``CpuPlan.service_band``: this one, or its precision's compute path class's where wider); null offline, with
    a calibration or without a measured band"""
    batch_watermark_tokens: int | None = None
    """encoders: a batch closes once its tokens reach this many (null: at ``max_batch_tokens``)"""
    batching_from: str | None = None
    """the stack profile whose serving harness's batching the plan took (null: the arguments', or the default)"""
    commands: bool = False
    """``--commands``: each CPU's ``deploy`` holds the commands of its best layout"""
    schema_version: int = SCHEMA_VERSION
