"""roofline: roofline ceilings and realistic estimates for quantized transformer inference on server CPUs.

The Python API is the command line's commands as functions (:mod:`roofline.api`)::

    import roofline
    r = roofline.estimate(model="bert-large", cpu="icx")   # the result --json prints
    r.speedups[0].end_to_end_ceiling                        # 3.15...
    roofline.footprint(...), roofline.plan(...), roofline.check(...), roofline.accuracy(...)

Layers, each importing only the ones before it:

- ``roofline.spec``      what the user describes (platform, model, precision), validated by pydantic
- ``roofline.catalog``   finding and loading spec files (TOML, Hugging Face config.json, GGUF headers)
- ``roofline.calc``      pure, vectorised numpy calculators, the equation in each docstring
- ``roofline.estimate``  the estimate: specs -> calculators -> a result (the JSON contract)
- ``roofline.results``   the result types
- ``roofline.report``    rich tables of results
- ``roofline.cli``, ``roofline.api``  the command line and the Python API
- ``roofline.validation`` real kernels on the host (torch, torchao; imported lazily, never by the core)

``import roofline`` imports nothing else: each function loads what it needs when called.
"""

__version__ = "0.1.0"

_API = ("estimate", "footprint", "plan", "check", "accuracy")

__all__ = ["accuracy", "check", "estimate", "footprint", "plan", "to_json", "__version__"]


def to_json(result) -> str:
    """What ``--json`` prints for ``result`` (any command's result, or a list of them)."""
    from roofline.results import json_text

    return json_text(result)


def __getattr__(name: str):
    if name in _API:
        from roofline import api

        return getattr(api, name)
    raise AttributeError(f"module 'roofline' has no attribute '{name}'")
