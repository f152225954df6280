"""Writing a platform spec back to TOML (the probe's output), in the catalog's layout."""

from __future__ import annotations

import dataclasses
from enum import Enum

from roofline.spec.platform import Platform
from roofline.spec.sourced import Sourced


def toml_string(text: str) -> str:
    """``text`` as a TOML basic string that every TOML reader loads back: non-ASCII characters as they are
    (a ``\\uXXXX`` pair of surrogates is not TOML), control characters as ``\\uXXXX`` escapes, and a lone
    surrogate (a file name's undecodable byte), which no TOML string can hold, written as the text of its escape
    (``\\udcff``), as :func:`~roofline.errors.printable` shows it."""
    out = []
    for c in text:
        o = ord(c)
        if c in '"\\':
            out.append("\\" + c)
        elif 0xD800 <= o <= 0xDFFF:
            out.append(f"\\\\u{o:04x}")
        elif o < 0x20 or o == 0x7F:
            out.append({"\n": "\\n", "\t": "\\t", "\r": "\\r"}.get(c, f"\\u{o:04X}"))
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


def toml_comment(text: str) -> str:
    """``text`` as one TOML comment's words: its control characters and lone surrogates escaped (a comment holds
    no control character but tab), its lines joined."""
    from roofline.errors import printable

    return printable(" ".join(text.split()), keep_newlines=False)


def _value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v) if isinstance(v, float) else str(v)
    if isinstance(v, str):
        return toml_string(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):  # an inline table (a record's assumed fields: name -> the value and why)
        return "{ " + ", ".join(f"{toml_string(str(k))} = {_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(f"cannot write {type(v).__name__} to TOML")


def _key(k: str) -> str:
    """A TOML key: bare where it may be (letters, digits, ``_`` and ``-``), else quoted."""
    return k if k and all(c.isascii() and (c.isalnum() or c in "_-") for c in k) else toml_string(k)


def _inline(s: Sourced) -> str:
    items = [(f.name, getattr(s, f.name)) for f in dataclasses.fields(s)]
    return "{ " + ", ".join(f"{k} = {_value(v)}" for k, v in items if v is not None) + " }"


def _table(obj, prefix: str, drop_defaults: bool = False) -> list[str]:
    """A dataclass as TOML: its scalars and Sourced values under ``[prefix]`` (inline), then its nested
    dataclasses and dicts as sub-tables; ``drop_defaults``: an entry of an array of tables leaves out the fields
    still at their default (``[]``, ``""``, false, a path rule's ``rows_per_unpack = 1``)."""
    scalars, tables = [], []
    for f in dataclasses.fields(obj):
        v = getattr(obj, f.name)
        if v is None:
            continue
        if drop_defaults and f.default is not dataclasses.MISSING and v == f.default:
            continue
        if isinstance(v, Sourced):
            scalars.append(f"{f.name} = {_inline(v)}")
        elif dataclasses.is_dataclass(v):
            tables += _table(v, f"{prefix}.{f.name}" if prefix else f.name)
        elif isinstance(v, (tuple, list)) and v and all(dataclasses.is_dataclass(x) for x in v):
            name = f"{prefix}.{f.name}" if prefix else f.name
            for x in v:
                tables += ["", f"[[{name}]]", *_table(x, "", drop_defaults=True)]
        elif isinstance(v, dict):
            if not v:
                continue
            name = f"{prefix}.{f.name}" if prefix else f.name
            if all(isinstance(x, Sourced) for x in v.values()):
                tables += ["", f"[{name}]", *(f"{toml_string(k)} = {_inline(x)}" for k, x in v.items())]
            else:
                for k, x in v.items():
                    tables += _table(x, f"{name}.{_key(str(k))}")
        else:
            scalars.append(f"{f.name} = {_value(v)}")
    head = ["", f"[{prefix}]"] if prefix else []
    return head + scalars + tables


def spec_toml(obj, header: str = "") -> str:
    """TOML text that loads back into an equal spec object (a platform, a stack profile): every field, in
    the catalog's layout."""
    lines = [f"# {line}" if line else "#" for line in header.splitlines()]
    return "\n".join(lines + _table(obj, "")) + "\n"


def platform_toml(p: Platform, header: str = "") -> str:
    return spec_toml(p, header)


def calibration_toml(c, header: str = "") -> str:
    """TOML text that loads back into an equal :class:`~roofline.spec.calibration.Calibration`."""
    lines = [f"# {line}" if line else "#" for line in header.splitlines()]
    lines += [f"schema_version = {c.schema_version}", f"platform = {_value(c.platform)}", f"notes = {_value(c.notes)}"]
    for name in ("quantization_efficiency", "call_s", "per_op_s"):
        v = getattr(c, name)
        if v is not None:
            lines.append(f"{name} = {_inline(v)}")
    if c.host is not None:
        lines += _table(c.host, "host")
    for group in ("gemm_efficiency", "kernel_efficiency", "kernel_quantization_efficiency", "non_gemm_efficiency"):
        if not getattr(c, group):
            continue
        lines += ["", f"[{group}]"]
        lines += [f"{toml_string(k)} = {_inline(v)}" for k, v in getattr(c, group).items()]
    return "\n".join(lines) + "\n"


def record_toml(record, comments: dict[str, str] | None = None, header: str = "") -> str:
    """TOML text that loads back into an equal :class:`~roofline.spec.record.Record`: its set fields, each with
    its comment from ``comments`` (keyed ``field``, ``platform.field``, ``measurements.N.field``) after it."""
    comments = comments or {}
    lines = [f"# {toml_comment(line)}" if line.strip() else "#" for line in header.splitlines()]

    def put(key: str, name: str, value) -> None:
        if isinstance(value, Enum):
            value = value.value
        note = comments.get(key)
        lines.append(f"{name} = {_value(value)}" + (f"  # {toml_comment(note)}" if note else ""))

    top = [f for f in dataclasses.fields(record) if f.name not in ("platform", "measurements")]
    put("schema_version", "schema_version", record.schema_version)
    for f in top:
        v = getattr(record, f.name)
        if f.name == "schema_version" or v is None or (v == f.default and f.name not in ("batch", "seq_len")):
            continue
        put(f.name, f.name, v)
    lines += ["", "[platform]"]
    for f in dataclasses.fields(record.platform):
        v = getattr(record.platform, f.name)
        if v is not None:
            put(f"platform.{f.name}", f.name, v)
    for i, m in enumerate(record.measurements):
        lines += ["", "[[measurements]]"]
        for f in dataclasses.fields(m):
            v = getattr(m, f.name)
            if v is None or (f.name == "note" and not v):
                continue
            put(f"measurements.{i}.{f.name}", f.name, v)
    return "\n".join(lines) + "\n"
