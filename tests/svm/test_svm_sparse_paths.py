"""Sparse X (CSR, CSC, COO) on the SVM paths that used to densify it: SOR on the modified SVM,
LP chunking of the 1-norm LSVM, the modified SVM by shape (dual coordinate descent with a
regularized offset), the kernel SVMs and SVMClassifier. Each answer is compared with the dense
path's on the same data (objective, certificate, predictions), and a spy checks that the user's
matrix is never densified (only small pieces: centroids, a few free rows)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse

import aidopt
from aidopt import SVMClassifier
from aidopt.numerics import sor
from aidopt.numerics.dcd import dcd
from aidopt.numerics.fm import ferris_munson
from tests._densify import densify_calls

FORMATS = ["csr", "csc", "coo"]


def _data(n, m, density, seed, noise=0.3):
    rng = np.random.default_rng(seed)
    X = sparse.random(n, m, density=density, random_state=seed, format="csr")
    y = np.where(X @ rng.normal(size=m) + noise * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


def _only_small_pieces(calls, shape):
    """No densified matrix with X's columns holds more than a quarter of X's rows (centroids,
    free rows and kernel blocks are allowed; X, or a large share of it, is not)."""
    n, m = shape
    big = [s for s in calls if s[1] == m and s[0] > n // 4]
    assert not big, f"X (n x m = {shape}) densified: {big}"


# --------------------------------------------------------------------------- SOR (1.55)


def test_sor_sweeps_on_csr_rows_are_the_dense_sweeps():
    """The compiled sweep on CSR rows makes the same iterates as on the dense rows (cyclic order,
    no shrinking: the iteration is fully determined), to rounding."""
    X, y = _data(120, 15, 0.3, 1)
    kw = dict(tol=0.0, max_sweeps=7, order="cyclic", shrinking=False)
    dense = sor.sor_linear(X.toarray(), y, 0.5, **kw)
    csr = sor.sor_linear(X, y, 0.5, **kw)
    assert csr.sweeps == dense.sweeps == 7
    np.testing.assert_allclose(csr.u, dense.u, rtol=0, atol=1e-12)
    np.testing.assert_allclose(csr.w, dense.w, rtol=0, atol=1e-12)
    assert csr.dual == pytest.approx(dense.dual, rel=1e-13)


@pytest.mark.parametrize("fmt", FORMATS)
def test_sor_on_sparse_x_answers_as_dense(fmt, monkeypatch):
    X, y = _data(250, 30, 0.15, 2)
    dense = aidopt.solve_svm(X.toarray(), y, C=0.7, method="sor", log=False)
    calls = densify_calls(monkeypatch)
    res = aidopt.solve_svm(X.asformat(fmt), y, C=0.7, method="sor", log=False)
    _only_small_pieces(calls, X.shape)
    assert res.certified and dense.certified
    assert res.certificate.method == "sor_dual"
    assert res.objective == pytest.approx(dense.objective, rel=1e-8)
    assert res.lower_bound <= res.objective
    np.testing.assert_array_equal(np.sign(X @ res.solution["w"] + res.solution["b"]),
                                  np.sign(X @ dense.solution["w"] + dense.solution["b"]))
    assert "SOR on the sparse rows (CSR" in res.message
    assert "SOR on the dense rows" in dense.message
    assert res.dimensions["nnz"] == X.nnz


def test_sor_sparse_with_sample_weights():
    X, y = _data(150, 20, 0.2, 3)
    s = np.random.default_rng(4).integers(0, 3, 150).astype(float)
    res = aidopt.solve_svm(X, y, C=1.0, method="sor", sample_weight=s, log=False)
    dense = aidopt.solve_svm(X.toarray(), y, C=1.0, method="sor", sample_weight=s, log=False)
    assert res.certified
    assert res.objective == pytest.approx(dense.objective, rel=1e-8)
    assert np.all(res.solution["alpha"][s == 0] == 0)


def test_sor_refuses_nonfinite_stored_entries():
    X, y = _data(40, 5, 0.5, 5)
    X.data[3] = np.nan
    with pytest.raises(ValueError, match="A has a NaN"):
        sor.sor_linear(X, y, 1.0)


# --------------------------------------------------------------------------- LP chunking (1.28)


@pytest.mark.parametrize("fmt", FORMATS)
def test_lpc_on_sparse_x_answers_as_dense(fmt, monkeypatch):
    X, y = _data(240, 25, 0.15, 6)
    dense = aidopt.solve_svm(X.toarray(), y, norm="l1", C=0.8, method="lpc", chunks=4, log=False)
    calls = densify_calls(monkeypatch)
    res = aidopt.solve_svm(X.asformat(fmt), y, norm="l1", C=0.8, method="lpc", chunks=4, log=False)
    assert not [s for s in calls if s[1] == X.shape[1]], calls  # no row of X densified
    assert res.certified and dense.certified
    assert res.objective == pytest.approx(dense.objective, rel=1e-7)
    # the same LP solved directly (HiGHS on the full data's stored entries)
    direct = aidopt.solve_svm(X, y, norm="l1", C=0.8, aid=False, log=False)
    assert res.objective == pytest.approx(direct.objective, rel=1e-7)
    np.testing.assert_array_equal(np.sign(X @ res.solution["w"] + res.solution["b"]),
                                  np.sign(X @ dense.solution["w"] + dense.solution["b"]))
    assert "LP chunking on CSR row blocks" in res.message
    assert "LP chunking on dense row blocks" in dense.message


def test_lpc_chunk_lps_hold_only_the_stored_entries():
    from aidopt.models.lpc import LSVMChunkLP, add_rows, chunk_lp

    X, y = _data(30, 12, 0.2, 7)
    chunk = LSVMChunkLP(12, 1.0)
    chunk.add_rows(np.arange(30), X, y, np.ones(30))
    terms = sum(len(list(c.body.linear_vars)) for c in chunk.model.margin.values())
    assert terms == X.nnz + 2 * 30  # gamma and the slack per row
    model = chunk_lp(np.ones(12))
    add_rows(model, np.arange(30), X, np.ones(30))
    assert sum(len(list(c.body.linear_vars)) for c in model.rows.values()) == X.nnz


# --------------------------------------------------------------------------- modified SVM (1.35)


def test_dcd_regularized_offset_matches_the_interior_point():
    X, y = _data(200, 30, 0.2, 8)
    u = np.full(200, 0.6)
    res = dcd(X, y, u, tol=1e-9, bias="regularized")
    ref = ferris_munson(X.toarray(), y, u, bias="regularized", tol=1e-11)
    assert res.status == "optimal"
    assert res.objective == pytest.approx(ref.objective, rel=1e-7)
    assert res.b == pytest.approx(ref.b, abs=1e-4)
    assert res.dual <= ref.objective * (1 + 1e-12)
    with pytest.raises(ValueError, match="bias"):
        dcd(X, y, u, bias="none")


@pytest.mark.parametrize("fmt", FORMATS)
def test_modified_svm_by_shape_on_sparse_x_answers_as_dense(fmt, monkeypatch):
    # wide and sparse (n m > 1e6, 0.5 % stored): the rule picks dual coordinate descent
    X, y = _data(260, 4000, 0.005, 9)
    # the same problem (1.35) on the dense rows by another method: SOR (the interior point's
    # m x m systems take tens of seconds at m = 4000)
    dense = aidopt.solve_svm(X.toarray(), y, C=2.0, method="sor", log=False)
    calls = densify_calls(monkeypatch)
    res = aidopt.solve_svm(X.asformat(fmt), y, C=2.0, bias="regularized", log=False)
    assert not [s for s in calls if s[1] == X.shape[1]], calls
    assert res.certified and dense.certified
    assert "dual coordinate descent on the full data: sparse X" in res.message
    assert "SOR on the dense rows" in dense.message
    assert res.objective == pytest.approx(dense.objective, rel=1e-5)
    assert res.certificate.relative_gap <= 1e-6
    np.testing.assert_array_equal(np.sign(X @ res.solution["w"] + res.solution["b"]),
                                  np.sign(X @ dense.solution["w"] + dense.solution["b"]))


def test_modified_svm_dcd_named_and_tall_dense_stays_aid():
    X, y = _data(300, 20, 0.3, 10)
    res = aidopt.solve_svm(X, y, C=1.0, bias="regularized", solver="dcd", log=False)
    ref = aidopt.solve_svm(X.toarray(), y, C=1.0, bias="regularized", log=False)
    assert res.certified and ref.certified
    assert res.objective == pytest.approx(ref.objective, rel=1e-5)
    assert "dual coordinate descent on the full data: solver='dcd' given" in res.message
    assert "AID with fm: small X" in ref.message  # today's path on small dense X


# --------------------------------------------------------------------------- kernels


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("kernel", ["rbf", "poly"])
def test_kernel_svm_on_sparse_x_answers_as_dense(kernel, fmt, monkeypatch):
    X, y = _data(220, 300, 0.03, 11)  # m > n: every densified piece with m columns is rows of X
    dense = aidopt.solve_svm(X.toarray(), y, kernel=kernel, C=1.0, log=False)
    calls = densify_calls(monkeypatch)
    res = aidopt.solve_svm(X.asformat(fmt), y, kernel=kernel, C=1.0, log=False)
    _only_small_pieces(calls, X.shape)
    assert res.certified and dense.certified
    assert res.solution["gamma"] == pytest.approx(dense.solution["gamma"], rel=1e-12)
    assert res.objective == pytest.approx(dense.objective, rel=1e-5)
    assert "kernel AID on the sparse rows (CSR" in res.message
    assert "kernel AID on the sparse rows" not in dense.message


def test_kernels_from_sparse_rows_are_the_dense_kernels():
    from aidopt.numerics.kernels import svc_kernel

    A, _ = _data(30, 40, 0.2, 12)
    B, _ = _data(20, 40, 0.2, 13)
    for kernel in ("linear", "rbf", "poly"):
        k = svc_kernel(kernel, 0.3, 3, 1.0)
        want = k(A.toarray(), B.toarray())
        for a, b in ((A, B), (A, B.toarray()), (A.toarray(), B)):
            got = k(a, b)
            assert isinstance(got, np.ndarray)
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_kmeans_on_sparse_rows_matches_dense():
    from aidopt.decomposition.clustering import one_step_kmeans

    X, _ = _data(300, 50, 0.1, 14)
    sparse_labels = one_step_kmeans(X, 12, np.random.default_rng(0))
    dense_labels = one_step_kmeans(X.toarray(), 12, np.random.default_rng(0))
    np.testing.assert_array_equal(sparse_labels, dense_labels)


# --------------------------------------------------------------------------- estimator


@pytest.mark.parametrize("fmt", FORMATS)
def test_kernel_classifier_on_sparse_x_answers_as_dense(fmt, monkeypatch):
    rng = np.random.default_rng(15)
    n, m = 240, 300
    y = rng.integers(0, 3, n)
    X = sparse.random(n, m, density=0.02, random_state=15, format="csr")
    X = (X + sparse.csr_matrix((np.ones(n), (np.arange(n), y)), shape=(n, m))).tocsr()
    dense = SVMClassifier(kernel="rbf", C=1.0).fit(X.toarray(), y)
    calls = densify_calls(monkeypatch)
    clf = SVMClassifier(kernel="rbf", C=1.0).fit(X.asformat(fmt), y)
    scores = clf.decision_function(X.asformat(fmt))
    predicted = clf.predict(X.asformat(fmt))
    _only_small_pieces(calls, X.shape)
    assert clf.certified_ and dense.certified_
    assert sparse.issparse(clf.support_vectors_)
    np.testing.assert_array_equal(clf.support_, dense.support_)
    np.testing.assert_allclose(scores, dense.decision_function(X.toarray()), atol=1e-5)
    np.testing.assert_array_equal(predicted, dense.predict(X.toarray()))
    for mine, theirs in zip(clf.results_, dense.results_, strict=True):
        assert mine.objective == pytest.approx(theirs.objective, rel=1e-5)
