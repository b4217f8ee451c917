"""Fixtures of the facility tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def no_solve(monkeypatch):
    """Fail the test if a run starts: what it checks must be refused before any solve (a module
    may define its own, e.g. the level search's)."""
    from aidopt.api import _front

    def refuse(*args, **kwargs):
        raise AssertionError("a solve was started")

    monkeypatch.setattr(_front, "solve", refuse)
    monkeypatch.setattr(_front, "solve_direct", refuse)
