"""Small GGUF files for the tests: a llama-architecture header over tiny F32 tensors, with any metadata
overridden (wrong types, extreme values, a large vocabulary), written with the gguf package."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

ARCH = "llama"


def tiny_tensors(hidden: int = 64, layers: int = 2, heads: int = 4, kv: int = 2, ffn: int = 128,
                 vocab: int = 300) -> dict[str, tuple[int, ...]]:
    """Tensor name -> numpy shape (rows, cols) of a tiny llama: GGUF stores it reversed (cols first)."""
    hd = hidden // heads
    out = {"token_embd.weight": (vocab, hidden), "output_norm.weight": (hidden,), "output.weight": (vocab, hidden)}
    for i in range(layers):
        out.update({f"blk.{i}.attn_norm.weight": (hidden,), f"blk.{i}.attn_q.weight": (heads * hd, hidden),
                    f"blk.{i}.attn_k.weight": (kv * hd, hidden), f"blk.{i}.attn_v.weight": (kv * hd, hidden),
                    f"blk.{i}.attn_output.weight": (hidden, heads * hd), f"blk.{i}.ffn_norm.weight": (hidden,),
                    f"blk.{i}.ffn_gate.weight": (ffn, hidden), f"blk.{i}.ffn_up.weight": (ffn, hidden),
                    f"blk.{i}.ffn_down.weight": (hidden, ffn)})
    return out


def write_gguf(path: Path, *, metadata: dict[str, Any] | None = None, drop: tuple[str, ...] = (), tokens: int = 300,
               tensors: dict[str, tuple[int, ...]] | None = None, hidden: int = 64, layers: int = 2,
               heads: int = 4, kv: int = 2, ffn: int = 128) -> Path:
    """A GGUF file: the tiny llama's header (``metadata`` overriding or adding keys, ``drop`` removing them;
    a value's Python type picks its GGUF type: str, bool, int (u32, or i64 when negative or large), float,
    lists of those), ``tokens`` vocabulary entries, and ``tensors`` (default: the tiny llama's) as F32."""
    import gguf

    w = gguf.GGUFWriter(str(path), ARCH)
    base: dict[str, Any] = {
        "general.name": "tiny", f"{ARCH}.block_count": layers, f"{ARCH}.context_length": 512,
        f"{ARCH}.embedding_length": hidden, f"{ARCH}.feed_forward_length": ffn,
        f"{ARCH}.attention.head_count": heads, f"{ARCH}.attention.head_count_kv": kv,
    }
    base.update(metadata or {})
    for key, value in base.items():
        if key in drop:
            continue
        _add(w, gguf, key, value)
    if tokens:
        w.add_token_list([f"t{i}" for i in range(tokens)])
    for name, shape in (tensors or tiny_tensors(hidden, layers, heads, kv, ffn, tokens or 300)).items():
        w.add_tensor_info(name, shape, np.dtype(np.float32), int(np.prod(shape)) * 4)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    for shape in (tensors or tiny_tensors(hidden, layers, heads, kv, ffn, tokens or 300)).values():
        w.write_tensor_data(np.zeros(shape, dtype=np.float32))
    w.close()
    return path


def _add(w, gguf, key: str, value: Any) -> None:
    T = gguf.GGUFValueType
    if key == "general.architecture":
        w.add_string(key, value) if isinstance(value, str) else w.add_uint32(key, int(value))
        return
    if isinstance(value, bool):
        w.add_bool(key, value)
    elif isinstance(value, int):
        w.add_int64(key, value) if value < 0 or value >= 2**32 else w.add_uint32(key, value)
    elif isinstance(value, float):
        w.add_float32(key, value)
    elif isinstance(value, str):
        w.add_string(key, value)
    elif isinstance(value, list):
        item = T.STRING if value and isinstance(value[0], str) else (T.FLOAT32 if value and isinstance(value[0], float)
                                                                    else T.INT32)
        w.add_array(key, value) if item is not T.INT32 else w.add_key_value(key, value, T.ARRAY, sub_type=T.INT32)
    else:
        raise TypeError(value)
