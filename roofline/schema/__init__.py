"""Published JSON Schemas of the ``--json`` outputs, generated from the pydantic result models.

The files beside this module are checked in; ``tests/test_schema.py`` fails when
they drift from the models. Regenerate with ``python -m roofline.schema``.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _models():
    from roofline.results.check import CheckResult
    from roofline.results.estimate import EstimateResult
    from roofline.results.footprint import FootprintResult
    from roofline.results.llamacpp import LlamaCppResult
    from roofline.results.plan import PlanResult
    from roofline.results.validate import ValidateResult

    return {"estimate": EstimateResult, "validate": ValidateResult, "footprint": FootprintResult, "plan": PlanResult,
            "check": CheckResult, "validate-llamacpp": LlamaCppResult}


def schema_text(which: str) -> str:
    from pydantic import TypeAdapter

    schema = TypeAdapter(_models()[which]).json_schema(mode="serialization")
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def schema_path(which: str) -> Path:
    return HERE / f"{which}.schema.json"


def write_all() -> None:
    for which in _models():
        schema_path(which).write_text(schema_text(which), encoding="utf-8")

