"""Compiling a module the way it is deployed, and reading back which kernels actually run.

- Inductor with ``freezing=True`` (weights become constants: torchao's INT8 linears are only
  rewritten to ``onednn.qlinear_pointwise`` under freezing; without it they run ``_int_mm``);
  ``max_autotune`` optional (it lets Inductor's C++ GEMM templates compete).
- Generated code is captured by patching ``GraphLowering.save_output_code``, not with
  ``run_and_get_code``: that one resets dynamo, which silently recompiles every variant built
  before it under whatever config is active later (so the kernel timed is not the one inspected).
- Each variant is compiled through its own fresh function object, so dynamo caches never mix.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from dataclasses import dataclass, field

import torch

#: GEMM kernels as they appear at call sites in Inductor's generated wrapper, most specific first.
KERNEL_CALLS: list[tuple[str, str]] = [
    ("onednn.qlinear_pointwise", r"torch\.ops\.onednn\.qlinear_pointwise\.\w+\("),
    ("aten._int_mm", r"extern_kernels\._int_mm\(|torch\.ops\.aten\._int_mm\.\w+\("),
    ("mkl._mkl_linear", r"torch\.ops\.mkl\._mkl_linear\.\w+\("),
    ("mkldnn._linear_pointwise", r"torch\.ops\.mkldnn\._linear_pointwise\.\w+\("),
    ("aten._weight_int8pack_mm", r"_weight_int8pack_mm\.?\w*\("),
    ("aten._weight_int4pack_mm_for_cpu", r"_weight_int4pack_mm_for_cpu\.?\w*\("),
    ("quantized.int4mm_packed_weight_cpu", r"torch\.ops\.quantized\.int4mm_packed_weight_cpu\.\w+\("),
    ("aten.addmm", r"extern_kernels\.addmm\(|torch\.ops\.aten\.addmm\.\w+\("),
    ("aten.mm", r"extern_kernels\.mm\(|torch\.ops\.aten\.mm\.\w+\("),
]
SHORT = {"onednn.qlinear_pointwise": "qlinear", "aten._int_mm": "_int_mm", "mkl._mkl_linear": "mkl_linear",
         "mkldnn._linear_pointwise": "mkldnn_linear", "aten.addmm": "addmm", "aten.mm": "mm",
         "cpp GEMM template (int8)": "cpp_gemm_int8", "cpp GEMM template": "cpp_gemm",
         "aten._weight_int8pack_mm": "int8pack_mm", "quantized.int4mm_packed_weight_cpu": "int4pack_mm",
         "aten._weight_int4pack_mm_for_cpu": "int4pack_mm"}
INT8_KERNELS = {"onednn.qlinear_pointwise", "aten._int_mm", "cpp GEMM template (int8)"}
WEIGHT_ONLY_KERNELS = {"aten._weight_int8pack_mm", "quantized.int4mm_packed_weight_cpu",
                       "aten._weight_int4pack_mm_for_cpu"}
FLOAT_KERNELS = {"mkl._mkl_linear", "mkldnn._linear_pointwise", "aten.addmm", "aten.mm", "cpp GEMM template"}
#: profiler event names of linear-layer GEMMs (attention's batched matmuls are not linear layers)
PROFILER_GEMM = re.compile(
    r"qlinear|_int_mm|mkl_linear|_linear_pointwise|aten::addmm|aten::mm$|int8pack|int4pack|aten::linear|"
    r"graph_\d+_gemm|CppMicroGemm", re.I)
PROFILER_ATTENTION = re.compile(r"scaled_dot_product|flash_attention|aten::bmm|baddbmm|softmax", re.I)


@dataclass
class KernelReport:
    """What the generated code calls for its GEMMs."""

    calls: dict[str, int] = field(default_factory=dict)
    activation_dtype: str | None = None  # dtype fed to onednn.qlinear_pointwise: uint8 (fast u8 path) or int8
    template_kernels: list[str] = field(default_factory=list)

    @property
    def primary(self) -> str:
        """The GEMM kernel the most launches go to ('none' when no GEMM was found)."""
        if not self.calls:
            return "none"
        return max(self.calls, key=lambda k: self.calls[k])

    def short(self) -> str:
        """A compact label for tables: the primary kernel, its activation dtype and launch count."""
        if not self.calls:
            return "none"
        label = SHORT.get(self.primary, self.primary)
        if self.activation_dtype and self.primary == "onednn.qlinear_pointwise":
            label += {"uint8": "(u8)", "int8": "(s8)"}.get(self.activation_dtype, f"({self.activation_dtype})")
        extra = "+" if len(self.calls) > 1 else ""
        return f"{label} x{self.calls[self.primary]}{extra}"

    def describe(self) -> str:
        if not self.calls:
            return "none"
        parts = [f"{k} x{n}" for k, n in sorted(self.calls.items(), key=lambda kv: -kv[1])]
        if self.activation_dtype:
            parts[0] += f" ({self.activation_dtype} activations)"
        return ", ".join(parts)


def kernels_in_code(codes: list[str]) -> KernelReport:
    """Count GEMM kernel launches in Inductor's generated code (comments and asserts skipped)."""
    text = "\n".join(codes)
    body = "\n".join(
        line for line in text.splitlines()
        if not line.lstrip().startswith(("#", "assert_", "assert ")) and "async_compile" not in line
    )
    calls: Counter[str] = Counter()
    for name, pattern in KERNEL_CALLS:
        n = len(re.findall(pattern, body))
        if n:
            calls[name] += n
    # Inductor C++ GEMM templates (max_autotune) hide inside an ordinary-looking cpp_fused_* kernel
    starts = [(m.start(), m.group(1)) for m in re.finditer(r"\b(cpp_fused_\w+) = async_compile\.cpp_pybinding\(", text)]
    templates = []
    for i, (pos, name) in enumerate(starts):
        segment = text[pos: starts[i + 1][0] if i + 1 < len(starts) else len(text)]
        if "micro_gemm" in segment:
            templates.append((name, "int8" if re.search(r"VNNI|AMX.*int8|uint8_t|int8_t", segment) else "float"))
    for name, kind in templates:
        launches = len(re.findall(rf"^\s*{name}\(", body, re.M))
        calls["cpp GEMM template (int8)" if kind == "int8" else "cpp GEMM template"] += launches
    act = None
    dtypes = set()
    for buf in re.findall(r"onednn\.qlinear_pointwise\.\w+\((?:reinterpret_tensor\()?(\w+)", text):
        found = None
        for _ in range(10):  # follow "bufA = bufB; del bufB  # reuse" alias chains
            found = re.search(rf"\b{buf} = empty_strided_cpu\([^\n]*?torch\.(\w+)\)", text)
            alias = None if found else re.search(rf"\b{buf} = (\w+); del", text)
            if found or not alias:
                break
            buf = alias.group(1)
        if found:
            dtypes.add(found.group(1))
    if dtypes:
        act = ",".join(sorted(dtypes))
    return KernelReport(dict(calls), act, [n for n, _ in templates])


_UID = [0]


def compile_module(module, example, *, max_autotune: bool = False):
    """Compile ``module`` with Inductor (freezing on) on ``example``.

    Returns ``(call, output, kernel_report, compile_seconds)``; ``call(x)`` runs under no_grad.
    """
    from unittest import mock

    from torch._inductor.graph import GraphLowering

    ns = {"M": module}
    _UID[0] += 1
    name = f"roofline_variant_{_UID[0]}"
    exec(compile(f"def {name}(x):\n    return M(x)\n", f"<{name}>", "exec"), ns)  # a fresh code object
    fn = ns[name]
    codes: list[str] = []
    patch = dict(freezing=True, max_autotune=max_autotune)
    patch["cpp.enable_kernel_profile"] = True  # cpp kernels and GEMM templates visible to the profiler
    with torch._inductor.config.patch(**patch), torch.no_grad():
        compiled = torch.compile(fn, backend="inductor")
        t0 = time.perf_counter()
        with mock.patch.object(GraphLowering, "save_output_code", lambda code: codes.append(code)):
            out = compiled(example.clone())
        seconds = time.perf_counter() - t0

    def call(x):
        with torch.no_grad():
            return compiled(x)

    return call, out, kernels_in_code(codes), seconds
