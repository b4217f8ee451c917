"""The weighted SVM (6) on the representatives is solved by a real solver (Clarabel by default)
and its certificate is reported; the full-data certificate of the lift is a valid bound."""

from __future__ import annotations

import numpy as np
import pytest
from aidopt.instances.scm import sine_set

import aidopt
from aidopt.scm import solve_scm


def _data():
    return sine_set("D2", n_pos=20, n_neg=200, seed=4)


def test_clarabel_certificate_of_the_representative_svm():
    X, y = _data()
    res = solve_scm(X, y, kernel="rbf", gamma=0.5, C=1.0, max_iter=1, log=False)
    rep = res.svm
    assert rep.solver == "clarabel" and rep.status == "optimal"
    cert = rep.certificate
    assert cert.certified and cert.method == "solver_duals" and 0 <= cert.relative_gap <= 1e-6
    assert "CERTIFIED" in res.summary()
    # recompute both objectives of (6) from the data, independently of SCM's code
    lab = res.cluster_of
    Z = np.zeros((y.size, lab.max() + 1))
    Z[np.arange(y.size), lab] = 1.0
    S = Z / Z.sum(axis=0)
    K_pi = S.T @ res.kernel(X, X) @ S
    v = rep.alpha * rep.y
    f = K_pi @ v + rep.b
    primal = 0.5 * v @ K_pi @ v + 1.0 * rep.weights @ np.maximum(1 - rep.y * f, 0)
    dual = rep.alpha.sum() - 0.5 * v @ K_pi @ v
    assert cert.primal_objective == pytest.approx(primal, rel=1e-9)
    assert cert.dual_objective == pytest.approx(dual, rel=1e-6)
    assert np.all(rep.alpha >= -1e-12) and np.all(rep.alpha <= rep.weights * 1.0 + 1e-9)


def test_a_loose_solve_is_reported_not_certified():
    pytest.importorskip("sklearn")
    X, y = _data()
    res = solve_scm(X, y, kernel="rbf", gamma=0.5, C=1.0, max_iter=1, solver="libsvm",
                    solver_options={"tol": 0.5}, log=False)
    assert res.svm.solver == "libsvm"
    assert not res.certified and res.svm.certificate.relative_gap > 1e-6
    tight = solve_scm(X, y, kernel="rbf", gamma=0.5, C=1.0, max_iter=1, solver="libsvm",
                      solver_options={"tol": 1e-9}, log=False)
    assert tight.svm.certificate.relative_gap < 1e-5


def test_full_data_certificate_brackets_the_full_svm():
    X, y = _data()
    res = solve_scm(X, y, kernel="rbf", gamma=0.5, C=1.0, log=False)
    full = aidopt.solve_svm(X, y, C=1.0, kernel="rbf", gamma=0.5, aid=False, log=False)
    cert = res.full_certificate
    assert full.certified and cert is not None and cert.method == "scm_lift"
    assert cert.dual_objective <= full.objective * (1 + 1e-7)  # a valid lower bound
    assert cert.primal_objective >= full.objective * (1 - 1e-7)  # SCM's f on all rows
    assert cert.relative_gap > 1e-3 and not cert.certified  # SCM is not the full SVM here
    pseudo = solve_scm(X, y, kernel="rbf", gamma=0.5, representative="pseudo", log=False)
    assert pseudo.full_certificate is None


def test_write_models(tmp_path):
    X, y = _data()
    solve_scm(X, y, kernel="linear", max_iter=1, write_models=str(tmp_path), log=False)
    assert sorted(p.suffix for p in tmp_path.iterdir()) == [".lp", ".mps"]
