"""The Crammer–Singer multi-class SVM (models/crammer_singer.py, the plug-in
decomposition/plugins/crammer_singer.py, aidopt/api/crammer_singer.py and
``SVMClassifier(multi_class="crammer_singer")``): one joint problem over all classes, compared
with the same LP / QP built independently (scipy's HiGHS, Clarabel's own API), with LIBLINEAR's
``-s 4`` and between AID and the direct solve, and certified on the original rows."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

sklearn = pytest.importorskip("sklearn", minversion="1.6")

from aidopt.decomposition.partition import Partition  # noqa: E402
from aidopt.decomposition.plugins.crammer_singer import (  # noqa: E402
    CrammerSingerProblem,
    CSState,
    certificate,
    piece_values,
)
from aidopt.decomposition.protocol import Lifted  # noqa: E402
from sklearn.base import clone  # noqa: E402
from sklearn.datasets import load_digits, load_iris  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.svm import LinearSVC  # noqa: E402

from aidopt import FSVClassifier, SVMClassifier  # noqa: E402
from aidopt.api.crammer_singer import (  # noqa: E402
    DIRECT_SAMPLES,
    _method,
    default_solver,
    solve_crammer_singer,
)
from aidopt.api.estimator import ConvergenceWarning  # noqa: E402
from aidopt.cli.main import main  # noqa: E402
from aidopt.data.validate import as_multiclass_data  # noqa: E402
from aidopt.results import Termination  # noqa: E402
from aidopt.testing import check_plugin  # noqa: E402


def blobs(n=90, m=3, k=3, seed=0, shift=1.5):
    """k overlapping Gaussian classes (class c shifted along feature c mod m)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    y[:k] = np.arange(k)  # every class present
    X = rng.normal(size=(n, m))
    X[np.arange(n), y % m] += shift
    return X, y


def objective(w, X, y, C, norm="l2", s=None):
    """The Crammer–Singer objective computed from its definition, row by row (no shared code)."""
    w = np.asarray(w, dtype=float)
    s = np.ones(len(y)) if s is None else s
    loss = 0.0
    for i in range(len(y)):
        scores = w @ X[i]
        loss += s[i] * max(0.0, max(1.0 + scores[r] - scores[y[i]] for r in range(len(w))
                                    if r != y[i]))
    reg = 0.5 * float(np.sum(w * w)) if norm == "l2" else float(np.abs(w).sum())
    return reg + C * loss


def margin_matrix(X, y, k):
    """Rows ``(w_{y_i} - w_r)' x_i`` of every r != y_i over the stacked w (k m columns)."""
    n, m = X.shape
    rows = []
    for i in range(n):
        for r in range(k):
            if r != y[i]:
                a = np.zeros(k * m)
                a[y[i] * m:(y[i] + 1) * m] += X[i]
                a[r * m:(r + 1) * m] -= X[i]
                rows.append((i, a))
    return rows


def independent_lp(X, y, k, C):
    """The 1-norm LP by scipy's linprog (HiGHS), in w = p - q: its optimal value."""
    from scipy.optimize import linprog

    n, m = X.shape
    rows = margin_matrix(X, y, k)
    A = np.zeros((len(rows), 2 * k * m + n))
    for row, (i, a) in enumerate(rows):  # -(p - q)'a - xi_i <= -1
        A[row, :k * m], A[row, k * m:2 * k * m], A[row, 2 * k * m + i] = -a, a, -1.0
    c = np.r_[np.ones(2 * k * m), C * np.ones(n)]
    res = linprog(c, A_ub=A, b_ub=-np.ones(len(rows)), bounds=(0, None), method="highs")
    assert res.status == 0
    return res.fun


def independent_qp(X, y, k, C):
    """The 2-norm QP by Clarabel's own API (no Pyomo): its optimal value."""
    import clarabel

    n, m = X.shape
    rows = margin_matrix(X, y, k)
    A = np.zeros((len(rows) + n, k * m + n))
    for row, (i, a) in enumerate(rows):  # -(a'w + xi_i) <= -1
        A[row, :k * m], A[row, k * m + i] = -a, -1.0
    A[len(rows):, k * m:] = -np.eye(n)  # -xi <= 0
    b = np.r_[-np.ones(len(rows)), np.zeros(n)]
    P = sp.csc_matrix(sp.block_diag([sp.eye(k * m), sp.csc_matrix((n, n))]))
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.tol_gap_rel = settings.tol_gap_abs = 1e-12
    sol = clarabel.DefaultSolver(sp.triu(P).tocsc(), np.r_[np.zeros(k * m), C * np.ones(n)],
                                 sp.csc_matrix(A), b, [clarabel.NonnegativeConeT(len(b))],
                                 settings).solve()
    return sol.obj_val


# --------------------------------------------------------------------------- exact, against others


@pytest.mark.parametrize("k", [3, 4])
@pytest.mark.parametrize("norm", ["l2", "l1"])
def test_joint_model_equals_an_independent_lp_or_qp(norm, k):
    X, y = blobs(n=60, m=3, k=k, seed=k)
    C = 0.7
    reference = (independent_qp if norm == "l2" else independent_lp)(X, y, k, C)
    for aid in (False, True):  # a solver named: AID as aid says (no shape rule)
        res = solve_crammer_singer(X, y, C=C, norm=norm, aid=aid, solver=default_solver(norm),
                                   log=False)
        assert res.aid == aid
        assert res.termination is Termination.CERTIFIED_OPTIMAL, res.summary()
        assert res.objective == pytest.approx(reference, rel=1e-6)
        assert res.objective == pytest.approx(objective(res.solution["w"], X, y, C, norm), rel=1e-12)
        assert res.solution["w"].shape == (k, 3) and res.solution["alpha"].shape == (60, k)


@pytest.mark.parametrize("norm", ["l2", "l1"])
def test_aid_equals_direct_and_its_certificate_holds_on_the_rows(norm):
    X, y = blobs(n=400, m=3, k=3, seed=1)
    aid = solve_crammer_singer(X, y, C=0.5, norm=norm, solver=default_solver(norm), log=False)
    direct = solve_crammer_singer(X, y, C=0.5, norm=norm, aid=False, log=False)
    assert aid.aid and not direct.aid
    assert len(aid.history) >= 2 and aid.history[0].n_clusters < 400  # AID aggregated
    assert aid.certified and direct.certified
    assert aid.objective == pytest.approx(direct.objective, rel=1e-6)
    # the certificate again, from the returned w and lifted alpha, on the original rows
    data = as_multiclass_data(X, y)
    again = certificate(data, aid.solution["w"], aid.solution["alpha"], C=0.5, norm=norm, tol=1e-6)
    assert again.certified and again.primal_objective == pytest.approx(aid.objective, rel=1e-12)
    alpha = aid.solution["alpha"]
    assert (alpha >= -1e-9).all() and (alpha.sum(axis=1) <= 0.5 * (1 + 1e-6)).all()
    assert np.all(alpha[np.arange(400), y] == 0.0)


def _liblinear_cs(X, y, C):
    clf = LinearSVC(multi_class="crammer_singer", fit_intercept=False, C=C, tol=1e-10,
                    max_iter=1_000_000).fit(X, y)
    return clf.coef_


@pytest.mark.parametrize("name", ["iris", "digits"])
def test_objective_matches_liblinear_crammer_singer(name):
    if name == "iris":
        X, y = load_iris(return_X_y=True)
        X = StandardScaler().fit_transform(X)
        C = 1.0
    else:
        X, y = load_digits(return_X_y=True)
        keep = np.isin(y, [0, 1, 2, 3, 4])
        X, y = X[keep][:120] / 16.0, y[keep][:120]
        X = X[:, X.std(axis=0) > 0]
        C = 0.1
    clf = SVMClassifier(multi_class="crammer_singer", C=C).fit(X, y)
    assert clf.certified_
    labels = np.searchsorted(clf.classes_, y)
    ours = objective(clf.coef_, X, labels, C)
    theirs = objective(_liblinear_cs(X, y, C), X, labels, C)
    assert ours == pytest.approx(clf.result_.objective, rel=1e-12)
    assert ours <= theirs * (1 + 1e-9)
    assert ours == pytest.approx(theirs, rel=1e-5)


def test_two_classes_are_the_joint_model_as_liblinear():
    X, y = blobs(n=80, m=3, k=2, seed=3)
    clf = SVMClassifier(multi_class="crammer_singer", C=0.5).fit(X, y)
    assert clf.coef_.shape == (1, 3) and clf.intercept_.tolist() == [0.0]
    assert clf.decision_function(X).shape == (80,) and len(clf.results_) == 1
    w = clf.result_.solution["w"]
    np.testing.assert_allclose(clf.coef_[0], w[1] - w[0])
    np.testing.assert_allclose(clf.coef_, _liblinear_cs(X, y, 0.5), rtol=1e-4, atol=1e-6)
    # the joint 2-class model is the binary SVM without offset with cost 2C (w_0 = -w_1)
    np.testing.assert_allclose(w[0], -w[1], atol=1e-7)


# --------------------------------------------------------------------------- the certificate can fail


def test_a_perturbed_solution_or_dual_is_not_certified():
    X, y = blobs(n=80, m=3, k=3, seed=2)
    res = solve_crammer_singer(X, y, C=0.5, aid=False, log=False)
    data = as_multiclass_data(X, y)
    w, alpha = res.solution["w"], res.solution["alpha"]
    assert certificate(data, w, alpha, C=0.5, norm="l2", tol=1e-6).certified
    moved = certificate(data, w * 1.01, alpha, C=0.5, norm="l2", tol=1e-6)
    assert not moved.certified and moved.relative_gap > 1e-6
    assert moved.primal_objective == pytest.approx(objective(w * 1.01, X, y, 0.5))
    over = certificate(data, w, alpha * 1.5, C=0.5, norm="l2", tol=1e-6)  # outside the box
    assert not over.certified
    assert over.residuals["dual bound alpha>=0, sum_r alpha_ir<=Cs_i"] > 1e-6
    assert not certificate(data, w, np.zeros_like(alpha), C=0.5, norm="l2", tol=1e-6).certified
    with pytest.raises(ValueError, match="alpha must be"):
        certificate(data, w, alpha[:, :2], C=0.5, norm="l2", tol=1e-6)


def test_split_needs_a_shared_active_piece_and_refines_violators():
    X = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 0.0], [-1.0, 0.0]])
    y = np.array([0, 0, 1, 1])
    data = as_multiclass_data(X, y)
    w = np.array([[1.0, 0.0], [0.0, 1.0]])
    values, eps = piece_values(X, y, w)
    # v[i, r] = 1 - [r = y_i] + (w_r - w_{y_i})'x_i: row 0 ties (0, 0), row 1 (0, 2), row 2
    # (1 + 2 - 0, 0), row 3 (1 - 1 - 0, 0) ties again
    np.testing.assert_allclose(values, [[0.0, 0.0], [0.0, 2.0], [3.0, 0.0], [0.0, 0.0]])
    lifted = Lifted({"w": w, "alpha": None}, CSState(values, eps))
    problem = CrammerSingerProblem()
    part = Partition.from_labels([0, 0, 1, 1])
    violating = problem.violating_clusters(part, lifted)
    # cluster 0: row 0 ties {0, 1}, row 1 has {1}: piece 1 is shared; cluster 1: {0} and {0, 1}
    assert violating.tolist() == [False, False]
    assert problem.split(part, data, lifted).holds
    part = Partition.from_labels([0, 1, 1, 1])  # a mixed-class cluster is never built; here
    # rows 1 ({1}) and 2 ({0}) and 3 ({0, 1}) share nothing: split by their first active piece
    split = problem.split(part, data, lifted)
    assert split.n_split == 1 and split.partition.n_clusters == 3


# --------------------------------------------------------------------------- data


def test_duplicated_rows_equal_weights_and_a_class_of_one_row():
    X, y = blobs(n=50, m=3, k=3, seed=4)
    y[-1] = 3  # a class with one row
    X2, y2 = np.vstack([X, X[:10]]), np.r_[y, y[:10]]  # rows 0..9 twice
    s = np.r_[np.full(10, 2.0), np.ones(40)]
    twice = solve_crammer_singer(X2, y2, C=0.5, log=False)
    weighted = solve_crammer_singer(X, y, C=0.5, sample_weight=s, log=False)
    assert twice.certified and weighted.certified
    assert twice.objective == pytest.approx(weighted.objective, rel=1e-6)
    assert twice.objective == pytest.approx(objective(twice.solution["w"], X2, y2, 0.5), rel=1e-12)
    np.testing.assert_allclose(twice.solution["w"], weighted.solution["w"], atol=1e-5)
    assert twice.solution["w"].shape == (4, 3)


def test_zero_weights_leave_rows_out_and_alpha_keeps_its_shape():
    X, y = blobs(n=60, m=3, k=3, seed=5)
    s = np.ones(60)
    s[[5, 6, 7]] = 0.0
    res = solve_crammer_singer(X, y, C=0.5, sample_weight=s, aid=False, log=False)
    keep = s > 0
    ref = solve_crammer_singer(X[keep], y[keep], C=0.5, aid=False, log=False)
    assert res.certified and res.objective == pytest.approx(ref.objective, rel=1e-7)
    assert res.solution["alpha"].shape == (60, 3) and not res.solution["alpha"][~keep].any()
    assert "zero sample weight" in res.message


def test_sparse_x_is_kept_sparse_and_gives_the_dense_answer():
    X, y = blobs(n=80, m=6, k=3, seed=6)
    X[np.abs(X) < 0.8] = 0.0
    dense = solve_crammer_singer(X, y, C=0.5, aid=False, log=False)
    for aid in (False, True):
        res = solve_crammer_singer(sp.csr_matrix(X), y, C=0.5, aid=aid, solver="clarabel",
                                   log=False)
        assert res.aid == aid
        assert res.certified and res.objective == pytest.approx(dense.objective, rel=1e-6)
        assert "kept sparse (CSR" in res.message
    clf = SVMClassifier(multi_class="crammer_singer", C=0.5).fit(sp.csc_matrix(X), y)
    np.testing.assert_array_equal(clf.predict(sp.csr_matrix(X)), clf.predict(X))


def test_the_method_by_shape():
    """Direct when n is at most DIRECT_SAMPLES initial samples; else the binary SVM's rule: AID
    on tall, narrow, dense X, direct on sparse or wide X; a solver named keeps ``aid``."""
    from aidopt.decomposition.run import RunConfig

    def method(X, y, **options):
        config = RunConfig.from_kwargs(options, solver="clarabel")
        config, note = _method(as_multiclass_data(X, y, sparse=True), options, config)
        return config.aid, note

    sample = 200  # default_sample_size(2, 3)
    X, y = blobs(n=DIRECT_SAMPLES * sample, m=2, k=3)
    assert method(X, y) == (False, pytest.approx(method(X, y)[1]))
    assert "initial sample of 200 rows" in method(X, y)[1]
    X, y = blobs(n=DIRECT_SAMPLES * sample + 1, m=2, k=3)
    aid, note = method(X, y)
    assert aid and "AID with clarabel: small X" in note
    assert method(X, y, solver="clarabel")[0] and not method(X, y, aid=False)[0]
    Xs = sp.random(30_000, 50, density=0.02, format="csr", random_state=0)
    aid, note = method(Xs, np.arange(30_000) % 3)
    assert not aid and "sparse X" in note and "kept sparse (CSR" in note


def test_bad_input_is_refused_before_any_solve():
    X, y = blobs(n=30, m=2, k=3)
    with pytest.raises(ValueError, match="at least two classes"):
        solve_crammer_singer(X, np.zeros(30))
    with pytest.raises(ValueError, match="takes norm 'l2'"):
        solve_crammer_singer(X, y, norm="linf")
    with pytest.raises(ValueError, match="C must be"):
        solve_crammer_singer(X, y, C=-1.0)
    s = np.ones(30)
    s[y == 2] = 0.0
    with pytest.raises(ValueError, match="zero sample weight"):
        solve_crammer_singer(X, y, sample_weight=s)
    with pytest.raises(ValueError, match="contains NaN|NaN"):
        solve_crammer_singer(np.where(X > 1, np.nan, X), y)
    from aidopt.solvers import SolverError

    with pytest.raises(SolverError, match="duals"):
        CrammerSingerProblem().configure(type("Spec", (), {"duals": False, "name": "x"})())


# --------------------------------------------------------------------------- contract


@pytest.mark.parametrize(("norm", "solver"), [("l2", "clarabel"), ("l1", "highs")])
def test_plugin_passes_the_contract_check(norm, solver):
    def data(seed):
        return as_multiclass_data(*blobs(n=120, m=3, k=3, seed=10 + seed))

    report = check_plugin(lambda: CrammerSingerProblem(C=0.5, norm=norm), data(0), solver,
                          other_data=data(1))
    assert len(report.aid.history) >= 2
    assert report.aid.certificate.method == "solver_duals" and report.aid.certified


# --------------------------------------------------------------------------- estimator and CLI


def test_estimator_shapes_predict_and_sklearn_protocol():
    X, y = blobs(n=90, m=3, k=3, seed=7)
    labels = np.array(["a", "b", "c"])[y]
    clf = SVMClassifier(multi_class="crammer_singer", C=0.5)
    assert clone(clf).get_params()["multi_class"] == "crammer_singer"
    clf.fit(X, labels)
    assert clf.classes_.tolist() == ["a", "b", "c"]
    assert clf.coef_.shape == (3, 3) and clf.intercept_.tolist() == [0.0, 0.0, 0.0]
    scores = clf.decision_function(X)
    assert scores.shape == (90, 3)
    np.testing.assert_allclose(scores, X @ clf.coef_.T)
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[scores.argmax(axis=1)])
    assert clf.results_ == [clf.result_] and clf.certified_ and clf.result_.certified
    assert clf.score(X, labels) > 0.6 and clf.n_iter_ == len(clf.result_.history)
    assert clf.support_.size > 0
    np.testing.assert_allclose(clf.coef_, clf.result_.solution["w"])
    again = pickle.loads(pickle.dumps(clf))
    assert again.results_ == [again.result_] and again.certified_
    np.testing.assert_array_equal(again.predict(X), clf.predict(X))


def test_estimator_refuses_what_it_does_not_build():
    X, y = blobs(n=30, m=2, k=3)
    with pytest.raises(ValueError, match="linear model"):
        SVMClassifier(multi_class="crammer_singer", kernel="rbf").fit(X, y)
    with pytest.raises(ValueError, match="takes norm 'l2' \\(QP\\) or 'l1'"):
        SVMClassifier(multi_class="crammer_singer", norm="linf").fit(X, y)
    with pytest.raises(ValueError, match="decision_function_shape='ovo'"):
        SVMClassifier(multi_class="crammer_singer", decision_function_shape="ovo").fit(X, y)
    with pytest.raises(ValueError, match="SVMClassifier only"):
        FSVClassifier(multi_class="crammer_singer").fit(X, y)


def test_estimator_warns_when_not_certified():
    X, y = blobs(n=200, m=3, k=3, seed=8)
    with pytest.warns(ConvergenceWarning):
        clf = SVMClassifier(multi_class="crammer_singer", max_iter=1, solver="clarabel").fit(X, y)
    assert not clf.certified_ and clf.result_.termination is Termination.ITERATION_LIMIT


def test_cli_multi_class_crammer_singer(tmp_path, capsys):
    import pandas as pd

    X, y = blobs(n=60, m=3, k=3, seed=9)
    path = tmp_path / "three.csv"
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "label": y}).to_csv(path, index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        code = main(["svm", "--data", str(path), "--target", "label", "--quiet",
                     "--multi-class", "crammer_singer", "--norm", "l1"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "crammer_singer_l1" in out and "CERTIFIED" in out and "training accuracy" in out
    assert "0: a" in out  # the coefficient table: class, feature


def test_bench_workers_and_rows_of_the_joint_model(monkeypatch):
    """``aidopt bench multiclass``'s ``aidopt-cs`` and ``liblinear-cs``: the same problem, the
    objective of both on the training rows, LIBLINEAR's relative to the certified optimum."""
    from aidopt.bench import multiclass as bench

    ours = bench.worker("covertype", 120, "aidopt-cs", 0, 60.0)
    theirs = bench.worker("covertype", 120, "liblinear-cs", 0, 60.0)
    assert ours["certified"] and ours["subproblems"] == 1
    assert bench.status(ours) == "certified (one joint problem)"
    assert isinstance(theirs["converged"], bool)
    assert ours["objective"] <= theirs["objective"] * (1 + 1e-9)
    assert theirs["objective"] == pytest.approx(ours["objective"], rel=1e-3)
    Xa, _, ya, _ = bench.data("covertype", 120, 0)
    clf = SVMClassifier(multi_class="crammer_singer").fit(Xa, ya)
    assert ours["objective"] == pytest.approx(clf.result_.objective, rel=1e-9)

    def fake(name, n, method, seed, time_limit, C):  # the command: the difference in the row
        out = ours if method == "aidopt-cs" else theirs if method == "liblinear-cs" else \
            {**ours, "method": "aidopt", "subproblems": 6, "certified_subproblems": 6}
        return dict(out)

    monkeypatch.setattr(bench, "_run", fake)
    table = bench.bench_multiclass(sets=("covertype",), sizes=(120,),
                                   methods=("aidopt-cs", "liblinear-cs"))
    gap = (theirs["objective"] - ours["objective"]) / ours["objective"]
    assert f"objective {gap:+.1e} relative to aidopt-cs" in table
