"""SLA's stopping test (1.23) is relative to |f| with no absolute floor: an objective below 1
(here 0.18) used to be measured against 1, which stopped up to 1/|f| times too early."""

from __future__ import annotations

import numpy as np

import aidopt


def test_the_stationarity_threshold_is_relative_to_the_objective():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 5))
    y = np.where(X[:, 0] > 0, 1, -1)
    X[:, 0] += 2 * y
    r = aidopt.solve_fsv(X, y, nu=1e-3, alpha=5.0, log=False)
    assert r.termination == "stationary"
    assert abs(r.objective) < 1.0
    assert f"tol x {abs(r.objective):.3g}" in r.message, r.message
    last = r.history[-1].info["decrease"]
    assert last >= -r.config["tol"] * abs(r.objective)
