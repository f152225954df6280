"""Read a Hugging Face ``config.json`` into :class:`ModelSpec` fields.

Only architecture hyper-parameters are read; nothing in the file is executed.
BERT / RoBERTa / XLM-R / DistilBERT encoders and Llama / Qwen / Mistral / Gemma / StarCoder2 style
decoders are understood, and DeepSeek-V2/V3 and Kimi-K2's multi-head latent attention (:func:`mla_fields`), GLM-4.5's
``glm4_moe``, Qwen3-Next's linear-attention hybrid (:func:`linear_attention_fields`), and Falcon and ChatGLM through
their own key names (:mod:`roofline.spec.hf_renamed`).

Every key read here has a JSON type (:data:`KEY_TYPES`) and, when it is a number, a range
(:mod:`roofline.spec.limits`); both are checked before anything uses the value, so that a layer count
of ``1e9`` is refused before a loop over the layers, and ``"mlp_only_layers": 5`` is a one-line
error, not a ``TypeError``. What the model cannot price is refused naming the key, never silently
approximated: an MLP whose shape the model type does not say (gated or not), linear-attention layers outside
Qwen3-Next and state-space layers, a sliding window whose layers are not known.
"""

from __future__ import annotations

import re
from typing import Any, cast

from roofline.spec import limits
from roofline.spec.hf_renamed import KEY_TYPES_BY_MODEL, LIMIT_OF, renamed_config

#: mixture-of-experts decoders whose config.json keys :func:`moe_fields` reads
MOE_TYPES = {"mixtral", "qwen2_moe", "qwen3_moe", "olmoe", "gpt_oss", "glm4_moe", "qwen3_next"}
#: decoders with linear-attention layers of a fixed-size state (:func:`linear_attention_fields`)
LINEAR_TYPES = {"qwen3_next"}
#: decoders with multi-head latent attention (:func:`mla_fields`) and DeepSeekMoE experts
MLA_TYPES = {"deepseek_v2", "deepseek_v3", "kimi_k2"}

ENCODER_TYPES = {"bert", "roberta", "xlm-roberta", "distilbert", "electra", "camembert", "ernie", "mpnet"}

#: decoders by the shape of their MLP: gated (SiLU or GELU of a gate times an up projection, then down:
#: Llama, Mistral, Qwen, Gemma's GeGLU, Phi-3's fused gate_up, DeepSeek-MoE's experts) or plain (up, the
#: activation, down: StarCoder2's c_fc/c_proj). The activation alone does not tell: Gemma's
#: gelu_pytorch_tanh is gated, StarCoder2's is not.
GATED_DECODERS = {"llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2", "gemma3_text", "llama4_text", "phi3",
                  "granite", "olmo", "olmo2", "deepseek", "chatglm", *MOE_TYPES, *MLA_TYPES}

#: multimodal checkpoints whose text model is their ``text_config`` (its model type when it names none): the
#: text decoder is priced, the vision tower and projector are not counted
TEXT_CONFIG_TYPES = {"gemma3": "gemma3_text", "llama4": "llama4_text"}

#: transformers' Gemma3TextConfig defaults for the keys Gemma 3's published text_config leaves out (gemma-3-27b's
#: gives no vocab_size, max_position_embeddings or sliding_window_pattern): src/transformers/models/gemma3/
#: configuration_gemma3.py, ``Gemma3TextConfig.__init__``
GEMMA3_TEXT_DEFAULTS: dict[str, Any] = {"vocab_size": 262_208, "max_position_embeddings": 131_072, "tie_word_embeddings": True,
                        "sliding_window_pattern": 6, "hidden_activation": "gelu_pytorch_tanh"}
#: Falcon's keys are renamed first (:mod:`roofline.spec.hf_renamed`); so are ChatGLM's
PLAIN_DECODERS = {"starcoder2", "falcon"}
DECODER_TYPES = GATED_DECODERS | PLAIN_DECODERS

#: the model_type of a transformers architecture class, by its name without ``For...`` / ``Model`` (lower case, no
#: ``_``): a config.json without ``model_type`` is typed from its ``architectures`` when they all name one of these
ARCHITECTURE_TYPES = {
    "llama": "llama", "mistral": "mistral", "qwen2": "qwen2", "qwen3": "qwen3", "qwen2moe": "qwen2_moe",
    "qwen3moe": "qwen3_moe", "gemma": "gemma", "gemma2": "gemma2", "phi3": "phi3", "starcoder2": "starcoder2",
    "mixtral": "mixtral", "olmoe": "olmoe", "granite": "granite", "olmo": "olmo", "olmo2": "olmo2",
    "deepseek": "deepseek", "deepseekv2": "deepseek_v2", "deepseekv3": "deepseek_v3", "gptoss": "gpt_oss",
    "glm4moe": "glm4_moe", "falcon": "falcon", "chatglm": "chatglm", "qwen3next": "qwen3_next",
    "bert": "bert", "roberta": "roberta", "xlmroberta": "xlm-roberta",
    "distilbert": "distilbert", "electra": "electra", "camembert": "camembert", "ernie": "ernie", "mpnet": "mpnet",
}
_ARCH_SUFFIX = re.compile(r"(For[A-Za-z]+|Model|LMHeadModel)$")


def model_type_of(cfg: dict[str, Any]) -> str:
    """The config's ``model_type`` (lower case); without one, the type its ``architectures`` all name
    (``LlamaForCausalLM`` -> ``llama``), else a ConfigError naming the key: a config that names no type was
    once priced as an encoder (a Llama-3.1-8B config: 6.16e9 parameters instead of 8.03e9)."""
    given = cfg.get("model_type")
    if isinstance(given, str) and given.strip():
        return given.strip().lower()
    archs = cfg.get("architectures") or []
    types = {ARCHITECTURE_TYPES.get(_ARCH_SUFFIX.sub("", a).replace("_", "").lower()) for a in archs}
    if len(types) == 1 and None not in types:
        return cast(str, types.pop())
    said = f"architectures {archs} name no single known type" if archs else "no architectures either"
    raise ConfigError("model_type", f"missing ({said}): add the model_type of the model (llama, qwen2, bert, ...; "
                                    "transformers writes it in every config.json)")


# DistilBERT spells the usual keys its own way.
_ALIASES = {
    "dim": "hidden_size",
    "hidden_dim": "intermediate_size",
    "n_layers": "num_hidden_layers",
    "n_heads": "num_attention_heads",
    "activation": "hidden_act",
}

INT, LIST_INT, LIST_STR = int, "list of whole numbers", "list of strings"

#: the JSON type of every key read here (after the DistilBERT aliases); anything else is refused, since a
#: lax reading would take ``"mlp_bias": "false"`` as True, ``"hidden_size": true`` as 1 and ``"mlp_only_layers":
#: 5`` as a list
KEY_TYPES: dict[str, Any] = {
    "model_type": str, "architectures": LIST_STR, "is_decoder": bool, "hidden_act": str, "norm_type": str,
    "hidden_size": INT, "intermediate_size": INT, "num_hidden_layers": INT, "num_attention_heads": INT,
    "num_key_value_heads": INT, "head_dim": INT, "vocab_size": INT, "max_position_embeddings": INT,
    "type_vocab_size": INT, "tie_word_embeddings": bool, "embedding_size": INT, "attention_bias": bool,
    "mlp_bias": bool,
    "use_bias": bool,
    # mixture of experts
    "num_local_experts": INT, "num_experts": INT, "n_routed_experts": INT, "num_experts_per_tok": INT,
    "experts_per_token": INT,
    "moe_intermediate_size": INT, "shared_expert_intermediate_size": INT, "n_shared_experts": INT,
    "decoder_sparse_step": INT, "mlp_only_layers": LIST_INT, "first_k_dense_replace": INT, "moe_layer_freq": INT,
    # multi-head latent attention and multi-token prediction
    "kv_lora_rank": INT, "q_lora_rank": INT, "qk_nope_head_dim": INT, "qk_rope_head_dim": INT, "v_head_dim": INT,
    "num_nextn_predict_layers": INT,
    # Gemma 3 and Llama 4
    "sliding_window_pattern": INT, "attention_chunk_size": INT, "no_rope_layers": LIST_INT,
    "interleave_moe_layer_step": INT, "moe_layers": LIST_INT, "intermediate_size_mlp": INT,
    # GLM-4.5 (glm4_moe)
    "use_qk_norm": bool, "partial_rotary_factor": float,
    # Qwen3-Next's linear attention
    "full_attention_interval": INT, "linear_num_key_heads": INT, "linear_num_value_heads": INT,
    "linear_key_head_dim": INT, "linear_value_head_dim": INT, "linear_conv_kernel_dim": INT,
    # sliding-window attention
    "sliding_window": INT, "use_sliding_window": bool, "max_window_layers": INT, "layer_types": LIST_STR,
}
_TYPE_WORDS = {float: "a number", str: "a string", LIST_STR: "a list of strings", bool: "true or false", INT: "a whole number",
               LIST_INT: "a list of whole numbers"}

#: the range of a config.json key that is not a ModelSpec field of the same name
_LIMIT_KEYS = {"num_local_experts": "model.num_experts", "n_routed_experts": "model.num_experts",
               "experts_per_token": "model.num_experts_per_tok",
               "decoder_sparse_step": "config.decoder_sparse_step", "first_k_dense_replace":
               "config.first_k_dense_replace", "moe_layer_freq": "config.moe_layer_freq",
               "n_shared_experts": "config.n_shared_experts", "max_window_layers": "config.max_window_layers",
               "num_nextn_predict_layers": "model.nextn_predict_layers",
               "sliding_window_pattern": "config.sliding_window_pattern",
               "attention_chunk_size": "model.sliding_window", "interleave_moe_layer_step": "config.decoder_sparse_step",
               "intermediate_size_mlp": "model.intermediate_size",
               "full_attention_interval": "model.num_hidden_layers", "linear_num_key_heads": "model.num_attention_heads",
               "linear_num_value_heads": "model.num_attention_heads", "linear_key_head_dim": "model.head_dim",
               "linear_value_head_dim": "model.head_dim", "linear_conv_kernel_dim": "model.head_dim"}

#: architectures whose layers are not the GEMMs this model counts: refused, not estimated as dense
_UNMODELLED_KEYS = {
    "hybrid_override_pattern": "hybrid Mamba/SSM layers (Nemotron-H)",
    "attn_layer_period": "hybrid Mamba/SSM layers (Jamba)",
    "attn_layer_offset": "hybrid Mamba/SSM layers (Jamba)",
    "attn_layer_indices": "hybrid Mamba/SSM layers",
    "ssm_cfg": "state-space (Mamba) layers",
    "full_attention_interval": "linear-attention layers (Gated DeltaNet, as in Qwen3-Next: three of every four "
                               "layers keep a recurrent state instead of a KV cache)",
    "sliding_window_pattern": "interleaved local and global attention whose pattern this tool reads for Gemma 3 only",
    "attention_chunk_size": "chunked local attention, read for Llama 4 only",
}
#: the keys of _UNMODELLED_KEYS that these model types define and this tool reads
_MODELLED_BY_TYPE = {"sliding_window_pattern": {"gemma3_text"}, "attention_chunk_size": {"llama4_text"}}
_LINEAR_KEYS = ("linear_num_", "linear_key_", "linear_value_", "linear_conv_")
_SSM_PREFIXES = ("mamba_", "ssm_", *_LINEAR_KEYS)
_NON_ATTENTION_LAYER = re.compile(r"mamba|ssm|linear|conv|recurrent|rnn|delta", re.I)
#: the kinds of layer a ``layer_types`` list may name
_LAYER_TYPES = {"full_attention", "sliding_attention", "chunked_attention"}


class ConfigError(ValueError):
    """A config.json problem, with the key it is about."""

    def __init__(self, key: str, reason: str) -> None:
        self.key, self.reason = key, reason
        super().__init__(f"{key}: {reason}")


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _is(want: Any, value: Any) -> bool:
    if want is LIST_STR:
        return type(value) is list and all(type(v) is str for v in value)
    if want is LIST_INT:
        return type(value) is list and all(type(v) is int for v in value)
    if want is float:  # JSON writes 1.0 and 1 alike
        return type(value) in (int, float)
    return type(value) is want


def _check_types(cfg: dict[str, Any]) -> None:
    """Every key read here has its JSON type, and every number its range (before anything loops over it); a Falcon or
    ChatGLM config's own keys too (:data:`~roofline.spec.hf_renamed.KEY_TYPES_BY_MODEL`)."""
    own = KEY_TYPES_BY_MODEL.get(str(cfg.get("model_type", "")).lower(), {})
    for key, value in cfg.items():
        name = _ALIASES.get(key, key)
        want = own.get(key) or KEY_TYPES.get(name)
        if want is None or value is None:
            continue
        if not _is(want, value):
            raise ConfigError(key, f"must be {_TYPE_WORDS[want]}, got {_shown(value)}")
        limit = _LIMIT_KEYS.get(name) or (LIMIT_OF.get(key) if key in own else None) or f"model.{name}"
        if want is INT and limit in limits.LIMITS:
            if value < 1 <= limits.LIMITS[limit].low:
                raise ConfigError(key, f"must be a positive whole number, got {value}")
            try:
                limits.check(limit, value, key)
            except ValueError as e:
                raise ConfigError(key, str(e).split(": ", 1)[1]) from None


def _check_modelled(cfg: dict[str, Any]) -> None:
    model_type = str(cfg.get("model_type", "")).lower()
    for key, value in cfg.items():
        if value is None or value is False:
            continue
        if model_type in _MODELLED_BY_TYPE.get(key, ()):
            continue
        if model_type in LINEAR_TYPES and (key in ("full_attention_interval", "layer_types") or
                                           key.startswith(_LINEAR_KEYS)):
            continue  # read by linear_attention_fields, which refuses a kind of layer it does not know
        what = _UNMODELLED_KEYS.get(key)
        if what is None and key.startswith(_SSM_PREFIXES):
            what = "linear-attention layers" if key.startswith("linear_") else "hybrid Mamba/SSM layers"
        if what is None and key in ("layer_types", "block_types") and isinstance(value, list):
            odd = sorted({str(v) for v in value if _NON_ATTENTION_LAYER.search(str(v))})
            what = f"layers that are not attention ({', '.join(odd)})" if odd else None
        if what:
            raise ConfigError(key, f"{what}: not modelled; roofline counts attention and MLP GEMMs only, and "
                                   "refuses this config rather than estimate it as a transformer of softmax attention")


def hf_config_to_fields(cfg: dict[str, Any], name: str, source: str) -> dict[str, Any]:
    """Map a config.json dict to ModelSpec fields (validation happens in ModelSpec).

    Raises :class:`ConfigError` (naming the key) for a value of the wrong JSON type or outside its range,
    and for architectures that are not modelled. A multimodal checkpoint of :data:`TEXT_CONFIG_TYPES` is read
    as its text model (``text_config``)."""
    _check_types(cfg)
    cfg, outer = text_model(cfg)
    _check_types(cfg)
    _check_modelled(cfg)
    cfg, renamed = renamed_config(cfg, model_type_of(cfg))
    cfg = {_ALIASES.get(k, k): v for k, v in cfg.items()}
    model_type = model_type_of(cfg)
    archs = " ".join(cfg.get("architectures") or [])
    if model_type in DECODER_TYPES or "CausalLM" in archs or cfg.get("is_decoder") is True:
        family = "decoder"
    elif model_type in ENCODER_TYPES:
        family = "encoder"
    else:
        raise ConfigError("model_type",
                          f"'{model_type}' is not a known encoder or decoder "
                          f"(known: {', '.join(sorted(ENCODER_TYPES | DECODER_TYPES))})")
    fields: dict[str, Any] = {
        "name": name,
        "description": f"{model_type or 'transformer'} from {source}" + (
            f" (the text model of a {outer} checkpoint; its vision tower not counted)" if outer else ""),
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
    if family == "encoder":
        latent = next((k for k in ("kv_lora_rank", "q_lora_rank") if cfg.get(k)), None)
        if latent:
            raise ConfigError(latent, "multi-head latent attention in an encoder: not modelled (it is priced for "
                                      "decoders: DeepSeek-V2/V3, Kimi-K2)")
        embedding = cfg.get("embedding_size")
        if embedding is not None and embedding != cfg.get("hidden_size"):
            # ELECTRA-small: 128-wide embeddings projected to the 256-wide hidden size by a linear layer this model
            # does not count (the embeddings alone would be priced at the hidden width: +29% parameters)
            raise ConfigError("embedding_size", f"{embedding}, not hidden_size {cfg.get('hidden_size')}: embeddings "
                              "projected to the hidden size (ELECTRA-small's) are not priced here; a config whose "
                              "embedding_size equals hidden_size is")
        return fields
    layers = cfg.get("num_hidden_layers") or 0
    moe = moe_fields(cfg, model_type)  # an expert key this tool does not read is the more telling refusal
    fields["gated_mlp"] = _gated(cfg, model_type)
    fields["qk_norm"] = model_type in {"qwen3", "qwen3_moe", "olmoe", "qwen3_next"}
    bias = cfg.get("use_bias")  # StarCoder2: every projection and the MLP carry a bias
    qwen2 = model_type in ("qwen2", "qwen2_moe")  # q/k/v biases, none on the output projection
    fields["attention_bias"] = bool(_first(cfg.get("attention_bias"), bias, qwen2))
    if qwen2:
        fields["o_proj_bias"] = False
    fields["mlp_bias"] = bool(_first(cfg.get("mlp_bias"), bias, False))
    norm = cfg.get("norm_type")
    if norm is not None:
        if norm not in ("layer_norm", "rms_norm"):
            raise ConfigError("norm_type", f"'{norm}' is not a norm this tool prices (layer_norm, rms_norm)")
        fields["norm"] = "layer" if norm == "layer_norm" else "rms"
    elif model_type == "starcoder2":
        fields["norm"] = "layer"
    if model_type in ("gemma2", "gemma3_text"):  # a norm after attention and after the MLP as well as before each
        fields["norms_per_layer"] = 4
    if model_type == "gemma3_text":  # per-head RMSNorm on q and k (Gemma3Attention's q_norm, k_norm)
        fields["qk_norm"] = True
    if model_type == "llama4_text":  # dense layers use intermediate_size_mlp; experts and the shared one intermediate_size
        if cfg.get("intermediate_size_mlp") is not None:
            fields["intermediate_size"] = cfg["intermediate_size_mlp"]
    if model_type == "glm4_moe":  # Glm4MoeAttention: q/k/v biases (attention_bias), none on o_proj; q/k norms if asked
        fields["o_proj_bias"] = False
        fields["qk_norm"] = bool(cfg.get("use_qk_norm"))
    _check_rotary_fraction(cfg)
    if model_type == "gpt_oss":  # transformers' GptOssExperts carry biases, its router too
        fields["expert_bias"] = True
        fields["attention_sinks"] = True  # GptOssAttention's sinks: one learned logit per head and layer
    fields.update(moe)
    fields.update(mla_fields(cfg))
    if model_type in LINEAR_TYPES:
        fields.update(linear_attention_fields(cfg, layers))
    else:
        fields.update(sliding_window_fields(cfg, model_type, layers))
    fields.update(renamed)
    return fields


def _check_rotary_fraction(cfg: dict[str, Any]) -> None:
    """``partial_rotary_factor`` (GLM-4.5 0.5, Qwen3-Next 0.25): the share of each head's dimensions rotated. It
    changes no shape and costs no GEMM work (rotary embeddings are left out of every step); only its range is
    checked."""
    f = cfg.get("partial_rotary_factor")
    if f is not None and not 0 < f <= 1:
        raise ConfigError("partial_rotary_factor", f"the share of each head's dimensions rotated, in (0, 1]; got {f}")


# ------------------------------------------------------------------ linear attention (Qwen3-Next)

_LINEAR_DIMS = ("linear_num_key_heads", "linear_num_value_heads", "linear_key_head_dim", "linear_value_head_dim",
                "linear_conv_kernel_dim")


def linear_attention_fields(cfg: dict[str, Any], layers: int) -> dict[str, Any]:
    """Qwen3-Next's hybrid: its Gated DeltaNet layers (``layer_types`` ``linear_attention``, else every layer but each
    ``full_attention_interval``-th: transformers' Qwen3NextConfig, ``"linear_attention" if bool((i + 1) % interval)``)
    with their dimensions (:data:`_LINEAR_DIMS`, each required), and the full-attention layers' output gate
    (Qwen3NextAttention's ``q_proj`` of ``2 heads head_dim``). A sliding window or a kind of layer other than these two
    is refused naming the key."""
    if cfg.get("use_sliding_window") and cfg.get("sliding_window"):
        raise ConfigError("use_sliding_window", "a sliding window in a linear-attention hybrid is not modelled")
    types = cfg.get("layer_types")
    if types is not None:
        if len(types) != layers:
            raise ConfigError("layer_types", f"{len(types)} entries for {layers} layers (num_hidden_layers)")
        odd = sorted(set(types) - {"linear_attention", "full_attention"})
        if odd:
            raise ConfigError("layer_types", f"{', '.join(map(repr, odd[:3]))}: not a kind of layer this tool prices "
                                             "in a hybrid (linear_attention, full_attention)")
        linear = tuple(i for i, t in enumerate(types) if t == "linear_attention")
    else:
        interval = cfg.get("full_attention_interval")
        if interval is None:
            raise ConfigError("full_attention_interval", "a linear-attention hybrid names its full-attention layers "
                                                         "(full_attention_interval or layer_types)")
        linear = tuple(i for i in range(layers) if (i + 1) % interval)
    if not linear:
        return {"attention_output_gate": True}
    missing = [k for k in _LINEAR_DIMS if not cfg.get(k)]
    if missing:
        raise ConfigError(missing[0], f"linear-attention layers need {', '.join(_LINEAR_DIMS)}")
    if cfg["linear_num_value_heads"] % cfg["linear_num_key_heads"]:
        raise ConfigError("linear_num_value_heads", f"{cfg['linear_num_value_heads']} is not a multiple of "
                                                    f"linear_num_key_heads {cfg['linear_num_key_heads']}")
    if len(linear) == layers:
        raise ConfigError("full_attention_interval", "every layer linear: a model without softmax attention is not "
                                                     "modelled")
    return {"linear_attention_layers": linear, "attention_output_gate": True, **{k: cfg[k] for k in _LINEAR_DIMS}}


# ------------------------------------------------------------------ multi-head latent attention

_MLA_DIMS = ("qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim")


def mla_fields(cfg: dict[str, Any]) -> dict[str, Any]:
    """Multi-head latent attention's ModelSpec fields (DeepSeek-V2/V3, Kimi-K2): ``kv_lora_rank``, ``q_lora_rank``
    (null in DeepSeek-V2-Lite: one ``q_proj``), ``qk_nope_head_dim``, ``qk_rope_head_dim``, ``v_head_dim``; and
    ``num_nextn_predict_layers`` (multi-token prediction: in the footprint, not in a step). {} without
    ``kv_lora_rank``; a latent without its head dimensions is refused naming the first missing key."""
    out: dict[str, Any] = {}
    if cfg.get("num_nextn_predict_layers"):
        out["nextn_predict_layers"] = cfg["num_nextn_predict_layers"]
    if not cfg.get("kv_lora_rank"):
        if cfg.get("q_lora_rank"):
            raise ConfigError("q_lora_rank", "a compressed query without kv_lora_rank: not a latent attention this "
                                             "tool knows")
        return out
    missing = [k for k in _MLA_DIMS if not cfg.get(k)]
    if missing:
        raise ConfigError(missing[0], f"multi-head latent attention (kv_lora_rank {cfg['kv_lora_rank']}) needs "
                                      f"{', '.join(_MLA_DIMS)}")
    out.update({k: cfg[k] for k in ("kv_lora_rank", *_MLA_DIMS)})
    if cfg.get("q_lora_rank"):
        out["q_lora_rank"] = cfg["q_lora_rank"]
    out["attention_bias"] = bool(cfg.get("attention_bias"))
    return out


def text_model(cfg: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """The text decoder's config of a multimodal checkpoint (:data:`TEXT_CONFIG_TYPES`: its ``text_config``, with the
    outer ``tie_word_embeddings`` when the text config gives none, and Gemma 3's defaults for the keys its published
    text_config leaves out, :data:`GEMMA3_TEXT_DEFAULTS`), and the outer model type; any other config as it is."""
    outer = str(cfg.get("model_type", "")).lower()
    text = cfg.get("text_config")
    if outer in TEXT_CONFIG_TYPES and not isinstance(text, dict):
        raise ConfigError("text_config", f"a '{outer}' checkpoint's text model is its text_config; none is given")
    out = dict(cast(dict[str, Any], text)) if outer in TEXT_CONFIG_TYPES else dict(cfg)
    if outer in TEXT_CONFIG_TYPES:
        out.setdefault("model_type", TEXT_CONFIG_TYPES[outer])
        if "tie_word_embeddings" not in out and "tie_word_embeddings" in cfg:
            out["tie_word_embeddings"] = cfg["tie_word_embeddings"]
    if str(out.get("model_type", "")).lower() == "gemma3_text":
        for key, value in GEMMA3_TEXT_DEFAULTS.items():
            if key == "sliding_window_pattern" and out.get("layer_types") is not None:
                continue
            out.setdefault(key, value)
        if isinstance(out["hidden_activation"], str):  # Gemma's name for hidden_act
            out.setdefault("hidden_act", out["hidden_activation"])
    return out, (outer if outer in TEXT_CONFIG_TYPES else None)


def _first(*values: Any) -> Any:
    return next((v for v in values if v is not None), None)


def _gated(cfg: dict[str, Any], model_type: str) -> bool:
    """A decoder's MLP shape, by its model type; refused (naming hidden_act) where the type does not say."""
    if model_type in GATED_DECODERS:
        return True
    if model_type in PLAIN_DECODERS:
        return False
    act = cfg.get("hidden_act", "not given")
    raise ConfigError("hidden_act", f"'{act}' in a '{model_type or 'unnamed'}' decoder: whether its MLP is gated "
                      "(a gate and an up projection, as Llama's and Gemma's) or plain (up, activation, down, as "
                      "StarCoder2's) is not known for this model_type, and the activation does not say; known decoder "
                      f"types: {', '.join(sorted(DECODER_TYPES))} (or write a model .toml with gated_mlp)")


# ------------------------------------------------------------------ sliding-window attention

#: model types whose ``sliding_window`` applies to every layer
_WINDOW_EVERY_LAYER = {"mistral", "mixtral", "starcoder2", "phi3"}
#: model types whose ``sliding_window`` applies only with ``use_sliding_window``, to the layers from
#: ``max_window_layers`` on (transformers' Qwen2 attention)
_WINDOW_FROM_LAYER = {"qwen2", "qwen2_moe", "qwen3", "qwen3_moe"}


def sliding_window_fields(cfg: dict[str, Any], model_type: str, layers: int) -> dict[str, Any]:
    """``sliding_window`` and ``sliding_window_layers`` of ModelSpec:

    - ``layer_types`` (newer transformers): the layers named ``sliding_attention`` have the window;
    - Mistral, Mixtral, StarCoder2, Phi-3: every layer;
    - Gemma 2: the even layers (transformers' ``is_sliding = not layer_idx % 2``), the odd ones global;
    - Qwen2/3 (and their MoE): only when ``use_sliding_window``, the layers from ``max_window_layers`` on.

    - Gemma 3 (``gemma3_text``) without ``layer_types``: every layer but each ``sliding_window_pattern``-th
      (transformers' Gemma3: ``is_sliding = bool((layer_idx + 1) % sliding_window_pattern)``; 5 local to 1 global);
    - Llama 4 (``llama4_text``): chunked attention (``attention_chunk_size``) in the layers with RoPE (``layer_types``
      ``chunked_attention``, else ``no_rope_layers[i] == 1``, else all but every 4th: transformers' Llama4TextConfig
      defaults), priced as a window of the chunk (``chunked_attention``); the layers without RoPE attend globally.

    A window on another model type is refused, naming the key: which of its layers it applies to is not known.
    """
    if model_type == "llama4_text":
        return _chunked_fields(cfg, layers)
    window = cfg.get("sliding_window") or None
    types = cfg.get("layer_types")
    if types is not None:
        if len(types) != layers:
            raise ConfigError("layer_types", f"{len(types)} entries for {layers} layers (num_hidden_layers)")
        odd = sorted(set(types) - _LAYER_TYPES)
        if "chunked_attention" in types:
            odd = sorted({*odd, "chunked_attention"})
        if odd:
            raise ConfigError("layer_types", f"{', '.join(map(repr, odd[:3]))}: not a kind of layer this tool prices "
                              f"(known: {', '.join(sorted(_LAYER_TYPES))})")
        sliding = tuple(i for i, t in enumerate(types) if t == "sliding_attention")
        if not sliding:
            return {}
        if window is None:
            raise ConfigError("sliding_window", "layer_types names sliding_attention layers but the config gives no "
                                                "sliding_window")
        return {"sliding_window": window, "sliding_window_layers": None if len(sliding) == layers else sliding}
    if window is None:
        return {}
    if model_type in _WINDOW_FROM_LAYER:
        if not cfg.get("use_sliding_window"):
            return {}  # the window is off (use_sliding_window false, the default)
        first = cfg.get("max_window_layers")
        first = layers if first is None else first
        if first >= layers:
            return {}
        return {"sliding_window": window, "sliding_window_layers": None if first == 0 else tuple(range(first, layers))}
    if model_type == "gemma2":
        return {"sliding_window": window, "sliding_window_layers": tuple(range(0, layers, 2))}
    if model_type == "gemma3_text":
        if window is None:
            return {}
        pattern = cfg.get("sliding_window_pattern") or GEMMA3_TEXT_DEFAULTS["sliding_window_pattern"]
        sliding = tuple(i for i in range(layers) if (i + 1) % pattern)
        if not sliding:
            return {}
        return {"sliding_window": window, "sliding_window_layers": None if len(sliding) == layers else sliding}
    if model_type in _WINDOW_EVERY_LAYER:
        return {"sliding_window": window}
    raise ConfigError("sliding_window", f"{window} in a '{model_type or 'unnamed'}' config: which layers attend "
                      "through the window is not known for this model type (give layer_types, or write a model "
                      ".toml with sliding_window and sliding_window_layers)")


def _chunked_fields(cfg: dict[str, Any], layers: int) -> dict[str, Any]:
    """Llama 4's chunked attention as a window on its layers with RoPE (:func:`sliding_window_fields`)."""
    chunk = cfg.get("attention_chunk_size")
    if not chunk:
        return {}
    types = cfg.get("layer_types")
    if types is not None:
        if len(types) != layers:
            raise ConfigError("layer_types", f"{len(types)} entries for {layers} layers (num_hidden_layers)")
        chunked = tuple(i for i, t in enumerate(types) if t == "chunked_attention")
    else:
        rope = cfg.get("no_rope_layers")
        if rope is not None and len(rope) != layers:
            raise ConfigError("no_rope_layers", f"{len(rope)} entries for {layers} layers (num_hidden_layers)")
        rope = rope if rope else [int((i + 1) % 4 != 0) for i in range(layers)]
        chunked = tuple(i for i, r in enumerate(rope) if r)
    if not chunked:
        return {}
    return {"sliding_window": chunk, "chunked_attention": True,
            "sliding_window_layers": None if len(chunked) == layers else chunked}


# ------------------------------------------------------------------ mixture of experts

#: config.json keys of a mixture of experts that :func:`moe_fields` reads, or that do not change
#: the shapes (router losses and options, top-k normalisation, grouped routing of DeepSeek)
MOE_KEYS = {
    "num_local_experts", "num_experts", "n_routed_experts", "num_experts_per_tok", "experts_per_token",
    "moe_intermediate_size",
    "shared_expert_intermediate_size", "n_shared_experts", "decoder_sparse_step", "mlp_only_layers",
    "first_k_dense_replace", "moe_layer_freq", "moe_layers",
    "output_router_logits", "router_aux_loss_coef", "norm_topk_prob", "router_jitter_noise", "routed_scaling_factor",
    "topk_method", "n_group", "topk_group", "scoring_func", "aux_loss_alpha", "seq_aux", "ep_size",
}


def moe_fields(cfg: dict[str, Any], model_type: str) -> dict[str, Any]:
    """The mixture-of-experts fields of ModelSpec from a decoder's config.json; {} for a dense model.

    - routed experts ``E``: ``num_local_experts`` (Mixtral, gpt-oss), ``num_experts`` (Qwen2/3-MoE, OLMoE),
      ``n_routed_experts`` (DeepSeek); top-k: ``num_experts_per_tok`` (gpt-oss also ships it as
      ``experts_per_token``, read when it is the only one and refused when the two differ)
    - one expert's width: ``moe_intermediate_size``, else ``intermediate_size`` (Mixtral, OLMoE)
    - shared experts: ``shared_expert_intermediate_size`` (Qwen2-MoE, with its sigmoid gate), or
      ``n_shared_experts x moe_intermediate_size`` (DeepSeek)
    - Llama 4: routed experts and one shared expert of ``intermediate_size`` on the layers of ``moe_layers`` (else
      every ``interleave_moe_layer_step``-th, from ``step - 1``: transformers' Llama4TextConfig); the other layers
      dense, of ``intermediate_size_mlp``
    - dense layers among the MoE ones: Qwen2/3-MoE make layer ``i`` sparse when ``(i + 1) %
      decoder_sparse_step == 0`` and ``i`` is not in ``mlp_only_layers``; DeepSeek when ``i >=
      first_k_dense_replace`` and ``i % moe_layer_freq == 0``. Dense layers use ``intermediate_size``.

    A key that names experts but is none of these is refused (one line naming it) rather than
    silently modelled as a dense MLP. The keys' types and ranges were checked before (``_check_types``).
    """
    _refuse_unknown_moe_keys(cfg)
    if cfg.get("moe_layers") is not None and model_type != "llama4_text":
        raise ConfigError("moe_layers", f"read for Llama 4 only; in a '{model_type}' config which layers it names is "
                                        "not known")
    experts = next((cfg[k] for k in ("num_local_experts", "num_experts", "n_routed_experts") if cfg.get(k)), None)
    if not experts:
        return {}
    top_k = cfg.get("num_experts_per_tok")
    alias = cfg.get("experts_per_token")  # gpt-oss ships both, equal
    if top_k is not None and alias is not None and alias != top_k:
        raise ConfigError("experts_per_token", f"{alias} differs from num_experts_per_tok {top_k}: which top-k the "
                                               "model routes to is not clear")
    top_k = alias if top_k is None else top_k
    if top_k is None:
        raise ConfigError("num_experts_per_tok", "a mixture of experts needs its top-k (num_experts_per_tok)")
    layers = int(cfg.get("num_hidden_layers") or 0)
    out: dict[str, Any] = {"num_experts": experts, "num_experts_per_tok": top_k}
    if cfg.get("moe_intermediate_size") is not None:
        out["moe_intermediate_size"] = cfg["moe_intermediate_size"]
    if cfg.get("shared_expert_intermediate_size"):
        out["shared_expert_intermediate_size"] = cfg["shared_expert_intermediate_size"]
        out["shared_expert_gate"] = model_type in ("qwen2_moe", "qwen3_next")
    elif cfg.get("n_shared_experts"):
        width = cfg.get("moe_intermediate_size") or cfg.get("intermediate_size") or 0
        out["shared_expert_intermediate_size"] = cfg["n_shared_experts"] * width
    if model_type == "llama4_text":  # a shared expert of intermediate_size beside the routed ones, on the MoE layers
        out["moe_intermediate_size"] = cfg.get("intermediate_size")
        out["shared_expert_intermediate_size"] = cfg.get("intermediate_size")
        step = cfg.get("interleave_moe_layer_step") or 1
        moe = cfg.get("moe_layers")
        moe = set(range(step - 1, layers, step) if moe is None else moe)
        outside = sorted(i for i in moe if not 0 <= i < layers)
        if outside:
            raise ConfigError("moe_layers", f"layer {outside[0]} is not a layer of the {layers} (num_hidden_layers)")
        out["dense_layers"] = tuple(i for i in range(layers) if i not in moe)
        return out
    dense_only = set(cfg.get("mlp_only_layers") or ())
    outside = sorted(i for i in dense_only if not 0 <= i < layers)
    if outside:
        raise ConfigError("mlp_only_layers", f"layer {outside[0]} is not a layer of the {layers} (num_hidden_layers)")
    out["dense_layers"] = tuple(i for i in range(layers) if not _is_moe_layer(cfg, dense_only, i))
    return out


def _is_moe_layer(cfg: dict[str, Any], dense_only: set[int], i: int) -> bool:
    if i in dense_only:
        return False
    step = cfg.get("decoder_sparse_step") or 1
    if (i + 1) % step:
        return False
    first_dense = cfg.get("first_k_dense_replace") or 0
    freq = cfg.get("moe_layer_freq") or 1
    return i >= first_dense and i % freq == 0


def _refuse_unknown_moe_keys(cfg: dict[str, Any], where: str = "", depth: int = 0) -> None:
    for key, value in cfg.items():
        if isinstance(value, dict):
            if depth < 8:  # sub-configs (ffn_config, text_config) a few levels deep; deeper is no real config
                _refuse_unknown_moe_keys(value, f"{where}{key}.", depth + 1)
            continue
        low = key.lower()
        if ("expert" in low or low.startswith("moe_")) and key not in MOE_KEYS and value not in (None, 0, False, [], ""):
            raise ConfigError(f"{where}{key}", "a mixture-of-experts key this tool does not model "
                              f"(known: {', '.join(sorted(MOE_KEYS))})")
