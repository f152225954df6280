"""Result types: the JSON contract of each command (frozen dataclasses; pydantic writes their schemas).

Torch-free, so the core (reports, ``check``) can read what ``validate`` wrote.
"""
