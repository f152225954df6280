"""What every test file shares when the suite runs on several cores (pytest-xdist, the README's ``pytest``).

- The commands under test run as from a pipe, with no terminal: a test runner's own terminal size (xdist's workers
  export ``COLUMNS=80`` and ``LINES=24``) does not reach them, so they print at their default width unless a test
  names one.
- A test marked ``quiet`` times kernels against a reference and needs the host to itself: under xdist it waits for
  the other workers' running tests to end and holds their next ones until it is done (a shared lock per test, an
  exclusive one for a quiet test, and a turnstile so that a waiting quiet test is not starved).
- Hypothesis draws the same examples on every run (the ``derandomized`` profile, the default): the suite, CI's
  included, is not a lottery. ``HYPOTHESIS_PROFILE=explore pytest`` draws new ones each run, to look for the cases
  the fixed ones miss; a case it finds goes into its test as an ``@example``.
- The files that take longest run first (:data:`LONGEST_FIRST`, from ``pytest --durations=0``): the workers take files
  in the order collected, so a long file left to the end keeps one worker busy while the others have finished. The
  quiet tests' files come before them, while nothing long runs beside them to wait for.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator

import pytest
from hypothesis import settings

for name in ("COLUMNS", "LINES"):
    os.environ.pop(name, None)

settings.register_profile("derandomized", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "derandomized"))


#: test files in the order the workers should start them (the rest follow in their own order): the quiet tests'
#: files, then the longest (about 40 to 65 s each on two cores)
LONGEST_FIRST = ("test_canary.py", "test_validation_kernels.py", "test_end_to_end_validate.py", "test_accuracy.py",
                 "test_plan.py", "test_headline.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: each file keeps its own order


@pytest.fixture(autouse=True)
def _host_shared_or_alone(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    if "PYTEST_XDIST_WORKER" not in os.environ:  # one process: nothing runs beside the test
        yield
        return
    base = tmp_path_factory.getbasetemp().parent  # the session's folder, which every worker's is under
    quiet = request.node.get_closest_marker("quiet") is not None
    with open(base / "host.turnstile", "a") as turnstile, open(base / "host.lock", "a") as host:
        fcntl.flock(turnstile, fcntl.LOCK_EX)
        fcntl.flock(host, fcntl.LOCK_EX if quiet else fcntl.LOCK_SH)
        fcntl.flock(turnstile, fcntl.LOCK_UN)
        try:
            yield
        finally:
            fcntl.flock(host, fcntl.LOCK_UN)


@pytest.fixture(scope="session")
def corpus_accuracy(tmp_path_factory: pytest.TempPathFactory):
    """``roofline accuracy`` over the committed records, computed once for the whole run: the first worker to ask
    computes it (through the API, whose result cache the CLI's ``roofline accuracy`` then reads), the others wait
    for it on a lock and read the cache (xdist runs each file on one worker; several files need it)."""
    import roofline

    base = tmp_path_factory.getbasetemp().parent if "PYTEST_XDIST_WORKER" in os.environ else \
        tmp_path_factory.getbasetemp()
    with open(base / "accuracy.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            return roofline.accuracy()
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
