"""Read a Hugging Face ``config.json`` into :class:`ModelSpec` fields.

Only architecture hyper-parameters are read; nothing in the file is executed.
BERT / RoBERTa / XLM-R / DistilBERT encoders and Llama / Qwen / Mistral style
decoders are understood.
"""

from __future__ import annotations

from typing import Any

ENCODER_TYPES = {"bert", "roberta", "xlm-roberta", "distilbert", "electra", "camembert", "ernie", "mpnet"}
DECODER_TYPES = {"llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2", "phi3", "granite", "olmo", "olmo2"}

# DistilBERT spells the usual keys its own way.
_ALIASES = {
    "dim": "hidden_size",
    "hidden_dim": "intermediate_size",
    "n_layers": "num_hidden_layers",
    "n_heads": "num_attention_heads",
    "activation": "hidden_act",
}


def hf_config_to_fields(cfg: dict[str, Any], name: str, source: str) -> dict[str, Any]:
    """Map a config.json dict to ModelSpec fields (validation happens in ModelSpec)."""
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
        fields["qk_norm"] = model_type == "qwen3"
        fields["attention_bias"] = bool(cfg.get("attention_bias", model_type == "qwen2"))
        if model_type == "qwen2":
            fields["o_proj_bias"] = False
        fields["mlp_bias"] = bool(cfg.get("mlp_bias", False))
    return fields
