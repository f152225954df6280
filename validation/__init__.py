"""roofline.validation: measure the host and run the real compiled kernels (torch, torchao).

Installed as ``roofline.validation``; imported only by the ``probe`` and
``validate`` commands, never by the core.
"""
