"""Fixtures for the group coordinator tests (tests/coordinator/coordinator_harness.py)."""
from __future__ import annotations

import pytest

from tests.coordinator.coordinator_harness import CoordinatorHarness


@pytest.fixture
def harness(tmp_path):
    """A coordinator leading the single __consumer_offsets partition."""
    h = CoordinatorHarness(str(tmp_path / "logs"))
    h.lead()
    yield h
    h.close()


@pytest.fixture
def make_harness(tmp_path):
    """Harnesses with custom settings (and for restarts over one log dir); all closed at the end."""
    made: list[CoordinatorHarness] = []

    def make(log_dir: str | None = None, lead: bool = True, **kwargs) -> CoordinatorHarness:
        h = CoordinatorHarness(log_dir or str(tmp_path / "logs"), **kwargs)
        made.append(h)
        if lead:
            h.lead()
        return h

    yield make
    for h in made:
        h.close()
