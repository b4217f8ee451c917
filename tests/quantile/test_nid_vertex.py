"""``se="nid"`` at the default ``tol`` against R quantreg's numbers (recorded below: R is not on
CI), and the vertex finish of its refits (:func:`aidopt.numerics.rq.vertex`) against an
independent simplex (SciPy's HiGHS, on the rows repeated as often as their weights)."""

from __future__ import annotations

import numpy as np
import pytest
from aidopt.instances import lad_instance

import aidopt
from aidopt.numerics import rq
from tests.quantile.test_fit import rho
from tests.quantile.test_inference import lp_fit

# R 4.2.2, quantreg 5.94, on lad_instance("B", n=4000, m=6, seed=0) (column 0 the intercept),
# X and y written as binary doubles and read with readBin:
#   for (tau in c(0.25, 0.5)) { fit <- rq(y ~ X - 1, tau = tau)
#     coef(fit); summary(fit, se = "nid")$coefficients[, 2]
#     summary(fit, se = "nid", hs = FALSE)$coefficients[, 2] }
R_B4000 = {
    0.25: {"coef": [-0.75095737761026471, -0.45666038672799514, -0.91476942822524132,
                    -0.94345300052831815, 0.62641934779951225, 0.8358051159002754],
           "nid": [0.12182826856826627, 0.010195690034082019, 0.010260496536302909,
                   0.010061099008038197, 0.010083804966748149, 0.010248274648132799],
           "nid_bofinger": [0.12869521453180893, 0.010772287042292918, 0.010838426406420427,
                            0.010716584690308215, 0.010669477969087564, 0.010815706770037967]},
    0.5: {"coef": [0.25918022057924267, -0.46770468019293537, -0.90887138719720029,
                   -0.95423061991026503, 0.61798864797093112, 0.82041206524144583],
          "nid": [0.093171656218736673, 0.0080359716839181871, 0.0081187506075476069,
                  0.0080558196799667067, 0.0080204926641443304, 0.0081104114039759392],
          "nid_bofinger": [0.09368063288305048, 0.0079404482227119315, 0.0080090918721780792,
                           0.0079526577347841954, 0.007913632449489923, 0.0080586529197996248]},
}


@pytest.mark.parametrize("tau", sorted(R_B4000))
def test_nid_at_the_default_tol_equals_quantreg(tau):
    """At the default tol (1e-6) the certified refits at tau -/+ h are near the optimum, not at
    it; without the vertex finish these standard errors were 5e-4 - 8e-4 off R's."""
    X, y = lad_instance("B", n=4000, m=6, seed=0)
    fit = aidopt.solve_lad(X, y, quantile=tau, log=False)
    assert fit.certified
    r = R_B4000[tau]
    nid = fit.inference("nid")
    assert nid.details["vertices"] == 2
    np.testing.assert_allclose(nid.std_error, r["nid"], rtol=1e-6)
    bofinger = fit.inference("nid", bandwidth="bofinger")
    assert bofinger.details["vertices"] == 2
    np.testing.assert_allclose(bofinger.std_error, r["nid_bofinger"], rtol=1e-6)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_vertex_from_a_perturbed_start_is_the_simplex_vertex(seed):
    rng = np.random.default_rng(seed)
    n, tau = 300, [0.3, 0.5, 0.8][seed]
    X = np.column_stack([np.ones(n), rng.normal(size=(n, 3))])
    y = X @ [1.0, 2.0, -1.0, 0.5] + (1 + np.abs(X[:, 1])) * rng.standard_t(3, size=n)
    s = rng.integers(0, 4, size=n).astype(float)  # weights, some zero
    k = s.astype(int)  # integer weights: the LP of the rows repeated k times
    exact = lp_fit(np.repeat(X, k, axis=0), np.repeat(y, k), tau)
    for scale in (1e-3, 0.3):  # near the optimum, and far: several pivots
        start = exact + scale * rng.normal(size=4)
        found = rq.vertex(X, y, s, tau, start)
        assert found is not None
        beta, u = found
        np.testing.assert_allclose(beta, exact, rtol=1e-9, atol=1e-9)
        # the proof: X'u = 0, u in its box, and y'u equals the objective
        np.testing.assert_allclose(X.T @ u, 0.0, atol=1e-9)
        assert np.all(u <= tau * s + 1e-9) and np.all(u >= (tau - 1) * s - 1e-9)
        assert y @ u == pytest.approx(s @ rho(y - X @ beta, tau), rel=1e-10)
    # a sparse X gives the same vertex
    import scipy.sparse as sp

    found = rq.vertex(sp.csr_matrix(X), y, s, tau, exact + 1e-3)
    np.testing.assert_allclose(found[0], exact, rtol=1e-9, atol=1e-9)


def test_vertex_gives_up_without_a_proof():
    rng = np.random.default_rng(5)
    X = np.column_stack([np.ones(200), rng.normal(size=(200, 2))])
    y = X @ [0.5, 1.0, -2.0] + rng.laplace(size=200)
    far = np.array([10.0, -10.0, 10.0])
    assert rq.vertex(X, y, np.ones(200), 0.5, far, max_pivots=0) is None  # no pivots
    assert rq.vertex(X, y, np.ones(200), 0.5, far) is not None
    same = np.tile(X[:1], (200, 1))  # every row the same: no p independent rows
    assert rq.vertex(same, y, np.ones(200), 0.5, np.zeros(3)) is None
    assert rq.vertex(X[:3], y[:3], np.ones(3), 0.5, np.zeros(3)) is None  # n <= p
