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

from dataclasses import dataclass

import numpy as np

from roofline.calc.non_gemm import NonGemmOps, decode_non_gemm, transformer_non_gemm
from roofline.calc.shapes import GemmList, decoder_gemms, gemm_list, transformer_gemms
from roofline.errors import UserError
from roofline.spec.model import ModelSpec

PHASES = ("forward", "prefill", "decode")


@dataclass(frozen=True)
class Workload:
    model: ModelSpec
    phase: str
    batch: int
    seq_len: int
    """tokens per request (forward) or prompt length (prefill)"""
    context: int
    """decode: tokens already in the KV cache"""
    fused_qkv: bool = True

    @property
    def tokens(self) -> int:
        """GEMM rows of the layer projections."""
        return self.batch if self.phase == "decode" else self.batch * self.seq_len

    def gemms(self) -> tuple[GemmList, np.ndarray]:
        """The GEMMs of one step, and a mask marking the lm_head."""
        m = self.model
        shape = dict(
            tokens=self.tokens, hidden=m.hidden_size, intermediate=m.intermediate_size, layers=m.num_hidden_layers,
            heads=m.num_attention_heads, kv_heads=m.kv_heads, head_dim=m.head_size, gated_mlp=m.gated_mlp,
            fused_qkv=self.fused_qkv,
        )
        layers = decoder_gemms(**shape, **self._moe()) if m.is_moe else transformer_gemms(**shape)
        if m.family == "encoder":
            return layers, np.zeros(len(layers), dtype=bool)
        rows = [(n, float(a), int(b), int(c), float(d)) for n, a, b, c, d in
                zip(layers.names, layers.m, layers.n, layers.k, layers.count)]
        rows.append(("lm_head", self.batch, m.vocab_size, m.hidden_size, 1))
        return gemm_list(rows), np.array([False] * len(layers) + [True])

    def _moe(self) -> dict:
        """The mixture-of-experts arguments of :func:`decoder_gemms` (uniform routing)."""
        m = self.model
        return dict(moe_layers=m.moe_layers, experts=m.num_experts, top_k=m.num_experts_per_tok,
                    expert_intermediate=m.expert_intermediate, shared_intermediate=m.shared_expert_intermediate_size,
                    shared_gate=m.shared_expert_gate)

    def non_gemm(self) -> NonGemmOps:
        m = self.model
        # the MLP activation runs on the width each token goes through (k experts + shared in MoE layers)
        common = dict(hidden=m.hidden_size, intermediate=m.mlp_intermediate_per_token, layers=m.num_hidden_layers,
                      heads=m.num_attention_heads, kv_heads=m.kv_heads, head_dim=m.head_size, gated_mlp=m.gated_mlp)
        if self.phase == "decode":
            return decode_non_gemm(batch=self.batch, context=self.context, **common)
        return transformer_non_gemm(batch=self.batch, seq_len=self.seq_len, causal=self.phase == "prefill", **common)

    def kv_cache_elements(self) -> float:
        """Cached K and V entries read by one decode step (all layers, all sequences)."""
        m = self.model
        return 2.0 * m.num_hidden_layers * self.batch * m.kv_heads * m.head_size * self.context


def make_workload(model: ModelSpec, phase: str | None, batch: int, seq_len: int, context: int | None,
                  fused_qkv: bool = True) -> Workload:
    """Check the combination and fill in the defaults: forward for encoders, prefill for decoders."""
    phase = phase or ("forward" if model.family == "encoder" else "prefill")
    if phase not in PHASES:
        raise UserError(f"--phase {phase}: one of {', '.join(PHASES)}")
    if model.family == "encoder" and phase != "forward":
        raise UserError(f"--phase {phase}: {model.name} is an encoder; its only phase is forward")
    if model.family == "decoder" and phase == "forward":
        raise UserError(f"--phase forward: {model.name} is a decoder; use prefill or decode")
    if batch < 1:
        raise UserError(f"--batch {batch}: must be a positive whole number")
    if seq_len < 1:
        raise UserError(f"--seq-len {seq_len}: must be a positive whole number")
    if context is not None and context < 0:
        raise UserError(f"--context {context}: must be 0 or more")
    if context is not None and phase != "decode":
        raise UserError(f"--context applies to --phase decode (the phase here is {phase}); use --seq-len")
    context = 1024 if context is None else context
    limit = model.max_position_embeddings
    used = context + 1 if phase == "decode" else seq_len
    if used > limit:
        what = "--context" if phase == "decode" else "--seq-len"
        raise UserError(f"{what} {used - (phase == 'decode')}: {model.name} has {limit} positions "
                        f"(max_position_embeddings); use at most that")
    return Workload(model, phase, batch, seq_len, context, fused_qkv)
