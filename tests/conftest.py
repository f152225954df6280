"""The session runs the commands under test as from a pipe, with no terminal: a test runner's own terminal size
(pytest-xdist's workers export ``COLUMNS=80`` and ``LINES=24``) does not reach them, so they print at their
default width unless a test names one."""

import os

for name in ("COLUMNS", "LINES"):
    os.environ.pop(name, None)
