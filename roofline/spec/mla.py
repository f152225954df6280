"""Multi-head latent attention (DeepSeek-V2/V3/R1, Kimi-K2): the two forms an engine may run it in, and the
rule that says which form a software stack runs.

- **naive**: decompress K and V from the latent cache every step (``kv_b_proj`` over the whole context),
  then standard attention with ``n_heads`` heads of ``qk_nope + qk_rope`` (keys) and ``v_head_dim``
  (values);
- **absorbed**: ``kv_b_proj`` folded into the query (``W_UK``) and the output (``W_UV``); every head
  attends over the latent cache itself, rows of ``kv_lora_rank + qk_rope_head_dim``.

Both keep the same cache, ``kv_lora_rank + qk_rope_head_dim`` elements per token per layer
(:attr:`roofline.spec.model.ModelSpec.kv_width`). Which form a stack runs is data: the ``mla`` table of
its profile (``platforms/stacks/<name>.toml``), read into :class:`MlaRule`.
"""

from __future__ import annotations

from dataclasses import dataclass

from roofline.spec import PYDANTIC_CONFIG
from roofline.spec.vocab import Vocab, coerce


class MlaForm(Vocab):
    """How an engine runs multi-head latent attention (module docstring)."""

    NAIVE = "naive"
    ABSORBED = "absorbed"


@dataclass(frozen=True)
class MlaRule:
    """The form a stack runs multi-head latent attention in, with where that is read."""

    __pydantic_config__ = PYDANTIC_CONFIG

    form: MlaForm
    source: str
    """the engine's source or pull request that says so"""
    kind: str = "documented"
    """documented (read in the engine's source or its pull request) or assumed"""

    def __post_init__(self) -> None:
        coerce(self, form=MlaForm)
        if self.kind not in ("documented", "assumed"):
            raise ValueError(f"kind: documented or assumed, got {self.kind!r}")
        if not self.source.strip():
            raise ValueError("source: say where the form is read (a file or pull request URL)")


#: the form where a stack states none (or no stack prices the step): the absorbed one, as llama.cpp,
#: ik_llama.cpp's -mla modes and FlashMLA-style kernels run decode
DEFAULT_MLA = MlaRule(form=MlaForm.ABSORBED, kind="assumed",
                      source="no stack rule: assumed absorbed, the form engines with a latent cache run decode in "
                             "(llama.cpp since https://github.com/ggml-org/llama.cpp/pull/12801)")


def mla_rule(profile: object) -> MlaRule:
    """The rule of a stack profile (None: no profile), else :data:`DEFAULT_MLA`."""
    rule = getattr(profile, "mla", None) if profile is not None else None
    return rule if rule is not None else DEFAULT_MLA
