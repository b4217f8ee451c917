"""The run's thread budget (decomposition/threads.py): BLAS limits while runs overlap."""

from __future__ import annotations

import threading

from aidopt.decomposition.threads import budget, compute_threads
from threadpoolctl import threadpool_info


def _blas():
    return {i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}


def test_none_changes_nothing():
    before = _blas()
    with compute_threads(None):
        assert budget() is None and _blas() == before


def test_nested_runs_restore_the_outer_limit_then_the_default():
    before = _blas()
    with compute_threads(1):
        assert budget() == 1 and _blas() == {1}
        with compute_threads(2):
            assert budget() == 2 and _blas() == {2}
        assert budget() == 1 and _blas() == {1}
    assert budget() is None and _blas() == before


def test_runs_in_two_threads_ending_out_of_order_restore_the_default():
    """A starts (1), B starts (2), A ends: B's limit holds; B ends: the limits from before A."""
    before = _blas()
    a_in, b_in, a_out, b_out = (threading.Event() for _ in range(4))
    during = {}

    def run_a():
        with compute_threads(1):
            a_in.set()
            b_in.wait(10)
        a_out.set()

    def run_b():
        a_in.wait(10)
        with compute_threads(2):
            during["budget"] = budget()
            b_in.set()
            a_out.wait(10)
            during["after A"] = _blas()
        b_out.set()

    threads = [threading.Thread(target=run_a), threading.Thread(target=run_b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    assert b_out.is_set() and during == {"budget": 2, "after A": {2}}
    assert _blas() == before and budget() is None


def test_an_error_inside_restores_the_limits():
    before = _blas()
    try:
        with compute_threads(1):
            raise RuntimeError("inside the run")
    except RuntimeError:
        pass
    assert _blas() == before and budget() is None
