"""(1.12) in its factored form: the LP on the factor U_r of K's SVD (``ku_form="svd"``; what
the default ``"auto"`` uses for a numerically singular K), against an LP built without any SVD."""

from __future__ import annotations

import numpy as np
import pytest
from aidopt.decomposition.plugins.gsvm import factor_kernel
from aidopt.instances import checkerboard
from scipy.optimize import linprog

import aidopt
from aidopt.numerics.kernels import kernel_function
from aidopt.results import Termination

FIG_1_2 = {"d": 6, "lam": 100.0, "rho": 1.0, "mu": 0.5}


@pytest.mark.parametrize("case", ["symmetric", "repeated rows", "not symmetric"])
def test_factor_reconstructs_k(case):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(40, 3))
    if case == "repeated rows":
        X[30:] = X[:10]
    K = kernel_function("poly", d=2)(X, X)
    if case == "not symmetric":
        K = K + np.outer(np.arange(40.0), np.ones(40)) * 1e-3
    f = factor_kernel(K)
    distinct = np.unique(K, axis=0)
    assert f.rank == np.linalg.matrix_rank(distinct)  # NumPy's tolerance, the same rank
    assert f.rank < 40 and (f.group.max() + 1) == distinct.shape[0]
    K_tau = (f.U * f.sigma[:f.rank]) @ f.Vt
    assert np.allclose(K_tau[f.group], K, rtol=0, atol=1e-10 * np.abs(K).max())
    assert np.allclose(f.U.T @ f.U, np.eye(f.rank), atol=1e-12)
    assert np.allclose(f.Vt @ f.Vt.T, np.eye(f.rank), atol=1e-12)
    assert np.all(np.diff(f.sigma) <= 0) and f.sigma[f.rank - 1] > f.tau >= f.sigma[f.rank:].max()
    t = rng.normal(size=f.rank)
    w = f.coefficients(t)  # K_tau w = U t with at most r nonzeros
    assert np.count_nonzero(w) <= f.rank
    assert np.allclose(K_tau @ w, f.U @ t, rtol=0, atol=1e-9 * np.abs(f.U @ t).max())


def _monomials(X, lam, rho, d):
    """Every monomial of degree <= d in the two shifted coordinates: a basis of the range of
    the shifted polynomial kernel's matrix (no SVD)."""
    Z = X / lam - rho
    return np.column_stack([Z[:, 0] ** a * Z[:, 1] ** b
                            for a in range(d + 1) for b in range(d + 1 - a)])


def _reference(X, y, nu):
    """(1.12) as an LP in (c, gamma, y, s) with f = Phi c, Phi the monomial basis: f = K w
    ranges over exactly the span of Phi. Returns the objective evaluated at its (c, gamma): a
    feasible point's value, so an upper bound on the optimum (the LP's own value is only
    within its feasibility tolerance)."""
    Phi = _monomials(X, FIG_1_2["lam"], FIG_1_2["rho"], FIG_1_2["d"])
    m, r = Phi.shape
    n = r + 1 + 2 * m
    c = np.concatenate([np.zeros(r + 1), np.full(m, nu), np.ones(m)])
    eye = np.eye(m)
    margin = np.hstack([-y[:, None] * Phi, y[:, None], -eye, np.zeros((m, m))])
    upper = np.hstack([Phi, np.zeros((m, 1)), np.zeros((m, m)), -eye])
    lower = np.hstack([-Phi, np.zeros((m, 1)), np.zeros((m, m)), -eye])
    res = linprog(c, A_ub=np.vstack([margin, upper, lower]),
                  b_ub=np.concatenate([-np.ones(m), np.zeros(2 * m)]),
                  bounds=[(None, None)] * (r + 1) + [(0, None)] * (2 * m), method="highs")
    assert res.status == 0 and n == c.size
    f, gamma = Phi @ res.x[:r], res.x[r]
    return nu * np.maximum(1 - y * (f - gamma), 0).sum() + np.abs(f).sum()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_factored_lp_is_certified_at_the_monomial_lp_optimum(seed):
    X, y = checkerboard(150, seed=seed)
    nu = 1e3
    res = aidopt.solve_gsvm(X, y, kernel="shifted_poly", kernel_params=FIG_1_2, nu=nu,
                            formulation="lp_Ku", log=False)
    assert res.termination is Termination.CERTIFIED_OPTIMAL, res.summary()
    assert "numerical rank 28" in res.certificate.note
    opt = _reference(X, y, nu)
    assert res.objective == pytest.approx(opt, rel=1e-7)
    assert res.lower_bound <= opt * (1 + 1e-12)
    # the answer is the formulation's value at w on K as stored
    K = kernel_function("shifted_poly", **FIG_1_2)(X, X)
    w, gamma = res.solution["w"], res.solution["gamma"]
    value = nu * np.maximum(1 - y * (K @ w - gamma), 0).sum() + np.abs(K @ w).sum()
    assert res.objective == pytest.approx(value, rel=1e-9)


def test_fig_1_2_lp_ku_is_certified_at_the_default_tolerance():
    """(1.12) on Fig. 1.2's 1,000 points: on K itself HiGHS's simplex did not finish in 300 s
    and its interior point ended uncertified; the factored LP is certified at tol 1e-6."""
    X, y = checkerboard(1000, seed=0)
    res = aidopt.solve_gsvm(X, y, kernel="shifted_poly", kernel_params=FIG_1_2, nu=1e4,
                            formulation="lp_Ku", log=False, time_limit=120)
    assert res.termination is Termination.CERTIFIED_OPTIMAL, res.summary()
    accuracy = np.mean(np.where(res.solution["decision"] >= 0, 1.0, -1.0) == y)
    assert accuracy >= 0.99
    assert np.count_nonzero(res.solution["u"]) <= 28  # one training point per rank


def test_full_rank_kernel_keeps_the_kernel_form():
    """auto: a K of full numerical rank (distinct points, RBF with a large gamma) is solved on K."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(25, 2))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    problem = aidopt.decomposition.plugins.gsvm.GSVMKuProblem(nu=10.0)
    K = kernel_function("rbf", gamma=5.0)(X, X)
    assert problem.factor(K).full_rank
    data = aidopt.data.validate.as_classification_data(K, y)
    assert problem.lp_factor(K) is None
    assert np.array_equal(problem.build(data).kernel.value, K)
    forced = aidopt.decomposition.plugins.gsvm.GSVMKuProblem(nu=10.0, form="svd")
    assert forced.lp_factor(K).rank == 25
    assert not np.array_equal(forced.build(data).kernel.value, K)  # the factor U_r
    a = aidopt.solve_gsvm(X, y, kernel="rbf", kernel_params={"gamma": 5.0}, nu=10.0,
                          formulation="lp_Ku", log=False)
    b = aidopt.solve_gsvm(X, y, kernel="rbf", kernel_params={"gamma": 5.0}, nu=10.0,
                          formulation="lp_Ku", ku_form="svd", log=False)
    assert a.termination is b.termination is Termination.CERTIFIED_OPTIMAL
    assert a.objective == pytest.approx(b.objective, rel=1e-7)


def test_bad_form_is_refused():
    X, y = checkerboard(20, seed=0)
    with pytest.raises(ValueError, match="ku_form|form"):
        aidopt.solve_gsvm(X, y, formulation="lp_Ku", ku_form="qr", log=False)


def test_bench_table_ku(tmp_path):
    """``aidopt bench gsvm --table ku`` at a small m: one row per form, the SVD form certified."""
    from aidopt.cli.main import main

    out = tmp_path / "ku.md"
    assert main(["bench", "gsvm", "--table", "ku", "--sizes", "60", "--time-limit", "10",
                 "--output", str(out)]) == 0
    rows = [line for line in out.read_text().splitlines() if line.startswith("| 60 |")]
    assert len(rows) == 3
    assert "SVD factor" in rows[0] and "certified_optimal" in rows[0]
    assert {"simplex", "ipm"} <= {part for row in rows[1:] for part in row.replace(")", " ").split()}
