"""``--model FILE.gguf``: a model's architecture and per-tensor types from a local GGUF file.

Read with the ``gguf`` package's ``GGUFReader``, which memory-maps the file: only the header
(metadata and tensor infos) is touched, never the tensor data. The architecture keys are
llama.cpp's (``{arch}.block_count``, ``{arch}.embedding_length``, ...; gguf-py ``constants.Keys``);
what the keys leave open is read from the tensors present (tied embeddings: no
``output.weight``; biases; q/k norms; which layers have a router). Every tensor's GGML type and
byte size go into ``ModelSpec.gguf_tensors``: the precision ``gguf`` prices the weights as stored.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from roofline.errors import SpecError, UserError

#: llama.cpp architectures read here (dense and mixture-of-experts decoders with llama-style blocks)
ARCHITECTURES = {"llama", "mistral", "qwen2", "qwen3", "qwen2moe", "qwen3moe", "olmoe", "olmo2", "granite", "phi3"}


def _require_gguf():
    try:
        import gguf
    except ImportError:
        raise UserError("reading a .gguf file needs the gguf package: pip install 'roofline[gguf]'") from None
    return gguf


def ggml_type_name(t: Any) -> str:
    """llama.cpp's spelling of a GGMLQuantizationType: Q4_K -> q4_K, Q8_0 -> q8_0, F16 -> f16."""
    name = t.name.lower()
    return name[:-2] + "_K" if name.endswith("_k") else name


def read_gguf_fields(path: Path) -> dict[str, Any]:
    """ModelSpec fields from the file's header (validation happens in ModelSpec)."""
    gguf = _require_gguf()
    try:
        reader = gguf.GGUFReader(str(path), "r")
    except (ValueError, OSError, KeyError) as e:
        raise SpecError(str(path), "", f"not a readable GGUF file: {e}") from None

    def field(key: str, default: Any = None) -> Any:
        f = reader.get_field(key)
        if f is None:
            return default
        value = f.contents()
        return value

    arch = field("general.architecture")
    if arch not in ARCHITECTURES:
        raise SpecError(str(path), "general.architecture",
                        f"'{arch}' is not an architecture this tool reads (known: {', '.join(sorted(ARCHITECTURES))})")
    tensors = {t.name: t for t in reader.tensors}

    def a(key: str, default: Any = None) -> Any:
        return field(f"{arch}.{key}", default)

    hidden, heads = a("embedding_length"), a("attention.head_count")
    if hidden is None or heads is None or a("block_count") is None:
        raise SpecError(str(path), f"{arch}.embedding_length", "the architecture keys are missing")
    layers = int(a("block_count"))
    tokens = field("tokenizer.ggml.tokens")
    emb = tensors.get("token_embd.weight")
    vocab = len(tokens) if tokens else (int(emb.shape[1]) if emb is not None else None)
    ffn = a("feed_forward_length")
    if isinstance(ffn, list):  # per-layer widths (some architectures): the dense MLP's
        ffn = max(ffn)
    fields: dict[str, Any] = {
        "name": field("general.name") or path.stem,
        "description": f"{arch} read from the GGUF file {path.name}",
        "source": str(path),
        "family": "decoder",
        "hidden_size": int(hidden),
        "intermediate_size": int(ffn or a("expert_feed_forward_length") or 1),
        "num_hidden_layers": layers,
        "num_attention_heads": int(heads if not isinstance(heads, list) else max(heads)),
        "vocab_size": vocab,
        "max_position_embeddings": int(a("context_length", 2048)),
        "hidden_act": "silu",
        "gated_mlp": "blk.0.ffn_gate.weight" in tensors or "blk.0.ffn_gate_exps.weight" in tensors
                     or any(n.endswith("ffn_gate.weight") for n in tensors),
        "tie_word_embeddings": "output.weight" not in tensors,
        "qk_norm": "blk.0.attn_q_norm.weight" in tensors,
        "attention_bias": "blk.0.attn_q.bias" in tensors,
        "o_proj_bias": "blk.0.attn_output.bias" in tensors,
        "mlp_bias": any(n.endswith("ffn_up.bias") for n in tensors),
    }
    kv = a("attention.head_count_kv")
    if kv is not None:
        fields["num_key_value_heads"] = int(kv if not isinstance(kv, list) else max(kv))
    key_length = a("attention.key_length")
    if key_length is not None and int(key_length) * int(fields["num_attention_heads"]) != int(hidden):
        fields["head_dim"] = int(key_length)
    experts = a("expert_count")
    if experts:
        moe = [i for i in range(layers) if f"blk.{i}.ffn_gate_inp.weight" in tensors]
        fields.update(num_experts=int(experts), num_experts_per_tok=int(a("expert_used_count")),
                      dense_layers=tuple(i for i in range(layers) if i not in moe))
        if a("expert_feed_forward_length"):
            fields["moe_intermediate_size"] = int(a("expert_feed_forward_length"))
        shexp = tensors.get(next((f"blk.{i}.ffn_up_shexp.weight" for i in moe), ""))
        if shexp is not None:
            fields["shared_expert_intermediate_size"] = int(shexp.shape[1])
            fields["shared_expert_gate"] = f"blk.{moe[0]}.ffn_gate_inp_shexp.weight" in tensors
    fields["gguf_tensors"] = tuple(
        {"name": t.name, "type": ggml_type_name(t.tensor_type), "shape": tuple(int(d) for d in t.shape),
         "elements": int(t.n_elements), "nbytes": int(t.n_bytes)}
        for t in reader.tensors
    )
    return fields


def load_gguf_model(path: Path):
    """A ModelSpec from a .gguf file (its header only)."""
    from roofline.catalog.validate import validate
    from roofline.spec.model import ModelSpec

    return validate(ModelSpec, read_gguf_fields(path), path)
