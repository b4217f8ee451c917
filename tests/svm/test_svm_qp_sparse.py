"""The 2-norm SVM's Pyomo QP from a sparse X (CSR, CSC, COO) with a QP solver and ``aid=False``:
built from the stored entries (:mod:`aidopt.models.svm`, the rows and columns of
:mod:`aidopt.models._data` the LP SVMs use), never densified. Each answer is compared with the
dense path's on the same data and with an independent QP (Clarabel called directly on the
primal, :func:`tests.svm._sparse.reference`); a spy checks that X is never made dense, and
tracemalloc that the run's peak stays far below the n x m array."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from aidopt.models import svm
from scipy import sparse

import aidopt
from aidopt import SVMClassifier
from tests._densify import densify_calls
from tests.svm._sparse import reference

FORMATS = ["csr", "csc", "coo"]


def _data(n, m, density, seed):
    rng = np.random.default_rng(seed)
    X = sparse.random(n, m, density=density, random_state=seed, format="csr")
    y = np.where(X @ rng.normal(size=m) + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


def _no_rows_of_x_densified(calls, shape):
    """No densified matrix has X's m columns (the objective's 1 x (columns) vector is allowed)."""
    assert not [s for s in calls if s[1] == shape[1] and s[0] > 1], calls


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("solver", ["clarabel", "highs"])
def test_the_direct_qp_on_sparse_x_answers_as_dense(solver, fmt, monkeypatch):
    X, y = _data(120, 150, 0.04, 1)
    options = dict(C=0.8, norm="l2", solver=solver, aid=False, log=False)
    dense = aidopt.solve_svm(X.toarray(), y, **options)
    calls = densify_calls(monkeypatch)
    res = aidopt.solve_svm(X.asformat(fmt), y, **options)
    _no_rows_of_x_densified(calls, X.shape)
    assert res.certified and dense.certified and res.solver == solver
    assert "the direct solve with" in res.message
    assert res.objective == pytest.approx(dense.objective, rel=1e-7)
    assert res.objective == pytest.approx(reference(X, y, 0.8 * np.ones(X.shape[0])), rel=1e-6)
    np.testing.assert_allclose(res.solution["w"], dense.solution["w"], atol=1e-5)


@pytest.mark.parametrize("form", ["primal", "dual"])
def test_the_regularized_offset_and_both_forms_from_sparse_x(form, monkeypatch):
    X, y = _data(100, 80, 0.05, 2)
    options = dict(C=1.3, norm="l2", solver="clarabel", aid=False, log=False, form=form,
                   bias="regularized")
    dense = aidopt.solve_svm(X.toarray(), y, **options)
    calls = densify_calls(monkeypatch)
    res = aidopt.solve_svm(X.tocsc(), y, **options)
    _no_rows_of_x_densified(calls, X.shape)
    assert res.certified and dense.certified
    assert res.objective == pytest.approx(dense.objective, rel=1e-7)
    np.testing.assert_allclose(res.solution["w"], dense.solution["w"], atol=1e-5)


def test_svm_classifier_on_sparse_x_with_a_qp_solver(monkeypatch):
    X, y = _data(150, 60, 0.08, 3)
    dense = SVMClassifier(C=0.5, norm="l2", solver="clarabel", aid=False, log=False).fit(
        X.toarray(), y)
    calls = densify_calls(monkeypatch)
    clf = SVMClassifier(C=0.5, norm="l2", solver="clarabel", aid=False, log=False).fit(X.tocoo(), y)
    _no_rows_of_x_densified(calls, X.shape)
    assert clf.result_.certified
    np.testing.assert_allclose(clf.coef_, dense.coef_, atol=1e-5)
    assert np.array_equal(clf.predict(X), dense.predict(X.toarray()))


def test_the_qp_models_hold_only_the_stored_entries():
    X, y = _data(60, 25, 0.1, 4)
    primal = svm.create_instance(X.tocoo(), y, form="primal")
    assert sum(len(c.body.linear_vars) for c in primal.margin.values()) == X.nnz + 2 * 60
    dual = svm.create_instance(X, y, form="dual")
    assert sum(len(c.body.linear_vars) for c in dual.weights.values()) == X.nnz + 25
    # the same coefficients as the dense model's, where the dense one stores a zero
    full = svm.create_instance(X.toarray(), y, form="dual")
    for j in range(25):
        sparse_terms = dict(zip((id(v) for v in dual.weights[j].body.linear_vars),
                                dual.weights[j].body.linear_coefs, strict=True))
        for v, c in zip(full.weights[j].body.linear_vars, full.weights[j].body.linear_coefs,
                        strict=True):
            k = v.index() if v.parent_component() is full.alpha else None
            if k is None:
                assert c == 1.0  # w_j
            else:
                assert sparse_terms.get(id(dual.alpha[k]), 0.0) == c


def test_a_wide_sparse_qp_never_allocates_n_by_m():
    """1000 x 3000 with 4 entries a row: the run's traced peak (validation, the Pyomo QP, the
    solve's matrices and the certificate) stays far below the 24 MB of a dense X."""
    n, m, per_row = 1000, 3000, 4
    rng = np.random.default_rng(5)
    X = sparse.csr_matrix((rng.normal(size=per_row * n), rng.integers(0, m, per_row * n),
                           np.arange(0, per_row * n + 1, per_row)), shape=(n, m))
    X.sum_duplicates()
    y = np.where(X @ rng.normal(size=m) > 0, 1.0, -1.0)
    options = dict(C=1.0, norm="l2", solver="clarabel", aid=False, form="primal", log=False)
    aidopt.solve_svm(X[:40, :50], y[:40], **options)  # imports outside the measurement
    tracemalloc.start()
    try:
        res = aidopt.solve_svm(X, y, **options)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert res.certified and "the direct solve with clarabel" in res.message
    assert peak < n * m * 8 / 4, peak  # measured: about 1/5 (Pyomo's per-variable objects)
