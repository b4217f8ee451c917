"""The full-data SVM certificate: accepts optimal solutions, rejects perturbed ones, is rigorous."""

from __future__ import annotations

import numpy as np
import pytest
from aidopt.decomposition.plugins.svm import certificate

import aidopt
from aidopt.data.validate import as_classification_data
from tests.svm._helpers import instance, svm_objective

NORMS = ["l2", "l1", "linf", "none"]
C = 0.1
TOL = 1e-6


@pytest.fixture(scope="module")
def problem():
    X, y = instance("overlapping", 1500, 4, 41)
    return X, y, as_classification_data(X, y)


@pytest.fixture(scope="module")
def solved(problem):
    X, y, _ = problem
    return {norm: aidopt.solve_svm(X, y, C=C, norm=norm, log=False) for norm in NORMS}


@pytest.mark.parametrize("norm", NORMS)
def test_certificate_accepts_the_solution(problem, solved, norm):
    X, y, data = problem
    res = solved[norm]
    assert res.certified
    assert res.certificate.method == "solver_duals"
    # AID may stop on the gap before every cluster is sign-pure: the sign condition is reported
    assert res.certificate.sign_condition in (True, False)
    sol = res.solution
    cert = certificate(data, sol["w"], sol["b"], sol["alpha"], C=C, norm=norm, tol=TOL)
    assert cert.certified
    assert cert.relative_gap <= TOL
    assert cert.primal_objective == pytest.approx(svm_objective(X, y, sol["w"], sol["b"], C, norm),
                                                  rel=1e-12)
    assert all(cert.residuals[key] <= 1e-6 for key in cert.checked)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("perturb", ["w*1.05", "w*0.95", "b+0.1", "b-0.1"])
def test_certificate_rejects_perturbed_primal(problem, solved, norm, perturb):
    _, _, data = problem
    sol = solved[norm].solution
    w, b = sol["w"].copy(), sol["b"]
    if perturb.startswith("w"):
        w = w * float(perturb[2:])
    else:
        b = b + float(perturb[1:])
    cert = certificate(data, w, b, sol["alpha"], C=C, norm=norm, tol=TOL)
    assert not cert.certified
    assert cert.relative_gap > TOL
    # the bound itself is unchanged: it depends on alpha only
    assert cert.dual_objective == pytest.approx(solved[norm].certificate.dual_objective, rel=1e-9)


@pytest.mark.parametrize("norm", NORMS)
def test_certificate_rejects_infeasible_or_weak_duals(problem, solved, norm):
    _, y, data = problem
    sol = solved[norm].solution
    alpha = sol["alpha"]
    # a dual above its bound C s_i
    over = alpha.copy()
    over[np.argmax(alpha)] += 2 * C
    cert = certificate(data, sol["w"], sol["b"], over, C=C, norm=norm, tol=TOL)
    assert not cert.certified
    assert cert.residuals["dual bound 0<=alpha<=Cs"] > 1e-6
    # a dual breaking sum alpha_i y_i = 0
    unbalanced = np.where(y > 0, 0.5 * alpha, alpha)
    cert = certificate(data, sol["w"], sol["b"], unbalanced, C=C, norm=norm, tol=TOL)
    assert not cert.certified
    assert cert.residuals["balance |sum alpha y|"] > 1e-6
    # a feasible but weak dual (all zero): bound 0, gap = E
    cert = certificate(data, sol["w"], sol["b"], np.zeros_like(alpha), C=C, norm=norm, tol=TOL)
    assert not cert.certified
    assert cert.dual_objective == 0.0


@pytest.mark.parametrize("norm", NORMS)
def test_lifted_alpha_is_dual_feasible(problem, solved, norm):
    X, y, data = problem
    sol = solved[norm].solution
    w, alpha = sol["w"], sol["alpha"]
    assert alpha.shape == (len(y),)
    assert np.all(alpha >= -1e-6 * C) and np.all(alpha <= C * (1 + 1e-6))
    assert abs(float(alpha @ y)) <= 1e-6 * max(1.0, float(alpha.sum()))
    g = X.T @ (alpha * y)
    if norm == "l2":  # stationarity: w = X' D alpha
        assert np.abs(w - g).max() <= 1e-6 * max(1.0, np.abs(w).max())
    elif norm == "l1":  # dual norm ball of ||.||_1
        assert np.abs(g).max() <= 1 + 1e-6
    elif norm == "linf":  # dual norm ball of ||.||_inf
        assert np.abs(g).sum() <= 1 + 1e-6
    else:  # RLP: X' D alpha = 0 (scaled as the certificate does)
        assert np.abs(g).max() <= 1e-6 * max(1.0, C * data.column_scale.max())
    # complementary slackness, summed: every term (C - a_i) xi_i + a_i (xi_i - 1 + y_i f_i) is
    # >= 0 for a feasible alpha, and their sum is at most the duality gap E - D (equal for l2)
    a = np.clip(alpha, 0.0, C)
    f = X @ w + sol["b"]
    xi = np.maximum(0.0, 1.0 - y * f)
    terms = (C - a) * xi + a * (xi - 1.0 + y * f)
    res = solved[norm]
    assert terms.min() >= -1e-9 * C
    gap = res.certificate.primal_objective - res.certificate.dual_objective
    assert terms.sum() <= gap + 1e-6 * max(1.0, res.objective)


@pytest.mark.parametrize("norm", ["l2", "l1", "linf"])
def test_dual_bound_is_rigorous_for_any_feasible_alpha(problem, solved, norm):
    """Weak duality: any alpha in the box with sum alpha y = 0 gives a value <= the optimum
    (for l1 / linf after the certificate's scaling into the dual-norm ball)."""
    _, y, data = problem
    best = solved[norm].objective
    sol = solved[norm].solution
    rng = np.random.default_rng(7)
    for _ in range(20):
        alpha = rng.uniform(0.0, C, size=len(y)) * (rng.random(len(y)) < 0.5)
        pos, neg = alpha[y > 0].sum(), alpha[y < 0].sum()
        alpha[y > 0] *= min(pos, neg) / pos
        alpha[y < 0] *= min(pos, neg) / neg
        cert = certificate(data, sol["w"], sol["b"], alpha, C=C, norm=norm, tol=TOL)
        assert cert.residuals["balance |sum alpha y|"] <= 1e-12
        assert cert.dual_objective <= best + 1e-9 * max(1.0, best)


def test_tiny_problem_known_primal_and_dual_values():
    """Two points x = +-1: the 2-norm optimum is w = 1, b = 0, E = 1/2 with alpha = (1/2, 1/2);
    the 1-norm optimum is E = 1 with the same alpha."""
    X = np.array([[1.0], [-1.0]])
    y = np.array([1.0, -1.0])
    data = as_classification_data(X, y)
    alpha = np.array([0.5, 0.5])
    cert = certificate(data, [1.0], 0.0, alpha, C=10.0, norm="l2", tol=1e-12)
    assert cert.certified
    assert cert.primal_objective == pytest.approx(0.5) and cert.dual_objective == pytest.approx(0.5)
    cert = certificate(data, [1.0], 0.0, alpha, C=10.0, norm="l1", tol=1e-12)
    assert cert.certified
    assert cert.primal_objective == pytest.approx(1.0) and cert.dual_objective == pytest.approx(1.0)
    # not optimal: w = 2 has the same hinge (0) but a larger regularizer
    assert not certificate(data, [2.0], 0.0, alpha, C=10.0, norm="l2", tol=1e-6).certified
    for norm, expected in (("l2", 0.5), ("l1", 1.0), ("linf", 1.0)):
        res = aidopt.solve_svm(X, y, C=10.0, norm=norm, log=False)
        assert res.certified
        assert res.objective == pytest.approx(expected, abs=1e-7)
        assert res.solution["w"] == pytest.approx([1.0], abs=1e-6)
        assert res.solution["b"] == pytest.approx(0.0, abs=1e-6)


def test_certificate_reported_in_result_and_json(solved):
    res = solved["l2"]
    text = res.to_json()
    assert '"termination": "certified_optimal"' in text
    assert res.certificate.summary().startswith("certificate (solver_duals): CERTIFIED")
    d = res.to_dict()
    assert d["certificate"]["certified"] is True
    assert len(d["solution"]["alpha"]) == res.n
