"""Cycles of an engine's GGUF kernels on a call of ``M`` activation rows (:mod:`roofline.spec.kernels`).

Each entry ``c`` is cycles per 32 weights of one weight row per activation row, so a call of an ``N x K`` weight
over ``M`` rows takes ``cycles(M) x N K / 32`` cycles, spread over the instance's cores:

- vec_dot: ``cycles(M) = M c_vec``
- repack: ``M c_gemv`` below 4 rows; else ``16 a c_16 + 4 b c_4 + r c_gemv`` with ``M = 16 a + 4 b + r``
  (the GEMM over 16-row groups, then 4-row groups, the rest one row at a time)
- sgemm: ``c_vec`` at one row; else ``w a c_sw + r c_sr`` with ``M = w a + r`` (tiles of ``w`` rows, the widest
  tile the table gives, and one of ``r``)
- tiled: ``M c_vec`` below 8 rows; else ``c_unpack + 16 ceil(M / 16) c_tile`` (the weights unpacked once per call;
  its microtile multiplies 16 activation rows whatever the call has, ``TILED_MICRO`` in ggml-cpu/tiled/tiled-kernel.h,
  so 8 rows cost the MACs of 16)

A fractional ``M`` (a mixture of experts' expected rows) is priced at the whole number nearest it, scaled by
``M / round(M)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

#: the kernel families (:class:`roofline.spec.kernels.Kernel`'s words)
REPACK_FAMILY, SGEMM_FAMILY, TILED_FAMILY = "repack", "sgemm", "tiled"
#: the label of the kernel a call runs (the realistic model's efficiency class of the row)
VEC_DOT, GEMV, GEMM, SGEMM, TILED = "vec_dot", "gemv", "gemm", "sgemm", "tiled"
#: the rows from which a family's many-row kernel runs
REPACK_ROWS, SGEMM_ROWS, TILED_ROWS = 4, 2, 8
#: the activation rows of the tiled matmul's microtile: every call's MACs run over a whole number of them
#: (llama.cpp 0c1e570 ggml/src/ggml-cpu/tiled/tiled-kernel.h, ``#define TILED_MICRO 16 // microtile edge``; the AVX2
#: and AVX-512 VNNI microtiles loop over all 16 columns, ``for (int g = 0; g < TILED_MICRO; g += GROUP)``)
TILED_MICRO = 16


def call_cycles(kernel: str, c: dict[str, float], m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(cycles per 32 weights of one weight row for the whole call, the label of the kernel that runs it)`` for
    calls of ``m`` activation rows (module docstring); an entry the table lacks falls back to the next simpler one
    (``gemm16 -> gemm4 -> gemv -> vec_dot``, a missing narrower tile -> ``vec_dot``, ``tiled -> vec_dot``)."""
    m = np.asarray(m, dtype=float)
    whole = np.maximum(np.round(m), 1.0)
    scale = np.where(whole > 0, m / whole, 1.0)
    vec = c["vec_dot"]
    if kernel == REPACK_FAMILY:
        gemv = c.get("gemv", vec)
        g4 = c.get("gemm4", gemv)
        g16 = c.get("gemm16", g4)
        a = np.floor(whole / 16)
        b = np.floor((whole - 16 * a) / 4)
        r = whole - 16 * a - 4 * b
        many = 16 * a * g16 + 4 * b * g4 + r * gemv
        cycles = np.where(whole < REPACK_ROWS, whole * gemv, many)
        label = np.where(whole < REPACK_ROWS, GEMV, GEMM)
    elif kernel == SGEMM_FAMILY:
        widths = [r for r in (1, 2, 3, 4) if f"sgemm{r}" in c] or [1]
        w = max(widths)
        tile = [vec] + [c.get(f"sgemm{r}", vec) for r in range(1, w + 1)]
        a = np.floor(whole / w)
        r = (whole - w * a).astype(int)
        many = w * a * tile[w] + r * np.take(tile, r)
        cycles = np.where(whole < SGEMM_ROWS, whole * vec, many)
        label = np.where(whole < SGEMM_ROWS, VEC_DOT, SGEMM)
    elif kernel == TILED_FAMILY:
        rows = TILED_MICRO * np.ceil(whole / TILED_MICRO) if "tiled" in c else whole
        many = c.get("tiled_unpack", 0.0) + rows * c.get("tiled", vec)
        cycles = np.where(whole < TILED_ROWS, whole * vec, many)
        # without the tiled matmul's cycles the call is priced as vec_dot calls, and named so
        label = np.where((whole < TILED_ROWS) | ("tiled" not in c), VEC_DOT, TILED)
    else:
        cycles = whole * vec
        label = np.full(np.shape(whole), VEC_DOT)
    return cycles * scale, label


def call_seconds(cycles: ArrayLike, n: ArrayLike, k: ArrayLike, cores: ArrayLike, hz: ArrayLike) -> np.ndarray:
    """``cycles x N K / 32 / (cores x f)``: one call on the instance's cores at the clock ``f``."""
    return np.asarray(cycles, dtype=float) * np.asarray(n, dtype=float) * np.asarray(k, dtype=float) / 32.0 / (
        np.asarray(cores, dtype=float) * np.asarray(hz, dtype=float))
