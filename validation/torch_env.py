"""Importing torch and torchao for the validation stage, with one actionable line when they are missing."""

from __future__ import annotations

import os

from roofline.errors import UserError

INSTALL_HINT = "pip install 'roofline[validate]' (torch==2.13.0 CPU build and torchao==0.18.0)"


def require_torch():
    try:
        import torch
    except ImportError:
        raise UserError(f"this command needs torch: {INSTALL_HINT}") from None
    return torch


def require_torchao():
    require_torch()
    import logging

    # torchao 0.18 warns on import that its CUDA-only extensions do not load on a CPU build, and
    # torch that torchao registers an Enum with pytree: neither matters here.
    for name in ("torchao", "torch.utils._pytree"):
        logging.getLogger(name).setLevel(logging.ERROR)
    try:
        import torchao  # noqa: F401
    except ImportError:
        raise UserError(f"this command needs torchao: {INSTALL_HINT}") from None
    # Registers torchao's x86 Inductor fusion passes (_int_mm + scales -> onednn.qlinear_pointwise for
    # the u8 activations torchao emits on VNNI/AMX CPUs). Without it INT8 stays on _int_mm.
    import torchao.quantization.pt2e.quantizer.x86_inductor_quantizer  # noqa: F401

    return torchao


def versions() -> dict[str, str]:
    """Installed versions of torch and torchao (from package metadata: importing torchao is slow and noisy)."""
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in ("torch", "torchao"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "not installed"
    return out


def set_threads(threads: int) -> None:
    torch = require_torch()
    torch.set_num_threads(threads)


def inductor_cache(root) -> None:
    """One Inductor cache per CPU capability: entries compiled for another ISA gave garbage when reused."""
    if "TORCHINDUCTOR_CACHE_DIR" in os.environ:
        return
    torch = require_torch()
    cap = torch.backends.cpu.get_cpu_capability()
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(root / f"inductor-{torch.__version__}-{cap}")
