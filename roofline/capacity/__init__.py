"""``roofline plan``: how many requests per second a server takes in a scenario, per instance
layout and CPU, and the fleet a load needs.

The deployment is the paper's: on each socket N instances of C cores (C = 1, 2, 4, ... up to the
socket), pinned to disjoint cores, sharing one copy of the weights per socket. One instance's
service time comes from the realistic model (the stack profile; the ceiling beside it) for every
batch it may run (:mod:`roofline.capacity.service_times`); the serving simulations then answer the
scenario (MLPerf's two):

- ``offline``: the most throughput per server, batching free up to ``max_batch_tokens``;
- ``server``: Poisson arrivals; the highest rate per server whose p99 latency (queueing plus service)
  meets the SLO.

Encoders (and a decoder's prompts alone) batch whole requests dynamically
(:mod:`roofline.capacity.encoder`); decoders serve with continuous batching, TTFT and
TPOT as SLOs and the KV cache capping the running batch (:mod:`roofline.capacity.decoder`).
The best layout and the fleet: :mod:`roofline.capacity.fleet`.
"""

from __future__ import annotations

import dataclasses

from roofline.capacity.decoder import dram_per_socket, plan_continuous_batching
from roofline.capacity.encoder import plan_dynamic_batching
from roofline.capacity.fleet import cost_per_million
from roofline.capacity.options import PlanOptions, resolve
from roofline.capacity.service_times import layouts
from roofline.results.plan import CpuPlan, Lengths, Memory, PlanResult, Simulation, batch_limits
from roofline.spec.model import ModelSpec
from roofline.spec.platform import Platform, platform_fingerprint
from roofline.spec.vocab import Phase, Scenario

__all__ = ["PlanOptions", "layouts", "plan"]

CONFIDENCE = ("95% interval from the spread of the independent replications' p99 (Student's t), around the "
              "pooled p99; sampling error only, not the bias a finite warm-up leaves near saturation")


def _weights_fit(p: Platform, c: CpuPlan, model: ModelSpec, precision: str, o) -> CpuPlan:
    """``c``, or ``c`` marked as serving nothing when one copy of the weights is more than a socket's DRAM
    (``--memory-gb``, else the platform file's ``dram.capacity_gb``; neither: not checked)."""
    from roofline.errors import UserError
    from roofline.model.footprint import footprint

    try:
        dram, source = dram_per_socket(p, o.memory_gb)
    except UserError:
        return c
    weights = footprint(model, precision).total_bytes
    if weights <= dram:
        return c
    why = (f"the weights, {weights / 1e9:,.4g} GB, do not fit the {dram / 1e9:,.4g} GB of DRAM per socket ({source}): "
           "no layout runs")
    return dataclasses.replace(c, meets=False, best_reason=why, servers_needed=None, servers_needed_band=None,
                               cost_per_million_requests=None,
                               cost_per_million_tokens=None, notes=[*c.notes, why],
                               memory=Memory(dram_bytes_per_socket=dram, source=source, weight_bytes=weights,
                                             kv_bytes_per_token=0.0, tokens_per_sequence=0.0))


def _distinct(platforms: list[Platform]) -> tuple[list[Platform], list[int]]:
    """The distinct platforms (by name and every number: ``--cpu gnr,gnr`` is one), and where each given one is."""
    keys: dict[tuple[str, str], int] = {}
    distinct, where = [], []
    for p in platforms:
        k = (p.name, platform_fingerprint(p))
        if k not in keys:
            keys[k] = len(distinct)
            distinct.append(p)
        where.append(keys[k])
    return distinct, where


def _priced(c: CpuPlan, price: float | None, o: PlanOptions) -> CpuPlan:
    """A distinct CPU's plan at the price given for this occurrence of it."""
    if price == c.price_per_hour:
        return c
    b = c.best
    return dataclasses.replace(
        c, price_per_hour=price,
        cost_per_million_requests=cost_per_million(price, b.rps_per_server, o.utilization) if c.meets else None,
        cost_per_million_tokens=(cost_per_million(price, b.tokens_per_s_per_server or 0.0, o.utilization)
                                 if c.meets and c.cost_per_million_tokens is not None else None))


#: CPUs simulated together (each CPU's answer is its own whatever the others; their arrays share one pass)
PLAN_CHUNK = 4


def plan(platforms: list[Platform], model: ModelSpec, precision: str, options: PlanOptions) -> PlanResult:
    from roofline.model.recipes import precision_recipe

    o = resolve(model, options, len(platforms))
    o = dataclasses.replace(o, source=o.source.for_recipe(precision_recipe(precision, model)))
    distinct, where = _distinct(platforms)  # each distinct CPU simulated once, listed as often as given
    first = [where.index(j) for j in range(len(distinct))]
    o_distinct = dataclasses.replace(o, prices=[o.prices[i] for i in first]) if o.prices else o
    # a calibration is one host's: another CPU is refused (unless --calibration-any-platform, then said)
    fitted = list(dict.fromkeys(n for p in distinct for n in o.source.notes(p)))
    decode = o.phase is Phase.DECODE
    plan_some = plan_continuous_batching if decode else plan_dynamic_batching
    cpus = []  # a few CPUs at a time: the simulations' memory is bounded whatever the number of CPUs
    for lo in range(0, len(distinct), PLAN_CHUNK):
        part = dataclasses.replace(o_distinct, prices=o_distinct.prices[lo:lo + PLAN_CHUNK]) \
            if o_distinct.prices else o_distinct
        cpus += plan_some(distinct[lo:lo + PLAN_CHUNK], model, precision, part)
    if not decode:  # a decoder's plan caps its KV cache by the DRAM already; here the weights alone must fit
        cpus = [_weights_fit(p, c, model, precision, o) for p, c in zip(distinct, cpus)]
    cpus = [_priced(cpus[j], o.prices[i] if o.prices else None, o) for i, j in enumerate(where)]
    s = o.sampling
    method = ("continuous batching of each instance's running sequences (random dispatch to the instances), "
              if decode else "one FCFS queue feeding the server's instances, dynamic batching, ")
    lengths = o.lengths
    notes = [
        f"realistic service times from the calibration {o.source.calibration_name} (fitted on "
        f"{o.source.calibration.platform}); the ceiling's beside them" if o.source.calibration is not None else
        f"realistic service times from the {o.source.stack.name} stack profile; the ceiling's beside them"
        if o.source.stack is not None else
        "no stack profile (--stack none): the realistic service time is the ceiling plus the priced overhead terms",
        *fitted,
    ]
    if o.batching_from is not None:
        notes.append(f"batching of the {o.batching_from} profile's serving harness (as its Server records state "
                     f"it): batches of {batch_limits(o.max_batch_tokens, o.batch_watermark_tokens)}; "
                     "--max-batch-tokens and --batch-watermark-tokens plan another")
    if o.scenario is Scenario.SERVER:
        notes.append("rates are the highest simulated Poisson rates meeting the SLO at every load up to them (a "
                     "search within 1% of the capacity); p99 intervals are the simulation's 95% intervals")
    return PlanResult(
        model=model.name, precision=precision, phase=o.phase.value, scenario=o.scenario.value,
        stack=o.source.stack_name,
        calibration=o.source.calibration_name if o.source.calibration is not None else None,
        lengths=Lengths(kind=lengths.kind, description=lengths.description, mean=lengths.mean, min=lengths.min,
                        max=lengths.max),
        seq_len=lengths.min if lengths.is_fixed else max(1, round(lengths.mean)), output_len=o.output_len,
        max_batch_tokens=o.max_batch_tokens, batch_watermark_tokens=o.batch_watermark_tokens,
        max_wait_s=None if decode else o.max_wait_s,
        target_rps=o.target_rps, latency_target_s=o.p99_s, ttft_target_s=o.ttft_s, tpot_target_s=o.tpot_s,
        utilization=o.utilization,
        simulation=Simulation(method=method + "vectorised discrete-event simulation (numpy)", seed=s.seed,
                              replications=s.replications, requests_per_replication=s.requests,
                              warmup_requests=s.warmup, confidence=CONFIDENCE),
        cpus=cpus, notes=notes,
        service_band=o.source.band if o.scenario is Scenario.SERVER else None,
        batching_from=o.batching_from,
    )
