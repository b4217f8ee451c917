"""Partition, aggregation and split logic (no solver)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from aidopt.decomposition import LADProblem, Lifted, Partition
from aidopt.decomposition.clustering import _nearest, one_step_kmeans
from aidopt.decomposition.plugins.lad import LADState


def test_from_labels_renumbers_and_counts():
    p = Partition.from_labels(np.array([7, 3, 7, 9, 3, 3]))
    assert p.n_clusters == 3
    assert p.counts.tolist() == [3, 2, 1]
    assert p.labels.tolist() == [1, 0, 1, 2, 0, 0]


def test_weighted_means_match_loops():
    rng = np.random.default_rng(0)
    X, y, s = rng.normal(size=(50, 3)), rng.normal(size=50), rng.uniform(0.5, 2, size=50)
    p = Partition.from_labels(rng.integers(0, 7, size=50))
    W, (Xbar, ybar) = p.weighted_means(s, X, y)
    for k in range(p.n_clusters):
        idx = p.members(k)
        assert W[k] == pytest.approx(s[idx].sum())
        np.testing.assert_allclose(Xbar[k], (s[idx, None] * X[idx]).sum(0) / s[idx].sum())
        assert ybar[k] == pytest.approx((s[idx] * y[idx]).sum() / s[idx].sum())


def test_refine_splits_only_mixed_groups():
    p = Partition.from_labels(np.array([0, 0, 0, 1, 1, 2]))
    q = p.refine(np.array([0, 1, 1, 0, 0, 1]))
    assert q.n_clusters == 4
    # cluster 0 split into {0} and {1, 2}; clusters 1 and 2 unchanged
    assert len({q.labels[0], q.labels[1]}) == 2 and q.labels[1] == q.labels[2]
    assert q.labels[3] == q.labels[4] != q.labels[5]


def test_refine_validates():
    p = Partition.from_labels(np.zeros(4, dtype=int))
    with pytest.raises(ValueError):
        p.refine(np.array([0, 1]))
    with pytest.raises(ValueError):
        p.refine(np.array([0, -1, 0, 0]))


def test_lad_split_rule_and_sign_tolerance():
    p = Partition.from_labels(np.array([0, 0, 0, 1, 1, 2, 2]))
    r = np.array([1.0, -1.0, 2.0, 1.0, 1e-12, -3.0, 0.0])

    def lifted_at(residual):
        return Lifted({}, LADState.from_residual(None, residual, 1e-9, np.ones(residual.size)))

    lifted = lifted_at(r)
    mixed = LADProblem.mixed_clusters(p, lifted)
    assert mixed.tolist() == [True, False, False]  # 1e-12 and 0 count as zero
    split = LADProblem().split(p, None, lifted)
    assert split.n_split == 1 and split.partition.n_clusters == 4 and not split.holds
    # positive residuals of cluster 0 go together, the rest stay
    q = split.partition
    assert q.labels[0] == q.labels[2] != q.labels[1]
    split = LADProblem().split(p, None, lifted_at(np.abs(r)))
    assert split.partition is None and split.n_split == 0 and split.holds


def test_default_r0_is_the_papers():
    def r0(n, m):
        return LADProblem().default_r0(n, SimpleNamespace(n=n, m=m))

    assert r0(10_000, 10) == pytest.approx(0.005)
    assert r0(1000, 10) == pytest.approx(0.02)
    assert r0(10_000_000, 100) == pytest.approx(0.0005)
    assert r0(1_000_000, 800) == pytest.approx(0.0024)


def test_one_step_kmeans_is_seeded_and_groups_nearby_points():
    rng = np.random.default_rng(1)
    Z = np.vstack([rng.normal(0, 0.01, (100, 2)), rng.normal(5, 0.01, (100, 2))])
    a = one_step_kmeans(Z, 2, np.random.default_rng(3))
    b = one_step_kmeans(Z, 2, np.random.default_rng(3))
    assert (a == b).all()
    # both blobs end up label-pure whatever the seed centres were
    assert len(set(a[:100])) == 1 and len(set(a[100:])) == 1 and a[0] != a[150]


@pytest.mark.parametrize("d", [1, 3, 4, 20])
def test_nearest_centres_agree_with_brute_force_in_any_dimension(d):
    """The k-d tree (d <= 3) and the blocked matrix products (d > 3) both find each row's
    nearest centre, over several row blocks."""
    rng = np.random.default_rng(d)
    Z, centres = rng.normal(size=(5000, d)), rng.normal(size=(300, d))
    found = _nearest(Z, centres)
    distances = ((Z[:, None, :] - centres[None, :, :]) ** 2).sum(axis=2)
    assert np.allclose(distances[np.arange(Z.shape[0]), found], distances.min(axis=1),
                       rtol=1e-12, atol=1e-12)


def test_grouped_reductions_match_loops():
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 7, size=200)
    part = Partition.from_labels(labels)
    v = rng.normal(size=200)
    for k in range(part.n_clusters):
        rows = part.members(k)
        assert part.sum(v)[k] == pytest.approx(v[rows].sum())
        assert part.min(v)[k] == v[rows].min() and part.max(v)[k] == v[rows].max()
    M = rng.normal(size=(200, 3))
    np.testing.assert_allclose(part.sum(M), [M[part.members(k)].sum(axis=0) for k in range(part.n_clusters)])
    with pytest.raises(ValueError, match="one entry per element"):
        part.min(v[:-1])


def test_from_labels_counting_equals_unique():
    """Renumbering by counting (small non-negative labels) gives np.unique's numbering; other
    labels (negative, large, bool) are renumbered too."""
    rng = np.random.default_rng(5)
    for labels in (rng.integers(0, 50, size=300), rng.integers(0, 50, size=300).astype(np.uint16),
                   rng.integers(-5, 5, size=300), rng.integers(0, 2**40, size=300),
                   rng.random(300) < 0.3):
        p = Partition.from_labels(labels)
        uniq, inverse = np.unique(labels, return_inverse=True)
        assert p.labels.dtype == np.int64 and p.counts.dtype == np.int64
        np.testing.assert_array_equal(p.labels, inverse)
        np.testing.assert_array_equal(p.counts, np.bincount(inverse))


def test_min_max_of_integer_values():
    p = Partition.from_labels(np.array([0, 0, 1, 1, 1, 2]))
    side = np.array([1, -1, 0, 1, 1, -1], dtype=np.int8)
    assert p.max(side).tolist() == [1.0, 1.0, -1.0] and p.min(side).tolist() == [-1.0, 0.0, -1.0]
    assert p.mixed(side, 0).tolist() == [True, False, False]
