"""Writing a platform spec back to TOML (the probe's output), in the catalog's layout."""

from __future__ import annotations

import dataclasses
import json

from roofline.spec.platform import Platform
from roofline.spec.sourced import Sourced


def _value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v) if isinstance(v, float) else str(v)
    if isinstance(v, str):
        return json.dumps(v)  # a TOML basic string is a JSON string
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    raise TypeError(f"cannot write {type(v).__name__} to TOML")


def _inline(s: Sourced) -> str:
    items = [(f.name, getattr(s, f.name)) for f in dataclasses.fields(s)]
    return "{ " + ", ".join(f"{k} = {_value(v)}" for k, v in items if v is not None) + " }"


def platform_toml(p: Platform, header: str = "") -> str:
    """TOML text that loads back into an equal :class:`Platform`."""
    lines = [f"# {line}" if line else "#" for line in header.splitlines()]
    lines += [
        f"schema_version = {p.schema_version}",
        f"name = {_value(p.name)}",
        f"aliases = {_value(p.aliases)}",
        f"description = {_value(p.description)}",
        f"vendor = {_value(p.vendor)}",
        f"microarchitecture = {_value(p.microarchitecture)}",
        f"isa = {_value(p.isa)}",
        f"notes = {_value(p.notes)}",
        "",
        f"sockets = {_inline(p.sockets)}",
        f"cores_per_socket = {_inline(p.cores_per_socket)}",
        "",
        "[frequency_ghz]",
        *(f"{k} = {_inline(v)}" for k, v in p.frequency_ghz.items()),
    ]
    for name, c in p.compute.items():
        lines += ["", f"[compute.{name}]", f"dtype = {_value(c.dtype)}", f"isa_class = {_value(c.isa_class)}",
                  f"requires = {_value(c.requires)}", f"ops_per_cycle = {_inline(c.ops_per_cycle)}"]
        if c.note:
            lines.append(f"note = {_value(c.note)}")
    lines += ["", "[dram]", f"theoretical_gb_per_s = {_inline(p.dram.theoretical_gb_per_s)}",
              f"measured_gb_per_s = {_inline(p.dram.measured_gb_per_s)}",
              "", "[llc]", f"size_mib = {_inline(p.llc.size_mib)}",
              f"domains_per_socket = {p.llc.domains_per_socket}", f"read_gb_per_s = {_inline(p.llc.read_gb_per_s)}"]
    return "\n".join(lines) + "\n"


def calibration_toml(c, header: str = "") -> str:
    """TOML text that loads back into an equal :class:`~roofline.spec.calibration.Calibration`."""
    lines = [f"# {line}" if line else "#" for line in header.splitlines()]
    lines += [f"schema_version = {c.schema_version}", f"platform = {_value(c.platform)}", f"notes = {_value(c.notes)}"]
    for name in ("quantization_efficiency", "call_s", "per_op_s"):
        v = getattr(c, name)
        if v is not None:
            lines.append(f"{name} = {_inline(v)}")
    for group in ("gemm_efficiency", "kernel_efficiency", "kernel_quantization_efficiency", "non_gemm_efficiency"):
        if not getattr(c, group):
            continue
        lines += ["", f"[{group}]"]
        lines += [f"{json.dumps(k)} = {_inline(v)}" for k, v in getattr(c, group).items()]
    return "\n".join(lines) + "\n"
