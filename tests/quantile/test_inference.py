"""Inference on regression quantiles: ``iid`` and ``nid`` against a direct numpy implementation
of the formulas and against R quantreg's numbers (recorded below), sample weights as repeated
rows, the bootstrap (seeded, warm, the public ``bootstrap_coefficients``), the tables."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from scipy import stats

import aidopt
from tests.quantile.test_fit import rho


def lp_fit(X, y, tau):
    """beta of the quantile LP by SciPy / HiGHS (an independent solver)."""
    import scipy.sparse as sp
    from scipy.optimize import linprog

    n, m = X.shape
    c = np.concatenate([np.zeros(m), tau * np.ones(n), (1 - tau) * np.ones(n)])
    A = sp.hstack([sp.csr_matrix(X), sp.eye(n), -sp.eye(n)]).tocsr()
    res = linprog(c, A_eq=A, b_eq=y, bounds=[(None, None)] * m + [(0, None)] * (2 * n),
                  method="highs-ds")
    assert res.status == 0
    return res.x[:m]


def hall_sheather(tau, n, alpha=0.05):
    x = stats.norm.ppf(tau)
    return (n ** (-1 / 3) * stats.norm.ppf(1 - alpha / 2) ** (2 / 3)
            * (1.5 * stats.norm.pdf(x) ** 2 / (2 * x ** 2 + 1)) ** (1 / 3))


def direct_iid(X, y, beta, tau):
    """quantreg's iid formulas written out: sparsity from the h + 1 smallest nonzero |r|."""
    n, p = X.shape
    r = y - X @ beta
    zeros = int(np.sum(np.abs(r) < 1e-9 * max(np.abs(y).max(), np.abs(X @ beta).max())))
    h = max(p + 1, int(np.ceil(n * hall_sheather(tau, n))))
    ranks = np.arange(zeros + 1, zeros + h + 2)
    picked = np.sort(r[np.argsort(np.abs(r), kind="stable")][ranks - 1])
    slope = lp_fit(np.column_stack([np.ones(h + 1), ranks / (n - p)]), picked, 0.5)[1]
    return np.sqrt(np.diag(tau * (1 - tau) * slope ** 2 * np.linalg.inv(X.T @ X)))


def direct_nid(X, y, tau):
    """quantreg's nid sandwich written out, with fits at tau -/+ h from the independent LP."""
    n, p = X.shape
    h = hall_sheather(tau, n)
    while tau - h < 0 or tau + h > 1:
        h /= 2
    d = X @ (lp_fit(X, y, tau + h) - lp_fit(X, y, tau - h))
    f = np.maximum(0.0, 2 * h / (d - np.sqrt(np.finfo(float).eps) * np.abs(d).max()))
    H = np.linalg.inv(X.T @ (f[:, None] * X))
    return np.sqrt(np.diag(tau * (1 - tau) * H @ (X.T @ X) @ H))


def hetero(n=300, seed=0):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, 2))
    y = 1 + Z @ [2.0, -1.0] + (1 + np.abs(Z[:, 0])) * rng.standard_t(4, size=n)
    return np.column_stack([np.ones(n), Z]), y


@pytest.mark.parametrize("tau", [0.2, 0.5, 0.85])
def test_iid_and_nid_equal_the_formulas_written_out(tau):
    X, y = hetero(seed=int(tau * 10))
    fit = aidopt.solve_lad(X, y, quantile=tau, tol=1e-10, log=False)
    np.testing.assert_allclose(fit.solution["beta"], lp_fit(X, y, tau), rtol=1e-7, atol=1e-9)
    iid = fit.inference("iid")
    np.testing.assert_allclose(iid.std_error, direct_iid(X, y, fit.solution["beta"], tau), rtol=1e-7)
    nid = fit.inference("nid")
    np.testing.assert_allclose(nid.std_error, direct_nid(X, y, tau), rtol=1e-6)
    # t, p and the interval from Student's t with n - p degrees of freedom
    n, p = X.shape
    assert nid.rdf == n - p and nid.n == n
    t = nid.estimate / nid.std_error
    np.testing.assert_allclose(nid.t_value, t)
    np.testing.assert_allclose(nid.p_value, 2 * stats.t.sf(np.abs(t), n - p))
    q = stats.t.ppf(0.975, n - p)
    np.testing.assert_allclose(nid.upper - nid.lower, 2 * q * nid.std_error)
    assert nid.details["bandwidth"] == pytest.approx(hall_sheather(tau, n))


# R 4.x, quantreg 5.94, on the data of :func:`r_data` (written to d.csv with 17 digits):
#   library(quantreg); d <- read.csv("d.csv")
#   for (tau in c(0.25, 0.5, 0.9)) { f <- rq(y ~ x1 + x2, tau = tau, data = d)
#     coef(f); summary(f, se = "iid")$coefficients; summary(f, se = "nid")$coefficients
#     summary(f, se = "nid", hs = FALSE)$coefficients[, 2] }
# (rows: (Intercept), x1, x2)
R_NUMBERS = {
    0.25: {"coef": [0.42972521685129134, 2.04349745400466576, -1.47434752726637952],
           "iid": [0.30815510549016606, 0.14621467888433531, 0.17392906650420853],
           "nid": [0.21965920901124730, 0.10273499354006359, 0.14681816602925366],
           "nid_p": [0.05098631061797132, 0.0, 0.0],
           "nid_bofinger": [0.20144061141281913, 0.11590756425507641, 0.14885131870882845]},
    0.5: {"coef": [0.99109202708141086, 2.02880668780248552, -0.98498406867253885],
          "iid": [0.175124065775651455, 0.083093573937632614, 0.098843617191838776],
          "nid": [0.137764549894756283, 0.053369911423165856, 0.110313800613550200],
          "nid_p": [2.3294699502685035e-12, 0.0, 0.0],
          "nid_bofinger": [0.142309262889603050, 0.091153351036247401, 0.120638890849517663]},
    0.9: {"coef": [2.433206091744420263, 2.028284149395968683, -0.095810439941383413],
          "iid": [0.47432541439456294, 0.22505983810348881, 0.26771899953966827],
          "nid": [0.51105922922584879, 0.24773063652595601, 0.29287056394173155],
          "nid_p": [2.5292430083645456e-06, 2.2204460492503131e-15, 7.4369776658346010e-01],
          "nid_bofinger": [0.74654891966331338, 0.28851367456118815, 0.35880168118222655]},
}


def r_data():
    """500 rows, heteroscedastic t(3) errors; RandomState's stream is fixed by numpy's policy."""
    rs = np.random.RandomState(2026)
    n = 500
    x1 = rs.standard_normal(n)
    x2 = 3 * rs.random_sample(n)
    y = 1 + 2 * x1 - x2 + (1 + 0.5 * x2) * rs.standard_t(3, size=n)
    return np.column_stack([x1, x2]), y


@pytest.mark.parametrize("tau", sorted(R_NUMBERS))
def test_iid_and_nid_equal_quantreg(tau):
    X, y = r_data()
    fit = aidopt.LADRegressor(quantile=tau, tol=1e-10).fit(X, y)
    order = [2, 0, 1]  # aidopt's intercept is the last coefficient, R's the first
    r = R_NUMBERS[tau]
    np.testing.assert_allclose(fit.result_.solution["beta"][order], r["coef"], rtol=1e-9)
    iid = fit.result_.inference("iid")
    nid = fit.result_.inference("nid")
    np.testing.assert_allclose(iid.std_error[order], r["iid"], rtol=1e-7)
    np.testing.assert_allclose(nid.std_error[order], r["nid"], rtol=1e-6)
    np.testing.assert_allclose(nid.p_value[order], r["nid_p"], rtol=1e-5, atol=1e-14)
    bofinger = fit.result_.inference("nid", bandwidth="bofinger")
    np.testing.assert_allclose(bofinger.std_error[order], r["nid_bofinger"], rtol=1e-6)
    text = fit.summary(se="nid")
    assert "Std. Error" in text and "Pr(>|t|)" in text and "upper 95%" in text
    assert "certified_optimal" in text and "intercept" in text


@pytest.mark.parametrize("se", ["iid", "nid"])
def test_sample_weights_count_as_repeated_rows(se):
    X, y = hetero(n=250, seed=3)
    k = np.random.default_rng(3).integers(1, 4, size=len(y))
    weighted = aidopt.solve_lad(X, y, sample_weight=k, quantile=0.4, tol=1e-10, log=False)
    repeated = aidopt.solve_lad(np.repeat(X, k, axis=0), np.repeat(y, k), quantile=0.4,
                                tol=1e-10, log=False)
    a, b = weighted.inference(se), repeated.inference(se)
    assert a.n == b.n == k.sum() and a.rdf == b.rdf
    np.testing.assert_allclose(a.estimate, b.estimate, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(a.std_error, b.std_error, rtol=1e-6)


def test_lad_is_inferred_at_the_median():
    X, y = hetero(seed=5)
    lad = aidopt.solve_lad(X, y, tol=1e-10, log=False)
    median = aidopt.solve_lad(X, y, quantile=0.5, tol=1e-10, log=False)
    assert lad.tau == 0.5
    np.testing.assert_allclose(lad.inference("nid").std_error, median.inference("nid").std_error,
                               rtol=1e-6)


def test_the_bootstrap_is_seeded_warm_and_the_public_name_works():
    X, y = hetero(n=400, seed=6)
    s = np.random.default_rng(6).integers(0, 3, size=len(y)).astype(float)
    fit = aidopt.solve_lad(X, y, sample_weight=s, quantile=0.3, log=False)
    draws = fit.bootstrap(B=6, seed=11)
    assert draws.shape == (6, 3)
    np.testing.assert_array_equal(draws, fit.bootstrap(B=6, seed=11))
    assert not np.array_equal(draws, fit.bootstrap(B=6, seed=12))
    # the public function: the same draws (fits once, then refits from that fit's partition)
    public = aidopt.bootstrap_coefficients(aidopt.solve_lad, X, y, B=6, seed=11, sample_weight=s,
                                           quantile=0.3)
    np.testing.assert_allclose(public, draws, rtol=1e-6, atol=1e-8)
    # each replicate is the fit with weights k_i s_i (the same resample drawn here)
    rng = np.random.default_rng(11)
    counts = np.bincount(rng.integers(0, len(y), size=len(y)), minlength=len(y))
    first = aidopt.solve_lad(X, y, sample_weight=s * counts, quantile=0.3, log=False, tol=1e-9)
    w = s * counts
    assert float(w @ rho(y - X @ draws[0], 0.3)) == pytest.approx(first.objective, rel=1e-6)
    boot = fit.inference("boot", B=6, seed=11)
    np.testing.assert_allclose(boot.std_error, draws.std(axis=0, ddof=1))
    assert boot.details["B"] == 6 and boot.draws.shape == (6, 3)
    with pytest.raises(ValueError, match="B must be"):
        fit.bootstrap(B=1)


def test_refusals_and_pickles():
    X, y = hetero(n=200, seed=7)
    est = aidopt.LADRegressor(quantile=0.5).fit(X[:, 1:], y)
    with pytest.raises(ValueError, match="se must be one of 'iid', 'nid', 'boot', 'rank'"):
        est.result_.inference("ker")
    with pytest.raises(ValueError, match="bandwidth"):
        est.result_.inference("iid", bandwidth="silverman")
    with pytest.raises(ValueError, match="alpha"):
        est.result_.inference("iid", alpha=1.5)
    again = pickle.loads(pickle.dumps(est))  # the data are not pickled with the model
    assert "coefficients" in again.summary(se=None)
    with pytest.raises(ValueError, match="does not hold its data"):
        again.summary(se="iid")
    assert again.result_.to_dict()["quantile"] == 0.5
