"""The band start of a sequence of levels (``LADProblem(start="band")``, Portnoy & Koenker's
preprocessing as AID's initial partition) and the glob "fixup" split.

Every objective is checked against SciPy's HiGHS on the quantile LP written out in
tests/quantile/test_fit.py (``reference``), not against aidopt's own models; the band start is
checked to be the start actually used (its first partition: globs plus a band of singletons).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from aidopt.decomposition.partition import Partition
from aidopt.decomposition.plugins.lad import LADProblem, band_labels, spread_ratio
from aidopt.decomposition.run import RunConfig

import aidopt
from aidopt.api import rq
from aidopt.data.validate import as_regression_data
from tests.quantile.test_fit import data, reference

LEVELS = [0.1, 0.25, 0.5, 0.75, 0.9]


def ties(seed, n=900):
    """Rounded responses on a few distinct rows (many exact ties and duplicated rows)."""
    rng = np.random.default_rng(seed)
    Z = rng.integers(0, 4, size=(n, 2)).astype(float)
    y = np.round(Z @ [1.0, -2.0] + rng.laplace(size=n))
    return np.column_stack([Z, np.ones(n)]), y, np.ones(n)


@pytest.mark.parametrize("kind,seed", [("plain", 11), ("plain", 12), ("weights", 13),
                                       ("duplicates", 14), ("ties", 15)])
def test_the_band_sequence_equals_an_independent_lp_and_the_single_fits(kind, seed):
    X, y, s = ties(seed) if kind == "ties" else data(kind, seed=seed, n=800)
    fits = aidopt.solve_lad(X, y, sample_weight=s, quantile=LEVELS, tol=1e-9, log=False)
    assert fits.certified
    keep = s > 0
    for tau, fit in zip(LEVELS, fits, strict=True):
        assert fit.certified, (tau, fit.termination)
        assert fit.objective == pytest.approx(reference(X[keep], y[keep], s[keep], tau),
                                              rel=1e-8, abs=1e-9)
    if kind == "plain":  # and the single (k-means start) fit
        single = aidopt.solve_lad(X, y, quantile=LEVELS[seed % 5], tol=1e-9, log=False)
        assert fits[seed % 5].objective == pytest.approx(single.objective, rel=1e-9)


def test_every_level_starts_from_a_band_and_the_kmeans_start_agrees():
    X, y, _ = data("plain", seed=21, n=3000)
    d = as_regression_data(X, y, None, fit_intercept=False, engine="numpy")
    config = RunConfig.from_kwargs({"log": False, "tol": 1e-9}, caller="test", solver="fn")
    band = rq.fit_sequence(d, tuple(LEVELS), config)
    kmeans = rq.fit_sequence(d, tuple(LEVELS), config, start="kmeans")
    n, m = X.shape
    for fit, other in zip(band, kmeans, strict=True):
        assert fit.certified and other.certified
        assert fit.objective == pytest.approx(other.objective, rel=1e-9)
        # the first partition: two globs and a band of singletons, far fewer clusters than rows
        first = fit.history[0].n_clusters
        assert 2 * np.sqrt(n * m) <= first < n / 2
    # the first level's band (around a sample fit) is pfn's: 0.8 x half of ((m+1) n)^(2/3)
    assert band[0].history[0].n_clusters <= 0.4 * ((m + 1) * n) ** (2 / 3) + 4


def test_tau_half_is_half_of_lad():
    X, y, _ = data("plain", seed=22, n=1000)
    fits = aidopt.solve_lad(X, y, quantile=[0.25, 0.5], tol=1e-9, log=False)
    lad = aidopt.solve_lad(X, y, tol=1e-9, log=False)
    assert fits[1].objective == pytest.approx(lad.objective / 2, rel=1e-9)


def test_sparse_x_with_an_lp_solver_starts_from_the_band():
    X, y, _ = data("plain", seed=23, n=700)
    fits = aidopt.solve_lad(sp.csr_matrix(X), y, quantile=[0.25, 0.75], solver="highs",
                            tol=1e-9, log=False)
    for tau, fit in zip([0.25, 0.75], fits, strict=True):
        assert fit.certified and fit.history[0].n_clusters < 700
        assert fit.objective == pytest.approx(reference(X, y, np.ones(700), tau), rel=1e-8)


def test_band_labels():
    score = np.array([5.0, -3.0, 0.5, 0.1, -0.2, 9.0, -7.0, 0.3, 0.0, 2.0])
    labels = band_labels(score, 0.5, 3)
    order = np.sort(score)  # the band: order statistics 3..6 (floor(5 - 1.5) = 3)
    low, high = order[3], order[6]
    band = (score >= low) & (score <= high)
    assert band.sum() == 4 and sorted(labels[band]) == [2, 3, 4, 5]
    assert (labels[score < low] == 0).all() and (labels[score > high] == 1).all()
    # ties at the ends join the band; a band of almost all rows: every row alone
    tied = band_labels(np.array([0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 4.0]), 0.1, 1)
    assert (tied[:3] >= 2).all() and len(set(tied[:3])) == 3 and (tied[3:] == 1).all()
    assert band_labels(score, 0.5, 9).tolist() == list(range(10))


def test_spread_ratio_turns_the_spread_positive_and_floors_it():
    X = np.column_stack([np.ones(4), [0.0, 1.0, 2.0, -100.0]])

    class D:
        pass

    d = D()
    d.X = X
    ratio = spread_ratio(d, np.array([1.0, 2.0, 3.0, 4.0]), np.array([-1.0, -1.0]))
    # d = -(1 + x) = -1, -2, -3, 99 (median -1.5) turned positive: 1, 2, 3, -99, and the last
    # floored at a tenth of the median's magnitude, 0.15
    np.testing.assert_allclose(ratio, [1.0, 1.0, 1.0, 4.0 / 0.15])


def test_split_isolates_a_globs_few_misplaced_rows():
    # clusters: 0 = rows 0..5 (a glob, rows 4 and 5 on the wrong side), 1 = row 6, 2 = rows 7..9
    partition = Partition.from_labels([0, 0, 0, 0, 0, 0, 1, 2, 2, 2])
    side = np.array([1, 1, 1, 1, -1, 0, -1, -1, 1, -1], dtype=np.int8)
    new, mixed = partition.split_mixed(side, 0, isolate=3)
    assert mixed == 2
    groups = {tuple(np.flatnonzero(new.labels == k)) for k in range(new.n_clusters)}
    assert groups == {(0, 1, 2, 3), (4,), (5,), (6,), (7, 9), (8,)}
    # more misplaced rows than ``isolate``: the paper's split in two
    plain, _ = partition.split_mixed(side, 0, isolate=2)
    assert plain.n_clusters == 5 and plain.labels.tolist() == \
        partition.split_mixed(side, 0)[0].labels.tolist()


def test_bad_starts_are_refused():
    with pytest.raises(ValueError, match="start must be"):
        LADProblem(start="random")
    with pytest.raises(ValueError, match="start_previous needs"):
        LADProblem(start="band", start_previous=np.zeros(2))
    X, y, _ = data("plain", seed=24, n=300)
    d = as_regression_data(X, y, None, fit_intercept=False, engine="numpy")
    problem = LADProblem(start="band", start_beta=np.zeros(4), start_previous=np.zeros(3))
    with pytest.raises(ValueError, match="start_previous has shape"):
        problem.initial_partition(d, 10, np.random.default_rng(0), None)


def test_the_dask_engine_starts_a_sequence_from_the_band(tmp_path):
    pytest.importorskip("dask")
    X, y, _ = data("plain", seed=25, n=1200)
    path = tmp_path / "X.npy"
    np.save(path, X)
    levels = [0.25, 0.5, 0.75]
    streamed = aidopt.solve_lad(str(path), y, engine="dask", quantile=levels, tol=1e-9, log=False)
    for tau, fit in zip(levels, streamed, strict=True):
        assert fit.certified and fit.history[0].n_clusters < 600
        assert fit.objective == pytest.approx(reference(X, y, np.ones(1200), tau), rel=1e-8)
