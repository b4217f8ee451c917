"""Every family certifies the same answer in any unit: data scaled by 1e-9 ... 1e9.

Solvers stop on absolute tolerances and certificates used to measure gaps against an absolute 1,
so a p-median with costs x 1e-9 was certified 17 % above its optimum and a chunked LP with
b x 1e-9 certified a wrong optimum. The solver layer now scales what HiGHS and Clarabel see
(powers of two: exact), and certificates measure gaps against the data's own scale.
"""

from __future__ import annotations

import itertools

import numpy as np
import pyomo.environ as pyo
import pytest

import aidopt
from aidopt.solvers import solve_model

SCALES = [1e-9, 1e-6, 1.0, 1e6, 1e9]


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("scale", SCALES)
def test_p_median_at_any_scale_matches_brute_force(seed, scale):
    rng = np.random.default_rng(seed)
    D = rng.integers(1, 100, (37, 20)).astype(float) * scale
    best = min(D[:, list(S)].min(1).sum() for S in itertools.combinations(range(20), 2))
    r = aidopt.solve_facility_location(D, p=2, log=False)
    assert r.termination == "certified_optimal", r.message
    assert abs(r.objective - best) <= 1e-9 * best
    assert r.lower_bound <= best * (1 + 1e-12)


@pytest.mark.parametrize("solver", ["highs", "fn"])
@pytest.mark.parametrize("scale", SCALES)
def test_lad_at_any_scale(solver, scale):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 4))
    y = X @ [1, 2, 3, 4] + rng.standard_t(2, size=400)
    ref = aidopt.solve_lad(X, y, solver=solver, log=False)
    r = aidopt.solve_lad(X, y * scale, solver=solver, log=False)
    assert r.termination == "certified_optimal", r.message
    assert abs(r.objective / scale - ref.objective) <= 1e-6 * ref.objective


def _bounded_lp(seed=1, m=300, n=8):
    rng = np.random.default_rng(seed)
    H = rng.normal(size=(m, n))
    b = H @ rng.normal(size=n) - rng.uniform(0, 1, m)
    c = H.T @ rng.uniform(0, 1, m)  # in the cone of the rows: bounded
    return c, H, b


@pytest.mark.parametrize("sc", SCALES)
@pytest.mark.parametrize("sb", [1e-9, 1.0, 1e9])
def test_lp_chunking_never_certifies_a_wrong_optimum_at_any_scale(sc, sb):
    c, H, b = _bounded_lp()
    ref = aidopt.solve_lp_chunked(c, H, b, log=False).objective
    r = aidopt.solve_lp_chunked(c * sc, H, b * sb, log=False, raise_on_failure=False)
    if r.termination == "certified_optimal":
        assert abs(r.objective / (sc * sb) - ref) <= 1e-6 * abs(ref)
    if sb >= 1.0:  # the chunk LPs' right-hand sides in range: certified
        assert r.termination == "certified_optimal", r.message


@pytest.mark.parametrize("scale", [2.0 ** -40, 1.0, 2.0 ** 40])
@pytest.mark.parametrize("solver", ["highs", "clarabel"])
def test_solver_layer_scales_exactly_and_maps_duals_back(scale, solver):
    """min scale * (x + 2y) s.t. x + y >= 1e-9 * k: the objective, the bound, the values and the
    dual come back in the model's units (the dual of the row is scale * 1)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(bounds=(0, None))
    m.y = pyo.Var(bounds=(0, None))
    m.c = pyo.Constraint(expr=m.x + m.y >= 3e-9)
    m.o = pyo.Objective(expr=scale * (m.x + 2 * m.y))
    out = solve_model(m, solver=solver, need_duals=True)
    assert out.objective == pytest.approx(scale * 3e-9, rel=1e-7)
    assert pyo.value(m.x) == pytest.approx(3e-9, rel=1e-6)
    assert out.duals[m.c] == pytest.approx(scale, rel=1e-6)
    assert "scaling" in out.extra  # the right-hand side 3e-9 is out of range at every scale
