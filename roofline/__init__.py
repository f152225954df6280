"""roofline: roofline ceilings for quantized transformer inference on server CPUs.

Layers, each importing only the ones before it:

- ``roofline.spec``      pydantic models of what the user describes (platform, model, precision)
- ``roofline.catalog``   finding and loading spec files (TOML, Hugging Face config.json)
- ``roofline.calc``      pure, vectorised numpy calculators, the equation in each docstring
- ``roofline.estimate``  the estimate: specs -> calculators -> a result model (the JSON contract)
- ``roofline.report``    rich tables of results
- ``roofline.cli``       the thin command line
- ``roofline.validation`` real kernels on the host (torch, torchao; imported lazily, never by the core)
"""

__version__ = "0.1.0"
