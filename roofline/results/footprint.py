"""Result type of ``roofline footprint`` (bytes; decimal MB in tables)."""

from __future__ import annotations

from dataclasses import dataclass

from roofline.results import JsonResult
from roofline.spec import PYDANTIC_CONFIG

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class FootprintGroup:
    __pydantic_config__ = PYDANTIC_CONFIG

    name: str
    count: int
    """tensors in the group"""
    params: int
    bytes_base: float
    """in the base dtype"""
    bytes: float
    """after the policy"""
    quantized: bool


@dataclass(frozen=True)
class FootprintResult(JsonResult):
    """Output of ``roofline footprint --json``."""

    __pydantic_config__ = PYDANTIC_CONFIG

    model: str
    precision: str
    base_dtype: str
    policy: str
    """which tensors are quantized, and how"""
    groups: list[FootprintGroup]
    params: int
    total_bytes_base: float
    total_bytes: float
    quantized_bytes_base: float
    """the quantized matrices, in the base dtype"""
    quantized_bytes: float
    """the quantized matrices after quantization, their scales and zero points included"""
    quantized_ratio: float
    """quantized_bytes_base / quantized_bytes: the compression of the quantized matrices alone"""
    total_ratio: float
    """total_bytes_base / total_bytes: the compression of the whole model"""
    active_params: int | None = None
    """parameters one token uses (a mixture of experts: all but the routed experts it is not sent to;
    embeddings and lm_head counted, as published figures do); the total for a dense model"""
    schema_version: int = SCHEMA_VERSION
