"""roofline: roofline ceilings and realistic estimates for quantized transformer inference on server CPUs.

The Python API is the command line's commands as functions (:mod:`roofline.api`)::

    import roofline
    r = roofline.estimate(model="bert-large", cpu="icx")   # the result --json prints
    r.speedups[0].end_to_end_ceiling                        # 3.15...
    roofline.footprint(...), roofline.plan(...), roofline.check(...), roofline.accuracy(...)
    roofline.sweep(...).to_pandas()                         # a grid as numpy columns

Layers, each importing only the ones before it (``tests/test_layering.py`` checks every import):

- ``roofline.errors``, ``roofline.units``, ``roofline.files``  errors, units, the one reader and writer of files
- ``roofline.calc``       pure, vectorised numpy formulas, the equation in each docstring
- ``roofline.spec``       what the user describes (platform, model, precision, records), and the vocabulary
- ``roofline.results``    the result types: each command's JSON contract
- ``roofline.report``     the printed answers (rich), from results alone; ``roofline.schema``: their JSON schemas
- ``roofline.catalog``    finding and loading spec files, records and stack profiles
- ``roofline.serving``    the queueing and batching simulators
- ``roofline.model``      the step pipeline (workload, recipes, resources, step, realistic), estimate, sweep
- ``roofline.capacity``   the capacity plan: service times, the simulations per CPU, the fleet
- ``roofline.fidelity``   records' figures, stack profiles fitted on them, accuracy, calibrate, check
- ``roofline.arguments``  every command's arguments, defined once
- ``roofline.api``        the commands as Python functions; ``roofline.cli``: the command line over them
- ``roofline.validation`` real kernels on the host (torch, torchao): it imports the core, never the reverse

``import roofline`` imports nothing else: each function loads what it needs when called.
"""


_API = ("estimate", "footprint", "plan", "sweep", "check", "accuracy")

__all__ = ["accuracy", "check", "estimate", "footprint", "plan", "sweep", "to_json", "__version__"]


def to_json(result) -> str:
    """What ``--json`` prints for ``result`` (any command's result, or a list of them)."""
    from roofline.results import json_text

    return json_text(result)


def __getattr__(name: str):
    if name == "__version__":
        from roofline.version import __version__

        return __version__
    if name in _API:
        from roofline import api

        return getattr(api, name)
    raise AttributeError(f"module 'roofline' has no attribute '{name}'")
