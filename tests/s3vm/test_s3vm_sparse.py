"""The semi-supervised SVM on sparse X (CSR, CSC, COO, pandas sparse columns): the MIPs are built
from the stored entries of the rows or of their (sparse) centroids, the big-M from the rows'
norms without the n x m array; checked against the dense path (the direct MIP's certified
optimum, and AID from the same partition: the same iterates)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from aidopt.decomposition import aid as aid_loop
from aidopt.decomposition.mip import max_outside_rows, row_norms
from aidopt.decomposition.partition import Partition
from aidopt.decomposition.plugins.s3vm import S3VMProblem, big_m
from aidopt.decomposition.run import RunConfig
from aidopt.models import s3vm
from scipy import sparse

import aidopt
from aidopt.api.s3vm import default_s3vm_solver
from aidopt.data.validate import as_semisupervised_data
from tests._densify import densify_calls


def _data(n=40, m=12, n_labeled=8, seed=1):
    X = sparse.random(n, m, density=0.3, random_state=seed, format="csr")
    truth = np.where(X @ np.linspace(-1.0, 1.0, m) >= 0, 1.0, -1.0)
    y = truth.copy()
    y[n_labeled:] = 0.0
    if len(set(y[:n_labeled])) < 2:
        y[0], y[1] = 1.0, -1.0
    return X, y


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_direct_l2_mip_on_sparse_x_is_the_dense_optimum(fmt, monkeypatch):
    X, y = _data()
    dense = aidopt.solve_s3vm(X.toarray(), y, aid=False, log=False)
    calls = densify_calls(monkeypatch)
    res = aidopt.solve_s3vm(X.asformat(fmt), y, aid=False, log=False)
    assert not calls, calls
    assert res.certified and dense.certified
    assert res.objective == pytest.approx(dense.objective, rel=1e-6)
    np.testing.assert_array_equal(res.solution["transduction"], dense.solution["transduction"])


def test_direct_l1_milp_on_sparse_x(monkeypatch):
    X, y = _data(24, 8, 6, seed=3)
    dense = aidopt.solve_s3vm(X.toarray(), y, norm="l1", aid=False, log=False)
    calls = densify_calls(monkeypatch)
    res = aidopt.solve_s3vm(X, y, norm="l1", aid=False, log=False)
    assert not calls
    assert res.certified and res.objective == pytest.approx(dense.objective, rel=1e-6)


@pytest.mark.parametrize("norm, n, m", [("l2", 36, 16), ("l1", 24, 8)])
def test_aid_from_the_same_partition_has_the_same_iterates(norm, n, m, monkeypatch):
    """Sparse centroids give the same aggregated MIPs: the same F_t, E_t and final answer (l2:
    11 clusters < 16 columns, the span reduction on the centroids made dense)."""
    X, y = _data(n, m, 6, seed=2)
    labels = np.where(y != 0, np.arange(y.size), y.size + np.arange(y.size) % 5)
    partition = Partition.from_labels(labels)
    problem = S3VMProblem(norm=norm)
    config = RunConfig(solver=default_s3vm_solver(norm), log=False, time_limit=60)
    dense = aid_loop.solve(problem, as_semisupervised_data(X.toarray(), y), config,
                           partition=partition)
    calls = densify_calls(monkeypatch)
    data = as_semisupervised_data(X.tocoo(), y, sparse=True)
    assert sparse.issparse(data.X)
    res = aid_loop.solve(problem, data, config, partition=partition)
    assert X.shape not in calls  # only the (aggregated) centroids, for the span reduction
    if norm == "l2":
        assert [shape for shape in calls if shape[1] == m and shape[0] < n]
    assert res.termination == dense.termination
    assert [r.F_t for r in res.history] == pytest.approx([r.F_t for r in dense.history], rel=1e-6)
    assert res.objective == pytest.approx(dense.objective, rel=1e-6)


def test_aid_by_default_on_sparse_x_keeps_its_promise(monkeypatch):
    """The door's AID (initial k-means on a sketch of the sparse rows): Prop. 5 checked on the
    dense data, the reported objective recomputed there."""
    X, y = _data(40, 15, 8, seed=4)
    calls = densify_calls(monkeypatch)
    res = aidopt.solve_s3vm(X, y, log=False)
    assert not [shape for shape in calls if shape[0] >= 40]
    assert res.termination.value == "prop5_optimal"
    w, b = res.solution["w"], res.solution["b"]
    f = X.toarray() @ w + b
    lab = y != 0
    value = (0.5 * w @ w + 5.0 * np.maximum(1 - y[lab] * f[lab], 0).sum()
             + np.maximum(1 - np.abs(f[~lab]), 0).sum())
    assert res.objective == pytest.approx(value, rel=1e-7)


def test_pandas_sparse_frame(monkeypatch):
    X, y = _data(30, 8, 6, seed=5)
    frame = pd.DataFrame.sparse.from_spmatrix(X, columns=[f"t{j}" for j in range(8)])
    dense = aidopt.solve_s3vm(X.toarray(), y, aid=False, log=False)
    res = aidopt.solve_s3vm(frame, y, aid=False, log=False)
    assert res.solution["feature_names"] == list(frame.columns)
    assert res.objective == pytest.approx(dense.objective, rel=1e-6)


def test_models_from_sparse_rows_hold_only_the_stored_entries():
    X, y = _data(30, 10, 6, seed=6)
    Xl, Xu = X[:6], X[6:]
    model = s3vm.create_instance(Xl, y[:6], np.ones(6), Xu, np.ones(24), Ml=5.0, Mu=1.0,
                                 bigM=10.0, ybar=0.0)
    terms = sum(len(list(c.body.linear_vars)) for c in model.labeled.values())
    assert terms == Xl.nnz + 2 * 6  # b and xi_k per row
    terms = sum(len(list(c.body.linear_vars)) for c in model.positive.values())
    assert terms == Xu.nnz + 3 * 24  # b, eta_k, d_k


def test_sparse_row_norms_and_big_m_equal_the_dense_ones():
    rng = np.random.default_rng(7)
    X = sparse.random(50, 30, density=0.2, random_state=8, format="csr")
    X.data = rng.normal(size=X.nnz)
    D = X.toarray()
    centre = rng.normal(size=30)
    for norm in ("l2", "inf"):
        np.testing.assert_allclose(row_norms(X, norm, centre), row_norms(D, norm, centre),
                                   rtol=1e-9)
        assert (row_norms(X, norm, centre) >= row_norms(D, norm, centre)).all()
    g = rng.normal(size=30)
    expect = [max((g[j] for j in range(30) if D[i, j] == 0), default=-np.inf) for i in range(50)]
    np.testing.assert_array_equal(max_outside_rows(X, g), expect)
    full = sparse.csr_matrix(np.ones((2, 3)))  # every column stored
    np.testing.assert_array_equal(max_outside_rows(full, np.arange(3.0)), [-np.inf, -np.inf])
    data = as_semisupervised_data(X, np.r_[1.0, -1.0, np.zeros(48)], sparse=True)
    problem = S3VMProblem(norm="l2")
    part = Partition.from_labels(np.r_[0, 1, 2 + np.arange(48) % 7])
    agg_s = problem.aggregate(data, part)
    agg_d = problem.aggregate(as_semisupervised_data(D, data.y), part)
    assert sparse.issparse(agg_s.Xu) and isinstance(agg_d.Xu, np.ndarray)
    np.testing.assert_allclose(agg_s.Xu.toarray(), agg_d.Xu, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(big_m(agg_s, 5.0, "l2"), big_m(agg_d, 5.0, "l2"), rtol=1e-9)
