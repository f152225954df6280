"""Pure calculators: numpy in, numpy out, vectorised over shapes and precisions.

Each function states its equation in the docstring and broadcasts its array
arguments, so one call evaluates a whole grid. No I/O, no pydantic, no torch.
"""
