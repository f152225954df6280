"""Reading a `roofline validate --json` report given to check, calibrate or plot --measured."""

from __future__ import annotations

from pathlib import Path

from roofline.errors import UserError


def load_report(path: str, flag: str = ""):
    """The report at ``path`` as a :class:`~roofline.results.validate.ValidateResult`, checked field by field
    (types, finite numbers, positive sizes and times, a schema version this roofline reads); any problem is
    one line naming the file (and ``flag``) and the field."""
    from roofline.catalog.validate import validate
    from roofline.files.reading import load_json, read_bytes
    from roofline.results.validate import ValidateResult

    where = f"{flag} {path}" if flag else path
    data = load_json(read_bytes(Path(path), where), where)
    if not isinstance(data, dict) or "shapes" not in data or "host" not in data:
        raise UserError(f"{where}: not a `roofline validate --json` report (a JSON object with host, shapes, ...)")
    return validate(ValidateResult, data, where)
