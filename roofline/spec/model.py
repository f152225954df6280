"""Model spec: transformer architecture hyper-parameters, Hugging Face config style.

Catalog entries live in ``models/<name>.toml``; a Hugging Face ``config.json`` is
read by :mod:`roofline.spec.hf_config` into the same type.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Literal

from roofline.spec import PYDANTIC_CONFIG
from roofline.spec.limits import LIMITS, check, check_schema_version
from roofline.spec.vocab import NonGemmMode

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import ArrayLike

#: the newest model file layout this version reads
SCHEMA_VERSION = 1

#: How the non-GEMM work runs: plain FP32; BF16 autocast (AMP), which the reference paper uses
#: for every INT8 and BF16 run; or INT8 end to end (INT8 attention, residual + norm fused with the
#: requantize), as vendor-tuned stacks run quantized encoders.


def _short_list(values: Iterable[object]) -> str:
    items = list(values)
    return str(items) if len(items) <= 8 else f"[{', '.join(map(str, items[:8]))}, ... ({len(items)} in all)]"


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
class StoredTensor:
    """One tensor as a .gguf file stores it (its metadata only; the data is never read)."""

    __pydantic_config__ = PYDANTIC_CONFIG

    name: str
    """llama.cpp tensor name, e.g. blk.0.attn_q.weight"""
    type: str
    """GGML type name, e.g. q4_K, f32"""
    shape: tuple[int, ...]
    """GGUF dimension order: the row length (K) first"""
    elements: int
    nbytes: int
    """bytes of the tensor's data in the file (from the type's block size and bytes)"""


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
    norm: Literal["layer", "rms"] | None = None
    """LayerNorm (weight and bias) or RMSNorm (weight); default: LayerNorm for encoders, RMSNorm for decoders
    (StarCoder2 is a decoder with LayerNorm)"""
    norms_per_layer: int = 2
    """norms in each block: 2 (before attention and before the MLP); Gemma 2 has 4 (also after each)"""
    sliding_window: int | None = None
    """sliding-window attention: a windowed layer attends to at most this many past tokens, so its KV cache
    holds and a decode step reads at most this many (Mistral-7B-v0.1 and StarCoder2: 4096); None: none"""
    chunked_attention: bool = False
    """the window is Llama 4's chunked local attention (``attention_chunk_size``): a token attends to the tokens of
    its own chunk only; priced as a sliding window of the chunk size (full attention below it), which bounds it: a
    chunk's last token sees the whole chunk, its first one itself"""
    sliding_window_layers: tuple[int, ...] | None = None
    """the layers with the window; None: every layer (Mistral); Gemma 2: the even layers, the odd ones attend
    over the whole context"""
    num_experts: int | None = None
    """mixture of experts: routed experts per MoE layer (config.json ``num_local_experts``,
    ``num_experts`` or ``n_routed_experts``); None: a dense model"""
    num_experts_per_tok: int | None = None
    """mixture of experts: experts each token is routed to (top-k)"""
    moe_intermediate_size: int | None = None
    """mixture of experts: intermediate size of one routed expert; default: intermediate_size (Mixtral)"""
    shared_expert_intermediate_size: int = 0
    """mixture of experts: intermediate size of the always-active shared expert(s), all together
    (Qwen2-MoE ``shared_expert_intermediate_size``; DeepSeek ``n_shared_experts x moe_intermediate_size``);
    0: none"""
    expert_bias: bool = False
    """mixture of experts: every expert's projections and the router carry a bias (gpt-oss)"""
    attention_sinks: bool = False
    """one learned logit per head and layer joins each softmax (gpt-oss): its work, one score more per query and
    head next to the ``context`` the query reads, is not counted; its parameters are (with the biases)"""
    shared_expert_gate: bool = False
    """mixture of experts: a sigmoid gate (hidden -> 1) scales the shared expert's output (Qwen2-MoE)"""
    dense_layers: tuple[int, ...] = ()
    """mixture of experts: indices of the layers that keep a dense MLP of intermediate_size instead of
    experts (config.json ``decoder_sparse_step``, ``mlp_only_layers``, ``first_k_dense_replace``)"""
    kv_lora_rank: int | None = None
    """multi-head latent attention (DeepSeek-V2/V3, Kimi-K2): width of the compressed KV latent ``c_kv``; None:
    standard attention. With it: ``qk_nope_head_dim``, ``qk_rope_head_dim``, ``v_head_dim`` (and ``q_lora_rank``)"""
    q_lora_rank: int | None = None
    """multi-head latent attention: width of the compressed query (``q_a_proj``, ``q_b_proj``); None: one ``q_proj``
    (DeepSeek-V2-Lite)"""
    qk_nope_head_dim: int | None = None
    """multi-head latent attention: the part of each head's query and key without rotary embedding"""
    qk_rope_head_dim: int | None = None
    """multi-head latent attention: the rotary part of each head's query, and of the key all heads share"""
    v_head_dim: int | None = None
    """multi-head latent attention: each head's value width"""
    nextn_predict_layers: int = 0
    """multi-token prediction layers (DeepSeek-V3 ``num_nextn_predict_layers``): counted in the footprint, left out
    of a step (they serve speculative decoding only)"""
    linear_attention_layers: tuple[int, ...] = ()
    """layers whose attention is linear with a fixed-size state instead of softmax attention over a KV cache (Qwen3-Next's
    Gated DeltaNet, :mod:`roofline.calc.linear_attention`); with them ``linear_num_key_heads``,
    ``linear_num_value_heads``, ``linear_key_head_dim``, ``linear_value_head_dim``, ``linear_conv_kernel_dim``"""
    linear_num_key_heads: int | None = None
    """linear attention: key (and query) heads"""
    linear_num_value_heads: int | None = None
    """linear attention: value heads, each with a ``d_k x d_v`` state"""
    linear_key_head_dim: int | None = None
    """linear attention: ``d_k``"""
    linear_value_head_dim: int | None = None
    """linear attention: ``d_v``"""
    linear_conv_kernel_dim: int | None = None
    """linear attention: the causal convolution's kernel over q, k and v"""
    attention_output_gate: bool = False
    """softmax attention's output is gated by a sigmoid of a second query-sized projection (Qwen3-Next: ``q_proj``
    gives ``2 heads head_dim``)"""
    gguf_tensors: tuple[StoredTensor, ...] = ()
    """a model read from a .gguf file: every tensor with the type it is stored in (precision ``gguf``)"""
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
        self._check_window()
        if self.head_dim is None and self.hidden_size % self.num_attention_heads:
            raise ValueError(
                f"hidden_size: {self.hidden_size} is not a multiple of num_attention_heads "
                f"{self.num_attention_heads}; give head_dim"
            )
        if self.kv_heads > self.num_attention_heads or self.num_attention_heads % self.kv_heads:
            raise ValueError(
                f"num_key_value_heads: {self.kv_heads} must divide num_attention_heads {self.num_attention_heads}"
            )
        self._check_moe()
        self._check_mla()
        self._check_linear()

    def _check_linear(self) -> None:
        dims = ("linear_num_key_heads", "linear_num_value_heads", "linear_key_head_dim", "linear_value_head_dim",
                "linear_conv_kernel_dim")
        if self.attention_output_gate and self.is_mla:
            raise ValueError("attention_output_gate: with multi-head latent attention not modelled")
        if not self.linear_attention_layers:
            given = [f for f in dims if getattr(self, f) is not None]
            if given:
                raise ValueError(f"{given[0]}: only with linear-attention layers (give linear_attention_layers)")
            return
        missing = [f for f in dims if getattr(self, f) is None]
        if missing:
            raise ValueError(f"{missing[0]}: linear-attention layers need {', '.join(dims)}")
        n, layers = self.num_hidden_layers, self.linear_attention_layers
        if any(not 0 <= i < n for i in layers) or len(set(layers)) != len(layers):
            raise ValueError(f"linear_attention_layers: distinct layer indices in [0, {n}), got {_short_list(layers)}")
        assert self.linear_num_key_heads is not None and self.linear_num_value_heads is not None  # none missing
        if self.linear_num_value_heads % self.linear_num_key_heads:
            raise ValueError(f"linear_num_value_heads: {self.linear_num_value_heads} must be a multiple of "
                             f"linear_num_key_heads {self.linear_num_key_heads}")
        if self.is_mla or self.sliding_window is not None:
            raise ValueError("linear_attention_layers: with multi-head latent attention or a sliding window not modelled")
        if self.family != "decoder":
            raise ValueError("linear_attention_layers: modelled for decoders only")

    def _check_mla(self) -> None:
        dims = ("qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim")
        if self.kv_lora_rank is None:
            given = [f for f in ("q_lora_rank", *dims) if getattr(self, f) is not None]
            if given:
                raise ValueError(f"{given[0]}: only with multi-head latent attention (give kv_lora_rank)")
            return
        missing = [f for f in dims if getattr(self, f) is None]
        if missing:
            raise ValueError(f"{missing[0]}: multi-head latent attention needs kv_lora_rank, {', '.join(dims)}")
        for f in ("kv_lora_rank", "q_lora_rank", *dims):
            v = getattr(self, f)
            if v is not None and v < 1:
                raise ValueError(f"{f}: must be a positive whole number, got {v}")
        if self.sliding_window is not None:
            raise ValueError("sliding_window: with multi-head latent attention not modelled")
        if self.attention_bias:
            raise ValueError("attention_bias: biases on multi-head latent attention's projections are not modelled "
                             "(DeepSeek's have none: set attention_bias = false)")
        if self.family != "decoder":
            raise ValueError("kv_lora_rank: multi-head latent attention is modelled for decoders only")
        if self.nextn_predict_layers < 0:
            raise ValueError(f"nextn_predict_layers: must be 0 or more, got {self.nextn_predict_layers}")

    def _check_window(self) -> None:
        if self.sliding_window is None:
            if self.sliding_window_layers is not None:
                raise ValueError("sliding_window_layers: only with a sliding_window")
            return
        if self.family != "decoder":
            raise ValueError("sliding_window: modelled for decoders (causal attention) only")
        layers = self.sliding_window_layers
        if layers is not None:
            n = self.num_hidden_layers
            if any(not 0 <= i < n for i in layers) or len(set(layers)) != len(layers):
                raise ValueError(f"sliding_window_layers: distinct layer indices in [0, {n}), got "
                                 f"{_short_list(layers)}")

    def _check_moe(self) -> None:
        if (self.num_experts is None) != (self.num_experts_per_tok is None):
            raise ValueError("num_experts_per_tok: give num_experts and num_experts_per_tok together (or neither)")
        if self.num_experts is None:
            for f in ("moe_intermediate_size", "dense_layers"):
                if getattr(self, f):
                    raise ValueError(f"{f}: only for a mixture of experts (give num_experts)")
            if self.shared_expert_intermediate_size or self.shared_expert_gate:
                raise ValueError("shared_expert_intermediate_size: only for a mixture of experts (give num_experts)")
            if self.expert_bias:
                raise ValueError("expert_bias: only for a mixture of experts (give num_experts)")
            return
        if self.num_experts < 2:
            raise ValueError(f"num_experts: a mixture needs at least 2 experts, got {self.num_experts}")
        assert self.num_experts_per_tok is not None  # given with num_experts (above)
        if not 1 <= self.num_experts_per_tok <= self.num_experts:
            raise ValueError(f"num_experts_per_tok: between 1 and num_experts {self.num_experts}, "
                             f"got {self.num_experts_per_tok}")
        if self.moe_intermediate_size is not None and self.moe_intermediate_size < 1:
            raise ValueError(f"moe_intermediate_size: must be a positive whole number, got {self.moe_intermediate_size}")
        if self.shared_expert_intermediate_size < 0:
            raise ValueError(f"shared_expert_intermediate_size: must be 0 or more, got "
                             f"{self.shared_expert_intermediate_size}")
        if self.shared_expert_gate and not self.shared_expert_intermediate_size:
            raise ValueError("shared_expert_gate: needs a shared expert (shared_expert_intermediate_size)")
        layers = self.num_hidden_layers
        if any(not 0 <= i < layers for i in self.dense_layers) or len(set(self.dense_layers)) != len(self.dense_layers):
            raise ValueError(f"dense_layers: distinct layer indices in [0, {layers}), got {_short_list(self.dense_layers)}")
        if len(self.dense_layers) == layers:
            raise ValueError("dense_layers: every layer is dense; drop num_experts for a dense model")

    @property
    def windowed_layers(self) -> int:
        """Layers whose attention is windowed (0 without a sliding window)."""
        if self.sliding_window is None:
            return 0
        return self.num_hidden_layers if self.sliding_window_layers is None else len(self.sliding_window_layers)

    @property
    def layer_norm(self) -> bool:
        """LayerNorm (weight and bias), else RMSNorm (a weight)."""
        return (self.norm or ("layer" if self.family == "encoder" else "rms")) == "layer"

    def kv_tokens(self, context: ArrayLike) -> np.ndarray:
        """Cached tokens of one sequence summed over the layers at ``context`` tokens of context (an array
        broadcasts): ``context`` in a full-attention layer, ``min(context, window)`` in a windowed one."""
        import numpy as np

        c = np.asarray(context, dtype=float)
        windowed = self.windowed_layers
        out = (self.attention_layers - windowed) * c
        if windowed:
            assert self.sliding_window is not None  # windowed layers need a window
            out = out + windowed * np.minimum(c, float(self.sliding_window))
        return out

    @property
    def attention_layers(self) -> int:
        """Layers of softmax attention with a KV cache: all but the linear-attention ones."""
        return self.num_hidden_layers - len(self.linear_attention_layers)

    @property
    def linear_state_elements(self) -> int:
        """One sequence's recurrent state over all linear-attention layers (0 without them); it does not grow with
        the context (:func:`roofline.calc.linear_attention.state_elements`)."""
        if not self.linear_attention_layers:
            return 0
        from roofline.calc.linear_attention import state_elements

        k_heads, v_heads = self.linear_num_key_heads, self.linear_num_value_heads
        d_k, d_v, conv_kernel = self.linear_key_head_dim, self.linear_value_head_dim, self.linear_conv_kernel_dim
        # validated: linear-attention layers come with all five
        assert k_heads is not None and v_heads is not None and d_k is not None and d_v is not None
        assert conv_kernel is not None
        return len(self.linear_attention_layers) * state_elements(
            k_heads=k_heads, v_heads=v_heads, d_k=d_k, d_v=d_v, conv_kernel=conv_kernel)

    @property
    def is_mla(self) -> bool:
        """Multi-head latent attention (:mod:`roofline.calc.mla`)."""
        return self.kv_lora_rank is not None

    @property
    def kv_width(self) -> int:
        """Cached elements per token per layer: ``2 kv_heads head_dim`` (K and V), or with multi-head latent
        attention the latent and the shared rotary key, ``kv_lora_rank + qk_rope_head_dim``."""
        if self.is_mla:
            assert self.kv_lora_rank is not None and self.qk_rope_head_dim is not None  # validated with MLA
            return self.kv_lora_rank + self.qk_rope_head_dim
        return 2 * self.kv_heads * self.head_size

    @property
    def all_names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)

    @property
    def kv_heads(self) -> int:
        return self.num_key_value_heads or self.num_attention_heads

    @property
    def head_size(self) -> int:
        return self.head_dim or self.hidden_size // self.num_attention_heads

    @property
    def is_moe(self) -> bool:
        return self.num_experts is not None

    @property
    def moe_layers(self) -> int:
        """Layers whose MLP is the mixture of experts (0 for a dense model)."""
        return self.num_hidden_layers - len(self.dense_layers) if self.is_moe else 0

    @property
    def dense_mlp_layers(self) -> int:
        """Layers with a dense MLP of intermediate_size (all of them for a dense model)."""
        return self.num_hidden_layers - self.moe_layers

    @property
    def expert_intermediate(self) -> int:
        """Intermediate size of one routed expert."""
        return self.moe_intermediate_size or self.intermediate_size

    @property
    def mlp_intermediate_per_token(self) -> float:
        """MLP width one token goes through, averaged over the layers: ``intermediate_size`` in a dense
        layer, ``k x expert + shared`` in an MoE layer (what the token's activation function runs on)."""
        if not self.is_moe:
            return float(self.intermediate_size)
        assert self.num_experts_per_tok is not None  # given with num_experts
        moe = self.num_experts_per_tok * self.expert_intermediate + self.shared_expert_intermediate_size
        return (self.dense_mlp_layers * self.intermediate_size + self.moe_layers * moe) / self.num_hidden_layers
