"""SOR (Algorithm 8) reaches the optimum of (1.42), (1.43) and weighted (1.45) found independently
by Clarabel's interior-point method, and its primal (1.35) value matches a Clarabel solve of (1.35)."""

from __future__ import annotations

import numpy as np
import pytest

from aidopt.numerics.sor import (
    kernel_dual_matrix,
    kernel_dual_matrix_KK,
    kernel_primal_dual,
    primal_objective,
    sor_linear,
    sor_objective,
    sor_solve,
)

from ._ref import box_qp, data, primal_135, rbf

SEEDS = range(20)
TOL = 1e-9


def _nu(seed):
    return float([0.05, 0.3, 1.0, 3.0][seed % 4])


def _agree(res, M, u_ref, f_ref, *, u_close, upper):
    assert np.all(res.u >= 0) and np.all(res.u <= upper)
    assert res.converged and res.residual <= TOL
    f = sor_objective(M, res.u)
    assert f == pytest.approx(res.objective, rel=1e-10, abs=1e-12)
    assert f == pytest.approx(f_ref, rel=1e-7, abs=1e-9)
    assert f <= f_ref + 1e-9 * max(1.0, abs(f_ref))  # SOR is not worse than the interior point
    # Mu is unique over the solution set (f is strictly convex in H'u)
    np.testing.assert_allclose(M @ res.u, M @ u_ref, atol=1e-5)
    if u_close:
        np.testing.assert_allclose(res.u, u_ref, atol=1e-5 * max(1.0, res.u.max()))


@pytest.mark.parametrize("seed", SEEDS)
def test_linear_kernel_142(seed):
    A, d = data(seed)
    nu = _nu(seed)
    M = kernel_dual_matrix(A @ A.T, d)
    res = sor_solve(M, nu, tol=TOL, omega=[1.0, 1.3, 0.7][seed % 3])
    u_ref, f_ref = box_qp(M, nu)
    # M has rank <= n + 1 < m: u is not unique, compare objective and Mu only
    _agree(res, M, u_ref, f_ref, u_close=False, upper=nu)


@pytest.mark.parametrize("seed", SEEDS)
def test_rbf_kernel_142(seed):
    A, d = data(100 + seed, m=int(30 + 5 * seed))
    nu = [0.5, 1.0, 3.0, 10.0][seed % 4]
    M = kernel_dual_matrix(rbf(A, width=0.5 * A.shape[1]), d)
    res = sor_solve(M, nu, tol=TOL, omega=[1.0, 1.5][seed % 2], max_sweeps=200_000)
    u_ref, f_ref = box_qp(M, nu)
    # RBF kernel of distinct points is positive definite: the solution u is unique
    _agree(res, M, u_ref, f_ref, u_close=True, upper=nu)
    assert res.sweeps > 1 and np.any((res.u > 0) & (res.u < nu))  # not a trivial all-at-a-bound case


@pytest.mark.parametrize("seed", range(10))
def test_indefinite_kernel_143(seed):
    A, d = data(200 + seed, m=60)
    nu = _nu(seed)
    if seed % 2 == 0:
        K = A @ A.T - 5.0  # indefinite (eigenvalue -5 m on e, roughly)
        assert np.linalg.eigvalsh(K).min() < -1.0
    else:
        K = np.random.default_rng(seed).normal(size=(60, 60))  # non-symmetric
    M = kernel_dual_matrix_KK(K, d)
    res = sor_solve(M, nu, tol=TOL, max_sweeps=200_000)
    u_ref, f_ref = box_qp(M, nu)
    _agree(res, M, u_ref, f_ref, u_close=False, upper=nu)


@pytest.mark.parametrize("seed", range(10))
def test_weighted_upper_bounds(seed):
    A, d = data(300 + seed, m=80)
    nu = _nu(seed)
    s = np.random.default_rng(seed).integers(1, 6, size=80).astype(float)
    kern = A @ A.T if seed % 2 else rbf(A, A.shape[1])
    M = kernel_dual_matrix(kern, d)
    res = sor_solve(M, nu, tol=TOL, upper=nu * s)
    u_ref, f_ref = box_qp(M, nu * s)
    _agree(res, M, u_ref, f_ref, u_close=seed % 2 == 0, upper=nu * s)
    # the same through Remark 11 with weights, and the primal (1.35) with slack weights nu s
    lin = sor_linear(A, d, nu, tol=TOL, weights=s)
    if seed % 2:
        np.testing.assert_allclose(lin.u, res.u, atol=1e-8)
    w, gamma, p_ref = primal_135(A, d, nu, weights=s)
    assert lin.primal == pytest.approx(p_ref, rel=1e-6)
    assert primal_objective(A, d, lin.w, lin.gamma, nu, weights=s) == pytest.approx(lin.primal, rel=1e-12)
    np.testing.assert_allclose(np.append(lin.w, lin.gamma), np.append(w, gamma), atol=1e-5)


@pytest.mark.parametrize("seed", SEEDS)
def test_primal_135_and_gap(seed):
    A, d = data(400 + seed)
    nu = _nu(seed)
    res = sor_linear(A, d, nu)  # default tol 1e-6
    assert res.converged and res.residual <= 1e-6
    assert res.gap >= -1e-9 * res.primal
    assert res.rel_gap <= 1e-5
    # the primal value at (w, gamma) = H'u is the (1.35) objective, and matches Clarabel's optimum
    assert primal_objective(A, d, res.w, res.gamma, nu) == pytest.approx(res.primal, rel=1e-12)
    w, gamma, p_ref = primal_135(A, d, nu)
    assert res.dual <= p_ref + 1e-8 * p_ref <= res.primal + 2e-8 * p_ref  # weak duality brackets it
    assert res.primal == pytest.approx(p_ref, rel=1e-5)
    tight = sor_linear(A, d, nu, tol=TOL)
    assert tight.primal == pytest.approx(p_ref, rel=1e-7)
    np.testing.assert_allclose(np.append(tight.w, tight.gamma), np.append(w, gamma), atol=1e-5)
    # sign convention of (1.37): gamma = -e'Du, w = A'Du
    assert tight.gamma == pytest.approx(-(d @ tight.u), abs=1e-10)
    np.testing.assert_allclose(tight.w, A.T @ (d * tight.u), atol=1e-10)


@pytest.mark.parametrize("seed", range(5))
def test_kernel_gap(seed):
    A, d = data(500 + seed)
    nu = _nu(seed)
    M = kernel_dual_matrix(rbf(A, A.shape[1]), d)
    res = sor_solve(M, nu)
    primal, dual = kernel_primal_dual(M, res.u, nu)
    assert (primal, dual) == pytest.approx((res.primal, res.dual), rel=1e-10)
    assert res.converged and -1e-12 <= res.rel_gap <= 1e-5
