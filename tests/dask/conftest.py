"""Shared pieces of the dask engine tests: seeded data sets and the numpy engine's answers."""

from __future__ import annotations

import pytest

pytest.importorskip("dask.array")

from aidopt.instances import lad_instance, svm_instance  # noqa: E402

import aidopt  # noqa: E402

#: relative objective difference allowed between the engines
RTOL = 1e-9
#: the problems of the dask engine: (name, solve keyword arguments)
PROBLEMS = {
    "lad": {},
    "svm_l2": {"C": 0.1, "norm": "l2"},
    "svm_l1": {"C": 0.1, "norm": "l1"},
    "svm_linf": {"C": 0.1, "norm": "linf"},
}


def data_for(problem: str, n: int = 401, m: int = 4, seed: int = 3):
    """Seeded (X, y) of ``problem``: LAD set A, or two overlapping Gaussian classes."""
    if problem == "lad":
        return lad_instance("A", n=n, m=m, seed=seed)
    return svm_instance(n=n, m=m, seed=seed)


def solve(problem: str, X, y, **kwargs):
    fn = aidopt.solve_lad if problem == "lad" else aidopt.solve_svm
    return fn(X, y, log=False, **PROBLEMS[problem], **kwargs)


def assert_same(result, reference):
    """Same objective (within RTOL relative) and the same certificate verdict."""
    assert result.termination == reference.termination
    assert result.certified == reference.certified
    assert abs(result.objective - reference.objective) <= RTOL * max(1.0, abs(reference.objective))


@pytest.fixture(scope="session")
def reference():
    """The numpy engine's result per (problem, n), computed once."""
    cache = {}

    def get(problem, n=401):
        if (problem, n) not in cache:
            X, y = data_for(problem, n)
            cache[problem, n] = solve(problem, X, y, engine="numpy")
        return cache[problem, n]

    return get


def _reached_solver(*args, **kwargs):  # pragma: no cover - only runs when a test fails
    raise AssertionError("a solve was started although the input is invalid")


@pytest.fixture
def no_solve(monkeypatch):
    """Fail the test if anything tries to solve a model."""
    import aidopt.api._front
    import aidopt.solvers

    monkeypatch.setattr(aidopt.api._front, "solve", _reached_solver)
    monkeypatch.setattr(aidopt.api._front, "solve_direct", _reached_solver)
    monkeypatch.setattr(aidopt.solvers, "solve_model", _reached_solver)
