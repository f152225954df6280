"""Units and element sizes. Everything inside the engine is SI: bytes, bytes/s, ops/s, seconds."""

from __future__ import annotations

GIGA = 1e9
MB = 1e6  # decimal megabyte, as in tables (MB = 1e6 bytes)
MIB = 2**20  # binary mebibyte: cache sizes are binary

#: Bytes per element of each storage dtype.
DTYPE_BYTES: dict[str, float] = {
    "fp32": 4.0,
    "bf16": 2.0,
    "fp16": 2.0,
    "int8": 1.0,
    "uint8": 1.0,
    "int4": 0.5,
}
