"""Result types: the JSON contract of each command (frozen dataclasses; pydantic writes their schemas).

Torch-free, so the core (reports, ``check``) can read what ``validate`` wrote.
"""

from __future__ import annotations


def json_text(result) -> str:
    """A dataclass tree (or a list of them) as the JSON ``--json`` prints; NaN or infinity anywhere is a bug
    and raises ValueError."""
    import dataclasses
    import json

    if isinstance(result, list):
        data = [dataclasses.asdict(x) for x in result]
    else:
        data = dataclasses.asdict(result)
    return json.dumps(data, indent=2, allow_nan=False) + "\n"


class JsonResult:
    """What a command's result can do besides holding its fields: give the JSON its ``--json`` prints."""

    __slots__ = ()

    def to_json(self) -> str:
        """Exactly what the command prints with ``--json``."""
        return json_text(self)

    def to_dict(self) -> dict:
        """The same as plain Python data (``json.loads(self.to_json())``)."""
        import json

        return json.loads(self.to_json())
