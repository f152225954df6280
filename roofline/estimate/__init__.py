"""The estimate: specs in, a :class:`~roofline.results.estimate.EstimateResult` out (the JSON contract).

``roofline.estimate`` is this package and, called, the Python API's estimate
(:func:`roofline.api.estimate`): ``roofline.estimate(model="bert-large", cpu="icx")``. A package
cannot be replaced by a function of its name (importing any of its modules sets the attribute back),
so the package itself is made callable.
"""

import sys
import types


class _CallableModule(types.ModuleType):
    def __call__(self, model=None, cpu=None, **flags):
        from roofline.api import estimate

        return estimate(model, cpu, **flags)


sys.modules[__name__].__class__ = _CallableModule
