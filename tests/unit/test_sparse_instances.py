"""The sparse generators of ``aidopt bench sparse``: text-like tf-idf documents
(:func:`aidopt.instances.text.text_instance`) and one-hot tables
(:func:`aidopt.instances.onehot.onehot_instance`): shape, density, determinism, the encodings."""

from __future__ import annotations

import numpy as np
import pytest
from aidopt.instances.onehot import onehot_instance, onehot_levels
from aidopt.instances.text import text_instance
from scipy import sparse


def _same(a, b) -> bool:
    return (a[0] != b[0]).nnz == 0 and np.array_equal(a[1], b[1])


# --------------------------------------------------------------------------- text
def test_text_shape_density_and_unit_rows():
    X, y = text_instance(2000, 1500, 12, seed=3)
    assert sparse.isspmatrix_csr(X) and X.shape == (2000, 1500) and X.dtype == np.float64
    assert X.has_sorted_indices and set(np.unique(y)) == {-1.0, 1.0}
    per_row = np.diff(X.indptr)
    # the document lengths are calibrated on the words' base frequencies: exact without class
    # signal; the classes' tilted frequencies are more concentrated, so a few % fewer words
    assert 0.8 * 12 < per_row.mean() < 12
    flat = np.diff(text_instance(2000, 1500, 12, seed=3, signal=0.0)[0].indptr)
    assert flat.mean() == pytest.approx(12, rel=0.02)
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    np.testing.assert_allclose(norms[per_row > 0], 1.0, rtol=1e-12)
    assert np.all(X.data > 0)


def test_text_is_tfidf_of_integer_counts():
    """Dividing a row by the smooth idf of its words (document frequencies read off X's pattern)
    leaves values proportional to integer counts: the weights are raw counts times
    log((1 + n) / (1 + df)) + 1, as scikit-learn's TfidfVectorizer makes them."""
    X, _ = text_instance(500, 300, 25, seed=1)
    n = X.shape[0]
    df = np.bincount(X.indices, minlength=X.shape[1])
    idf = np.log((1.0 + n) / (1.0 + df)) + 1.0
    integral = 0
    for i in range(n):
        tf = X.data[X.indptr[i]:X.indptr[i + 1]] / idf[X.indices[X.indptr[i]:X.indptr[i + 1]]]
        ratio = tf / tf.min()
        integral += bool(np.allclose(ratio, np.round(ratio), rtol=0, atol=1e-9))
    assert integral >= 0.95 * n  # a row's smallest count is almost always 1
    wrong = np.log(n / df) + 1.0  # the unsmoothed idf does not give integers
    tf = X.data[X.indptr[0]:X.indptr[1]] / wrong[X.indices[X.indptr[0]:X.indptr[1]]]
    assert not np.allclose(tf / tf.min(), np.round(tf / tf.min()), rtol=0, atol=1e-9)


def test_text_determinism_by_seed():
    assert _same(text_instance(300, 200, 8, seed=5), text_instance(300, 200, 8, seed=5))
    assert not _same(text_instance(300, 200, 8, seed=5), text_instance(300, 200, 8, seed=6))


# --------------------------------------------------------------------------- one-hot
def test_onehot_levels_share_the_columns():
    assert onehot_levels(53, 4, 3) == [13, 13, 12, 12]
    assert onehot_levels(53, 4, 3, drop_first=True) == [14, 14, 13, 13]
    with pytest.raises(ValueError, match="m - numeric >= k"):
        onehot_levels(5, 4, 3)


def test_onehot_shape_encoding_and_density():
    n, m, k, numeric = 3000, 83, 4, 3
    X, y = onehot_instance(n, m, k, numeric, seed=2)
    assert sparse.isspmatrix_csr(X) and X.shape == (n, m) and X.dtype == np.float64
    assert np.all(np.diff(X.indptr) == k + numeric)  # one level per categorical column + numerics
    assert X.nnz / (n * m) == pytest.approx((k + numeric) / m)
    dense = X.toarray()
    first = 0
    for L in onehot_levels(m, k, numeric):
        block = dense[:, first:first + L]
        assert set(np.unique(block)) == {0.0, 1.0} and np.all(block.sum(axis=1) == 1.0)
        freq = block.sum(axis=0)
        assert freq[0] > 3 * freq[-1]  # Zipf: level 0 the most common, the last level rare
        first += L
    z = dense[:, first:]
    assert z.shape[1] == numeric and abs(z.mean()) < 0.1 and abs(z.std() - 1.0) < 0.1
    assert np.sum(y > 0) == pytest.approx(n / 2, abs=0.1 * n)  # half before the 5 % flips


def test_onehot_drop_first_leaves_the_reference_level_out():
    n, m, k, numeric = 2000, 43, 3, 1
    X, _ = onehot_instance(n, m, k, numeric, seed=4, drop_first=True)
    dense = X.toarray()
    first = 0
    for L in onehot_levels(m, k, numeric, drop_first=True):
        block = dense[:, first:first + L - 1]
        assert np.all(block.sum(axis=1) <= 1.0)
        assert 0.2 * n < np.sum(block.sum(axis=1) == 0) < 0.6 * n  # level 0, the most common
        first += L - 1
    assert first == m - numeric
    # with an intercept, the encoded blocks are not collinear
    assert np.linalg.matrix_rank(np.hstack([np.ones((n, 1)), dense])) == m + 1


def test_onehot_labels_follow_the_score():
    """Without flips and with every level effect large, a linear classifier on X separates the
    classes far better than chance (the labels depend on the encoded columns)."""
    from sklearn.svm import LinearSVC

    X, y = onehot_instance(2000, 60, 3, 2, seed=7, flip=0.0)
    accuracy = LinearSVC(C=1.0).fit(X, y).score(X, y)
    assert accuracy > 0.85
    _, noisy = onehot_instance(2000, 60, 3, 2, seed=7, flip=0.2)
    assert 0.1 < np.mean(noisy != y) < 0.3


def test_onehot_determinism_and_validation():
    assert _same(onehot_instance(300, 40, seed=1), onehot_instance(300, 40, seed=1))
    assert not _same(onehot_instance(300, 40, seed=1), onehot_instance(300, 40, seed=2))
    for bad in ({"n": 1}, {"m": 12}, {"flip": 0.5}, {"zipf": -1.0}, {"k": 0}):
        with pytest.raises(ValueError):
            onehot_instance(**{"n": 50, "m": 40, **bad})
