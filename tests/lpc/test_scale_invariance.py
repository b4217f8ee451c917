"""LPC is invariant under scaling c: min (s c)'x has the argmin of min c'x for every s > 0, and
the chunk LPs, the rows kept, the verdict and x must not depend on s either.

The chunk LPs minimize (c / sigma)'x with sigma the smallest power of two above ||c||_inf. Before, c
went to HiGHS as given: with ||c|| near its absolute dual tolerance (1e-7) any vertex was
"optimal", and LPC cycled between two chunk LPs (tests/fuzz/test_reproducers.py).
"""

from __future__ import annotations

import numpy as np
import pytest

from aidopt.api.lpc import solve_lp_chunked

from ..fuzz.test_reproducers import LPC_B, LPC_BOUNDS, LPC_C, LPC_H
from ._lps import boxed_lp, vertex_lp

SCALES = [10.0 ** k for k in range(-9, 10, 3)]


def _instances():
    yield "fuzz", LPC_C, LPC_H, LPC_B, LPC_BOUNDS, 2
    for seed in range(2):
        c, H, b, bounds = boxed_lp(seed, m=120, n=4)
        yield f"boxed-{seed}", c, H, b, bounds, 3
    c, H, b = vertex_lp(0, m=120, n=4, blocks=4)
    yield "vertex-0", c, H, b, None, 4


INSTANCES = {name: args for name, *args in _instances()}


def _trace(res):
    """What LPC did: the rows of each chunk LP and those it kept, and its verdict."""
    return (res.termination, [(r.info["rows_in_lp"], r.info["added"], r.info["kept"])
                              for r in res.history])


@pytest.mark.parametrize("name", list(INSTANCES))
def test_scaling_c_changes_nothing(name):
    c, H, b, bounds, chunks = INSTANCES[name]
    base = solve_lp_chunked(c, H, b, bounds=bounds, chunks=chunks, log=False, time_limit=20)
    assert base.termination == "certified_optimal", base.message
    for s in SCALES:
        res = solve_lp_chunked(c * s, H, b, bounds=bounds, chunks=chunks, log=False, time_limit=20)
        assert _trace(res) == _trace(base), (s, res.message)
        np.testing.assert_allclose(res.solution["x"], base.solution["x"], rtol=1e-9, atol=1e-12)
        assert res.objective == pytest.approx(s * base.objective, rel=1e-9, abs=1e-12 * s)
        F = np.array([r.F_t for r in res.history])
        np.testing.assert_allclose(F, s * np.array([r.F_t for r in base.history]), rtol=1e-9,
                                   atol=1e-12 * s)


def test_powers_of_two_give_the_same_run_bit_for_bit():
    """sigma is a power of two: c and 2^k c give the very same chunk LPs."""
    base = solve_lp_chunked(LPC_C, LPC_H, LPC_B, bounds=LPC_BOUNDS, chunks=2, log=False)
    for k in (-40, -23, 17, 40):
        res = solve_lp_chunked(LPC_C * 2.0 ** k, LPC_H, LPC_B, bounds=LPC_BOUNDS, chunks=2, log=False)
        assert _trace(res) == _trace(base)
        assert np.array_equal(res.solution["x"], base.solution["x"])
        assert np.array_equal(res.solution["multipliers"], base.solution["multipliers"] * 2.0 ** k)
