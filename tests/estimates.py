"""The estimate of loaded objects with keyword arguments, as the Python API takes them, for tests that
look inside it; no stack profile unless one is given (the model layer's default, a bare ceiling)."""

from __future__ import annotations

from roofline import api
from roofline import arguments as A


def _values(platform, model, kw: dict) -> api.Values:
    kw = dict(kw)
    kw.setdefault("stack", "none")
    if "precisions" in kw:
        kw["precision"] = kw.pop("precisions")
    return api.checked(A.ESTIMATE, {"model": model, "cpu": platform, **kw})


def estimate(platform, model, **kw):
    """:func:`roofline.model.estimate.estimate` with the API's keyword arguments."""
    return api.run_estimate(_values(platform, model, kw))


def evaluate(platform, model, **kw):
    """:func:`roofline.model.estimate.evaluate` with the API's keyword arguments."""
    from roofline.model.estimate import evaluate as model_evaluate

    p, _, m, query = api.estimate_inputs(_values(platform, model, kw))
    return model_evaluate(p, m, query)
