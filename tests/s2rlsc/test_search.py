"""The balance band and the searches: every returned labelling is in the band, narrow bands
work by swaps, runs are reproducible, limits stop them, the aggregated warm start."""

from __future__ import annotations

import numpy as np
import pytest

from aidopt.api.s2rlsc import solve_s2rlsc
from aidopt.numerics.rlsc import Band, RLSCFitness, aggregated_start, local_search
from aidopt.results import Termination
from tests.s2rlsc._helpers import d_of, instance


def _in_band(labels, free, band):
    k = int((labels[free] > 0).sum())
    return band.k_lo <= k <= band.k_hi and abs(k / band.u - band.b_c) < band.eps


def test_band_counts_are_the_strict_inequality():
    # u = 10, b_c = 0.5, eps = 0.1: only k = 5 (|0.4 - 0.5| = 0.1 is not < 0.1)
    assert (Band.of(10, 0.5, 0.1).k_lo, Band.of(10, 0.5, 0.1).k_hi) == (5, 5)
    band = Band.of(225, 0.46, 0.1)
    k = np.arange(226)
    exact = [kk for kk in k if abs(kk / 225 - 0.46) < 0.1 - 1e-12]
    assert (band.k_lo, band.k_hi) == (min(exact), max(exact))
    assert Band.of(7, 0.0, 0.1).k_hi == 0
    with pytest.raises(ValueError, match="admits no count"):
        Band.of(10, 0.55, 0.05)  # |k/10 - 0.55| < 0.05 has no integer k


@pytest.mark.parametrize("search", ["1+1", "mu+nu"])
@pytest.mark.parametrize("b_c, eps", [(0.5, 0.1), (0.3, 0.05), (0.5, 0.02), (0.9, 0.2)])
def test_every_returned_labelling_is_in_the_band(search, b_c, eps):
    Xtr, ytr, *_ = instance(l=6, u=40, d=10, seed=11)
    res = solve_s2rlsc(Xtr, ytr, b_c=b_c, eps=eps, search=search, restarts=3, log=False, seed=1)
    free = np.flatnonzero(ytr == 0)
    assert _in_band(res.labels, free, res.band)
    assert np.array_equal(res.labels[ytr != 0], ytr[ytr != 0])  # labelled points keep theirs
    assert set(np.unique(res.labels)) <= {-1.0, 1.0}
    assert res.fitness == pytest.approx(
        RLSCFitness.from_kernel(Xtr @ Xtr.T, d_of(ytr), 1.0)(res.labels), abs=1e-12)
    assert res.termination is Termination.NO_IMPROVEMENT and not res.certified
    assert res.bound == -np.inf


def test_a_single_admissible_count_is_searched_by_swaps():
    """With k_lo = k_hi no single flip is valid; swaps (one +1 and one -1) keep the count and
    still improve on the start."""
    Xtr, ytr, *_ = instance(l=4, u=20, d=5, seed=12)
    fit = RLSCFitness.from_kernel(Xtr @ Xtr.T, d_of(ytr), 1.0)
    free = np.flatnonzero(ytr == 0)
    band = Band.of(20, 0.5, 0.05)
    assert band.k_lo == band.k_hi == 10
    start = ytr.copy()
    start[free] = np.repeat([1.0, -1.0], 10)
    for search in ("1+1", "mu+nu"):
        out = local_search(fit, ytr, free, band, search=search, restarts=2, starts=[start], seed=0)
        assert int((out.y[free] > 0).sum()) == 10
        assert out.fitness < fit(start)


def test_runs_are_reproducible_and_seeds_matter():
    Xtr, ytr, *_ = instance(l=6, u=60, d=30, seed=13)
    a = solve_s2rlsc(Xtr, ytr, restarts=2, log=False, seed=3)
    b = solve_s2rlsc(Xtr, ytr, restarts=2, log=False, seed=3)
    assert np.array_equal(a.labels, b.labels) and a.search["evaluations"] == b.search["evaluations"]
    c = solve_s2rlsc(Xtr, ytr, restarts=2, log=False, seed=4)
    assert c.search["evaluations"] != a.search["evaluations"]  # another random path


def test_best_of_restarts_is_the_minimum_of_the_restarts():
    Xtr, ytr, *_ = instance(l=6, u=60, d=30, seed=14)
    res = solve_s2rlsc(Xtr, ytr, restarts=6, search="1+1", log=False)
    assert res.fitness == pytest.approx(min(res.search["restart_fitness"]))
    assert len(res.search["restart_fitness"]) == 6


def test_one_plus_one_ends_in_a_single_flip_local_minimum():
    """Round robin + patience n: no single valid flip of the result lowers F."""
    Xtr, ytr, *_ = instance(l=6, u=50, d=20, seed=15)
    fit = RLSCFitness.from_kernel(Xtr @ Xtr.T, d_of(ytr), 1.0)
    free = np.flatnonzero(ytr == 0)
    band = Band.of(50, 0.5, 0.3)
    out = local_search(fit, ytr, free, band, search="1+1", restarts=1, seed=2)
    for j in free:
        y = out.y.copy()
        y[j] = -y[j]
        if band.contains((y[free] > 0).sum()):
            assert fit(y) >= out.fitness - 1e-12


def test_iteration_and_time_limits_stop_the_search():
    Xtr, ytr, *_ = instance(l=6, u=60, d=30, seed=16)
    res = solve_s2rlsc(Xtr, ytr, max_iter=3, restarts=2, log=False)
    assert res.termination is Termination.ITERATION_LIMIT
    assert _in_band(res.labels, np.flatnonzero(ytr == 0), res.band)
    res = solve_s2rlsc(Xtr, ytr, time_limit=1e-6, restarts=50, log=False)
    assert res.termination is Termination.TIME_LIMIT
    assert len(res.search["restart_fitness"]) < 50


@pytest.mark.parametrize("search", ["1+1", "mu+nu"])
def test_aggregated_warm_start_is_in_the_band_and_consistent(search):
    Xtr, ytr, *_ = instance(l=6, u=80, d=10, seed=17)
    fit = RLSCFitness.from_kernel(Xtr @ Xtr.T, d_of(ytr), 1.0)
    free = np.flatnonzero(ytr == 0)
    band = Band.of(80, 0.5, 0.1)
    agg = aggregated_start(fit, ytr, free, band, 12, unlabelled_weight=1 / 80, lam=1.0,
                           search=search, restarts=3, seed=0)
    assert agg["y"] is not None and agg["clusters"] <= 12
    assert _in_band(agg["y"], free, band)
    assert agg["fitness"] == pytest.approx(fit(agg["y"]))
    res = solve_s2rlsc(Xtr, ytr, aggregate=12, search=search, restarts=3, log=False, b_c=0.5)
    assert _in_band(res.labels, free, res.band)
    # restart 0 starts from the lifted labels and only improves on them
    assert res.search["restart_fitness"][0] <= res.search["aggregate"]["fitness"] + 1e-12


def test_aggregation_with_one_cluster_per_point_is_the_full_problem():
    """k = u singleton clusters: the representatives are the points, the weights 1: the
    aggregated fitness is F itself."""
    Xtr, ytr, *_ = instance(l=4, u=12, d=6, seed=18)
    fit = RLSCFitness.from_kernel(Xtr @ Xtr.T, d_of(ytr), 1.0)
    free = np.flatnonzero(ytr == 0)
    band = Band.of(12, 0.5, 0.2)
    agg = aggregated_start(fit, ytr, free, band, 12, unlabelled_weight=1 / 12, lam=1.0,
                           search="1+1", restarts=4, seed=0)
    assert agg["clusters"] == 12
    assert agg["fitness_aggregated"] == pytest.approx(agg["fitness"], abs=1e-9)


def test_weighted_initial_labels_never_jump_over_the_band():
    """Cluster weights: the random start is repaired by flips that cannot overshoot the band."""
    from aidopt.numerics.rlsc import _initial

    rng = np.random.default_rng(0)
    cw = np.array([7.0, 5.0, 3.0, 3.0, 2.0, 1.0, 1.0, 1.0])  # 23 points in 8 clusters
    band = Band.of(23, 0.5, 0.05)  # counts 11 or 12 only
    free = np.arange(8)
    for _ in range(50):
        z = _initial(rng, np.zeros(8), free, cw, 0.5, band)
        assert z is not None and band.k_lo <= cw[z > 0].sum() <= band.k_hi
    single = Band.of(23, 12 / 23, 0.02)  # the count 12 only (7 + 5, 7 + 3 + 2, ...)
    assert single.k_lo == single.k_hi == 12
    z = _initial(rng, np.zeros(8), free, cw, 0.5, single)
    assert z is not None and cw[z > 0].sum() == 12
    assert _initial(rng, np.zeros(2), np.arange(2), np.array([10.0, 10.0]), 0.5,
                    Band(20, 0.5, 0.05, 11, 11)) is None  # no subset of {10, 10} sums to 11


def _interrupt_at(monkeypatch, restart: int):
    """Ctrl-C as the (mu+nu)-EA of restart ``restart`` (1-based) starts."""
    from aidopt.numerics import rlsc

    real, calls = rlsc._mu_plus_nu, []

    def wrapped(*args):
        if not calls or args[12] is not calls[-1]:  # a new restart's state array
            calls.append(args[12])
        if len(calls) == restart:
            raise KeyboardInterrupt
        return real(*args)

    monkeypatch.setattr(rlsc, "_mu_plus_nu", wrapped)


def test_ctrl_c_after_a_restart_returns_the_best_labels(monkeypatch):
    """Ctrl-C inside a run (the run framework's guard and the search's own): the best labels of
    the finished restarts come back with termination ``interrupted``."""
    Xtr, ytr, *_ = instance(l=4, u=20, d=3, seed=0)
    _interrupt_at(monkeypatch, 2)
    res = solve_s2rlsc(Xtr, ytr, restarts=5, log=False)
    assert res.termination is Termination.INTERRUPTED
    assert len(res.search["restart_fitness"]) == 1 and np.isfinite(res.fitness)


def test_ctrl_c_before_any_labels_raises(monkeypatch):
    Xtr, ytr, *_ = instance(l=4, u=20, d=3, seed=0)
    _interrupt_at(monkeypatch, 1)
    with pytest.raises(KeyboardInterrupt):
        solve_s2rlsc(Xtr, ytr, restarts=5, log=False)


def test_ctrl_c_in_the_aggregated_start_ends_the_run(monkeypatch):
    """Ctrl-C during the aggregated warm start's second restart: its best lifted labels come
    back with termination ``interrupted`` and the search on all points does not run (it ran,
    and Ctrl-C was lost)."""
    Xtr, ytr, *_ = instance(l=6, u=80, d=10, seed=17)
    _interrupt_at(monkeypatch, 2)
    res = solve_s2rlsc(Xtr, ytr, aggregate=12, restarts=3, log=False, b_c=0.5)
    assert res.termination is Termination.INTERRUPTED
    assert res.search["restart_fitness"] == [] and res.search["aggregate"]["stop"] == "interrupted"
    assert res.fitness == pytest.approx(res.search["aggregate"]["fitness"])
    free = np.flatnonzero(ytr == 0)
    assert _in_band(res.labels, free, res.band)
