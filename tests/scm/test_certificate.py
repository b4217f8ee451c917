"""The weighted SVM (6) on the representatives is solved by a real solver (Clarabel by default)
and its certificate is reported; the full-data certificate of the lift is a valid bound."""

from __future__ import annotations

import numpy as np
import pytest
from aidopt.instances.scm import sine_set

import aidopt
from aidopt.api.scm import solve_scm


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



@pytest.mark.parametrize("kernel", ["rbf", "linear"])
def test_pseudo_centre_lift_is_a_looser_valid_bound(kernel):
    """With pseudo-centres the spread lift is still feasible for (2); its w (the centroids') is
    not SCM's, so the gap is valid but looser than the centroid representatives'."""
    X, y = _data()
    full = aidopt.solve_svm(X, y, C=1.0, kernel=kernel, gamma=0.5, aid=False, log=False)
    assert full.certified
    pseudo = solve_scm(X, y, kernel=kernel, gamma=0.5, representative="pseudo", max_iter=1,
                       log=False)
    cert = pseudo.full_certificate
    assert cert is not None and cert.method == "scm_lift"
    assert cert.residuals["dual bound 0<=alpha<=Cs"] <= 1e-9  # the lift is in the box of (2)
    assert cert.dual_objective <= full.objective * (1 + 1e-7)
    assert cert.primal_objective >= full.objective * (1 - 1e-7)
    # the primal is SCM's own f: 1/2 ||w||^2 with w on the pseudo-centres, plus the hinge losses
    K = pseudo.kernel(X, X)
    u, v = pseudo.pseudo_centres, pseudo.svm.alpha * pseudo.svm.y
    f = pseudo.decision_function(X)
    yy = np.where(y == pseudo.classes[1], 1.0, -1.0)
    primal = 0.5 * v @ K[np.ix_(u, u)] @ v + np.maximum(1 - yy * f, 0).sum()
    assert cert.primal_objective == pytest.approx(primal, rel=1e-6)
    # the dual is the lift's: the centroids' kernel
    lab = pseudo.cluster_of
    S = np.zeros((y.size, lab.max() + 1))
    S[np.arange(y.size), lab] = 1.0
    S /= S.sum(axis=0)
    dual = pseudo.svm.alpha.sum() - 0.5 * v @ (S.T @ K @ S) @ v
    assert cert.dual_objective == pytest.approx(dual, rel=1e-6)


def test_write_models(tmp_path):
    X, y = _data()
    solve_scm(X, y, kernel="linear", max_iter=1, write_models=str(tmp_path), log=False)
    assert sorted(p.suffix for p in tmp_path.iterdir()) == [".lp", ".mps"]


def test_write_models_numbers_every_round_in_solve_order(tmp_path):
    """The run framework's one ``write_models``: NNN_<model name>, one pair per solve."""
    X, y = _data()
    res = solve_scm(X, y, kernel="linear", shrink="rank", rank_keep=0.9, max_iter=3,
                    write_models=str(tmp_path),
                    log=False)
    stems = sorted({p.stem for p in tmp_path.iterdir()})
    assert len(stems) == len(res.history) >= 2
    assert [s[:4] for s in stems] == [f"{k:03d}_" for k in range(1, len(stems) + 1)]
