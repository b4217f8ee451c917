"""solve_fsv(aid=False) counts its time limit while it builds the LP (1.22) and loads it into
the persistent solver (the fuzz reproducer, 120,000 x 40 with 2 s, returned after 13-18 s)."""

from __future__ import annotations

import time

from aidopt.instances import svm_instance

import aidopt

LIMIT = 0.3


def test_direct_fsv_stops_building_at_the_limit():
    X, y = svm_instance(n=30_000, m=40, seed=4630)
    t = time.perf_counter()
    res = aidopt.solve_fsv(X, y, nu=0.1, aid=False, time_limit=LIMIT, log=False,
                           raise_on_failure=False)
    seconds = time.perf_counter() - t
    assert res.termination == "time_limit", res.message
    assert "no solve started" in res.message
    assert seconds <= LIMIT + 2.5, seconds  # building and loading it all: 5-6 s here before
