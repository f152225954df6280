"""config.json files that name the usual keys their own way: Falcon (``falcon``) and ChatGLM2/3 and GLM-4-9B
(``chatglm``), read into the keys :mod:`roofline.spec.hf_config` reads (Llama's), plus the ModelSpec fields those keys
cannot say (norms per block, the output projection's bias).

Falcon (transformers' ``configuration_falcon.py`` and ``modeling_falcon.py``):

- attention: one fused ``query_key_value`` of ``(heads + 2 kv) head_dim`` outputs, ``kv`` = ``num_kv_heads`` with
  ``new_decoder_architecture`` or without ``multi_query``, else 1 (Falcon-7B's multi-query attention); ``dense``
  back to the hidden size; biases on both when ``bias``
- MLP: plain, ``dense_h_to_4h`` (``ffn_hidden_size``, default 4 x hidden), the activation (``activation``, default
  GELU), ``dense_4h_to_h``; biases when ``bias``
- ``parallel_attn``: attention and MLP read the same input and their outputs add to the residual together (the
  same GEMMs, the same two adds); LayerNorms per block: ``ln_attn`` and ``ln_mlp`` with ``new_decoder_architecture``
  (``num_ln_in_parallel_attn`` 2, its default there), else one ``input_layernorm`` (and a ``post_attention_layernorm``
  without ``parallel_attn``); the embeddings tied to the lm_head
- ``alibi`` (Falcon-RW): a position bias added to every attention score: not priced, refused naming the key

ChatGLM (THUDM's ``configuration_chatglm.py`` / ``modeling_chatglm.py``, shipped with the checkpoints):
``num_layers``, ``padded_vocab_size`` (the rows of the embedding and of ``output_layer``), ``ffn_hidden_size`` (a
SwiGLU MLP: ``dense_h_to_4h`` gives 2 x ffn_hidden_size), ``kv_channels`` (head_dim), ``multi_query_attention`` with
``multi_query_group_num`` key-value heads, ``seq_length``; ``add_qkv_bias`` (q/k/v biases) and ``add_bias_linear``
(every projection's bias), ``rmsnorm`` (else LayerNorm). Rotary embedding on half of each head changes no shape.
A prefix encoder (``pre_seq_len``), no final norm (``post_layer_norm`` false) and the first ChatGLM-6B's 2-D
positions (``position_encoding_2d``) are refused naming the key.
"""

from __future__ import annotations

from typing import Any

#: the JSON type of each key read here, by model type (hf_config checks them with its own)
KEY_TYPES_BY_MODEL: dict[str, dict[str, Any]] = {
    "falcon": {"alibi": bool, "parallel_attn": bool, "new_decoder_architecture": bool, "multi_query": bool,
               "num_kv_heads": int, "num_ln_in_parallel_attn": int, "bias": bool, "ffn_hidden_size": int,
               "activation": str},
    "chatglm": {"num_layers": int, "padded_vocab_size": int, "ffn_hidden_size": int, "kv_channels": int,
                "multi_query_attention": bool, "multi_query_group_num": int, "seq_length": int,
                "add_qkv_bias": bool, "add_bias_linear": bool, "rmsnorm": bool, "post_layer_norm": bool,
                "pre_seq_len": int},
}
#: the range each whole-number key shares with a ModelSpec field
LIMIT_OF = {"num_kv_heads": "model.num_key_value_heads", "num_ln_in_parallel_attn": "model.norms_per_layer",
            "ffn_hidden_size": "model.intermediate_size", "num_layers": "model.num_hidden_layers",
            "padded_vocab_size": "model.vocab_size", "kv_channels": "model.head_dim",
            "multi_query_group_num": "model.num_key_value_heads", "seq_length": "model.max_position_embeddings"}

#: transformers' FalconConfig defaults for the keys a published Falcon config.json leaves out (Falcon-40B's gives no
#: max_position_embeddings, ffn_hidden_size, activation or tie_word_embeddings): src/transformers/models/falcon/
#: configuration_falcon.py, ``FalconConfig.__init__`` (and PretrainedConfig's tie_word_embeddings)
FALCON_DEFAULTS: dict[str, Any] = {"max_position_embeddings": 2048, "activation": "gelu", "bias": False,
                                   "parallel_attn": True, "new_decoder_architecture": False, "multi_query": True,
                                   "tie_word_embeddings": True}
#: THUDM's ChatGLMConfig defaults (configuration_chatglm.py in THUDM/chatglm3-6b) for the switches a config leaves out;
#: its output_layer is a separate matrix (tie_word_embeddings false in every published config)
CHATGLM_DEFAULTS: dict[str, Any] = {"add_bias_linear": False, "add_qkv_bias": False, "multi_query_attention": False,
                                    "rmsnorm": True, "post_layer_norm": True, "tie_word_embeddings": False}


def _error(key: str, reason: str) -> Exception:
    from roofline.spec.hf_config import ConfigError  # hf_config imports this module

    return ConfigError(key, reason)


def renamed_config(cfg: dict[str, Any], model_type: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the config in hf_config's key names, ModelSpec fields to set beside them) for a Falcon or ChatGLM config;
    any other config as it is, with no fields."""
    if model_type == "falcon":
        return _falcon(cfg)
    if model_type == "chatglm":
        return _chatglm(cfg)
    return cfg, {}


def _falcon(raw: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    cfg = {**FALCON_DEFAULTS, **{k: v for k, v in raw.items() if v is not None}}
    if cfg.get("alibi"):
        raise _error("alibi", "ALiBi (a position bias added to every attention score, Falcon-RW) is not priced; "
                              "the Falcon configs with rotary embeddings (alibi false) are")
    heads = cfg.get("num_attention_heads") or 1
    hidden = cfg.get("hidden_size") or 0
    new = bool(cfg["new_decoder_architecture"])
    kv = (cfg.get("num_kv_heads") or heads) if new or not cfg["multi_query"] else 1
    ln = cfg.get("num_ln_in_parallel_attn")
    if new and (ln or 2) == 2:
        norms = 2  # ln_attn and ln_mlp
    elif ln not in (None, 1, 2):
        raise _error("num_ln_in_parallel_attn", f"{ln}: Falcon has 1 or 2 LayerNorms before its parallel attention")
    else:
        norms = 1 if cfg["parallel_attn"] else 2  # input_layernorm (and post_attention_layernorm)
    out = {k: v for k, v in cfg.items() if k not in KEY_TYPES_BY_MODEL["falcon"]}
    out.update(num_key_value_heads=kv, intermediate_size=cfg.get("ffn_hidden_size") or 4 * hidden,
               hidden_act=cfg["activation"], attention_bias=cfg["bias"], mlp_bias=cfg["bias"])
    return out, {"norm": "layer", "norms_per_layer": norms, "gated_mlp": False}


def _chatglm(raw: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    cfg = {**CHATGLM_DEFAULTS, **{k: v for k, v in raw.items() if v is not None}}
    for key, what in (("position_encoding_2d", "the first ChatGLM-6B's 2-D position encoding and GeLU MLP"),
                      ("pre_seq_len", "a prefix encoder (P-tuning v2 prefix tokens in every layer)")):
        if cfg.get(key):
            raise _error(key, f"{what}: not modelled (ChatGLM2/3 and GLM-4-9B without it are)")
    if not cfg["post_layer_norm"]:
        raise _error("post_layer_norm", "false: a ChatGLM without its final norm is not priced (the published "
                                        "ChatGLM2/3 and GLM-4-9B configs have it)")
    renamed = {"num_layers": "num_hidden_layers", "padded_vocab_size": "vocab_size",
               "ffn_hidden_size": "intermediate_size", "kv_channels": "head_dim", "seq_length": "max_position_embeddings"}
    out = {k: v for k, v in cfg.items() if k not in KEY_TYPES_BY_MODEL["chatglm"]}
    for theirs, ours in renamed.items():
        if theirs not in cfg:
            if ours not in cfg:
                raise _error(theirs, f"a ChatGLM config gives {theirs} (its name for {ours})")
            continue
        given = raw.get(ours)
        # GLM-4-9B writes num_hidden_layers beside num_layers (equal), and vocab_size beside padded_vocab_size: the
        # embedding and output_layer have padded_vocab_size rows whatever vocab_size says
        if ours == "num_hidden_layers" and given is not None and given != cfg[theirs]:
            raise _error("num_layers", f"{cfg[theirs]} differs from num_hidden_layers {given}: which is the "
                                       "model's is not clear")
        out[ours] = cfg[theirs]
    heads = cfg.get("num_attention_heads") or 1
    out["num_key_value_heads"] = cfg.get("multi_query_group_num") or 1 if cfg["multi_query_attention"] else heads
    out["hidden_act"] = "silu"  # SwiGLU: modeling_chatglm's swiglu on dense_h_to_4h's two halves
    linear = bool(cfg["add_bias_linear"])
    out["attention_bias"] = linear or bool(cfg["add_qkv_bias"])  # query_key_value's bias
    out["mlp_bias"] = linear
    return out, {"o_proj_bias": linear, "norm": "rms" if cfg["rmsnorm"] else "layer", "gated_mlp": True}
