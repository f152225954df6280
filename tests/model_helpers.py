"""What the model-family tests share: a model's footprint groups, and two specs compared field by field."""

from __future__ import annotations

import dataclasses

from roofline.model.footprint import footprint
from roofline.spec.model import ModelSpec


def groups(m: ModelSpec) -> dict[str, int]:
    """parameters per footprint group, in BF16"""
    return {g.name: g.params for g in footprint(m, "bf16").groups}


def _plain(v):
    return tuple(v) if isinstance(v, (list, tuple)) else v


def assert_same_model(a: ModelSpec, b: ModelSpec) -> None:
    """Every architecture field equal (a cached spec may hold a list where a fresh one holds a tuple)."""
    for f in dataclasses.fields(ModelSpec):
        if f.name not in ("name", "source", "description", "aliases"):
            assert _plain(getattr(a, f.name)) == _plain(getattr(b, f.name)), f.name
