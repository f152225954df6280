"""Linear attention with a fixed-size state (Qwen3-Next's Gated DeltaNet): the state a sequence keeps per layer, the
projections as GEMM rows, and one step's work and state traffic, one formula each.

Notation: ``B`` sequences, ``q`` new tokens each, ``H`` the hidden size, ``L`` the linear layers, ``h_k`` key heads of
``d_k`` (``linear_num_key_heads``, ``linear_key_head_dim``), ``h_v`` value heads of ``d_v`` (``linear_num_value_heads``,
``linear_value_head_dim``; each value head shares a key head when ``h_v > h_k``), ``K`` the causal convolution's kernel
(``linear_conv_kernel_dim``), ``C = 2 h_k d_k + h_v d_v`` the channels it runs over (q, k and v).

Per sequence and layer the state is ``h_v d_k d_v`` (one ``d_k x d_v`` matrix per value head) plus the convolution's
last ``K - 1`` inputs, ``C (K - 1)``: its size does not grow with the context. A decode step reads it and writes it
back once. The gated delta rule per value head and token (transformers' ``torch_recurrent_gated_delta_rule``):
``S <- exp(g) S`` (``d_k d_v``), ``u = S^T k`` (``2 d_k d_v``), ``S <- S + k (beta (v - u))^T`` (``2 d_k d_v``),
``o = S^T q`` (``2 d_k d_v``): ``7 d_k d_v`` flops; the convolution ``2 C K``.

Projections per linear layer (rows ``(name, M, N, K, count)``, ``T = B q``): ``lin_qkvz``: ``T, 2 h_k d_k + 2 h_v d_v,
H`` (``in_proj_qkvz``: q, k, v and the output gate z); ``lin_ba``: ``T, 2 h_v, H`` (``in_proj_ba``: beta and the
decay's input); ``lin_out``: ``T, H, h_v d_v`` (``out_proj``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from roofline.calc.ops import Op, _f
from roofline.calc.shapes import Row

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

#: flops of the gated delta rule per value head and token, in units of ``d_k d_v`` (module docstring)
DELTA_RULE_FLOPS = 7.0

#: bytes per element of the recurrent state: llama.cpp keeps recurrent models' states in F32 (src/llama-model.cpp,
#: ``llama_model::create_memory``: ``llama_memory_recurrent`` of GGML_TYPE_F32 r and s states)
STATE_ELEMENT_BYTES = 4


def conv_channels(k_heads: int, v_heads: int, d_k: int, d_v: int) -> int:
    """``C = 2 h_k d_k + h_v d_v``: the channels of the causal convolution (q, k and v)."""
    return 2 * k_heads * d_k + v_heads * d_v


def state_elements(*, k_heads: int, v_heads: int, d_k: int, d_v: int, conv_kernel: int) -> int:
    """One sequence's state in one linear layer: ``h_v d_k d_v + C (K - 1)`` elements, whatever the context."""
    return v_heads * d_k * d_v + conv_channels(k_heads, v_heads, d_k, d_v) * (conv_kernel - 1)


def linear_attention_gemms(*, tokens: float, hidden: int, layers: int, k_heads: int, v_heads: int, d_k: int,
                           d_v: int) -> list[Row]:
    """The projection rows of ``layers`` linear-attention layers (module docstring)."""
    return [("lin_qkvz", tokens, 2 * k_heads * d_k + 2 * v_heads * d_v, hidden, layers),
            ("lin_ba", tokens, 2 * v_heads, hidden, layers),
            ("lin_out", tokens, hidden, v_heads * d_v, layers)]


def linear_attention(*, batch: ArrayLike, q_len: ArrayLike, layers: int, k_heads: int, v_heads: int, d_k: int,
                     d_v: int, conv_kernel: int) -> Op:
    """A step of ``layers`` Gated DeltaNet layers over ``q`` new tokens in each of ``B`` sequences:

    - flops (vector path): ``L B q (7 h_v d_k d_v + 2 C K)``, the delta rule and the convolution, per token: the
      same for a decode step at any context (a prefill priced as the recurrence token by token, a lower bound of
      the chunked kernels, which do more work to run it as matrix products);
    - state: read and written once per step, ``2 L B (h_v d_k d_v + C (K - 1))`` elements of
      :data:`STATE_ELEMENT_BYTES` each (``state_bytes``; its working set the whole state of all layers);
    - activations: the projections' outputs in (``C + h_v d_v + 2 h_v`` per token: q, k, v, z, b, a) and the gated
      output out (``h_v d_v``).
    """
    b, q = _f(batch), _f(q_len)
    tokens = b * q
    c = conv_channels(k_heads, v_heads, d_k, d_v)
    per_token = DELTA_RULE_FLOPS * v_heads * d_k * d_v + 2.0 * c * conv_kernel
    act = (c + 2 * v_heads * d_v + 2 * v_heads) * tokens
    state = b * state_elements(k_heads=k_heads, v_heads=v_heads, d_k=d_k, d_v=d_v, conv_kernel=conv_kernel)
    return Op("linear_attention", layers * per_token * tokens, False, layers * act, act,
              state_bytes=2.0 * layers * state * STATE_ELEMENT_BYTES,
              state_working_set=layers * state * STATE_ELEMENT_BYTES + 0.0 * tokens)
