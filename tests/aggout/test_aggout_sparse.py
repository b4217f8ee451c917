"""Learning from aggregate outputs on sparse X (CSR, CSC, COO, pandas sparse columns): SLAAG's
programs and the MIQP are built from the stored entries (of the rows or of their sparse
centroids), the big-M's reach from the rows without the n x m array; checked against the dense
path."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyomo.environ as pyo
import pytest
from aidopt.decomposition import aid as aid_loop
from aidopt.decomposition.partition import Partition
from aidopt.decomposition.plugins.aggout import AggregateOutputProblem, reach
from aidopt.decomposition.run import RunConfig
from aidopt.models import slaag
from scipy import sparse

import aidopt
from aidopt.data.validate import as_aggregate_data
from tests._densify import densify_calls


def _data(n=200, m=30, size=10, seed=1):
    rng = np.random.default_rng(seed)
    X = sparse.random(n, m, density=0.2, random_state=seed, format="csr")
    truth = (X @ rng.normal(size=m) > 0).astype(int)
    collections = np.arange(n) // size
    return X, collections, np.bincount(collections, weights=truth).astype(int)


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_slaag_on_sparse_x_answers_as_dense(fmt, monkeypatch):
    X, coll, counts = _data()
    dense = aidopt.solve_aggregate_outputs(X.toarray(), coll, counts, log=False)
    calls = densify_calls(monkeypatch)
    res = aidopt.solve_aggregate_outputs(X.asformat(fmt), coll, counts, log=False)
    assert not calls, calls
    assert res.termination == dense.termination
    assert res.objective == pytest.approx(dense.objective, rel=1e-6)
    np.testing.assert_allclose(res.solution["w"], dense.solution["w"], rtol=1e-5, atol=1e-6)


def test_slaag_l1_program_from_sparse_rows():
    """The 1-norm program (3) has the dense program's optimum (its vertices may differ: SLAAG's
    later steps then may too) and holds only the stored entries."""
    X, _, _ = _data(seed=2)
    rng = np.random.default_rng(3)
    p, q = rng.random(200), rng.random(200)
    values = []
    for A in (X, X.toarray()):
        model = slaag.create_instance(A, p, q, norm="l1")
        pyo.SolverFactory("appsi_highs").solve(model)
        values.append(pyo.value(model.objective))
        terms = sum(len(list(c.body.linear_vars)) for c in model.positive.values())
        assert terms == (X.nnz if A is X else X.shape[0] * X.shape[1]) + 2 * 200
    assert values[0] == pytest.approx(values[1], rel=1e-9)


@pytest.mark.parametrize("norm", ["l1", "l2"])
def test_direct_miqp_on_sparse_x_is_the_dense_optimum(norm, monkeypatch):
    X, coll, counts = _data(24, 6, 4, seed=4)
    dense = aidopt.solve_aggregate_outputs(X.toarray(), coll, counts, method="miqp", norm=norm,
                                           aid=False, log=False)
    calls = densify_calls(monkeypatch)
    res = aidopt.solve_aggregate_outputs(X, coll, counts, method="miqp", norm=norm, aid=False,
                                         log=False)
    assert not [shape for shape in calls if shape[0] > 1], calls  # column extremes only
    assert res.certified and dense.certified
    assert res.objective == pytest.approx(dense.objective, rel=1e-6)


def test_aid_from_the_same_partition_has_the_same_iterates(monkeypatch):
    X, coll, counts = _data(60, 8, 10, seed=5)
    partition = Partition.from_labels(coll)  # the door's start at this size: one per collection
    problem = AggregateOutputProblem(norm="l1")
    config = RunConfig(solver="highs", log=False, time_limit=30)
    dense = aid_loop.solve(problem, as_aggregate_data(X.toarray(), coll, counts), config,
                           partition=partition)
    calls = densify_calls(monkeypatch)
    res = aid_loop.solve(problem, as_aggregate_data(X, coll, counts, sparse=True), config,
                         partition=partition)
    assert not [shape for shape in calls if shape[0] > 1]
    assert res.termination == dense.termination
    assert [r.F_t for r in res.history] == pytest.approx([r.F_t for r in dense.history], rel=1e-6)
    assert res.objective == pytest.approx(dense.objective, rel=1e-6)


def test_aid_by_default_and_pandas_sparse_columns():
    X, coll, counts = _data(60, 10, 10, seed=6)
    frame = pd.DataFrame.sparse.from_spmatrix(X, columns=[f"c{j}" for j in range(10)])
    res = aidopt.solve_aggregate_outputs(frame, coll, counts, method="miqp", norm="l1", log=False)
    assert res.solution["feature_names"] == list(frame.columns)
    assert res.termination.value == "cluster_optimal"
    from aidopt.decomposition.plugins.aggout import objective

    value, _ = objective(as_aggregate_data(X.toarray(), coll, counts), res.solution["w"],
                         res.solution["b"], 1.0, 1.0, "l1")
    assert res.objective == pytest.approx(value, rel=1e-9)


@pytest.mark.parametrize("norm", ["l1", "l2"])
@pytest.mark.parametrize("exact_below", [5000, 10])
def test_sparse_reach_bounds_the_dense_one(norm, exact_below):
    rng = np.random.default_rng(9)
    X = sparse.random(300, 40, density=0.1, random_state=10, format="csr")
    X.data = rng.normal(size=X.nnz) + 3.0
    got, want = reach(X, norm, exact_below), reach(X.toarray(), norm, exact_below)
    assert (got >= want * (1 - 1e-12)).all()
    np.testing.assert_allclose(got, want, rtol=1e-4)
