"""The closed-form fitness (13) / (16) and its O(r) flip updates (Theorems 1 and 2) against
independent direct solves of min_c J(c, y)."""

from __future__ import annotations

import numpy as np
import pytest

from aidopt.api.s2rlsc import solve_s2rlsc
from aidopt.numerics.kernels import rlsc_kernel as kernel_function
from aidopt.numerics.rlsc import (
    Band,
    RLSCFitness,
    _apply,
    _delta,
    _one_plus_one,
    local_search,
    nystrom_fitness,
)
from tests.s2rlsc._helpers import d_of, direct_min_J, instance, random_labels

KERNELS = {"linear": kernel_function("linear"), "rbf": kernel_function("rbf", sigma=2.0)}


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("lam, lam_prime", [(1.0, 1.0), (0.25, 0.1), (4.0, 2.0)])
def test_closed_form_equals_direct_solve(kernel, lam, lam_prime):
    Xtr, ytr, *_ = instance(l=6, u=24, d=5, seed=1)
    K = KERNELS[kernel](Xtr, Xtr)
    d = d_of(ytr, lam_prime)
    fit = RLSCFitness.from_kernel(K, d, lam)
    rng = np.random.default_rng(0)
    free = np.flatnonzero(ytr == 0)
    for _ in range(5):
        y = random_labels(rng, ytr, free)
        value, c = direct_min_J(K, d, lam, y)
        assert fit(y) == pytest.approx(value, abs=1e-10, rel=1e-10)
        # eq. (12) attains it, and its training decision values are K c*
        c_star = fit.coefficients(y)
        res = d * (y - K @ c_star)
        assert res @ res + lam * c_star @ K @ c_star == pytest.approx(value, abs=1e-10)
        assert np.allclose(fit.decision(y), K @ c_star, atol=1e-9)
        # F = y'My = lambda (Dy)'(DKD + lambda I)^{-1}(Dy) with a plain linear solve
        ybar = d * y
        assert fit(y) == pytest.approx(lam * ybar @ np.linalg.solve(d[:, None] * K * d + lam *
                                                                    np.eye(y.size), ybar), abs=1e-10)
        assert y @ fit.matrix() @ y == pytest.approx(fit(y), abs=1e-10)
    # F(y) <= ||Dy||^2 = 1 + lam' (c = 0), and > 0
    assert 0 < fit(y) <= 1 + lam_prime


def test_nystrom_closed_form_equals_direct_solve_with_the_approximate_kernel():
    Xtr, ytr, *_ = instance(l=5, u=35, d=6, seed=2)
    kfun = KERNELS["rbf"]
    d = d_of(ytr, 0.5)
    landmarks = np.array([0, 3, 7, 11, 19, 23, 31])
    fit, B, L = nystrom_fitness(kfun, Xtr, d, 0.7, landmarks)
    K_nR = kfun(Xtr, Xtr[landmarks])
    K_tilde = K_nR @ np.linalg.pinv(K_nR[landmarks]) @ K_nR.T  # eq. (14) written out
    assert np.allclose(L @ L.T, K_tilde, atol=1e-9)
    assert fit.r <= landmarks.size  # O(r) per flip
    rng = np.random.default_rng(1)
    free = np.flatnonzero(ytr == 0)
    for _ in range(5):
        y = random_labels(rng, ytr, free)
        value, _ = direct_min_J(K_tilde, d, 0.7, y, L=L)
        assert fit(y) == pytest.approx(value, abs=1e-10, rel=1e-10)


def test_nystrom_with_every_point_as_landmark_is_the_full_kernel():
    Xtr, ytr, *_ = instance(l=4, u=16, d=3, seed=3)
    kfun = KERNELS["rbf"]
    d = d_of(ytr)
    full = RLSCFitness.from_kernel(kfun(Xtr, Xtr), d, 1.0)
    nys, *_ = nystrom_fitness(kfun, Xtr, d, 1.0, np.arange(Xtr.shape[0]))
    rng = np.random.default_rng(2)
    for _ in range(4):
        y = random_labels(rng, ytr, np.flatnonzero(ytr == 0))
        assert nys(y) == pytest.approx(full(y), abs=1e-9)


@pytest.mark.parametrize("nystrom", [False, True])
def test_flip_updates_equal_recomputation_after_many_flips(nystrom):
    Xtr, ytr, *_ = instance(l=5, u=45, d=10, seed=4)
    kfun = KERNELS["linear"]
    d = d_of(ytr)
    fit = (nystrom_fitness(kfun, Xtr, d, 1.0, np.arange(0, 50, 3))[0] if nystrom
           else RLSCFitness.from_kernel(kfun(Xtr, Xtr), d, 1.0))
    rng = np.random.default_rng(3)
    free = np.flatnonzero(ytr == 0)
    y = random_labels(rng, ytr, free)
    s = fit.s(y)
    F = fit(y)
    dummy, tmp = np.zeros((1, 1)), np.empty(1)
    for step in range(3000):
        i = int(rng.choice(free))
        p = int(rng.choice(free)) if step % 3 == 0 else -1
        if p == i:
            p = -1
        delta = _delta(fit.V, fit.omega, d, y, s, i, p, False, dummy, F, tmp)
        before = y.copy()
        _apply(fit.V, d, y, s, i, p)
        F += delta
        assert (y != before).sum() == (1 if p < 0 else 2)
    assert np.allclose(s, fit.s(y), atol=1e-10)
    assert F == pytest.approx(fit(y), abs=1e-10)


def test_naive_quadratic_form_gives_the_same_deltas():
    Xtr, ytr, *_ = instance(l=4, u=20, d=6, seed=5)
    d = d_of(ytr)
    fit = RLSCFitness.from_kernel(Xtr @ Xtr.T, d, 0.5)
    M = fit.matrix()
    rng = np.random.default_rng(4)
    free = np.flatnonzero(ytr == 0)
    y = random_labels(rng, ytr, free)
    s, F = fit.s(y), fit(y)
    for i, p in [(free[0], -1), (free[3], free[5]), (free[7], -1)]:
        fast = _delta(fit.V, fit.omega, d, y, s, i, p, False, np.zeros((1, 1)), F, np.empty(1))
        slow = _delta(fit.V, fit.omega, d, y, s, i, p, True, M, F, np.empty(y.size))
        assert fast == pytest.approx(slow, abs=1e-12)


@pytest.mark.parametrize("search", ["1+1", "mu+nu"])
def test_naive_and_closed_form_searches_take_the_same_path(search):
    Xtr, ytr, *_ = instance(l=4, u=30, d=6, seed=6)
    fit = RLSCFitness.from_kernel(Xtr @ Xtr.T, d_of(ytr), 1.0)
    free = np.flatnonzero(ytr == 0)
    band = Band.of(free.size, 0.5, 0.2)
    fast = local_search(fit, ytr, free, band, search=search, restarts=3, seed=7)
    slow = local_search(fit, ytr, free, band, search=search, restarts=3, seed=7, naive=True)
    assert np.array_equal(fast.y, slow.y)
    if search == "1+1":  # (mu+nu): rounding-level ties may order equal offspring differently
        assert fast.evaluations == slow.evaluations


def test_the_kernel_run_state_matches_recomputation():
    """The F accumulated inside the numba (1+1) kernel equals F of its final labels."""
    Xtr, ytr, *_ = instance(l=6, u=54, d=20, seed=7)
    fit = RLSCFitness.from_kernel(Xtr @ Xtr.T, d_of(ytr), 1.0)
    free = np.flatnonzero(ytr == 0)
    band = Band.of(free.size, 0.5, 0.1)
    y = ytr.copy()
    y[free] = np.where(np.arange(free.size) % 2 == 0, 1.0, -1.0)
    s = fit.s(y)
    state = np.array([fit(y), float((y[free] > 0).sum()), float((y[free] > 0).sum()), 0, 0, 0, 0])
    _one_plus_one(fit.V, fit.omega, fit.d, free, np.ones(free.size), float(band.k_lo),
                  float(band.k_hi), y, s, state, 10**6, 10**6, 10**6, 1e-12, False,
                  np.zeros((1, 1)), np.empty(1))
    assert state[0] == pytest.approx(fit(y), abs=1e-10)
    assert np.allclose(s, fit.s(y), atol=1e-10)
    assert state[4] >= free.size  # stopped after a full round without improvement


def test_unsupervised_fitness_is_eq16_and_the_clusters_are_found():
    """Clustering (7): D = sqrt(1/u), F = 1 - s' Omega s (eq. 16) = min_c J_1."""
    rng = np.random.default_rng(8)
    X = np.vstack([rng.normal(size=(20, 3)) + [4.0, 0, 0], rng.normal(size=(20, 3)) - [4.0, 0, 0]])
    truth = np.repeat([1.0, -1.0], 20)
    K = X @ X.T
    d = np.full(40, np.sqrt(1 / 40))
    fit = RLSCFitness.from_kernel(K, d, 1.0)
    assert fit.const == pytest.approx(1.0)
    y = np.where(rng.random(40) < 0.5, 1.0, -1.0)
    assert fit(y) == pytest.approx(direct_min_J(K, d, 1.0, y)[0], abs=1e-10)
    res = solve_s2rlsc(X, np.zeros(40), log=False, search="1+1", seed=0)
    assert res.mode == "clustering"
    agree = np.mean(res.labels == truth)
    assert max(agree, 1 - agree) == 1.0  # the two clusters, up to the sign
    assert res.fitness == pytest.approx(fit(res.labels), abs=1e-12)
    assert res.fitness <= fit(truth) + 1e-12


def test_naive_fitness_is_the_direct_way_and_searches_the_same():
    """NaiveFitness (one inverse, y'My per candidate: the paper's Fig. 8 baseline) agrees with
    the eigen form, and the search takes the same path with it."""
    from aidopt.numerics.rlsc import NaiveFitness

    Xtr, ytr, *_ = instance(l=4, u=26, d=12, seed=9)
    K, d = Xtr @ Xtr.T, d_of(ytr, 0.5)
    fast, slow = RLSCFitness.from_kernel(K, d, 0.8), NaiveFitness(K, d, 0.8)
    rng = np.random.default_rng(5)
    free = np.flatnonzero(ytr == 0)
    y = random_labels(rng, ytr, free)
    assert slow(y) == pytest.approx(fast(y), abs=1e-12)
    assert np.allclose(slow.coefficients(y), fast.coefficients(y), atol=1e-10)
    band = Band.of(free.size, 0.5, 0.2)
    a = local_search(fast, ytr, free, band, search="1+1", restarts=3, seed=1)
    b = local_search(slow, ytr, free, band, search="1+1", restarts=3, seed=1)
    assert np.array_equal(a.y, b.y) and a.evaluations == b.evaluations
    with pytest.raises(ValueError, match="naive=True"):
        local_search(slow, ytr, free, band, naive=False)
