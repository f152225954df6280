"""The workload: model x phase x batch x lengths -> the GEMMs and the non-GEMM work of one step.

Phases:

- ``forward`` (encoders): one pass over ``M = batch x seq_len`` tokens, bidirectional attention;
- ``prefill`` (decoders): the prompt, ``M = batch x seq_len``, causal attention, then the lm_head
  on each sequence's last token (``M = batch``);
- ``decode`` (decoders): one new token per sequence, ``M = batch``, attention reading the KV cache
  of ``context`` tokens, and the lm_head on the new token.

The pooler/classifier of encoders is left out (negligible, as in the reference paper); the
lm_head of decoders is in, unquantized by default (``quantize_lm_head``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from roofline.calc import ops as op
from roofline.calc.linear_attention import STATE_ELEMENT_BYTES, linear_attention, linear_attention_gemms
from roofline.calc.mla import DECOMPRESS_ROW, decompressed_keys, mla_attention, mla_gemms, replace_attention_rows
from roofline.calc.shapes import GemmList, Row, decoder_gemms, expected_distinct_experts, gemm_list, transformer_gemms
from roofline.errors import UserError
from roofline.spec.mla import MlaForm
from roofline.spec.model import ModelSpec
from roofline.spec.op_costs import cost
from roofline.spec.vocab import AttentionForm, Phase

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


@dataclass(frozen=True)
class Workload:
    model: ModelSpec
    phase: Phase
    batch: int
    seq_len: int
    """tokens per request (forward) or prompt length (prefill)"""
    context: int
    """tokens already in each sequence's KV cache: a decode step's, or a prefill's before its prompt (0: none)"""
    fused_qkv: bool = True
    embeddings: bool = True
    """the step includes the embedding lookup (a harness fed hidden states does not)"""
    shared_kv: float = 1.0
    """the cells each query scores over its own sequence's: its sequences share one KV buffer, each query scoring all
    of it (:func:`roofline.calc.ops.attention`; 1: a buffer per sequence)"""
    mla_form: MlaForm = MlaForm.ABSORBED
    """multi-head latent attention's form (:mod:`roofline.spec.mla`: the stack's rule); other models ignore it"""
    attention_form: AttentionForm = AttentionForm.FUSED
    """fused, or unfused with its scores through memory (:func:`roofline.calc.ops.attention`; the stack's rule); a
    multi-head latent attention model's is its ``mla_form``'s"""

    @property
    def tokens(self) -> int:
        """GEMM rows of the layer projections."""
        return self.batch if self.phase is Phase.DECODE else self.batch * self.seq_len

    def gemms(self) -> tuple[GemmList, np.ndarray]:
        """The GEMMs of one step, and a mask marking the lm_head."""
        m = self.model
        shape: dict[str, Any] = dict(
            tokens=self.tokens, hidden=m.hidden_size, intermediate=m.intermediate_size, layers=m.num_hidden_layers,
            heads=m.num_attention_heads, kv_heads=m.kv_heads, head_dim=m.head_size, gated_mlp=m.gated_mlp,
            fused_qkv=self.fused_qkv,
        )
        layers = decoder_gemms(**shape, **self._moe()) if m.is_moe else transformer_gemms(**shape)
        if m.is_mla:
            layers = replace_attention_rows(layers, self._mla_rows(self.batch, self.seq_len))
        if m.linear_attention_layers or m.attention_output_gate:
            layers = replace_attention_rows(layers, self._hybrid_rows())
        if m.family == "encoder":
            return layers, np.zeros(len(layers), dtype=bool)
        rows: list[Row] = [(n, float(a), int(b), int(c), float(d)) for n, a, b, c, d in
                zip(layers.names, layers.m, layers.n, layers.k, layers.count)]
        rows.append(("lm_head", self.batch, m.vocab_size, m.hidden_size, 1))
        return gemm_list(rows), np.array([False] * len(layers) + [True])

    def ops(self, batch: ArrayLike | None = None, seq_len: ArrayLike | None = None) -> list[op.Op]:
        """The non-GEMM operations of one step (:mod:`roofline.calc.ops`); ``batch`` and ``seq_len`` may be
        arrays (a sweep)."""
        return step_ops(self.model, self.phase, self.batch if batch is None else batch,
                        self.seq_len if seq_len is None else seq_len, self.context, self.embeddings, self.mla_form,
                        self.shared_kv, self.attention_form)

    def rows_at(self, batch: np.ndarray, seq_len: np.ndarray, gemms: GemmList, lm_head: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
        """``(M, count)`` of every GEMM row at each of a grid's points, ``(points, rows)``: the layer
        projections on the point's tokens, the lm_head on its sequences, and a mixture of experts' expert
        rows on the experts its tokens choose (:func:`~roofline.calc.shapes.moe_gemms`' rule)."""
        b = np.asarray(batch, dtype=float).ravel()
        tokens = b if self.phase is Phase.DECODE else b * np.asarray(seq_len, dtype=float).ravel()
        m = np.where(lm_head, b[:, None], tokens[:, None])
        if self.model.is_mla:  # the naive form's decompression runs over each sequence's keys
            keys = decompressed_keys(b, np.asarray(seq_len, dtype=float).ravel(), self.context,
                                     self.phase is Phase.DECODE)
            m = np.where(np.array([n == DECOMPRESS_ROW for n in gemms.names]), (b * keys)[:, None], m)
        count = np.broadcast_to(gemms.count, m.shape)
        if self.model.is_moe:
            mod = self.model
            assert mod.num_experts is not None and mod.num_experts_per_tok is not None  # is_moe: given together
            d = np.asarray(expected_distinct_experts(mod.num_experts, mod.num_experts_per_tok, tokens))[:, None]
            expert = np.array([name.startswith("expert_") for name in gemms.names])
            m = np.where(expert, tokens[:, None] * mod.num_experts_per_tok / d, m)
            count = np.where(expert, mod.moe_layers * d, count)
        return m, count

    def _mla_rows(self, batch: float, seq_len: float) -> list[Row]:
        """Multi-head latent attention's projection rows (:func:`~roofline.calc.mla.mla_gemms`)."""
        m, decode = self.model, self.phase is Phase.DECODE
        assert m.kv_lora_rank is not None and m.qk_nope_head_dim is not None  # validated with kv_lora_rank
        assert m.qk_rope_head_dim is not None and m.v_head_dim is not None
        return mla_gemms(batch=float(batch), q_len=1.0 if decode else float(seq_len),
                         k_len=float(decompressed_keys(batch, seq_len, self.context, decode)), hidden=m.hidden_size,
                         layers=m.num_hidden_layers, heads=m.num_attention_heads, q_lora_rank=m.q_lora_rank,
                         kv_lora_rank=m.kv_lora_rank, qk_nope=m.qk_nope_head_dim, qk_rope=m.qk_rope_head_dim,
                         v_head=m.v_head_dim, absorbed=MlaForm(self.mla_form) is MlaForm.ABSORBED)

    def _hybrid_rows(self) -> list[Row]:
        """A linear-attention hybrid's attention rows: q/k/v (q doubled by an output gate) and the output projection
        of its full-attention layers, and the linear layers' projections
        (:func:`~roofline.calc.linear_attention.linear_attention_gemms`)."""
        m, t = self.model, float(self.tokens)
        q_out, kv_out = m.num_attention_heads * m.head_size, m.kv_heads * m.head_size
        gate = 2 if m.attention_output_gate else 1
        full = m.attention_layers
        rows: list[Row] = [("qkv", t, gate * q_out + 2 * kv_out, m.hidden_size, full),
                           ("attn_out", t, m.hidden_size, q_out, full)]
        if m.linear_attention_layers:
            hk, hv = m.linear_num_key_heads, m.linear_num_value_heads
            dk, dv = m.linear_key_head_dim, m.linear_value_head_dim
            assert hk is not None and hv is not None and dk is not None and dv is not None  # validated with the layers
            rows += linear_attention_gemms(tokens=t, hidden=m.hidden_size, layers=len(m.linear_attention_layers),
                                           k_heads=hk, v_heads=hv, d_k=dk, d_v=dv)
        return rows

    def state_bytes(self) -> float:
        """Bytes of the linear-attention layers' recurrent state a decode step reads (and writes back): the batch's
        sequences' states, whatever the context (:mod:`roofline.calc.linear_attention`)."""
        return float(self.batch * self.model.linear_state_elements * STATE_ELEMENT_BYTES)

    def _moe(self) -> dict[str, Any]:
        """The mixture-of-experts arguments of :func:`decoder_gemms` (uniform routing)."""
        m = self.model
        return dict(moe_layers=m.moe_layers, experts=m.num_experts, top_k=m.num_experts_per_tok,
                    expert_intermediate=m.expert_intermediate, shared_intermediate=m.shared_expert_intermediate_size,
                    shared_gate=m.shared_expert_gate)

    def weight_set_counts(self, gemms: GemmList) -> np.ndarray:
        """The distinct weight matrices behind each GEMM row in the whole model: its count, but every
        expert of a mixture-of-experts layer (a step reads only the experts its tokens choose; the set
        that must stay cached is all of them)."""
        counts = np.asarray(gemms.count, dtype=float).copy()
        if self.model.is_moe:
            assert self.model.num_experts is not None  # is_moe
            for j, name in enumerate(gemms.names):
                if name.startswith("expert_"):
                    counts[j] = self.model.moe_layers * self.model.num_experts
        return counts

    def kv_cache_elements(self) -> float:
        """Cached K and V entries read by one decode step (all layers, all sequences; a windowed layer's
        at most its window): ``kv_width`` per token per layer (:attr:`ModelSpec.kv_width`: the latent and the
        rotary key under multi-head latent attention)."""
        m = self.model
        return float(m.kv_tokens(self.context)) * self.batch * m.kv_width


def step_ops(model: ModelSpec, phase: Phase, batch: ArrayLike, seq_len: ArrayLike, context: int,
             embeddings: bool = True, mla_form: MlaForm = MlaForm.ABSORBED, shared_kv: float = 1.0,
             attention_form: AttentionForm = AttentionForm.FUSED) -> list[op.Op]:
    """Per layer: attention, two norms, the MLP activation, two residual adds; once: the embedding
    lookup (and a decoder's final norm). Encoders use LayerNorm (and a normalised sum of word,
    position and token-type embeddings), decoders RMSNorm and one embedding table; ``shared_kv``: the cells each
    query scores over its own sequence's (a KV buffer the batch's sequences share); ``attention_form``: unfused
    moves each score ``unfused_score_bytes`` through memory (:mod:`roofline.spec.op_costs`)."""
    m, layers = model, model.num_hidden_layers
    batch = np.asarray(batch, dtype=float)
    decode = phase is Phase.DECODE
    tokens = batch if decode else batch * np.asarray(seq_len, dtype=float)
    encoder = m.family == "encoder"
    norm_ops = cost("layer_norm_ops_per_element" if m.layer_norm else "rms_norm_ops_per_element")
    if m.is_mla:
        attention = mla_attention(
            MlaForm(mla_form) is MlaForm.ABSORBED, batch=batch, q_len=1 if decode else seq_len, k_len=context if decode else seq_len,
            heads=m.num_attention_heads, qk_nope=m.qk_nope_head_dim, qk_rope=m.qk_rope_head_dim,
            v_head=m.v_head_dim, kv_lora_rank=m.kv_lora_rank, layers=layers, causal=phase is Phase.PREFILL,
            cached=decode, softmax_ops=cost("softmax_ops_per_score"), prefix=context if phase is Phase.PREFILL else 0)
    else:
        attention = op.attention(
            batch=batch, q_len=1 if decode else seq_len, k_len=context if decode else seq_len,
            heads=m.num_attention_heads, kv_heads=m.kv_heads, head_dim=m.head_size, layers=m.attention_layers,
            causal=phase is Phase.PREFILL, cached=decode, softmax_ops=cost("softmax_ops_per_score"),
            window=m.sliding_window, window_layers=m.windowed_layers,
            prefix=context if phase is Phase.PREFILL else 0, shared_kv=shared_kv,
            bytes_per_score=cost("unfused_score_bytes") if AttentionForm(attention_form) is AttentionForm.UNFUSED
            else 0.0)
    out = [
        attention,
        op.norm(tokens=tokens, hidden=m.hidden_size, calls=m.norms_per_layer * layers + (0 if encoder else 1),
                ops_per_element=norm_ops, name="layer_norm" if m.layer_norm else "rms_norm"),
        # the MLP activation runs on the width each token goes through (k experts + shared in MoE layers)
        op.activation(tokens=tokens, intermediate=m.mlp_intermediate_per_token, layers=layers, gated=m.gated_mlp,
                      ops_per_element=cost("silu_gated_ops_per_element" if m.gated_mlp else "gelu_ops_per_element")),
        op.residual_add(tokens=tokens, hidden=m.hidden_size, calls=2 * layers,
                        ops_per_element=cost("residual_add_ops_per_element")),
    ]
    if m.linear_attention_layers:
        hk, hv = m.linear_num_key_heads, m.linear_num_value_heads
        dk, dv = m.linear_key_head_dim, m.linear_value_head_dim
        kernel = m.linear_conv_kernel_dim
        # validated with the layers
        assert hk is not None and hv is not None and dk is not None and dv is not None and kernel is not None
        out.insert(1, linear_attention(batch=batch, q_len=1 if decode else seq_len,
                                       layers=len(m.linear_attention_layers), k_heads=hk, v_heads=hv, d_k=dk, d_v=dv,
                                       conv_kernel=kernel))
    if embeddings:
        tables = (3 if m.type_vocab_size else 2) if encoder else 1
        out.append(op.embeddings(tokens=tokens, hidden=m.hidden_size, tables=tables, norm_ops=norm_ops))
    return out


#: the modelling constants the non-GEMM operations use, by model family (for an estimate's inputs)
def op_cost_names(model: ModelSpec) -> list[str]:
    return ["layer_norm_ops_per_element" if model.layer_norm else "rms_norm_ops_per_element",
            "silu_gated_ops_per_element" if model.gated_mlp else "gelu_ops_per_element",
            "softmax_ops_per_score", "residual_add_ops_per_element"]


@dataclass(frozen=True)
class WorkloadSpec:
    """What a step computes, as the user gives it: the phase (default: forward for encoders, prefill for
    decoders), the batch, the sequence (prompt) length, a decode step's context, and whether q, k and v
    are one fused GEMM."""

    phase: Phase | None = None
    batch: int = 1
    seq_len: int = 256
    context: int | None = None
    """decode: tokens in the KV cache (default 1,024); prefill: tokens there before the prompt (default 0)"""
    fused_qkv: bool = True
    shared_kv: float = 1.0
    """the cells each query scores over its own sequence's (:attr:`Workload.shared_kv`)"""

    mla_form: MlaForm = MlaForm.ABSORBED
    """multi-head latent attention's form (the stack's rule, :func:`roofline.spec.mla.mla_rule`)"""
    attention_form: AttentionForm = AttentionForm.FUSED
    """fused, or unfused (:attr:`Workload.attention_form`)"""

    def of(self, model: ModelSpec) -> Workload:
        return dataclasses.replace(make_workload(model, self.phase, self.batch, self.seq_len, self.context,
                                                 self.fused_qkv), mla_form=self.mla_form, shared_kv=self.shared_kv,
                                   attention_form=self.attention_form)


def make_workload(model: ModelSpec, phase: Phase | None, batch: int, seq_len: int, context: int | None,
                  fused_qkv: bool = True) -> Workload:
    """Check the combination and fill in the defaults: forward for encoders, prefill for decoders."""
    phase = Phase(phase) if phase is not None else (Phase.FORWARD if model.family == "encoder" else Phase.PREFILL)
    if model.family == "encoder" and phase is not Phase.FORWARD:
        raise UserError(f"--phase {phase}: {model.name} is an encoder; its only phase is forward")
    if model.family == "decoder" and phase is Phase.FORWARD:
        raise UserError(f"--phase forward: {model.name} is a decoder; use prefill or decode")
    if batch < 1:
        raise UserError(f"--batch {batch}: must be a positive whole number")
    if seq_len < 1:
        raise UserError(f"--seq-len {seq_len}: must be a positive whole number")
    if context is not None and context < 0:
        raise UserError(f"--context {context}: must be 0 or more")
    decode = phase is Phase.DECODE
    if context is not None and phase is Phase.FORWARD:
        raise UserError(f"--context applies to a decoder's decode or prefill (the phase here is {phase}); use --seq-len")
    context = (1024 if decode else 0) if context is None else context
    limit = model.max_position_embeddings
    used = context + (1 if decode else seq_len)
    if used > limit:
        what = "--context" if decode else ("--context + --seq-len" if context else "--seq-len")
        raise UserError(f"{what} {used - decode}: {model.name} has {limit} positions "
                        f"(max_position_embeddings); use at most that")
    return Workload(model, phase, batch, seq_len, context, fused_qkv)


@dataclass(frozen=True)
class LinearWorkload:
    """One linear ``Y[m,n] = X[m,k] W[n,k]^T`` called on its own (a microbenchmark): no other work, and
    its weight set is this one weight (a microbenchmark reuses it, so it stays in whatever level holds it)."""

    name: str
    m: int
    n: int
    k: int
    phase: Phase = Phase.FORWARD
    model: None = None

    def gemms(self) -> tuple[GemmList, np.ndarray]:
        return gemm_list([(self.name, self.m, self.n, self.k, 1)]), np.zeros(1, dtype=bool)

    def ops(self, batch: ArrayLike | None = None, seq_len: ArrayLike | None = None) -> list[op.Op]:
        return []

    def weight_set_counts(self, gemms: GemmList) -> np.ndarray:
        return np.asarray(gemms.count, dtype=float)
