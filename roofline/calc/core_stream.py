"""A kernel that streams its weights between its own arithmetic, on each core.

A GEMV splits the weight rows over the threads: each core reads its share ``D_W / n`` and computes on it. A kernel
whose loads wait on its arithmetic (``ggml_vec_dot_*``: one weight row, one activation row, block by block) does
not keep the loads of the next blocks in flight while it unpacks and multiplies the current one, so on each core
the two add up: ``C + D_W / B_c``, ``C`` the kernel's compute time and ``B_c`` what the busy cores pull on their
own (one core's read bandwidth times the cores). The socket's bandwidth bounds the stream whatever the kernel, so a
call takes

    T = max(C + s D_W / B_c, D_W / B_socket)

with ``s`` 1 for such a kernel, 0 for one that overlaps the two (a repacked GEMV, a GEMM over tiles), a share
between for one that overlaps them in part. On two
cores the first side is the larger; on a socket of many, ``D_W / B_c`` and ``C`` shrink with the cores and the
socket's stream is what is left.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike


def serial_kernel_seconds(kernel_s: ArrayLike, core_stream_s: ArrayLike, serial: ArrayLike) -> np.ndarray:
    """``C + s T_c``: a call's compute time ``C`` and the share ``s`` of its weights' stream at the cores' own
    bandwidth, ``T_c = D_W / B_c``, that its kernel does not overlap with its arithmetic (NaN ``T_c``: no per-core
    figure, nothing added)."""
    add = np.asarray(serial, dtype=float) * np.nan_to_num(np.asarray(core_stream_s, dtype=float), nan=0.0)
    return np.asarray(kernel_s, dtype=float) + add
