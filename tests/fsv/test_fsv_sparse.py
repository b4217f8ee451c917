"""FSV on sparse X (CSR, CSC, COO, pandas sparse columns): the linearized LPs on the full data are
built from the stored entries, never densified, and answer as on the dense array; the choice of
AID or the full-data LP by shape (``_shape.prepare_fsv``)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from aidopt.models import fsv
from scipy import sparse

import aidopt
from aidopt.api import _shape
from aidopt.data.validate import as_classification_data
from tests._densify import densify_calls


def _data(n=200, m=30, density=0.2, seed=1):
    rng = np.random.default_rng(seed)
    X = sparse.random(n, m, density=density, random_state=seed, format="csr")
    y = np.where(X @ rng.normal(size=m) + 0.1 * rng.normal(size=n) > 0, 1, -1)
    return X, y


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_sparse_fsv_answers_as_dense_and_never_densifies(fmt, monkeypatch):
    X, y = _data()
    dense = aidopt.solve_fsv(X.toarray(), y, nu=0.5, log=False)
    calls = densify_calls(monkeypatch)
    res = aidopt.solve_fsv(X.asformat(fmt), y, nu=0.5, log=False)
    assert not calls, calls
    assert res.termination.value == "stationary" == dense.termination.value
    assert res.objective == pytest.approx(dense.objective, rel=1e-7)
    np.testing.assert_allclose(res.solution["w"], dense.solution["w"], atol=1e-7)
    assert "the LP on the full data: n = 200" in res.message


def test_pandas_sparse_columns_keep_their_names(monkeypatch):
    X, y = _data(seed=2)
    frame = pd.DataFrame.sparse.from_spmatrix(X, columns=[f"word{j}" for j in range(X.shape[1])])
    dense = aidopt.solve_fsv(X.toarray(), y, nu=0.5, log=False)
    calls = densify_calls(monkeypatch)
    res = aidopt.solve_fsv(frame, y, nu=0.5, log=False)
    assert not calls
    assert res.solution["feature_names"] == list(frame.columns)
    assert res.objective == pytest.approx(dense.objective, rel=1e-7)


def test_the_lp_model_holds_only_the_stored_entries():
    X, y = _data(60, 25, 0.1, 3)
    model = fsv.create_instance(X, np.where(y > 0, 1.0, -1.0), nu=1.0)
    assert sum(len(list(c.body.linear_vars)) for c in model.margin.values()) == X.nnz + 2 * 60


def test_the_method_by_shape():
    """Up to aid_above rows the full-data LP; above it the LP SVMs' rule: the LP for sparse X
    (kept CSR), AID for tall, narrow, dense X and for small X (made dense for the centroids)."""
    X, y = _data(3000, 1000, 0.002, 4)
    data = as_classification_data(X, y, sparse=True)
    kept, aid, note = _shape.prepare_fsv(data, None, 100, False)
    assert not aid and kept.X is data.X and "the LP on the full data: sparse X" in note
    kept, aid, note = _shape.prepare_fsv(data, None, 10_000, False)
    assert not aid and sparse.issparse(kept.X) and "n = 3000 <= 10000" in note
    kept, aid, note = _shape.prepare_fsv(data, True, 100, False)
    assert aid and isinstance(kept.X, np.ndarray) and "aid=True given" in note
    rng = np.random.default_rng(5)
    dense = as_classification_data(rng.normal(size=(30_000, 40)), np.sign(rng.normal(size=30_000)))
    assert _shape.prepare_fsv(dense, None, 100, False)[1]
    small = as_classification_data(X[:500, :100], y[:500], sparse=True)
    kept, aid, note = _shape.prepare_fsv(small, None, 100, False)
    assert aid and isinstance(kept.X, np.ndarray) and "small X" in note


def test_aid_on_sparse_x_solves_the_same_lps():
    X, y = _data(400, 20, 0.3, 6)
    direct = aidopt.solve_fsv(X, y, nu=0.5, aid=False, log=False, start="rlp")
    aid = aidopt.solve_fsv(X, y, nu=0.5, aid=True, log=False, start="rlp")
    assert "aid=True given" in aid.message
    assert aid.objective == pytest.approx(direct.objective, rel=1e-5)
