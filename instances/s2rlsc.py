r"""Data sets of Gieseke, Kramer, Airola & Pahikkala (2012), "Efficient recurrent local search
strategies for semi- and unsupervised regularized least-squares classification", section 4.1.1,
and the splitting protocol of its section 4.2.

* :func:`gaussian2c` -- ``n/2`` points from each of :math:`N(m_1, I)` and :math:`N(m_2, I)` in
  :math:`\mathbb{R}^d`, :math:`m_{1,2} = (\mp 2.5, 0, \dots, 0)`; the label is the distribution
  (the paper's set Gaussian2C: n = 500, d = 500).
* :func:`gaussian4c` -- ``n/4`` points from each of four :math:`N(m_i, I)` with
  :math:`m_i = (\mp 2.5, \mp 5, 0, \dots, 0)`; the two with first coordinate -2.5 are class -1,
  the two with +2.5 class +1 (Gaussian4C: n = 500, d = 500). The larger gap lies along the second
  coordinate, which is not the class boundary: the "misleading structure" of the paper's Fig. 3b.
* :func:`digit_pair` -- two classes of scikit-learn's handwritten digits (8 x 8, 1,797 images),
  pixels rescaled to [0, 1] as the paper does for USPS and MNIST (used in place of those sets,
  which are not shipped with any dependency).
* :func:`ssl_split` -- one random partition into ``l`` labelled, ``u`` unlabelled and ``t`` test
  points (the paper's "Gaussian2C [l = 25, u = 225, t = 250]").

The paper fixes the distributions, not the order or the class coding; here the rows come in a
seeded random order and the class of :math:`m_1` (Gaussian2C) or of :math:`m_1, m_2` (Gaussian4C)
is -1. When ``n`` is not divisible by 2 (or 4) the first distributions get one point more.
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["gaussian2c", "gaussian4c", "digit_pair", "ssl_split"]


def _check_size(n, d, parts: int):
    if not (isinstance(n, numbers.Integral) and not isinstance(n, bool) and n >= parts):
        raise ValueError(f"n must be an integer >= {parts}, got {n!r}")
    if not (isinstance(d, numbers.Integral) and not isinstance(d, bool) and d >= 2):
        raise ValueError(f"d must be an integer >= 2, got {d!r}")


def _mixture(means: np.ndarray, classes: np.ndarray, n: int, seed) -> tuple[np.ndarray, np.ndarray]:
    """``n`` points split as evenly as possible over the unit-covariance Gaussians ``means``, in
    a seeded random order."""
    rng = np.random.default_rng(seed)
    k, d = means.shape
    sizes = np.full(k, n // k)
    sizes[: n % k] += 1
    component = np.repeat(np.arange(k), sizes)
    X = rng.standard_normal((n, d)) + means[component]
    order = rng.permutation(n)
    return X[order], classes[component][order].astype(float)


def gaussian2c(n: int = 500, d: int = 500, seed=0) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian2C (section 4.1.1): two unit-covariance Gaussians at :math:`(\\mp 2.5, 0, \\dots)`.

    Parameters
    ----------
    n : int, default 500
        Number of points (``n/2`` per Gaussian).
    d : int, default 500
        Dimension.
    seed : int or numpy Generator seed

    Returns
    -------
    X : ndarray (n, d)
    y : ndarray (n,)
        -1 for :math:`m_1 = (-2.5, 0, \\dots)`, +1 for :math:`m_2 = (+2.5, 0, \\dots)`.
    """
    _check_size(n, d, 2)
    means = np.zeros((2, d))
    means[:, 0] = (-2.5, 2.5)
    return _mixture(means, np.array([-1, 1]), int(n), seed)


def gaussian4c(n: int = 500, d: int = 500, seed=0) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian4C (section 4.1.1): four unit-covariance Gaussians at
    :math:`(\\mp 2.5, \\mp 5, 0, \\dots)`; class -1 for first coordinate -2.5, +1 for +2.5.

    Parameters
    ----------
    n : int, default 500
        Number of points (``n/4`` per Gaussian).
    d : int, default 500
    seed : int

    Returns
    -------
    X : ndarray (n, d)
    y : ndarray (n,)
    """
    _check_size(n, d, 4)
    means = np.zeros((4, d))
    means[:, 0] = (-2.5, -2.5, 2.5, 2.5)
    means[:, 1] = (-5.0, 5.0, -5.0, 5.0)
    return _mixture(means, np.array([-1, -1, 1, 1]), int(n), seed)


def digit_pair(first: int, second: int) -> tuple[np.ndarray, np.ndarray]:
    """Two classes of scikit-learn's digits (``sklearn.datasets.load_digits``), pixels / 16.

    Returns
    -------
    X : ndarray (n, 64)
        Pixel values in [0, 1].
    y : ndarray (n,)
        -1 for ``first``, +1 for ``second``, in the data set's order.
    """
    try:
        from sklearn.datasets import load_digits
    except ImportError as exc:  # pragma: no cover - optional dependency
        raise ImportError("digit_pair needs scikit-learn: pip install 'aidopt[data]'") from exc
    for v in (first, second):
        if not (isinstance(v, numbers.Integral) and 0 <= v <= 9):
            raise ValueError(f"digits are 0..9, got {v!r}")
    if first == second:
        raise ValueError("the two digits must differ")
    data = load_digits()
    keep = np.isin(data.target, (first, second))
    X = data.data[keep] / 16.0
    y = np.where(data.target[keep] == first, -1.0, 1.0)
    return np.ascontiguousarray(X), y


def ssl_split(X, y, l: int, u: int, t: int | None = None, seed=0):
    """One random partition into labelled, unlabelled and test points (section 4.2).

    The rows are permuted (seeded); the first ``l`` are labelled, the next ``u`` unlabelled and
    the following ``t`` (default: all the rest) are the test set. The paper's "first half for
    training, second half for testing" is ``l + u = t = n / 2``. When ``l >= 2`` and a class has
    no labelled point, a point of that class is swapped in from the unlabelled part (when the
    unlabelled part has one), so both classes are labelled; with ``l < 2``, or when no unlabelled
    point of the missing class exists, the labelled points may all be of one class.

    Returns
    -------
    X_train : ndarray (l + u, d)
    y_train : ndarray (l + u,)
        The labels of the first ``l`` rows, 0 for the ``u`` unlabelled ones.
    X_test, y_test : ndarrays (t, d), (t,)
    truth : ndarray (l + u,)
        The true labels of the training rows (the non-realistic scenario estimates ``b_c`` from
        them).
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    n = X.shape[0]
    if t is None:
        t = n - l - u
    if not (l >= 0 and u >= 1 and t >= 0 and l + u + t <= n):
        raise ValueError(f"need l >= 0, u >= 1, t >= 0 and l + u + t <= n = {n}; got {l}, {u}, {t}")
    order = np.random.default_rng(seed).permutation(n)
    train = order[: l + u].copy()
    if l >= 2:
        for cls in (-1.0, 1.0):
            if not (y[train[:l]] == cls).any():
                donor = np.flatnonzero(y[train[l:]] == cls)
                if donor.size:
                    victim = int(np.flatnonzero(y[train[:l]] == -cls)[0])
                    a, b = victim, l + int(donor[0])
                    train[a], train[b] = train[b], train[a]
    test = order[l + u: l + u + t]
    truth = y[train]
    y_train = truth.copy()
    y_train[l:] = 0.0
    return X[train], y_train, X[test], y[test], truth
