"""Remark 11 / (1.55): ``sor_linear`` is Algorithm 8 on D(AA' + ee')D without forming it, and
a memmap, a ``.npy`` path, a Parquet file or a RowSource give what the in-memory array gives."""

from __future__ import annotations

import numpy as np
import pytest

from aidopt.data.rowblocks import ArraySource
from aidopt.numerics.sor import _sweep_rows, _sweep_rows_numpy, kernel_dual_matrix, sor_linear, sor_solve

from ._ref import data


@pytest.mark.parametrize("seed", range(8))
def test_linear_equals_dense(seed):
    A, d = data(600 + seed)
    nu, omega = [0.1, 1.0, 5.0, 0.5][seed % 4], [1.0, 1.4, 0.6, 1.9][seed % 4]
    lin = sor_linear(A, d, nu, omega=omega, tol=1e-9)
    den = sor_solve(kernel_dual_matrix(A @ A.T, d), nu, omega=omega, tol=1e-9)
    assert lin.converged and den.converged
    # same iteration in the same order: the same iterates up to round-off
    # sor_linear tests the exact residual only when its in-sweep estimate is small, so it may run
    # a few more sweeps than sor_solve, never fewer (test_fixed_sweeps_same_iterates: same iterates)
    assert den.sweeps <= lin.sweeps
    np.testing.assert_allclose(lin.u, den.u, atol=1e-9)
    for key in ("objective", "primal", "dual"):
        assert getattr(lin, key) == pytest.approx(getattr(den, key), rel=1e-9)
    assert lin.residual <= 1e-9 and den.residual <= 1e-9


def test_fixed_sweeps_same_iterates():
    A, d = data(7, m=120, n=4)
    lin = sor_linear(A, d, 2.0, tol=0.0, max_sweeps=13)
    den = sor_solve(kernel_dual_matrix(A @ A.T, d), 2.0, tol=0.0, max_sweeps=13)
    assert lin.sweeps == den.sweeps == 13 and not lin.converged and not den.converged
    np.testing.assert_allclose(lin.u, den.u, atol=1e-11)
    # the reported residual is the exact natural residual at u
    M = kernel_dual_matrix(A @ A.T, d)
    g = M @ lin.u - 1.0
    assert lin.residual == pytest.approx(np.max(np.abs(lin.u - np.clip(lin.u - g, 0.0, 2.0))), rel=1e-9)


def test_numba_kernel_matches_numpy_reference():
    A, d = data(8, m=200, n=6)
    rng = np.random.default_rng(0)
    u1 = rng.uniform(0, 1, 200)
    u2 = u1.copy()
    ub = np.full(200, 0.7)
    H = d[:, None] * np.hstack([A, -np.ones((200, 1))])
    v1 = H.T @ u1
    v2 = v1.copy()
    for _ in range(3):
        e1 = _sweep_rows(A, d, u1, ub, v1, 1.3)
        e2 = _sweep_rows_numpy(A, d, u2, ub, v2, 1.3)
        np.testing.assert_allclose(u1, u2, atol=1e-12)
        np.testing.assert_allclose(v1, v2, atol=1e-12)
        assert e1 == pytest.approx(e2, abs=1e-12)


NU = 0.05  # 77 sweeps: each sweep re-reads a streamed source


@pytest.fixture(scope="module")
def big():
    A, d = data(9, m=400, n=5)
    return A, d, sor_linear(A, d, NU, tol=1e-8)


def _same(res, ref):
    assert res.converged
    np.testing.assert_allclose(res.u, ref.u, atol=1e-9)
    np.testing.assert_allclose(res.w, ref.w, atol=1e-9)
    assert res.gamma == pytest.approx(ref.gamma, abs=1e-9)
    assert res.primal == pytest.approx(ref.primal, rel=1e-10)


def test_memmap_and_npy_path(tmp_path, big):
    A, d, ref = big
    path = tmp_path / "A.npy"
    mm = np.lib.format.open_memmap(path, mode="w+", dtype=np.float64, shape=A.shape)
    mm[:] = A
    mm.flush()
    dpath = tmp_path / "d.npy"
    np.save(dpath, d)
    ro = np.load(path, mmap_mode="r")
    assert isinstance(ro, np.memmap)
    _same(sor_linear(ro, d, NU, tol=1e-8, block_rows=37), ref)  # 11 blocks
    _same(sor_linear(str(path), str(dpath), NU, tol=1e-8, block_rows=256), ref)
    _same(sor_linear(ArraySource(ro, d), None, NU, tol=1e-8, block_rows=300), ref)


def test_parquet(tmp_path, big):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    A, d, ref = big
    table = pa.table({**{f"a{j}": A[:, j] for j in range(A.shape[1])}, "label": d, "note": np.zeros(len(d))})
    path = tmp_path / "data.parquet"
    pq.write_table(table, path, row_group_size=137)
    cols = [f"a{j}" for j in range(A.shape[1])]
    _same(sor_linear(path, "label", NU, tol=1e-8, columns=cols, block_rows=200), ref)
    # default label column "d", every other column is A
    pq.write_table(pa.table({**{f"a{j}": A[:, j] for j in range(A.shape[1])}, "d": d}), tmp_path / "x.parquet",
                   row_group_size=400)
    _same(sor_linear(str(tmp_path / "x.parquet"), None, NU, tol=1e-8, block_rows=333), ref)


def test_streamed_validation(tmp_path):
    A, d = data(10, m=300, n=3)
    A[250, 1] = np.nan
    path = tmp_path / "bad.npy"
    np.save(path, A)
    with pytest.raises(ValueError, match="row 250"):
        sor_linear(np.load(path, mmap_mode="r"), d, 1.0, block_rows=64)
    A[250, 1] = 0.0
    d[260] = 0.0
    np.save(path, A)
    with pytest.raises(ValueError, match="entry 260"):
        sor_linear(np.load(path, mmap_mode="r"), d, 1.0, block_rows=64)


def test_warm_start_and_decision_function():
    A, d = data(11)
    res = sor_linear(A, d, 1.0, tol=1e-9)
    again = sor_linear(A, d, 1.0, tol=1e-9, u0=res.u)
    assert again.sweeps == 0 and again.converged
    np.testing.assert_allclose(res.decision_function(A), A @ res.w - res.gamma)
    # d_i (A_i w - gamma) = (Mu)_i: margins >= 1 - tol where u_i = 0
    margins = d * res.decision_function(A)
    assert np.all(margins[res.u == 0] >= 1 - 1e-8)
    assert np.all(margins[res.u == 1.0] <= 1 + 1e-8)
    assert set(np.unique(res.predict(A))) <= {-1.0, 1.0}
