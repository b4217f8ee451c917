"""LAD and regression quantiles on sparse and wide X: the dual LP on the full data, built from
the stored entries, certified as every LAD fit; checked against SciPy's ``linprog`` (HiGHS
behind SciPy's own interface, no aidopt model)."""

from __future__ import annotations

import numpy as np
import pytest
from aidopt.models import lad
from scipy import sparse
from scipy.optimize import linprog

import aidopt
from aidopt.api import _shape
from tests._densify import densify_calls


def _reference(X, y, s, tau=None):
    """The optimum of the weighted LAD / quantile LP by linprog (HiGHS) on the primal."""
    n, m = X.shape
    a, b = (1.0, 1.0) if tau is None else (tau, 1.0 - tau)
    eye = sparse.identity(n, format="csr")
    res = linprog(np.r_[np.zeros(m), a * s, b * s], A_eq=sparse.hstack([X, eye, -eye], "csr"),
                  b_eq=y, bounds=[(None, None)] * m + [(0, None)] * (2 * n), method="highs")
    assert res.status == 0
    return res.fun


def _wide(seed, n=120, m=240, rank=40):
    """n <= m with rank < n, so that the optimum is not an exact fit (objective > 0)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, rank)) @ rng.normal(size=(rank, m))
    return X, rng.normal(size=n), rng.integers(0, 3, n).astype(float)


@pytest.mark.parametrize("tau", [None, 0.2, 0.9])
@pytest.mark.parametrize("as_sparse", [False, True])
def test_wide_data_certified_at_the_lp_optimum(tau, as_sparse):
    X, y, s = _wide(0)
    optimum = _reference(X, y, s, tau)
    assert optimum > 1.0
    res = aidopt.solve_lad(sparse.csr_matrix(X) if as_sparse else X, y, sample_weight=s,
                           quantile=tau, log=False)
    assert res.certified
    assert res.objective == pytest.approx(optimum, rel=1e-7)
    beta = res.solution["beta"]  # not unique: checked by its own objective on the data
    assert lad.evaluate(X, y, beta, s, tau) == pytest.approx(optimum, rel=1e-7)
    assert "the dual LP on the full data" in res.message and "wide X" in res.message


def test_the_issue_size_300_x_600_is_certified():
    X, y, s = _wide(1, n=300, m=600, rank=150)
    res = aidopt.solve_lad(X, y, sample_weight=s, log=False)
    assert res.certified and res.objective == pytest.approx(_reference(X, y, s), rel=1e-7)


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_sparse_tall_data_answer_as_dense(fmt):
    rng = np.random.default_rng(2)
    X = sparse.random(5000, 400, density=0.01, random_state=3, format=fmt)
    y = X @ rng.normal(size=400) + rng.laplace(size=5000)
    res = aidopt.solve_lad(X, y, fit_intercept=True, log=False)
    dense = aidopt.solve_lad(X.toarray(), y, fit_intercept=True, log=False, solver="fn")
    assert res.certified and dense.certified
    assert res.objective == pytest.approx(dense.objective, rel=1e-7)
    assert "sparse X" in res.message  # chosen by shape: 1 % of the entries stored
    assert "Frisch-Newton on the full data, sparse normal equations" in res.message
    assert "AID with fn" in dense.message


@pytest.mark.parametrize("tau", [None, 0.1, 0.75])
def test_sparse_frisch_newton_equals_the_dense_one(tau):
    """The same iterates up to rounding: CHOLMOD's factor in place of LAPACK's."""
    from aidopt.numerics.fn import frisch_newton

    rng = np.random.default_rng(11)
    X = sparse.hstack([np.ones((2000, 1)), sparse.random(2000, 150, density=0.03,
                                                         random_state=12)], format="csr")
    y = X @ rng.normal(size=151) + rng.standard_t(3, size=2000)
    w = rng.integers(1, 4, 2000).astype(float)
    a = frisch_newton(X.toarray(), y, w, quantile=tau)
    b = frisch_newton(X, y, w, quantile=tau)
    assert a.status == b.status == "optimal"
    assert b.objective == pytest.approx(a.objective, rel=1e-10)
    assert b.objective == pytest.approx(_reference(X, y, w, tau), rel=1e-8)
    np.testing.assert_allclose(b.beta, a.beta, atol=1e-7)


def test_sparse_frisch_newton_with_empty_and_repeated_columns_is_certified():
    """A column with no stored entry (its coefficient is free) and two equal columns (a singular
    X'DX, factored with the ridge) still end certified at the LP optimum."""
    rng = np.random.default_rng(13)
    B = sparse.random(10_000, 120, density=0.03, random_state=14, format="csc")
    X = sparse.hstack([np.ones((10_000, 1)), B, B[:, :1], sparse.csc_matrix((10_000, 1))],
                      format="csr")
    y = B @ rng.normal(size=120) + rng.laplace(size=10_000)
    res = aidopt.solve_lad(X, y, log=False)
    assert res.certified and "Frisch-Newton on the full data" in res.message
    assert res.objective == pytest.approx(_reference(X, y, np.ones(10_000)), rel=1e-7)
    assert res.solution["beta"][-1] == 0.0


def test_a_sparse_path_never_densifies_x(monkeypatch):
    """No ``toarray`` / ``todense`` on the user's matrix or its CSR copy on the chosen path."""
    calls = densify_calls(monkeypatch)
    rng = np.random.default_rng(4)
    X = sparse.random(5000, 300, density=0.02, random_state=5, format="csr")
    y = X @ rng.normal(size=300) + rng.laplace(size=5000)
    res = aidopt.solve_lad(X, y, fit_intercept=True, log=False)
    assert res.certified
    assert not [shape for shape in calls if shape[0] * shape[1] >= 5000 * 300], calls


def test_pyomo_models_from_sparse_data_hold_only_the_stored_entries():
    X = sparse.random(50, 20, density=0.1, random_state=6, format="csr")
    y = np.arange(50.0)
    for form, rows in (("primal", "fit"), ("dual", "balance")):
        model = lad.create_instance(X, y, form=form)
        terms = sum(len(list(c.body.linear_vars)) for c in getattr(model, rows).values())
        extra = 2 * 50 if form == "primal" else 0  # e_plus, e_minus per row
        assert terms == X.nnz + extra


def test_shape_rule():
    assert _shape.lad_method(300, 600, 180_000).method == "lp"
    assert _shape.lad_method(100_000, 20, 2_000_000).method == "aid"  # tall, narrow, dense
    assert _shape.lad_method(20_000, 2_000, 800_000).method == "lp"  # 2 % stored
    assert _shape.lad_method(500, 400, 200_000).method == "aid"  # small: n m <= SMALL


def test_the_cli_reads_an_svmlight_file_sparse(tmp_path, capsys):
    import json

    from aidopt.cli.main import main

    rng = np.random.default_rng(7)
    X = sparse.random(5000, 400, density=0.01, random_state=8, format="csr")
    y = X @ rng.normal(size=400) + rng.laplace(size=5000)
    path = tmp_path / "train.svm"
    with open(path, "w") as f:
        for i in range(X.shape[0]):
            row = X.getrow(i)
            pairs = zip(row.indices, row.data, strict=True)
            f.write(f"{float(y[i])!r} " + " ".join(f"{j + 1}:{float(v)!r}" for j, v in pairs) + "\n")
    out = tmp_path / "r.json"
    assert main(["lad", "--data", str(path), "--fit-intercept", "--quiet", "--output", str(out)]) == 0
    saved = json.loads(out.read_text())
    direct = aidopt.solve_lad(X, y, fit_intercept=True, log=False)
    assert "certified_optimal" in capsys.readouterr().out
    assert saved["objective"] == pytest.approx(direct.objective, rel=1e-7)
    assert "Frisch-Newton on the full data, sparse normal equations" in saved["message"]


def test_time_limit_counts_the_build_on_wide_input():
    rng = np.random.default_rng(9)
    X = rng.normal(size=(1000, 10_000))
    y = rng.normal(size=1000)
    import time

    t = time.perf_counter()
    res = aidopt.solve_lad(X, y, log=False, time_limit=0.2, raise_on_failure=False)
    assert res.termination == "time_limit" and not res.certified
    assert time.perf_counter() - t < 0.2 + 10


def test_frisch_newton_does_not_begin_a_step_that_would_end_past_the_limit(monkeypatch):
    """Each factorization made to take 1 s: with a 2.5 s limit the run stops after the step
    whose successor would end past it, not a step later (times scaled so that a loaded machine
    does not eat the margin)."""
    import time

    from aidopt.numerics import normal
    from aidopt.numerics.fn import frisch_newton

    rng = np.random.default_rng(15)
    X = sparse.random(2000, 50, density=0.1, random_state=16, format="csr")
    y = X @ rng.normal(size=50) + rng.laplace(size=2000)
    assert frisch_newton(X, y).status == "optimal"  # warm: numba's kernel loaded
    real = normal.NormalEquations.factor

    def slow(self, d):
        time.sleep(1.0)
        return real(self, d)

    monkeypatch.setattr(normal.NormalEquations, "factor", slow)
    start = time.perf_counter()
    res = frisch_newton(X, y, time_limit=2.5)
    assert res.status == "time_limit"
    # two factorizations (2 s), then a third would end past 2.5 s (before: 3 s)
    assert time.perf_counter() - start < 2.75
