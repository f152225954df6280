"""Spec types: what a user describes (platform, model, precision), validated on load.

The types are frozen standard-library dataclasses that pydantic validates
(``pydantic.TypeAdapter``) and describes (JSON Schema, from the attribute
docstrings). Pydantic itself is imported only to validate a file it has not
seen before: importing it costs about 60 ms, more than the whole cold-start
budget of ``roofline estimate``, so a file validated once is cached
by content hash (:mod:`roofline.catalog.cache`) and rebuilt from the cache
without pydantic. Checks that go beyond types (positive, consistent, physical)
live in ``__post_init__`` and run on every construction, cached or not.

Nothing here computes roofline figures; that is ``roofline.calc``.
"""

#: pydantic config of every spec and result type: unknown fields are errors, NaN and infinity are
#: not numbers (spec files and reports hold measured and physical quantities), and the attribute
#: docstrings are the JSON Schema descriptions.
PYDANTIC_CONFIG = {"extra": "forbid", "allow_inf_nan": False, "use_attribute_docstrings": True}
