"""Read a Hugging Face ``config.json`` into :class:`ModelSpec` fields.

Only architecture hyper-parameters are read; nothing in the file is executed.
BERT / RoBERTa / XLM-R / DistilBERT encoders and Llama / Qwen / Mistral style
decoders are understood.
"""

from __future__ import annotations

import re
from typing import Any

#: mixture-of-experts decoders whose config.json keys :func:`moe_fields` reads
MOE_TYPES = {"mixtral", "qwen2_moe", "qwen3_moe", "olmoe"}

ENCODER_TYPES = {"bert", "roberta", "xlm-roberta", "distilbert", "electra", "camembert", "ernie", "mpnet"}
DECODER_TYPES = {"llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2", "phi3", "granite", "olmo", "olmo2",
                 *MOE_TYPES}

# DistilBERT spells the usual keys its own way.
_ALIASES = {
    "dim": "hidden_size",
    "hidden_dim": "intermediate_size",
    "n_layers": "num_hidden_layers",
    "n_heads": "num_attention_heads",
    "activation": "hidden_act",
}


#: the JSON type of every key read here (after the DistilBERT aliases); anything else is refused, since
#: a lax reading would take ``"mlp_bias": "false"`` as True and ``"hidden_size": true`` as 1
_KEY_TYPES: dict[str, type] = {
    "model_type": str, "architectures": list, "is_decoder": bool, "hidden_act": str,
    "hidden_size": int, "intermediate_size": int, "num_hidden_layers": int, "num_attention_heads": int,
    "num_key_value_heads": int, "head_dim": int, "vocab_size": int, "max_position_embeddings": int,
    "type_vocab_size": int, "tie_word_embeddings": bool, "attention_bias": bool, "mlp_bias": bool,
}
_TYPE_WORDS = {str: "a string", list: "a list of strings", bool: "true or false", int: "a whole number"}

#: architectures whose layers are not the GEMMs this model counts: refused, not estimated as dense
_UNMODELLED_KEYS = {
    "kv_lora_rank": "multi-head latent attention (DeepSeek-V2/V3: low-rank compressed KV projections and cache)",
    "q_lora_rank": "multi-head latent attention (DeepSeek-V2/V3: low-rank compressed query projections)",
    "hybrid_override_pattern": "hybrid Mamba/SSM layers (Nemotron-H)",
    "attn_layer_period": "hybrid Mamba/SSM layers (Jamba)",
    "attn_layer_offset": "hybrid Mamba/SSM layers (Jamba)",
    "attn_layer_indices": "hybrid Mamba/SSM layers",
    "ssm_cfg": "state-space (Mamba) layers",
}
_SSM_PREFIXES = ("mamba_", "ssm_")
_NON_ATTENTION_LAYER = re.compile(r"mamba|ssm|linear|conv|recurrent|rnn|delta", re.I)


class ConfigError(ValueError):
    """A config.json problem, with the key it is about."""

    def __init__(self, key: str, reason: str) -> None:
        self.key = key
        super().__init__(reason)


def _check_types(cfg: dict[str, Any]) -> None:
    for key, value in cfg.items():
        want = _KEY_TYPES.get(_ALIASES.get(key, key))
        if want is None or value is None:
            continue
        ok = type(value) is want and (want is not list or all(type(v) is str for v in value))
        if not ok:
            shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
            raise ConfigError(key, f"must be {_TYPE_WORDS[want]}, got {shown}")


def _check_modelled(cfg: dict[str, Any]) -> None:
    for key, value in cfg.items():
        if value is None:
            continue
        what = _UNMODELLED_KEYS.get(key) or ("hybrid Mamba/SSM layers" if key.startswith(_SSM_PREFIXES) else None)
        if what is None and key in ("layer_types", "block_types") and isinstance(value, list):
            odd = sorted({str(v) for v in value if _NON_ATTENTION_LAYER.search(str(v))})
            what = f"layers that are not attention ({', '.join(odd)})" if odd else None
        if what:
            raise ConfigError(key, f"{what} are not modelled; roofline counts dense attention and MLP GEMMs "
                                   "only, and refuses this config rather than estimate it as a dense transformer")


def hf_config_to_fields(cfg: dict[str, Any], name: str, source: str) -> dict[str, Any]:
    """Map a config.json dict to ModelSpec fields (validation happens in ModelSpec).

    Raises :class:`ConfigError` (naming the key) for a value of the wrong JSON type and for
    architectures that are not modelled."""
    _check_types(cfg)
    _check_modelled(cfg)
    cfg = {_ALIASES.get(k, k): v for k, v in cfg.items()}
    model_type = str(cfg.get("model_type", "")).lower()
    archs = " ".join(cfg.get("architectures") or [])
    if model_type in DECODER_TYPES or "CausalLM" in archs or cfg.get("is_decoder") is True:
        family = "decoder"
    elif model_type in ENCODER_TYPES or model_type == "":
        family = "encoder"
    else:
        raise ValueError(
            f"model_type '{model_type}' is not a known encoder or decoder "
            f"(known: {', '.join(sorted(ENCODER_TYPES | DECODER_TYPES))})"
        )
    fields: dict[str, Any] = {
        "name": name,
        "description": f"{model_type or 'transformer'} from {source}",
        "source": source,
        "family": family,
    }
    for key in (
        "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
        "num_key_value_heads", "head_dim", "vocab_size", "max_position_embeddings",
        "type_vocab_size", "hidden_act", "tie_word_embeddings",
    ):
        if cfg.get(key) is not None:
            fields[key] = cfg[key]
    if family == "decoder":
        act = str(cfg.get("hidden_act", "silu"))
        fields["gated_mlp"] = act in {"silu", "swiglu", "gelu_pytorch_tanh"} or model_type in DECODER_TYPES
        fields["qk_norm"] = model_type in {"qwen3", "qwen3_moe", "olmoe"}
        fields["attention_bias"] = bool(cfg.get("attention_bias", model_type == "qwen2"))
        if model_type == "qwen2":
            fields["o_proj_bias"] = False
        fields["mlp_bias"] = bool(cfg.get("mlp_bias", False))
        fields.update(moe_fields(cfg, model_type))
    return fields


# ------------------------------------------------------------------ mixture of experts

#: config.json keys of a mixture of experts that :func:`moe_fields` reads, or that do not change
#: the shapes (router losses and options, top-k normalisation, grouped routing of DeepSeek)
MOE_KEYS = {
    "num_local_experts", "num_experts", "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size",
    "shared_expert_intermediate_size", "n_shared_experts", "decoder_sparse_step", "mlp_only_layers",
    "first_k_dense_replace", "moe_layer_freq",
    "output_router_logits", "router_aux_loss_coef", "norm_topk_prob", "router_jitter_noise", "routed_scaling_factor",
    "topk_method", "n_group", "topk_group", "scoring_func", "aux_loss_alpha", "seq_aux", "ep_size",
}


def moe_fields(cfg: dict[str, Any], model_type: str) -> dict[str, Any]:
    """The mixture-of-experts fields of ModelSpec from a decoder's config.json; {} for a dense model.

    - routed experts ``E``: ``num_local_experts`` (Mixtral), ``num_experts`` (Qwen2/3-MoE, OLMoE),
      ``n_routed_experts`` (DeepSeek); top-k: ``num_experts_per_tok``
    - one expert's width: ``moe_intermediate_size``, else ``intermediate_size`` (Mixtral, OLMoE)
    - shared experts: ``shared_expert_intermediate_size`` (Qwen2-MoE, with its sigmoid gate), or
      ``n_shared_experts x moe_intermediate_size`` (DeepSeek)
    - dense layers among the MoE ones: Qwen2/3-MoE make layer ``i`` sparse when ``(i + 1) %
      decoder_sparse_step == 0`` and ``i`` is not in ``mlp_only_layers``; DeepSeek when ``i >=
      first_k_dense_replace`` and ``i % moe_layer_freq == 0``. Dense layers use ``intermediate_size``.

    A key that names experts but is none of these is refused (one line naming it) rather than
    silently modelled as a dense MLP.
    """
    _refuse_unknown_moe_keys(cfg)
    experts = next((cfg[k] for k in ("num_local_experts", "num_experts", "n_routed_experts") if cfg.get(k)), None)
    if not experts:
        return {}
    top_k = cfg.get("num_experts_per_tok")
    if top_k is None:
        raise ValueError("num_experts_per_tok: a mixture of experts needs its top-k (num_experts_per_tok)")
    layers = int(cfg.get("num_hidden_layers") or 0)
    out: dict[str, Any] = {"num_experts": experts, "num_experts_per_tok": top_k}
    if cfg.get("moe_intermediate_size") is not None:
        out["moe_intermediate_size"] = cfg["moe_intermediate_size"]
    if cfg.get("shared_expert_intermediate_size"):
        out["shared_expert_intermediate_size"] = cfg["shared_expert_intermediate_size"]
        out["shared_expert_gate"] = model_type == "qwen2_moe"
    elif cfg.get("n_shared_experts"):
        width = cfg.get("moe_intermediate_size") or cfg.get("intermediate_size")
        out["shared_expert_intermediate_size"] = int(cfg["n_shared_experts"]) * int(width)
    out["dense_layers"] = tuple(i for i in range(layers) if not _is_moe_layer(cfg, i))
    return out


def _is_moe_layer(cfg: dict[str, Any], i: int) -> bool:
    if i in (cfg.get("mlp_only_layers") or []):
        return False
    step = cfg.get("decoder_sparse_step") or 1
    if (i + 1) % step:
        return False
    first_dense = cfg.get("first_k_dense_replace") or 0
    freq = cfg.get("moe_layer_freq") or 1
    return i >= first_dense and i % freq == 0


def _refuse_unknown_moe_keys(cfg: dict[str, Any], where: str = "") -> None:
    for key, value in cfg.items():
        if isinstance(value, dict):
            _refuse_unknown_moe_keys(value, f"{where}{key}.")
            continue
        low = key.lower()
        if ("expert" in low or low.startswith("moe_")) and key not in MOE_KEYS and value not in (None, 0, False, [], ""):
            raise ValueError(f"{where}{key}: a mixture-of-experts key this tool does not model "
                             f"(known: {', '.join(sorted(MOE_KEYS))})")
