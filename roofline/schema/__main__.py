"""``python -m roofline.schema``: regenerate the checked-in JSON Schemas."""

from roofline.schema import write_all

write_all()
