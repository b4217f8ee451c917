"""Clear ValueErrors for inputs outside the assumptions of section 5."""

from __future__ import annotations

import numpy as np
import pytest

from aidopt.numerics.sor import kernel_dual_matrix, kernel_dual_matrix_KK, primal_objective, sor_linear, sor_solve

from ._ref import data

A, D = data(0, m=20, n=3)
K = A @ A.T
M = kernel_dual_matrix(K, D)


@pytest.mark.parametrize("build", [kernel_dual_matrix, kernel_dual_matrix_KK])
def test_builders(build):
    with pytest.raises(ValueError, match="square"):
        build(A, D)
    with pytest.raises(ValueError, match="square"):
        build(np.ones(5), D)
    bad = K.copy()
    bad[3, 4] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        build(bad, D)
    bad[3, 4] = np.inf
    with pytest.raises(ValueError, match="NaN or infinite"):
        build(bad, D)
    with pytest.raises(ValueError, match="-1 and \\+1"):
        build(K, np.where(D > 0, 1.0, 0.0))
    with pytest.raises(ValueError, match="-1 and \\+1"):
        build(K, 2 * D)
    with pytest.raises(ValueError, match="20 entries"):
        build(K, D[:-1])
    with pytest.raises(ValueError, match="numeric"):
        build(K, np.array(["a"] * 20))


def test_142_needs_symmetric_kernel():
    with pytest.raises(ValueError, match="symmetric"):
        kernel_dual_matrix(np.random.default_rng(0).normal(size=(20, 20)), D)
    kernel_dual_matrix_KK(np.random.default_rng(0).normal(size=(20, 20)), D)  # (1.43): any K


@pytest.mark.parametrize("omega", [0, 2, -1, 2.5, np.nan, True])
def test_omega(omega):
    with pytest.raises(ValueError, match="omega"):
        sor_solve(M, 1.0, omega=omega)
    with pytest.raises(ValueError, match="omega"):
        sor_linear(A, D, 1.0, omega=omega)


@pytest.mark.parametrize("nu", [0, -1.0, np.inf, np.nan, None, "1"])
def test_nu(nu):
    with pytest.raises(ValueError, match="nu"):
        sor_solve(M, nu)
    with pytest.raises(ValueError, match="nu"):
        sor_linear(A, D, nu)
    with pytest.raises(ValueError, match="nu"):
        primal_objective(A, D, np.zeros(3), 0.0, nu)


def test_solve_matrix_checks():
    with pytest.raises(ValueError, match="square"):
        sor_solve(M[:, :5], 1.0)
    bad = M.copy()
    bad[0, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        sor_solve(bad, 1.0)
    with pytest.raises(ValueError, match="symmetric"):
        sor_solve(M + np.triu(np.ones_like(M)), 1.0)
    Z = M.copy()
    Z[4, 4] = 0.0
    with pytest.raises(ValueError, match="positive diagonal"):
        sor_solve(Z, 1.0)


def test_lengths_and_options():
    with pytest.raises(ValueError, match="upper"):
        sor_solve(M, 1.0, upper=np.ones(19))
    with pytest.raises(ValueError, match="upper"):
        sor_solve(M, 1.0, upper=-np.ones(20))
    with pytest.raises(ValueError, match="u0"):
        sor_solve(M, 1.0, u0=np.ones(21))
    with pytest.raises(ValueError, match="u0"):
        sor_linear(A, D, 1.0, u0=np.full(20, np.nan))
    with pytest.raises(ValueError, match="weights"):
        sor_linear(A, D, 1.0, weights=np.ones(3))
    with pytest.raises(ValueError, match="weights"):
        sor_linear(A, D, 1.0, weights=np.zeros(20))
    with pytest.raises(ValueError, match="d must be 1-D with 20"):
        sor_linear(A, D[:-2], 1.0)
    with pytest.raises(ValueError, match="d is required"):
        sor_linear(A, None, 1.0)
    with pytest.raises(ValueError, match="-1 and \\+1"):
        sor_linear(A, np.abs(D) * 3, 1.0)
    bad = A.copy()
    bad[7, 0] = np.inf
    with pytest.raises(ValueError, match="row 7"):
        sor_linear(bad, D, 1.0)
    with pytest.raises(ValueError, match="tol"):
        sor_solve(M, 1.0, tol=-1)
    with pytest.raises(ValueError, match="max_sweeps"):
        sor_linear(A, D, 1.0, max_sweeps=1.5)
    with pytest.raises(ValueError, match="block_rows"):
        sor_linear(A, D, 1.0, block_rows=0)
    with pytest.raises(ValueError, match="no rows"):
        sor_linear(np.zeros((0, 3)), np.zeros(0), 1.0)


def test_parquet_label_column(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "p.parquet"
    pq.write_table(pa.table({"a0": A[:, 0], "y": np.where(D > 0, 1.0, 0.0)}), path)
    with pytest.raises(ValueError, match="no column 'd'"):
        sor_linear(path, None, 1.0)
    with pytest.raises(ValueError, match="-1 and \\+1"):
        sor_linear(path, "y", 1.0)
