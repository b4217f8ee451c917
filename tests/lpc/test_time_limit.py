"""LPC's time limit counts while a block's rows are built and loaded into the chunk LP.

Building and loading cost about 80 us per 30-entry row, so one block of 80,000 rows took 6-7 s
past a 0.3 s limit before (the fuzz reproducer, 300,000 rows: 23-39 s); the rows are now loaded
in pieces with the clock checked between them.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from aidopt.api.lpc import solve_lp_chunked, solve_lsvm_lpc

LIMIT = 0.3


def _rows(m=80_000, n=30):
    g = np.random.default_rng(0)
    H = g.normal(size=(m, n))
    return H, H @ np.ones(n) - g.random(m)


@pytest.mark.parametrize("problem", ["lp", "lsvm"])
def test_one_large_block_stops_at_the_limit(problem):
    H, b = _rows()
    t = time.perf_counter()
    if problem == "lp":
        res = solve_lp_chunked(H[:50].sum(axis=0), H, b, chunks=1, time_limit=LIMIT, log=False)
    else:
        res = solve_lsvm_lpc(H, np.where(b > np.median(b), 1, -1), chunks=1, time_limit=LIMIT,
                             log=False)
    seconds = time.perf_counter() - t
    assert res.termination == "time_limit", res.message
    assert "not solved" in res.message
    assert not res.certified
    assert seconds <= LIMIT + 3.0, seconds  # a piece of rows, not the block: ~0.5 s here
