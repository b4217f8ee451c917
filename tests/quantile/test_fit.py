"""Regression quantiles: every level against an independent LP, tau = 0.5 against LAD, the
certificate's dual box, the Frisch-Newton method and the Pyomo forms, the warm sequence, and
bad levels refused.

The reference is SciPy's ``linprog`` (HiGHS behind SciPy's own interface) on the primal quantile
LP built here from the definition, not from aidopt's models:
``min sum_i s_i (tau e+_i + (1 - tau) e-_i)`` s.t. ``X beta + e+ - e- = y``, ``e+, e- >= 0``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from aidopt.decomposition.plugins.lad import certificate
from scipy.optimize import linprog

import aidopt
from aidopt.data.validate import as_regression_data
from aidopt.numerics.fn import frisch_newton
from aidopt.results import Termination

TAUS = [0.1, 0.25, 0.5, 0.75, 0.9]


def rho(r, tau):
    """Koenker's check function, written out."""
    return r * (tau - (r < 0))


def reference(X, y, s, tau):
    """The optimum of the quantile LP by SciPy / HiGHS, evaluated exactly at its beta."""
    n, m = X.shape
    c = np.concatenate([np.zeros(m), tau * s, (1 - tau) * s])
    A = sp.hstack([sp.csr_matrix(X), sp.eye(n), -sp.eye(n)]).tocsr()
    res = linprog(c, A_eq=A, b_eq=y, bounds=[(None, None)] * m + [(0, None)] * (2 * n),
                  method="highs")
    assert res.status == 0
    return float(s @ rho(y - X @ res.x[:m], tau))


def data(kind, seed=0, n=600):
    """Heteroscedastic data with an intercept column (last): with sample weights, with
    duplicated rows, or plain."""
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, 3))
    y = 1 + Z @ [2.0, -1.0, 0.5] + (1 + 0.5 * np.abs(Z[:, 0])) * rng.standard_t(3, size=n)
    s = np.ones(n)
    if kind == "weights":
        s = rng.integers(0, 5, size=n).astype(float)  # zeros too: rows left out
    elif kind == "duplicates":
        dup = rng.integers(0, n, size=n // 3)
        Z, y = np.vstack([Z, Z[dup]]), np.concatenate([y, y[dup]])
        s = np.ones(len(y))
    return np.column_stack([Z, np.ones(len(y))]), y, s


@pytest.mark.parametrize("tau", TAUS)
@pytest.mark.parametrize("kind", ["plain", "weights", "duplicates"])
def test_every_level_matches_an_independent_lp(kind, tau):
    X, y, s = data(kind, seed=int(100 * tau))
    ref = reference(X, y, s, tau)
    res = aidopt.solve_lad(X, y, sample_weight=s, quantile=tau, tol=1e-9, log=False)
    assert res.termination is Termination.CERTIFIED_OPTIMAL
    assert res.quantile == tau
    # the objective is sum_i s_i rho_tau(r_i) at the returned beta (quantreg's scale)
    beta = res.solution["beta"]
    assert res.objective == pytest.approx(float(s @ rho(y - X @ beta, tau)), rel=1e-12)
    assert res.objective == pytest.approx(ref, rel=1e-8)
    # the certificate's dual u (over the rows of positive weight): X'u = 0,
    # s(tau - 1) <= u <= s tau, y'u within tol of E
    keep = s > 0
    u, X, y, s = res.certificate.dual_values["u"], X[keep], y[keep], s[keep]
    assert np.all(u <= tau * s * (1 + 1e-12)) and np.all(u >= (tau - 1) * s * (1 + 1e-12))
    assert np.abs(X.T @ u).max() <= 1e-8 * (np.abs(X).T @ s).max()
    assert res.certificate.dual_objective == pytest.approx(float(y @ u), rel=1e-12)
    assert res.certificate.dual_objective <= ref * (1 + 1e-9)


@pytest.mark.parametrize("solver", ["highs", "fn"])
@pytest.mark.parametrize("form", ["primal", "dual"])
def test_pyomo_forms_and_the_direct_solve(solver, form):
    X, y, s = data("weights", seed=7, n=300)
    tau = 0.3
    ref = reference(X, y, s, tau)
    res = aidopt.solve_lad(X, y, sample_weight=s, quantile=tau, solver=solver, form=form,
                           aid=False, tol=1e-9, log=False)
    assert res.certified and res.objective == pytest.approx(ref, rel=1e-8)


@pytest.mark.parametrize("seed", range(12))
def test_frisch_newton_on_quantile_lps(seed):
    rng = np.random.default_rng(seed)
    K, m = int(rng.integers(40, 400)), int(rng.integers(1, 10))
    X = rng.normal(size=(K, m))
    if seed % 3 == 0:
        X[:, 0] = 1.0
    y = X @ rng.normal(size=m) + rng.laplace(size=K)
    if seed % 3 == 1:  # ties
        X, y = np.round(2 * X), np.round(2 * y)
    w = rng.integers(1, 30, size=K).astype(float)
    tau = [0.05, 0.2, 0.5, 0.8, 0.95][seed % 5]
    res = frisch_newton(X, y, w, quantile=tau)
    assert res.status == "optimal"
    ref = reference(X, y, w, tau)
    scale = max(abs(ref), 1e-9 * float(w @ rho(y, tau)))
    assert abs(res.objective - ref) <= 1e-7 * scale
    # the dual is in its box exactly, X'v = 0, and y'v = E
    assert np.all(res.v <= tau * w * (1 + 1e-12)) and np.all(res.v >= (tau - 1) * w * (1 + 1e-12))
    assert np.abs(X.T @ res.v).max() <= 1e-8 * float((np.abs(X).T @ w).max())
    assert abs(float(y @ res.v) - res.objective) <= 1e-7 * scale


def test_median_is_half_of_lad_and_lad_is_unchanged():
    X, y, s = data("weights", seed=3)
    lad = aidopt.solve_lad(X, y, sample_weight=s, tol=1e-10, log=False)
    median = aidopt.solve_lad(X, y, sample_weight=s, quantile=0.5, tol=1e-10, log=False)
    assert lad.quantile is None and lad.certified and median.certified
    assert median.objective == pytest.approx(lad.objective / 2, rel=1e-9)
    # LAD's objective and certificate are today's: sum s|r|, the box |u| <= s
    assert lad.objective == pytest.approx(float(s @ np.abs(y - X @ lad.solution["beta"])), rel=1e-12)
    assert "dual bound |u|<=s" in lad.certificate.residuals
    assert lad.problem == "lad" and median.problem == "quantile regression tau=0.5"
    # the median's beta is a LAD solution: the LAD objective there is LAD's optimum
    at_median = float(s @ np.abs(y - X @ median.solution["beta"]))
    assert at_median == pytest.approx(lad.objective, rel=1e-8)


def test_the_certificate_checks_the_box_of_its_level():
    X, y, s = data("plain", seed=4, n=400)
    res = aidopt.solve_lad(X, y, quantile=0.2, tol=1e-10, log=False)
    d = as_regression_data(X, y)
    u, beta = res.certificate.dual_values["u"], res.solution["beta"]
    assert certificate(d, beta, u, tol=1e-9, quantile=0.2).certified
    # the same u is outside the box of tau = 0.8 (it holds values near 0.2 - 1 = -0.8)
    wrong = certificate(d, beta, u, tol=1e-9, quantile=0.8)
    assert not wrong.certified and wrong.residuals["box s(tau-1)<=u<=s tau"] > 0.5
    # a perturbed beta is not certified by the optimal u
    tampered = certificate(d, beta + 1e-3, u, tol=1e-9, quantile=0.2)
    assert not tampered.certified and tampered.relative_gap > 1e-9


def test_a_sequence_equals_the_single_fits():
    X, y, s = data("weights", seed=5, n=1500)
    levels = [0.9, 0.1, 0.5]  # any order: fitted and returned increasing
    fits = aidopt.solve_lad(X, y, sample_weight=s, quantile=levels, tol=1e-9, log=False)
    assert isinstance(fits, aidopt.QuantileResults) and fits.certified
    assert fits.termination is Termination.CERTIFIED_OPTIMAL
    assert fits.quantiles.tolist() == [0.1, 0.5, 0.9] and len(fits) == 3
    frame = fits.coefficients()
    assert list(frame.index) == [0.1, 0.5, 0.9] and list(frame.columns) == ["x0", "x1", "x2", "x3"]
    for tau, fit in zip(fits.quantiles, fits, strict=True):
        single = aidopt.solve_lad(X, y, sample_weight=s, quantile=tau, tol=1e-9, log=False)
        assert fit.quantile == tau and fit.certified
        assert fit.objective == pytest.approx(single.objective, rel=1e-9)
        np.testing.assert_allclose(frame.loc[tau].to_numpy(), fit.solution["beta"])
    # later levels start from their neighbour's coefficients (a different, smaller start than
    # the random-sample fit's), and say so in the history: their first iterate is the AID
    # start, not the sample fit's
    assert "0.1" in fits.summary() and "coefficients by tau" in fits.summary()
    assert {row["tau"] for row in fits.history_rows()} == {0.1, 0.5, 0.9}
    assert fits.to_dict()["quantiles"] == [0.1, 0.5, 0.9]


def test_the_sequence_plots_the_coefficients_by_level(tmp_path):
    pytest.importorskip("matplotlib")
    X, y, _ = data("plain", seed=6, n=400)
    fits = aidopt.solve_lad(X, y, quantile=[0.25, 0.5, 0.75], log=False)
    fig = fits.plot(tmp_path / "rq.png", se="iid")
    assert (tmp_path / "rq.png").stat().st_size > 0 and len(fig.axes) >= 4


@pytest.mark.parametrize(("value", "error", "words"), [
    (0, ValueError, "open interval"), (1, ValueError, "open interval"),
    (-0.1, ValueError, "open interval"), (1.5, ValueError, "open interval"),
    (math.nan, ValueError, "open interval"), ("0.5", TypeError, "number in (0, 1)"),
    (True, TypeError, "number in (0, 1)"), (np.bool_(False), TypeError, "number in (0, 1)"),
    ([0.2, 0.2], ValueError, "repeats"), ([], ValueError, "empty"),
    ([0.5, 1.0], ValueError, r"quantile\[1\]"), ([0.5, None], TypeError, "not None"),
    ({0.5}, TypeError, "number in (0, 1)"),
])
def test_bad_levels_are_refused_before_any_solve(monkeypatch, value, error, words):
    import aidopt.api._front as front

    def reached(*args, **kwargs):  # pragma: no cover - only when the test fails
        raise AssertionError("a solve started")

    monkeypatch.setattr(front, "solve", reached)
    monkeypatch.setattr(front, "solve_direct", reached)
    X, y, _ = data("plain", n=50)
    with pytest.raises(error, match=words if words.startswith("quantile") else None) as exc:
        aidopt.solve_lad(X, y, quantile=value, log=False)
    assert words.replace("\\", "") in str(exc.value)
    if not isinstance(value, list):
        with pytest.raises(error):
            aidopt.LADRegressor(quantile=value).fit(X, y)


def test_the_estimator_fits_one_level():
    X, y, s = data("weights", seed=8, n=500)
    est = aidopt.LADRegressor(quantile=0.75).fit(X[:, :-1], y, sample_weight=s)
    res = aidopt.solve_lad(X, y, sample_weight=s, quantile=0.75, tol=1e-6, log=False)
    assert est.result_.certified and est.result_.quantile == 0.75
    assert est.result_.objective == pytest.approx(res.objective, rel=1e-6)
    assert est.get_params()["quantile"] == 0.75
    # about a quarter of the (weighted) rows lie above the fitted 0.75 quantile
    above = float(s @ (y > est.predict(X[:, :-1]))) / s.sum()
    assert 0.2 < above < 0.3
    with pytest.raises(ValueError, match="one quantile level"):
        aidopt.LADRegressor(quantile=[0.25, 0.75]).fit(X[:, :-1], y)


def test_the_dask_engine_fits_quantiles(tmp_path):
    pytest.importorskip("dask")
    X, y, _ = data("plain", seed=9, n=3000)
    path = tmp_path / "X.npy"
    np.save(path, X)
    streamed = aidopt.solve_lad(str(path), y, engine="dask", quantile=0.3, tol=1e-9, log=False)
    in_memory = aidopt.solve_lad(X, y, quantile=0.3, tol=1e-9, log=False)
    assert streamed.certified and streamed.objective == pytest.approx(in_memory.objective, rel=1e-9)
    with pytest.raises(ValueError, match="X in memory"):
        streamed.inference("iid")
