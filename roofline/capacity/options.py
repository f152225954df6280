"""What a capacity plan is asked: the scenario, the request lengths, the batching policy, the SLOs,
the load and the prices; checked together, each bad combination refused in one line."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from roofline.errors import UserError
from roofline.model.build import CeilingSpec
from roofline.model.efficiency import NO_EFFICIENCIES, EfficiencySource
from roofline.serving.request_lengths import RequestLengths
from roofline.serving.sampling import Sampling
from roofline.spec.model import ModelSpec
from roofline.spec.vocab import Phase, Scenario

#: a batch holds at most this many requests (the service tables and the offline search are per batch size)
MAX_BATCH_REQUESTS = 4096
#: tokens per batch at most when neither the caller nor the stack profile's harness says
DEFAULT_MAX_BATCH_TOKENS = 2048
#: the default cap on a decoder's running batch per instance (vLLM's max_num_seqs)
DEFAULT_MAX_SEQUENCES = 256
DEFAULT_OUTPUT_LEN = 128
#: the user counts a concurrency plan answers for when none is given
DEFAULT_USERS = (1, 2, 4, 8, 16, 32, 64)
#: the serving simulations' size per (scenario, load): the core's defaults for whole requests (8
#: replications of at least 2,000 measured requests and 10 full-batch times), at most 20,000 (a
#: catalog server's 256 instances on batches of 8 need that many); decoders, whose instances hold
#: hundreds of sequences and take a loop pass per arrival and per departure, measure at least 1,000
#: requests and 4 full cycles (a 3-CPU plan in seconds; the p99 intervals say how sure)
ENCODER_SAMPLING = {"max_requests": 20_000}
DECODER_SAMPLING = {"requests": 1000, "cycles": 4.0, "warmup_cycles": 2.0}


@dataclass(frozen=True)
class PlanOptions:
    lengths: RequestLengths
    """request lengths; decoders: prompt lengths"""
    scenario: Scenario | None = None
    """offline or server; None: server when an SLO is given, else offline"""
    phase: Phase | None = None
    """forward (encoders), prefill (a decoder's prompts alone), decode (decoders, the default)"""
    max_batch_tokens: int | None = None
    """tokens per batch at most (None: the stack profile's harness batching where it has one, else
    :data:`DEFAULT_MAX_BATCH_TOKENS`; see :func:`batching`)"""
    batch_watermark_tokens: int | None = None
    """encoders: a batch closes once its tokens reach this many, never past ``max_batch_tokens`` (None: at the
    cap); Intel's MLPerf BERT harness closes batches at 1,300 tokens, at most 1,560"""
    batching_from: str | None = None
    """set by :func:`resolve`: the stack profile whose serving harness's batching the plan took (None: the
    caller's, or the default)"""
    max_wait_s: float = 0.0
    p99_s: float | None = None
    ttft_s: float | None = None
    tpot_s: float | None = None
    target_rps: float | None = None
    utilization: float = 1.0
    prices: list[float] | None = None
    output_len: int | None = None
    memory_gb: float | None = None
    """DRAM per server for the KV cache's sake (default: the platform file's dram.capacity_gb)"""
    max_sequences: int | None = None
    kv_dtype: str | None = None
    source: EfficiencySource = NO_EFFICIENCIES
    """the efficiencies of the realistic service times: a stack profile, or a measured host's calibration"""
    cores: int | None = None
    instance_cores: int | None = None
    """plan this one layout (default: cores per instance 1, 2, 4, ... up to the socket, and the best of them)"""
    ceiling: CeilingSpec = CeilingSpec()
    seed: int = 0
    sampling: Sampling | None = None
    """the simulation's size (None: :data:`ENCODER_SAMPLING` or :data:`DECODER_SAMPLING` with ``seed``)"""
    users: tuple[int, ...] | None = None
    """the concurrency scenario: users per server, each with one request in flight (None: :data:`DEFAULT_USERS`)"""
    tensor_parallel: int = 1
    """decoders: one instance per server, the model split over this many ranks (1: instances within a socket)"""


def batching(o: PlanOptions, phase: Phase) -> tuple[int, int | None, bool]:
    """``(max_batch_tokens, batch_watermark_tokens, from_stack)``: the caller's, or where it gives neither and the
    stack profile states its serving harness's batching (batches of whole requests only), the profile's, else
    :data:`DEFAULT_MAX_BATCH_TOKENS` and no watermark."""
    stack = o.source.stack
    if (o.max_batch_tokens is None and o.batch_watermark_tokens is None and phase is not Phase.DECODE
            and stack is not None and stack.max_batch_tokens is not None):
        wm = stack.batch_watermark_tokens
        return int(stack.max_batch_tokens.value), int(wm.value) if wm is not None else None, True
    cap = DEFAULT_MAX_BATCH_TOKENS if o.max_batch_tokens is None else o.max_batch_tokens
    return cap, o.batch_watermark_tokens, False


def resolve(model: ModelSpec, o: PlanOptions, n_cpus: int) -> PlanOptions:
    """The options with the defaults filled in (phase, scenario, batching, output length, sequences), every
    combination checked."""
    phase = Phase(o.phase) if o.phase else (Phase.FORWARD if model.family == "encoder" else Phase.DECODE)
    cap, wm, from_stack = batching(o, phase)
    o = replace(o, max_batch_tokens=cap, batch_watermark_tokens=wm,
                batching_from=o.source.stack.name if from_stack else None)
    _check_numbers(o, n_cpus)
    if model.family == "encoder" and phase is not Phase.FORWARD:
        raise UserError(f"--phase {phase}: {model.name} is an encoder; its only phase is forward")
    if model.family == "decoder" and phase is Phase.FORWARD:
        raise UserError(f"--phase forward: {model.name} is a decoder; plan its serving (decode, the default) or "
                        "its prompts alone (prefill)")
    decode = phase is Phase.DECODE
    if o.tensor_parallel > 1:
        if model.family != "decoder":
            raise UserError(f"--tensor-parallel {o.tensor_parallel}: a split over ranks is planned for decoders; "
                            f"{model.name} is an encoder (plan instances of a socket's cores)")
        if o.instance_cores is not None:
            raise UserError(f"--tensor-parallel {o.tensor_parallel}: the split is one instance of every core; drop "
                            "--instance-cores")
    decoder_only = {"--output-len": o.output_len, "--ttft-ms": o.ttft_s, "--tpot-ms": o.tpot_s,
                    "--memory-gb": o.memory_gb, "--max-sequences": o.max_sequences, "--kv-dtype": o.kv_dtype,
                    "--concurrency": o.users}
    if decode and o.batch_watermark_tokens is not None:
        raise UserError("--batch-watermark-tokens applies to batches of whole requests (encoders, --phase prefill); "
                        "a decoder's prefill steps take the waiting prompts up to --max-batch-tokens")
    if not decode:
        given = [k for k, v in decoder_only.items() if v is not None]
        if given:
            raise UserError(f"{given[0]} applies to decoder serving (continuous batching, --phase decode); "
                            f"this plan batches whole requests ({phase})")
    elif o.p99_s is not None:
        raise UserError("--p99-ms: a decoder's SLOs are --ttft-ms (time to first token) and --tpot-ms (time per "
                        "output token)")
    slo = (o.ttft_s is not None or o.tpot_s is not None) if decode else o.p99_s is not None
    flags = "--ttft-ms and/or --tpot-ms" if decode else "--p99-ms"
    if o.scenario is not None and o.scenario not in Scenario.words():
        raise UserError(f"--scenario {o.scenario}: one of {', '.join(Scenario.words())}")
    scenario = Scenario(o.scenario) if o.scenario else (
        Scenario.CONCURRENCY if o.users else Scenario.SERVER if slo else Scenario.OFFLINE)
    if scenario is Scenario.RATE:
        raise UserError("--scenario rate: a serving record's form; plan a Poisson load with --scenario server")
    if o.users and scenario is not Scenario.CONCURRENCY:
        raise UserError(f"--concurrency: users per server with one request each in flight; it is the concurrency "
                        f"scenario, not {scenario}")
    if scenario is Scenario.CONCURRENCY and not decode:
        raise UserError("--scenario concurrency: users each with a request in flight, served with continuous batching "
                        "(a decoder, --phase decode)")
    if scenario is Scenario.SERVER and not slo:
        raise UserError(f"--scenario server: give the latency SLO it must meet ({flags})")
    if scenario is Scenario.OFFLINE and slo:
        raise UserError(f"--scenario offline has no latency bound: drop {flags}, or plan --scenario server")
    positions = model.max_position_embeddings
    lengths = o.lengths
    out = None
    if decode:
        out = DEFAULT_OUTPUT_LEN if o.output_len is None else o.output_len
        if lengths.max + out > positions:
            raise UserError(f"prompts of up to {lengths.max:,} tokens and --output-len {out:,}: {model.name} has "
                            f"{positions:,} positions (max_position_embeddings); a sequence must fit them")
    elif lengths.max > positions:
        raise UserError(f"requests of up to {lengths.max:,} tokens: {model.name} has {positions:,} positions "
                        "(max_position_embeddings); use at most that")
    else:
        most = max(1, o.max_batch_tokens // lengths.min)
        if most > MAX_BATCH_REQUESTS:
            raise UserError(f"--max-batch-tokens {o.max_batch_tokens:,} lets {most:,} requests of {lengths.min:,} "
                            f"tokens into one batch; a batch holds at most {MAX_BATCH_REQUESTS:,} requests (lower "
                            "--max-batch-tokens)")
    sampling = o.sampling or Sampling(seed=o.seed, **(DECODER_SAMPLING if decode else ENCODER_SAMPLING))
    users = (tuple(o.users) if o.users else DEFAULT_USERS) if scenario is Scenario.CONCURRENCY else None
    return replace(o, phase=phase, scenario=scenario, output_len=out, sampling=sampling, users=users,
                   max_sequences=(o.max_sequences or DEFAULT_MAX_SEQUENCES) if decode else None)


def _check_numbers(o: PlanOptions, n_cpus: int) -> None:
    """The numbers the CLI's ranges already bound, checked again for callers of the library."""
    def positive(flag: str, v: float | None, scale: float = 1.0) -> None:
        if v is not None and not (math.isfinite(v) and v > 0):
            raise UserError(f"{flag} {v * scale:g}: must be a positive finite number")

    if not 0 < o.utilization <= 1:
        raise UserError(f"--utilization {o.utilization}: a fraction in (0, 1]")
    positive("--target-rps", o.target_rps)
    positive("--p99-ms", o.p99_s, 1e3)
    positive("--ttft-ms", o.ttft_s, 1e3)
    positive("--tpot-ms", o.tpot_s, 1e3)
    positive("--memory-gb", o.memory_gb)
    if not (isinstance(o.max_batch_tokens, int) and o.max_batch_tokens >= 1):
        raise UserError(f"--max-batch-tokens {o.max_batch_tokens}: a whole number of tokens, 1 or more")
    w = o.batch_watermark_tokens
    if w is not None and not (isinstance(w, int) and 1 <= w <= o.max_batch_tokens):
        raise UserError(f"--batch-watermark-tokens {w}: a whole number of tokens from 1 to --max-batch-tokens "
                        f"({o.max_batch_tokens:,}); a batch closes at the watermark or at the cap")
    if not (math.isfinite(o.max_wait_s) and o.max_wait_s >= 0):
        raise UserError(f"--max-wait-ms {o.max_wait_s * 1e3:g}: must be 0 or more, and finite")
    for flag, v in (("--output-len", o.output_len), ("--max-sequences", o.max_sequences)):
        if v is not None and not (isinstance(v, int) and v >= 1):
            raise UserError(f"{flag} {v}: a whole number, 1 or more")
    if o.prices is not None:
        if len(o.prices) != n_cpus:
            raise UserError(f"--price-per-hour: {len(o.prices)} price(s) for {n_cpus} CPU(s); give one per CPU")
        if any(not (math.isfinite(p) and p >= 0) for p in o.prices):
            raise UserError("--price-per-hour: prices must be 0 or more, and finite")
