"""``--model FILE.gguf``: a model's architecture and per-tensor types from a local GGUF file.

Only the header is read (the metadata key-values and the tensor infos), never the tensor data, by a
reader bounded in every count before it loops (:data:`LIMITS`): a header of at most 256 MiB, at most a
million tensors of at most 4 dimensions, 65,536 keys, arrays of at most 2^26 items and strings of at
most 1 MiB. String arrays (a 262k-token vocabulary, its merges) are stepped over, their count kept,
not decoded. The layout is GGUF's (``gguf-py``'s ``GGUFReader``, versions 2 and 3, little-endian); the
GGML types and their block sizes are the ``gguf`` package's.

The architecture keys are llama.cpp's (``{arch}.block_count``, ``{arch}.embedding_length``, ...;
gguf-py ``constants.Keys``). Every value used is checked for its type (a whole number where one is
meant: ``embedding_length = "4096"`` is refused) and range (:mod:`roofline.spec.limits`), then
against the tensors the file stores: a header that says 4096 wide over a ``token_embd.weight`` of
2048 rows is refused (llama.cpp would not load it either), naming the key and the tensor. What the keys
leave open is read from the tensors present (tied embeddings: no ``output.weight``; biases; q/k norms;
which layers have a router). Every tensor's GGML type and byte size go into ``ModelSpec.gguf_tensors``:
the precision ``gguf`` prices the weights as stored.

The result is cached as other specs are (:mod:`roofline.catalog.cache`), keyed by the file's path,
size, modification time and inode instead of its bytes (a GGUF file is many GB): a large header is
read once.
"""

from __future__ import annotations

import mmap
import os
import struct
from dataclasses import dataclass
from math import prod
from pathlib import Path
from typing import Any

from roofline.errors import SpecError, UserError
from roofline.files.reading import open_regular
from roofline.spec import limits
from roofline.spec.gguf_types import BLOCKS, IK_LLAMA_CPP

#: llama.cpp architectures read here (dense and mixture-of-experts decoders with llama-style blocks)
ARCHITECTURES = {"llama", "mistral", "qwen2", "qwen3", "qwen2moe", "qwen3moe", "olmoe", "olmo2", "granite", "phi3"}

GGUF_MAGIC = b"GGUF"
VERSIONS = (2, 3)
#: bounds of a header, checked before any loop over what it counts
LIMITS = {"header_bytes": 256 << 20, "tensors": 1 << 20, "keys": 1 << 16, "array_items": 1 << 26,
          "string_bytes": 1 << 20, "dims": 4, "elements": 1 << 50}
#: numeric arrays kept as values (per-layer head counts and widths); longer ones are stepped over
KEEP_ARRAY = 1 << 16

# GGUFValueType: (struct format, size) of the fixed-size ones
_FIXED = {0: ("<B", 1), 1: ("<b", 1), 2: ("<H", 2), 3: ("<h", 2), 4: ("<I", 4), 5: ("<i", 4), 6: ("<f", 4),
          7: ("<?", 1), 10: ("<Q", 8), 11: ("<q", 8), 12: ("<d", 8)}
_STRING, _ARRAY = 8, 9
_INTEGER_TYPES = {0, 1, 2, 3, 4, 5, 10, 11}
_TYPE_NAMES = {0: "u8", 1: "i8", 2: "u16", 3: "i16", 4: "u32", 5: "i32", 6: "f32", 7: "bool", 8: "string",
               9: "array", 10: "u64", 11: "i64", 12: "f64"}


def _require_gguf():
    try:
        import gguf
    except ImportError:
        raise UserError("reading a .gguf file needs the gguf package: pip install 'roofline[gguf]'") from None
    return gguf


#: ik_llama.cpp's own GGML types by id (row metadata of 2 or 4 bytes a row aside, :func:`roofline.spec.gguf_types._ik`)
_IK_TYPES = {b.ggml_type: b for b in BLOCKS.values() if b.engine == IK_LLAMA_CPP}


def ggml_type_name(t: Any) -> str:
    """llama.cpp's spelling of a GGMLQuantizationType: Q4_K -> q4_K, Q8_0 -> q8_0, F16 -> f16."""
    name = t.name.lower()
    return name[:-2] + "_K" if name.endswith("_k") else name


# ------------------------------------------------------------------ the header


@dataclass(frozen=True)
class Value:
    """One metadata value: ``type`` its GGUFValueType; an array's ``item_type`` and ``count`` (its items in
    ``value`` when numeric and short, else None)."""

    type: int
    value: Any
    item_type: int | None = None
    count: int = 0


@dataclass(frozen=True)
class TensorInfo:
    name: str
    shape: tuple[int, ...]
    """GGUF order: the row length (K) first"""
    ggml_type: int
    offset: int


class _Header:
    """A bounded reader over the mapped file: every read is checked against the header cap and the file end."""

    def __init__(self, buf, where: str) -> None:
        self.buf, self.pos, self.where = buf, 0, where
        self.end = min(len(buf), LIMITS["header_bytes"])

    def fail(self, reason: str, field: str = "") -> SpecError:
        return SpecError(self.where, field, reason)

    def take(self, n: int) -> int:
        start = self.pos
        if n < 0 or start + n > self.end:
            if start + n > LIMITS["header_bytes"]:
                raise self.fail(f"a header of more than {LIMITS['header_bytes']:,} bytes: not a GGUF file this "
                                "tool reads (or a damaged one)")
            raise self.fail("not a readable GGUF file: the header runs past the end of the file (truncated?)")
        self.pos += n
        return start

    def fixed(self, t: int):
        fmt, size = _FIXED[t]
        return struct.unpack_from(fmt, self.buf, self.take(size))[0]

    def u32(self) -> int:
        return self.fixed(4)

    def u64(self) -> int:
        return self.fixed(10)

    def string(self, what: str) -> str:
        n = self.u64()
        if n > LIMITS["string_bytes"]:
            raise self.fail(f"a string of {n:,} bytes ({what}); at most {LIMITS['string_bytes']:,}")
        start = self.take(n)
        return bytes(self.buf[start:start + n]).decode("utf-8", errors="replace")

    def skip_string(self) -> None:
        n = self.u64()
        if n > LIMITS["string_bytes"]:
            raise self.fail(f"a string of {n:,} bytes; at most {LIMITS['string_bytes']:,}")
        self.take(n)

    def value(self, t: int, key: str) -> Value:
        if t in _FIXED:
            return Value(t, self.fixed(t))
        if t == _STRING:
            return Value(t, self.string(key))
        if t != _ARRAY:
            raise self.fail(f"value type {t} is not a GGUF type", key)
        item, count = self.u32(), self.u64()
        if count > LIMITS["array_items"]:
            raise self.fail(f"an array of {count:,} items; at most {LIMITS['array_items']:,}", key)
        if item in _FIXED:
            size = _FIXED[item][1]
            start = self.take(count * size)
            if count <= KEEP_ARRAY:
                fmt = "<" + _FIXED[item][0][1] * count
                return Value(t, list(struct.unpack_from(fmt, self.buf, start)), item, count)
            return Value(t, None, item, count)
        if item == _STRING:
            for _ in range(count):
                self.skip_string()
            return Value(t, None, item, count)
        raise self.fail(f"an array of {_TYPE_NAMES.get(item, item)}: not read (arrays of arrays are in no model "
                        "header)", key)


def read_header(path: Path, where: str | None = None) -> tuple[dict[str, Value], list[TensorInfo], int]:
    """``(metadata, tensor infos, bytes of tensor data the file holds)`` of a GGUF file: bounded, one-line
    errors (the module docstring)."""
    where = where or str(path)
    with open_regular(path, where) as f:
        size = os.fstat(f.fileno()).st_size
        if size < 24:
            raise SpecError(where, "", "not a readable GGUF file: too short for a header")
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
            h = _Header(buf, where)
            if bytes(buf[:4]) != GGUF_MAGIC:
                raise SpecError(where, "", "not a readable GGUF file: no GGUF magic at its start")
            h.take(4)
            version = h.u32()
            if version not in VERSIONS:
                swapped = int.from_bytes(version.to_bytes(4, "little"), "big")
                why = ("a big-endian GGUF file (not read here)" if swapped in VERSIONS
                       else f"GGUF version {version} (this reads {', '.join(map(str, VERSIONS))})")
                raise SpecError(where, "", f"not a readable GGUF file: {why}")
            n_tensors, n_keys = h.u64(), h.u64()
            if n_tensors > LIMITS["tensors"] or n_keys > LIMITS["keys"]:
                raise SpecError(where, "", f"not a readable GGUF file: {n_tensors:,} tensors and {n_keys:,} keys "
                                f"(at most {LIMITS['tensors']:,} and {LIMITS['keys']:,})")
            meta: dict[str, Value] = {}
            for _ in range(n_keys):
                key = h.string("a key")
                meta[key] = h.value(h.u32(), key)
            tensors = []
            for _ in range(n_tensors):
                name = h.string("a tensor name")
                n_dims = h.u32()
                if not 1 <= n_dims <= LIMITS["dims"]:
                    raise SpecError(where, name, f"{n_dims} dimensions; a GGML tensor has 1 to {LIMITS['dims']}")
                shape = tuple(h.u64() for _ in range(n_dims))
                tensors.append(TensorInfo(name, shape, h.u32(), h.u64()))
            align = meta.get("general.alignment")
            alignment = align.value if align is not None and align.type == 4 else 32
            if alignment <= 0 or alignment & (alignment - 1):
                raise SpecError(where, "general.alignment", f"{alignment}: not a power of two")
            data_start = -(-h.pos // alignment) * alignment
    return meta, tensors, max(size - data_start, 0)


# ------------------------------------------------------------------ ModelSpec fields


def _stored_tensors(tensors: list[TensorInfo], data_bytes: int, where: str) -> list[dict]:
    gguf = _require_gguf()
    out = []
    for t in tensors:
        try:
            kind = gguf.GGMLQuantizationType(t.ggml_type)
            block, type_size = gguf.GGML_QUANT_SIZES[kind]
            type_name = ggml_type_name(kind)
        except (ValueError, KeyError):
            ik = _IK_TYPES.get(t.ggml_type)  # ik_llama.cpp's own types: the gguf package does not know them
            if ik is None:
                raise SpecError(where, t.name, f"GGML type {t.ggml_type} is not a type the gguf package or "
                                "ik_llama.cpp knows") from None
            block, type_size, type_name = ik.weights_per_block, int(ik.bytes_per_block), ik.name
        if any(d < 1 for d in t.shape):
            raise SpecError(where, t.name, f"shape {list(t.shape)}: every dimension must be 1 or more")
        elements = prod(t.shape)
        if elements > LIMITS["elements"] or t.shape[0] % block:
            raise SpecError(where, t.name, f"shape {list(t.shape)} does not fit {type_name} blocks of {block} "
                            "(or is larger than any tensor)")
        nbytes = elements // block * type_size
        if t.offset + nbytes > data_bytes:
            raise SpecError(where, t.name, f"its {nbytes:,} bytes at offset {t.offset:,} run past the end of the "
                            f"file's {data_bytes:,} bytes of tensor data (a truncated file?)")
        out.append({"name": t.name, "type": type_name, "shape": t.shape, "elements": elements,
                    "nbytes": nbytes})
    return out


def _whole(meta: dict[str, Value], key: str, where: str, limit: str | None = None, per_layer: int | None = None,
           required: bool = False) -> int | None:
    """An integer key (a per-layer array of them: its largest, when ``per_layer`` layers are given), type- and
    range-checked."""
    v = meta.get(key)
    if v is None:
        if required:
            raise SpecError(where, key, "the architecture key is missing")
        return None
    if v.type == _ARRAY and v.item_type in _INTEGER_TYPES and v.value is not None:
        if per_layer is not None and len(v.value) != per_layer:
            raise SpecError(where, key, f"{len(v.value)} per-layer values for {per_layer} layers (block_count)")
        if not v.value:
            raise SpecError(where, key, "an empty list")
        n = max(v.value)
    elif v.type in _INTEGER_TYPES:
        n = v.value
    else:
        shown = repr(v.value) if v.value is not None else f"an array of {v.count:,}"
        shown = shown if len(shown) <= 40 else shown[:37] + "..."
        kind = _TYPE_NAMES.get(v.item_type if v.type == _ARRAY else v.type, "?")
        raise SpecError(where, key, f"must be a whole number, got {shown} (GGUF type "
                        f"{'array of ' if v.type == _ARRAY else ''}{kind})")
    if limit is not None:
        if n < 1 <= limits.LIMITS[limit].low:
            raise SpecError(where, key, f"must be a positive whole number, got {n}")
        try:
            limits.check(limit, n, key)
        except ValueError as e:
            raise SpecError(where, "", str(e)) from None
    return n


def _text(meta: dict[str, Value], key: str, where: str) -> str | None:
    v = meta.get(key)
    if v is None:
        return None
    if v.type != _STRING:
        raise SpecError(where, key, f"must be a string, got GGUF type {_TYPE_NAMES.get(v.type, '?')}")
    return v.value


def _agree(where: str, key: str, value: int | None, tensor: dict | None, dim: int, what: str) -> None:
    """The header's ``key`` against the stored tensor's dimension ``dim``: refused when they differ."""
    if value is None or tensor is None or len(tensor["shape"]) <= dim:
        return
    stored = tensor["shape"][dim]
    if stored != value:
        raise SpecError(where, key, f"{value:,}, but the file's {tensor['name']} stores {stored:,} {what}; the "
                        "tensors are what the weights are (llama.cpp would not load this file either): fix the header")


#: architectures whose MLP gate and up projections llama.cpp's converter stores as one ffn_up tensor
FUSED_GATE_UP = {"phi3"}


def _check_matrices(where: str, arch: str, tensors: dict[str, dict], layers: int, hidden: int, ffn: int | None,
                    q_rows: int | None, kv_rows: int | None, fused_up: bool) -> None:
    """Every dense layer's attention and MLP matrices against the header (GGUF stores a matrix as
    ``[inputs, outputs]``): a tensor that disagrees is refused naming the key and the tensor, as for blk.0. A size
    the header gives per layer (an array) is not checked here (None)."""
    up_rows = None if ffn is None else (2 * ffn if fused_up else ffn)
    qkv_rows = None if q_rows is None or kv_rows is None else q_rows + 2 * kv_rows
    expect = {  # tensor -> ((dim, size, key, what), ...)
        "attn_q": ((0, hidden, "embedding_length", "inputs"), (1, q_rows, "attention.head_count", "query outputs")),
        "attn_k": ((0, hidden, "embedding_length", "inputs"), (1, kv_rows, "attention.head_count_kv", "key outputs")),
        "attn_v": ((0, hidden, "embedding_length", "inputs"), (1, kv_rows, "attention.head_count_kv",
                                                                 "value outputs")),
        "attn_qkv": ((0, hidden, "embedding_length", "inputs"), (1, qkv_rows, "attention.head_count",
                                                                   "query, key and value outputs")),
        "attn_output": ((0, q_rows, "attention.head_count", "inputs"), (1, hidden, "embedding_length", "outputs")),
        "ffn_gate": ((0, hidden, "embedding_length", "inputs"), (1, ffn, "feed_forward_length", "MLP rows")),
        "ffn_up": ((0, hidden, "embedding_length", "inputs"), (1, up_rows, "feed_forward_length", "MLP rows")),
        "ffn_down": ((0, ffn, "feed_forward_length", "inputs (MLP rows)"), (1, hidden, "embedding_length",
                                                                            "outputs")),
    }
    for i in range(layers):
        for role, checks in expect.items():
            t = tensors.get(f"blk.{i}.{role}.weight")
            if t is None:
                continue
            for dim, size, key, what in checks:
                _agree(where, f"{arch}.{key}", size, t, dim, what)


def read_gguf_fields(path: Path) -> dict[str, Any]:
    """ModelSpec fields from the file's header (validation of the whole happens in ModelSpec)."""
    where = str(path)
    meta, infos, data_bytes = read_header(path, where)
    arch = _text(meta, "general.architecture", where)
    if arch not in ARCHITECTURES:
        raise SpecError(where, "general.architecture",
                        f"'{arch}' is not an architecture this tool reads (known: {', '.join(sorted(ARCHITECTURES))})")
    stored = _stored_tensors(infos, data_bytes, where)
    tensors = {t["name"]: t for t in stored}

    def a(key: str, limit: str | None = None, **kw) -> int | None:
        return _whole(meta, f"{arch}.{key}", where, limit, **kw)

    layers = a("block_count", "model.num_hidden_layers", required=True)
    hidden = a("embedding_length", "model.hidden_size", required=True)
    heads = a("attention.head_count", "model.num_attention_heads", per_layer=layers, required=True)
    kv = a("attention.head_count_kv", "model.num_key_value_heads", per_layer=layers)
    ffn = a("feed_forward_length", "model.intermediate_size", per_layer=layers)
    expert_ffn = a("expert_feed_forward_length", "model.moe_intermediate_size")
    context = a("context_length", "model.max_position_embeddings")
    key_length = a("attention.key_length", "model.head_dim")
    experts = a("expert_count", "model.num_experts")
    used = a("expert_used_count", "model.num_experts_per_tok")
    tokens = meta.get("tokenizer.ggml.tokens")
    if tokens is not None and not (tokens.type == _ARRAY and tokens.item_type == _STRING):
        raise SpecError(where, "tokenizer.ggml.tokens", "must be a list of strings")

    blocks = {int(n.split(".")[1]) for n in tensors if n.startswith("blk.") and n.split(".")[1].isdigit()}
    if blocks and (max(blocks) + 1 != layers or len(blocks) != layers):
        raise SpecError(where, f"{arch}.block_count", f"{layers:,}, but the file stores tensors of {len(blocks):,} "
                        f"blocks (blk.0 to blk.{max(blocks)}); the tensors are what the weights are: fix the header")
    emb = tensors.get("token_embd.weight")
    _agree(where, f"{arch}.embedding_length", hidden, emb, 0, "rows")
    vocab = tokens.count if tokens is not None else (emb["shape"][1] if emb is not None and len(emb["shape"]) > 1
                                                     else None)
    _agree(where, "tokenizer.ggml.tokens", vocab, emb, 1, "token rows")
    _agree(where, "tokenizer.ggml.tokens", vocab, tensors.get("output.weight"), 1, "output rows")
    head_dim = key_length if key_length is not None else hidden // heads
    _agree(where, f"{arch}.attention.head_count", heads * head_dim, tensors.get("blk.0.attn_q.weight"), 1,
           "query outputs (heads x head size)")
    if kv is not None:
        _agree(where, f"{arch}.attention.head_count_kv", kv * head_dim, tensors.get("blk.0.attn_k.weight"), 1,
               "key outputs (kv heads x head size)")
    dense_up = next((tensors[n] for n in (f"blk.{i}.ffn_up.weight" for i in range(layers)) if n in tensors), None)
    scalar = lambda key: meta.get(f"{arch}.{key}") is not None and meta[f"{arch}.{key}"].type != _ARRAY  # noqa: E731
    # Phi-3 as llama.cpp's converter writes it: gate_up_proj stored whole as ffn_up (2 x feed_forward_length rows),
    # no ffn_gate; llama.cpp splits it when it loads the file
    fused_up = (arch in FUSED_GATE_UP and dense_up is not None and ffn is not None and len(dense_up["shape"]) > 1
                and dense_up["shape"][1] == 2 * ffn and not any(n.endswith("ffn_gate.weight") for n in tensors))
    if scalar("feed_forward_length"):
        _agree(where, f"{arch}.feed_forward_length", 2 * ffn if fused_up else ffn, dense_up, 1,
               "MLP rows (gate and up fused)" if fused_up else "MLP rows")
    q_rows = heads * head_dim if scalar("attention.head_count") else None
    kv_rows = (kv * head_dim if scalar("attention.head_count_kv") else None) if kv is not None else q_rows
    _check_matrices(where, arch, tensors, layers, hidden, ffn if scalar("feed_forward_length") else None, q_rows,
                    kv_rows, fused_up)
    exps = next((tensors[n] for n in (f"blk.{i}.ffn_up_exps.weight" for i in range(layers)) if n in tensors), None)
    _agree(where, f"{arch}.expert_count", experts, exps, 2, "experts")
    _agree(where, f"{arch}.expert_feed_forward_length", expert_ffn, exps, 1, "expert MLP rows")

    fields: dict[str, Any] = {
        "name": _text(meta, "general.name", where) or path.stem,
        "description": f"{arch} read from the GGUF file {path.name}",
        "source": str(path),
        "family": "decoder",
        "hidden_size": hidden,
        "intermediate_size": ffn or expert_ffn or 1,
        "num_hidden_layers": layers,
        "num_attention_heads": heads,
        "vocab_size": vocab,
        "max_position_embeddings": context or 2048,
        "hidden_act": "silu",
        "gated_mlp": "blk.0.ffn_gate.weight" in tensors or "blk.0.ffn_gate_exps.weight" in tensors
                     or any(n.endswith("ffn_gate.weight") for n in tensors) or fused_up,
        "tie_word_embeddings": "output.weight" not in tensors,
        "qk_norm": "blk.0.attn_q_norm.weight" in tensors,
        "attention_bias": "blk.0.attn_q.bias" in tensors,
        "o_proj_bias": "blk.0.attn_output.bias" in tensors,
        "mlp_bias": any(n.endswith("ffn_up.bias") for n in tensors),
    }
    if kv is not None:
        fields["num_key_value_heads"] = kv
    if key_length is not None and key_length * heads != hidden:
        fields["head_dim"] = key_length
    if experts:
        if used is None:
            raise SpecError(where, f"{arch}.expert_used_count", "a mixture of experts needs its top-k")
        moe = [i for i in range(layers) if f"blk.{i}.ffn_gate_inp.weight" in tensors]
        moe_set = set(moe)
        fields.update(num_experts=experts, num_experts_per_tok=used,
                      dense_layers=tuple(i for i in range(layers) if i not in moe_set))
        if expert_ffn:
            fields["moe_intermediate_size"] = expert_ffn
        shexp = tensors.get(next((f"blk.{i}.ffn_up_shexp.weight" for i in moe), ""))
        if shexp is not None:
            fields["shared_expert_intermediate_size"] = int(shexp["shape"][1])
            fields["shared_expert_gate"] = f"blk.{moe[0]}.ffn_gate_inp_shexp.weight" in tensors
    fields["gguf_tensors"] = tuple(stored)
    return fields


def load_gguf_model(path: Path):
    """A ModelSpec from a .gguf file (its header only), from the cache when this very file was read before."""
    from roofline.catalog.cache import load_validated_file
    from roofline.spec.model import ModelSpec

    return load_validated_file(ModelSpec, path, lambda: read_gguf_fields(path))
