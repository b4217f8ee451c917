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

__all__ = ["lad_instance", "dermatology", "DATA_DIR"]

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
