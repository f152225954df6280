"""The physically possible range of every number a spec file gives, in one table.

A value outside its range is refused at load, naming the file and the field, instead of flowing
into the arithmetic as ``inf`` or an overflow. The ranges are deliberately wide (a future CPU must
not be refused): they catch typos, unit mistakes (MHz for GHz, bytes for MiB) and hostile input,
not unusual hardware.

Keys are ``<spec>.<field path>``, with ``*`` for a name the file chooses (a compute path, an ISA
class, a precision). To range-check a new field, add a row here and call :func:`check` (or
:func:`check_sourced`) from the spec type's ``__post_init__`` with the same key.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from roofline.spec.sourced import Sourced


@dataclass(frozen=True)
class Limit:
    low: float
    high: float
    unit: str
    why: str
    low_open: bool = True
    """the low end itself is not allowed (a bandwidth of 0); False: it is (a count from 0)"""

    def describe(self) -> str:
        lo = f"above {_num(self.low)}" if self.low_open else _num(self.low)
        return f"{lo} to {_num(self.high)} {self.unit}".rstrip()


def _num(v: float) -> str:
    """1048576 -> '1,048,576'; 0.01 -> '0.01'; 1e300 -> '1e+300'."""
    return f"{int(v):,}" if float(v).is_integer() and abs(v) < 1e15 else f"{v:g}"


#: tokens in one batch of a serving harness (a Server record's, a stack profile's): the range `plan` accepts
_BATCH_TOKENS = Limit(1, 1 << 20, "tokens", "a million tokens in one batch is beyond any serving harness",
                      low_open=False)

#: a socket's bandwidth, theoretical or measured (one range for both figures of a memory)
_TIER_GB_PER_S = Limit(0.1, 100_000, "GB/s", "Xeon Max's HBM gives about 1 TB/s a socket; 100 TB/s is beyond any",
                       low_open=False)
_DRAM_GB_PER_S = Limit(0.1, 100_000, "GB/s", "one DDR channel gives 10; 100 TB/s per socket is beyond any memory",
                       low_open=False)

LIMITS: dict[str, Limit] = {
    # ------------------------------------------------------------------ platform files
    "platform.sockets": Limit(1, 64, "sockets", "the largest servers have 32 sockets", low_open=False),
    "platform.cores_per_socket": Limit(1, 4096, "cores", "the largest CPUs have a few hundred cores",
                                       low_open=False),
    "platform.core_to_core_ns": Limit(1, 10_000, "ns", "a cache line moves between two cores in 20-500 ns"),
    "platform.socket_link_gb_per_s": Limit(1, 100_000, "GB/s", "the links between two sockets carry 20-1,000 GB/s "
                                           "each way"),
    "platform.frequency_ghz.*": Limit(0.1, 10, "GHz", "not a CPU frequency: cores clock at 0.1-10 GHz",
                                      low_open=False),
    "platform.compute.*.ops_per_cycle": Limit(0.01, 65536, "ops/cycle/core",
                                              "AMX INT8 does 2048 and scalar code about 1", low_open=False),
    "platform.memory_tiers.capacity_gb": Limit(0.01, 1_000_000, "GB", "HBM on a socket holds 64 GB, CXL memory a few "
                                               "TB; a PB is beyond any socket", low_open=False),
    "platform.memory_tiers.theoretical_gb_per_s": _TIER_GB_PER_S,
    "platform.memory_tiers.measured_gb_per_s": _TIER_GB_PER_S,
    "platform.dram.theoretical_gb_per_s": _DRAM_GB_PER_S,
    "platform.dram.measured_gb_per_s": _DRAM_GB_PER_S,
    "platform.dram.capacity_gb": Limit(0.01, 1_000_000, "GB", "a socket holds at most a few TB of DRAM; a PB is "
                                       "beyond any server", low_open=False),
    "platform.dram.channels_per_socket": Limit(1, 64, "channels", "the widest sockets have 16 memory channels",
                                               low_open=False),
    "platform.dram.speed_mt_per_s": Limit(100, 100_000, "MT/s", "DDR5 MRDIMMs run at 8,800 MT/s; 100,000 is beyond "
                                          "any DIMM", low_open=False),
    "platform.llc.size_mib": Limit(0.01, 65536, "MiB", "64 GiB of last-level cache per socket is beyond any CPU",
                                   low_open=False),
    "platform.llc.domains_per_socket": Limit(1, 1024, "domains", "at most one LLC slice per core",
                                             low_open=False),
    "platform.llc.read_gb_per_s": Limit(0.1, 1_000_000, "GB/s", "1 PB/s per socket is beyond any cache",
                                        low_open=False),
    "platform.llc.read_gb_per_s_per_core": Limit(0.1, 10_000, "GB/s", "10 TB/s from one core is beyond any cache",
                                                 low_open=False),
    "platform.dram.read_gb_per_s_per_core": Limit(0.1, 10_000, "GB/s", "10 TB/s from one core is beyond any "
                                                  "memory", low_open=False),
    "platform.l2.size_kib": Limit(1, 1 << 20, "KiB", "1 GiB of L2 per core is beyond any CPU", low_open=False),
    "platform.l2.read_bytes_per_cycle": Limit(1, 4096, "bytes/cycle", "cores read 32 to 128 bytes per cycle from L2",
                                              low_open=False),
    "platform.l2.read_gb_per_s": Limit(0.1, 1_000_000, "GB/s", "1 PB/s per socket is beyond any cache",
                                       low_open=False),
    "platform.power.*": Limit(0.1, 10_000, "W", "server CPUs draw 100 to 500 W per socket; 10 kW is beyond any "
                              "socket", low_open=False),
    # ------------------------------------------------------------------ model files and config.json
    "model.hidden_size": Limit(1, 1 << 20, "", "a million-wide hidden state is no transformer", low_open=False),
    "model.intermediate_size": Limit(1, 1 << 22, "", "beyond any transformer's MLP", low_open=False),
    "model.num_hidden_layers": Limit(1, 10_000, "layers", "beyond any transformer", low_open=False),
    "model.num_attention_heads": Limit(1, 65536, "heads", "beyond any transformer", low_open=False),
    "model.num_key_value_heads": Limit(1, 65536, "heads", "beyond any transformer", low_open=False),
    "model.head_dim": Limit(1, 65536, "", "beyond any transformer", low_open=False),
    "model.vocab_size": Limit(1, 1 << 24, "tokens", "16.7M tokens is beyond any tokenizer", low_open=False),
    "model.max_position_embeddings": Limit(1, 1 << 27, "positions", "134M positions is beyond any model",
                                           low_open=False),
    "model.type_vocab_size": Limit(0, 1 << 24, "", "beyond any tokenizer", low_open=False),
    "model.num_experts": Limit(1, 65536, "experts", "the largest mixtures route over a few hundred experts",
                               low_open=False),
    "model.num_experts_per_tok": Limit(1, 65536, "experts", "a token goes to a few experts", low_open=False),
    "model.moe_intermediate_size": Limit(1, 1 << 22, "", "beyond any transformer's MLP", low_open=False),
    "model.shared_expert_intermediate_size": Limit(0, 1 << 22, "", "beyond any transformer's MLP",
                                                   low_open=False),
    "model.sliding_window": Limit(1, 1 << 27, "tokens", "the longest sequence a model may have", low_open=False),
    "model.kv_lora_rank": Limit(1, 1 << 20, "", "beyond any transformer", low_open=False),
    "model.q_lora_rank": Limit(1, 1 << 20, "", "beyond any transformer", low_open=False),
    "model.qk_nope_head_dim": Limit(1, 65536, "", "beyond any transformer", low_open=False),
    "model.qk_rope_head_dim": Limit(1, 65536, "", "beyond any transformer", low_open=False),
    "model.v_head_dim": Limit(1, 65536, "", "beyond any transformer", low_open=False),
    "model.nextn_predict_layers": Limit(0, 64, "layers", "a few prediction layers at most", low_open=False),
    "model.norms_per_layer": Limit(1, 8, "norms", "a transformer block has 2 to 4 norms", low_open=False),
    # config.json keys that shape the layers without being a ModelSpec field: checked before any loop uses them
    "config.decoder_sparse_step": Limit(1, 10_000, "layers", "at most one MoE layer in every layer",
                                        low_open=False),
    "config.first_k_dense_replace": Limit(0, 10_000, "layers", "beyond any transformer", low_open=False),
    "config.moe_layer_freq": Limit(1, 10_000, "layers", "beyond any transformer", low_open=False),
    "config.n_shared_experts": Limit(0, 65536, "experts", "a few shared experts at most", low_open=False),
    "config.sliding_window_pattern": Limit(1, 10_000, "layers", "beyond any transformer", low_open=False),
    "config.max_window_layers": Limit(0, 10_000, "layers", "beyond any transformer", low_open=False),
    "model.measured.*.batch": Limit(1, 1_000_000, "sequences", "the largest batch a flag accepts",
                                    low_open=False),
    "model.measured.*.seq_len": Limit(1, 1 << 27, "tokens", "the longest sequence a model may have",
                                      low_open=False),
    "model.measured.*.non_gemm_speedup.*": Limit(1e-3, 1e4, "x", "a speedup outside 0.001-10,000 is a typo",
                                                 low_open=False),
    # ------------------------------------------------------------------ calibrations
    "calibration.efficiency": Limit(1e-3, 1.5, "", "the roofline time over the measured: above 1.5 the ceiling's "
                                    "inputs are wrong, below 0.001 (a thousand times slower) the measurement is",
                                    low_open=False),
    "calibration.call_s": Limit(0, 10, "s", "a compiled call costs microseconds", low_open=False),
    "calibration.per_op_s": Limit(0, 10, "s", "an extern op costs microseconds", low_open=False),
    # ------------------------------------------------------------------ a serving harness's batching
    "record.max_batch_tokens": _BATCH_TOKENS,
    "record.batch_watermark_tokens": _BATCH_TOKENS,
    "record.max_sequences": Limit(1, 4096, "sequences", "the plan's --max-sequences takes 1 to 4,096 per instance",
                                  low_open=False),
    "stack.max_batch_tokens": _BATCH_TOKENS,
    "stack.batch_watermark_tokens": _BATCH_TOKENS,
    # ------------------------------------------------------------------ a stack profile's path rules
    "stack.path_rules.max_ops_per_cycle": Limit(0, 1e6, "ops/cycle/core", "AMX's 2,048 int8 ops per cycle per "
                                                "core is today's widest"),
    "stack.path_rules.chain_ops_per_cycle": Limit(0, 1e6, "ops/cycle/core", "a dependency chain retires fewer "
                                                  "ops per cycle than its path issues"),
    # ------------------------------------------------------------------ a stack profile's stated accuracy
    "stack.accuracy.abs_error": Limit(0, 100, "", "a relative error |predicted / measured - 1| above 100 (10,000%) "
                                      "is a typo, not a measured error", low_open=False),
}


def _key(key: str) -> Limit:
    try:
        return LIMITS[key]
    except KeyError:
        raise KeyError(f"no limit for '{key}' in roofline.spec.limits.LIMITS") from None


def check(key: str, value: float | None, field: str | None = None) -> None:
    """Raise ValueError ``"<field>: <value> is outside ..."`` when ``value`` is outside ``LIMITS[key]``.

    ``field`` is the name the message uses (the dotted path in the file, e.g. ``compute.int8-amx.ops_per_cycle``);
    by default the key without its spec prefix. ``None`` values (not given) pass."""
    if value is None:
        return
    limit = _key(key)
    field = field or key.split(".", 1)[1]
    try:
        v = float(value)
    except OverflowError:  # a whole number too large for a float
        v = math.inf if value > 0 else -math.inf
    low_ok = v > limit.low if limit.low_open else v >= limit.low
    if math.isfinite(v) and low_ok and v <= limit.high:
        return
    unit = f" {limit.unit}" if limit.unit else ""
    raise ValueError(f"{field}: {_num(v) if math.isfinite(v) else v}{unit} is outside the possible range, "
                     f"{limit.describe()} ({limit.why})")


def check_sourced(key: str, sourced: Sourced | None, field: str | None = None) -> None:
    """:func:`check` on a :class:`~roofline.spec.sourced.Sourced` value, when it is known."""
    if sourced is not None and sourced.known:
        check(key, sourced.known_value, field)


def check_schema_version(version: int, supported: int) -> None:
    """A file from a newer roofline than this one is refused, naming its version."""
    if version > supported:
        raise ValueError(f"schema_version: {version} is from a newer roofline (this one reads up to "
                         f"{supported}); upgrade roofline (pip install -U roofline)")
    if version < 1:
        raise ValueError(f"schema_version: {version} is not a version (the first is 1)")
