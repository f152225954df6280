"""Model spec: transformer architecture hyper-parameters, Hugging Face config style.

Catalog entries live in ``models/<name>.toml``; a Hugging Face ``config.json`` is
read by :mod:`roofline.spec.hf_config` into the same type.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Literal

from roofline.spec import PYDANTIC_CONFIG
from roofline.spec.limits import LIMITS, check, check_schema_version

#: the newest model file layout this version reads
SCHEMA_VERSION = 1

#: How the non-GEMM work runs: plain FP32, or BF16 autocast (AMP), which the
#: reference paper uses for every INT8 and BF16 run.
NonGemmMode = Literal["fp32", "amp-bf16"]


@dataclass(frozen=True)
class MeasuredBaseline:
    """Measured Amdahl inputs for one (platform, baseline precision, workload)."""

    __pydantic_config__ = PYDANTIC_CONFIG

    platform: str
    """platform name or alias it was measured on"""
    precision: str
    """the baseline precision whose time was broken down"""
    batch: int
    seq_len: int
    f_gemm: float
    """linear-block share of the baseline's time, in (0, 1)"""
    source: str
    non_gemm_speedup: dict[NonGemmMode, float] = field(default_factory=dict)
    """speedup of the non-GEMM work when it runs in this mode instead of the baseline's"""

    def __post_init__(self) -> None:
        if self.batch < 1 or self.seq_len < 1:
            raise ValueError(f"batch and seq_len: must be positive, got {self.batch} and {self.seq_len}")
        if not 0 < self.f_gemm < 1:
            raise ValueError(f"f_gemm: a share of time in (0, 1), got {self.f_gemm}")
        check("model.measured.*.batch", self.batch, "batch")
        check("model.measured.*.seq_len", self.seq_len, "seq_len")
        for mode, s in self.non_gemm_speedup.items():
            if not s > 0:
                raise ValueError(f"non_gemm_speedup.{mode}: must be positive, got {s}")
            check("model.measured.*.non_gemm_speedup.*", s, f"non_gemm_speedup.{mode}")


@dataclass(frozen=True)
class ModelSpec:
    """A transformer's architecture hyper-parameters."""

    __pydantic_config__ = PYDANTIC_CONFIG

    name: str
    """catalog name, used with --model"""
    source: str
    """where the hyper-parameters come from (the config.json URL)"""
    family: Literal["encoder", "decoder"]
    hidden_size: int
    intermediate_size: int
    num_hidden_layers: int
    num_attention_heads: int
    vocab_size: int
    max_position_embeddings: int
    num_key_value_heads: int | None = None
    """grouped-query attention; default: num_attention_heads"""
    head_dim: int | None = None
    """default: hidden_size / num_attention_heads"""
    type_vocab_size: int = 0
    hidden_act: str = "gelu"
    gated_mlp: bool = False
    """SwiGLU-style MLP: gate and up projections"""
    tie_word_embeddings: bool = True
    qk_norm: bool = False
    """per-head RMSNorm on q and k (Qwen3)"""
    attention_bias: bool = True
    """biases on the q/k/v projections (and o, see o_proj_bias)"""
    o_proj_bias: bool | None = None
    """bias on the attention output projection; default: attention_bias (Qwen2 has q/k/v biases only)"""
    mlp_bias: bool = True
    measured: tuple[MeasuredBaseline, ...] = ()
    """measured Amdahl inputs, used when platform, baseline and workload match"""
    schema_version: int = 1
    aliases: tuple[str, ...] = ()
    """other names --model accepts"""
    description: str = ""

    def __post_init__(self) -> None:
        check_schema_version(self.schema_version, SCHEMA_VERSION)
        for f in fields(self):
            v = getattr(self, f.name)
            positive = f.name.startswith(("hidden_size", "intermediate", "num_", "vocab", "max_pos", "head_dim"))
            if positive and v is not None and v < 1:
                raise ValueError(f"{f.name}: must be a positive whole number, got {v}")
            if f"model.{f.name}" in LIMITS:
                check(f"model.{f.name}", v)
        if self.type_vocab_size < 0:
            raise ValueError(f"type_vocab_size: must be 0 or more, got {self.type_vocab_size}")
        if self.head_dim is None and self.hidden_size % self.num_attention_heads:
            raise ValueError(
                f"hidden_size: {self.hidden_size} is not a multiple of num_attention_heads "
                f"{self.num_attention_heads}; give head_dim"
            )
        if self.kv_heads > self.num_attention_heads or self.num_attention_heads % self.kv_heads:
            raise ValueError(
                f"num_key_value_heads: {self.kv_heads} must divide num_attention_heads {self.num_attention_heads}"
            )

    @property
    def all_names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)

    @property
    def kv_heads(self) -> int:
        return self.num_key_value_heads or self.num_attention_heads

    @property
    def head_size(self) -> int:
        return self.head_dim or self.hidden_size // self.num_attention_heads
