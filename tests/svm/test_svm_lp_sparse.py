"""The LP SVMs (1-norm, infinity-norm, RLP) on sparse and wide X: the LP on the full data, built
from the stored entries (never densified), certified; checked against SciPy's ``linprog`` on the
primal LP written out here (no aidopt model)."""

from __future__ import annotations

import numpy as np
import pytest
from aidopt.models import lp_svm
from scipy import sparse
from scipy.optimize import linprog

import aidopt
from tests._densify import densify_calls


def _reference(X, y, C, norm, s=None):
    """min C sum_i s_i xi_i + R(w) s.t. y_i (x_i w + b) + xi_i >= 1, xi >= 0, by linprog."""
    X = X.toarray() if sparse.issparse(X) else np.asarray(X)
    n, m = X.shape
    s = np.ones(n) if s is None else s
    # variables: w+ (m), w- (m), b+ , b-, xi (n), [sigma for linf]
    extra = 1 if norm == "linf" else 0
    cost = np.r_[np.ones(2 * m) if norm == "l1" else np.zeros(2 * m), 0.0, 0.0, C * s,
                 np.ones(extra)]
    Yx = y[:, None] * X
    A = np.hstack([-Yx, Yx, -y[:, None], y[:, None], -np.eye(n), np.zeros((n, extra))])
    rows, rhs = [A], [-np.ones(n)]
    if norm == "linf":  # w+_j + w-_j <= sigma
        rows.append(np.hstack([np.eye(m), np.eye(m), np.zeros((m, 2 + n)), -np.ones((m, 1))]))
        rhs.append(np.zeros(m))
    res = linprog(cost, A_ub=np.vstack(rows), b_ub=np.concatenate(rhs), bounds=(0, None),
                  method="highs")
    assert res.status == 0
    return res.fun


def _data(n, m, density, seed):
    rng = np.random.default_rng(seed)
    X = sparse.random(n, m, density=density, random_state=seed, format="csr")
    y = np.where(X @ rng.normal(size=m) + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


@pytest.mark.parametrize("norm", ["l1", "linf"])
@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_sparse_wide_lp_svm_certified_at_the_lp_optimum(norm, fmt):
    X, y = _data(150, 400, 0.03, 1)  # wide: m > n
    res = aidopt.solve_svm(X.asformat(fmt), y, norm=norm, C=0.5, log=False)
    assert res.certified
    assert res.objective == pytest.approx(_reference(X, y, 0.5, norm), rel=1e-6)
    assert "small X" in res.message  # n m <= 1e6: AID, on the (small) densified X


@pytest.mark.parametrize("norm", ["l1", "linf"])
def test_sparse_tall_answers_as_dense(norm):
    X, y = _data(3000, 400, 0.01, 2)
    res = aidopt.solve_svm(X, y, norm=norm, C=1.0, log=False)
    dense = aidopt.solve_svm(X.toarray(), y, norm=norm, C=1.0, log=False, solver="highs")
    assert res.certified and dense.certified
    assert "the LP on the full data with highs: sparse X" in res.message
    assert "AID with highs" in dense.message
    assert res.objective == pytest.approx(dense.objective, rel=1e-6)


def test_sample_weights_and_rlp():
    X, y = _data(120, 30, 0.2, 3)
    s = np.random.default_rng(4).integers(0, 3, 120).astype(float)
    res = aidopt.solve_svm(X, y, norm="l1", C=2.0, sample_weight=s, log=False, aid=False)
    assert res.certified
    keep = s > 0
    assert res.objective == pytest.approx(_reference(X[keep], y[keep], 2.0, "l1", s[keep]),
                                          rel=1e-6)


def test_the_sparse_lp_path_never_densifies_x(monkeypatch):
    calls = densify_calls(monkeypatch)
    X, y = _data(4000, 2000, 0.005, 5)
    res = aidopt.solve_svm(X, y, norm="l1", C=1.0, log=False)
    assert res.certified
    assert not [shape for shape in calls if shape[0] * shape[1] >= 4000 * 2000 // 10], calls


def test_lp_svm_models_from_sparse_data_hold_only_the_stored_entries():
    X, y = _data(60, 25, 0.1, 6)
    primal = lp_svm.create_instance(X, y, regularizer="l1", form="primal")
    terms = sum(len(list(c.body.linear_vars)) for c in primal.margin.values())
    assert terms == X.nnz + 2 * 60  # gamma and y_k per row
    dual = lp_svm.create_instance(X, y, regularizer="l1", form="dual")
    terms = sum(len(list(c.body.linear_vars)) for c in dual.norm.values())
    assert terms == X.nnz
