"""Column generation over features for the 1-norm SVM (aidopt.decomposition.colgen): the
objective against HiGHS (scipy's linprog) on the full primal LP written out in the tests (no
aidopt model), the certificate recomputed here on the full data, the start set, the shape rule,
time_limit and bad options."""

from __future__ import annotations

import numpy as np
import pytest
from aidopt.decomposition.colgen import solve_l1_colgen, start_features
from aidopt.decomposition.plugins.svm import SVMProblem
from aidopt.decomposition.run import RunConfig
from scipy import sparse

import aidopt
from aidopt.api import _shape
from aidopt.data.validate import as_classification_data
from tests.svm._helpers import svm_objective
from tests.svm.test_svm_lp_sparse import _reference


def _wide(n, m, seed, fmt="dense", informative=8):
    """Labels from ``informative`` columns placed at random, the rest noise; dense or CSR."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    if fmt == "dense":
        X = rng.normal(size=(n, m))
    else:
        X = sparse.random(n, m, density=0.15, random_state=seed, format="csr",
                          data_rvs=rng.standard_normal).toarray()
    cols = rng.choice(m, informative, replace=False)
    X[:, cols] += 0.8 * y[:, None]
    return (sparse.csr_matrix(X) if fmt == "csr" else X), y, cols


def _close(a, b, rel=1e-6):
    return abs(a - b) <= rel * max(1.0, abs(a), abs(b))


@pytest.mark.parametrize("fmt", ["dense", "csr"])
@pytest.mark.parametrize("seed,ratio", [(0, 5), (1, 10), (2, 20)])
def test_objective_equals_full_lp(fmt, seed, ratio):
    n = 30
    X, y, _ = _wide(n, ratio * n, seed, fmt)
    res = aidopt.solve_svm(X, y, C=0.5, norm="l1", method="colgen", log=False)
    assert res.termination == "certified_optimal" and res.certified
    assert _close(res.objective, _reference(X, y, 0.5, "l1"))
    w = res.solution["w"]
    assert _close(svm_objective(X.toarray() if fmt == "csr" else X, y, w, res.solution["b"], 0.5,
                                "l1"), res.objective)
    outside = np.setdiff1d(np.arange(X.shape[1]), res.solution["working_set"])
    assert np.all(w[outside] == 0.0)


@pytest.mark.parametrize("solver,form", [("highs", "primal"), ("clarabel", "dual"),
                                         ("clarabel", "primal")])
def test_other_forms_and_solvers(solver, form):
    """The primal form (u the margin rows' duals) and Clarabel's interior-point duals price and
    certify too."""
    X, y, _ = _wide(30, 300, 11, "csr")
    res = aidopt.solve_svm(X, y, C=1.0, norm="l1", method="colgen", solver=solver, form=form,
                           log=False)
    assert res.certified and _close(res.objective, _reference(X, y, 1.0, "l1"))
    assert "column generation over features with " + solver in res.message


def test_shape_rule_chooses_it_and_aid_false_refuses_it():
    assert _shape.lp_svm_method(100, 400, 40_000).method == "colgen"
    assert _shape.lp_svm_method(100, 399, 39_900).method == "aid"  # small, not 4x wide
    assert _shape.lp_svm_method(100, 400, 40_000, norm="linf").method == "aid"
    assert _shape.lp_svm_method(10**4, 3 * 10**4, 10**6).method == "lp"  # sparse, only 3x wide
    X, y, _ = _wide(25, 125, 3, "csr")
    auto = aidopt.solve_svm(X, y, C=1.0, norm="l1", log=False)
    assert "column generation over features with highs: wide X" in auto.message
    assert "working_set" in auto.solution and auto.dimensions["rounds"] >= 1
    full = aidopt.solve_svm(X, y, C=1.0, norm="l1", aid=False, log=False)
    assert "aid=False given" in full.message and "working_set" not in full.solution
    assert auto.certified and full.certified and _close(auto.objective, full.objective)


def test_pricing_adds_features_outside_the_start_set():
    X, y, cols = _wide(30, 300, 4, "csr", informative=4)
    data = as_classification_data(X, y, sparse=True)
    noise = np.setdiff1d(np.arange(300), cols)[:10]  # none of the informative columns
    res = solve_l1_colgen(SVMProblem(C=1.0, norm="l1"), data, RunConfig(solver="highs", log=False),
                          start=noise)
    assert res.certified and _close(res.objective, _reference(X, y, 1.0, "l1"))
    added = [rec.info["added"] for rec in res.history]
    assert len(res.history) >= 2 and sum(added) > 0
    w = res.solution["w"]
    assert np.isin(cols, res.solution["working_set"]).any()
    assert np.count_nonzero(w[cols]) > 0  # the optimum uses features the start did not hold
    # the default start: the largest |A'(d u)| at w = 0 finds the informative columns at once
    assert np.isin(cols, start_features(data, 1.0, 10)).all()


def test_certificate_recomputed_on_the_full_data():
    X, y, _ = _wide(30, 450, 5, "csr")
    C = 0.7
    res = aidopt.solve_svm(X, y, C=C, norm="l1", method="colgen", log=False)
    cert, sol = res.certificate, res.solution
    alpha = np.asarray(sol["alpha"])
    assert alpha.min() >= -1e-9 and alpha.max() <= C * (1 + 1e-9)  # 0 <= u <= nu c
    assert abs(alpha @ y) <= 1e-7 * max(1.0, alpha.sum())  # sum d u = 0
    v = X.T @ (alpha * y)  # every feature, not only the working set
    t = max(1.0, float(np.abs(v).max()))
    assert t - 1.0 <= 1e-6  # |v_j| <= r_j for all j: no feature violates
    assert _close(cert.dual_objective, alpha.sum() / t, 1e-7)
    E = svm_objective(X.toarray(), y, sol["w"], sol["b"], C, "l1")
    assert _close(cert.primal_objective, E, 1e-9)
    assert (E - alpha.sum() / t) / E <= cert.tol == 1e-6
    assert cert.certified and cert.method.startswith("colgen_duals")


def test_duplicated_rows_and_weights():
    X, y, _ = _wide(20, 200, 6, "dense")
    twice = aidopt.solve_svm(np.vstack([X, X]), np.r_[y, y], C=1.0, norm="l1", method="colgen",
                             log=False)
    s = np.full(20, 2.0)
    weighted = aidopt.solve_svm(X, y, C=1.0, norm="l1", method="colgen", sample_weight=s,
                                log=False)
    ref = _reference(X, y, 1.0, "l1", s)
    assert twice.certified and weighted.certified
    assert _close(twice.objective, ref) and _close(weighted.objective, ref)
    rng = np.random.default_rng(7)
    s = rng.random(20) * 3
    s[:2] = 0.0  # left out of the model, alpha 0
    res = aidopt.solve_svm(sparse.csr_matrix(X), y, C=1.0, norm="l1", method="colgen",
                           sample_weight=s, log=False)
    assert res.certified and _close(res.objective, _reference(X, y, 1.0, "l1", s))
    assert np.all(res.solution["alpha"][:2] == 0.0) and "zero sample weight" in res.message


def test_time_limit_and_max_iter(monkeypatch):
    from aidopt import solvers

    X, y, _ = _wide(30, 600, 8, "csr")
    seen = []
    original = solvers.solve_model

    def spy(*args, **kwargs):
        seen.append(kwargs.get("time_limit"))
        return original(*args, **kwargs)

    monkeypatch.setattr(solvers, "solve_model", spy)
    res = aidopt.solve_svm(X, y, C=1.0, norm="l1", method="colgen", time_limit=60, log=False)
    assert res.certified and seen and all(t is not None and 0 < t <= 60 for t in seen)
    monkeypatch.setattr(solvers, "solve_model", original)
    cut = aidopt.solve_svm(X, y, C=1.0, norm="l1", method="colgen", time_limit=1e-6, log=False)
    assert cut.termination == "time_limit" and not cut.certified
    one = aidopt.solve_svm(X, y, C=1.0, norm="l1", method="colgen", max_iter=1, log=False,
                           solver_options={})
    ref = _reference(X, y, 1.0, "l1")
    assert one.termination == "iteration_limit" and not one.certified
    # a feasible point (upper bound) and a valid bound either side of the optimum
    assert one.objective >= ref * (1 - 1e-9) and one.lower_bound <= ref * (1 + 1e-9)


@pytest.mark.parametrize("kwargs,match", [
    ({"norm": "linf", "method": "colgen"}, "1-norm"),
    ({"norm": "none", "method": "colgen"}, "1-norm"),
    ({"norm": "l1", "method": "colgen", "kernel": "rbf"}, "without a kernel"),
    ({"norm": "l1", "method": "colgen", "solver": "scip"}, "duals"),
    ({"norm": "l1", "method": "colgen", "solver": "fm"}, "LP solver"),
    ({"norm": "l1", "method": "colgen", "solver": "dcd"}, "LP solver"),
    ({"norm": "l1", "method": "columns"}, "method must be"),
])
def test_bad_options(kwargs, match, monkeypatch):
    from aidopt import solvers

    def never(*args, **kw):  # validation comes before any solve
        raise AssertionError("solved before the options were checked")

    monkeypatch.setattr(solvers, "solve_model", never)
    X, y, _ = _wide(10, 50, 9)
    with pytest.raises(ValueError, match=match):
        aidopt.solve_svm(X, y, log=False, **kwargs)


def test_bad_loop_arguments():
    X, y, _ = _wide(10, 60, 10)
    data = as_classification_data(X, y)
    config = RunConfig(solver="highs", log=False)
    for kwargs, match in [({"start": 0}, "start"), ({"start": [60]}, "start"),
                          ({"start": np.array([], dtype=int)}, "start"),
                          ({"batch": 0}, "batch"), ({"price_tol": 2.0}, "price_tol")]:
        with pytest.raises(ValueError, match=match):
            solve_l1_colgen(SVMProblem(C=1.0, norm="l1"), data, config, **kwargs)
    with pytest.raises(ValueError, match="1-norm"):
        solve_l1_colgen(SVMProblem(C=1.0, norm="linf"), data, config)


def test_bench_runs_column_generation_and_the_full_lp_side_by_side(tmp_path):
    """`aidopt bench sparse --problems l1 l1-lp`: the default by shape (column generation on
    this 60 x 600 file) and the LP on all columns, the same optimum."""
    from aidopt.bench import sparse as bench

    path = bench.write_instance("l1", "text:10", 60, 600, 0, tmp_path)
    cg = bench.worker("aidopt", "l1", path, 600, C=1.0)
    lp = bench.worker("aidopt", "l1-lp", path, 600, C=1.0)
    assert cg["method"] == "column generation, highs" and cg["certified"]
    assert lp["method"] == "LP from CSR, highs" and lp["certified"]
    assert _close(cg["objective"], lp["objective"], 1e-7)


def test_a_sparse_x_is_never_densified(monkeypatch):
    from tests._densify import densify_calls

    X, y, _ = _wide(30, 300, 12, "csr")
    X = sparse.csr_matrix(X)
    calls = densify_calls(monkeypatch)
    res = aidopt.solve_svm(X, y, C=1.0, norm="l1", log=False)  # column generation by shape
    assert "column generation" in res.message and res.certified
    # the solver layer densifies the LP's cost vector (one row); nothing of X is densified
    assert not [shape for shape in calls if min(shape) > 1], calls
