r"""A seeded covertype-like multi-class set: the shape of UCI covertype (54 features, 7 classes with
its class shares), drawn from a generator, for the one-vs-rest benchmarks of docs/multiclass.md.

Rows :math:`i = 1..n`. The class :math:`y_i \in \{0, \dots, 6\}` is drawn with covertype's shares
(36.5, 48.8, 6.2, 0.5, 1.6, 3.0, 3.5 %, normalised). The 54 features are

* 10 continuous ones: :math:`x_{ij} = \mu_{y_i j} + z_{ij}`, :math:`z_{ij} \sim N(0, 1)`, with
  class means :math:`\mu_{cj} \sim N(0, 0.25^2)` drawn once: the classes overlap heavily;
* a one-hot block of 4 "wilderness areas" and one of 40 "soil types": each row takes one
  category of each block, from its class's distribution :math:`p_c \sim \mathrm{Dirichlet}(1)`
  (one draw per class and block).

A linear model reaches about 76 % on it (docs/multiclass.md). The draws come from one
``numpy.random.default_rng(seed)`` in a fixed order (classes, means, noise, then each block's
class distributions and its uniforms), so a seed and n give the same set everywhere.
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["covertype_like", "COVERTYPE_SHARES"]

#: covertype's class shares, classes 1..7 (here 0..6)
COVERTYPE_SHARES = (0.365, 0.488, 0.062, 0.005, 0.016, 0.030, 0.035)

_BLOCK = 1 << 16  # rows one-hot encoded at a time (no n x 40 cumulative-sum temporary)


def covertype_like(n: int, seed: int = 0):
    r"""``(X, y)``: n rows of the covertype-like set (module docstring).

    Parameters
    ----------
    n : int
        Rows, ``n >= 1``.
    seed : int, default 0

    Returns
    -------
    X : ndarray of shape (n, 54)
        The 10 continuous features, then the 4 wilderness and the 40 soil indicators.
    y : ndarray of shape (n,), int
        The class, 0..6.
    """
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"seed must be an integer, got {seed!r}")
    n = int(n)
    rng = np.random.default_rng(seed)
    shares = np.asarray(COVERTYPE_SHARES)
    y = rng.choice(7, size=n, p=shares / shares.sum())
    means = rng.normal(scale=0.25, size=(7, 10))
    X = np.zeros((n, 54))
    X[:, :10] = means[y] + rng.normal(size=(n, 10))
    start = 10
    for width in (4, 40):  # wilderness areas, soil types
        p = rng.dirichlet(np.ones(width), size=7)
        u = rng.random(n)
        cum = np.cumsum(p, axis=1)
        for lo in range(0, n, _BLOCK):  # the category: the first whose cumulative share reaches u
            hi = min(n, lo + _BLOCK)
            k = (cum[y[lo:hi]] < u[lo:hi, None]).sum(axis=1).clip(max=width - 1)
            X[np.arange(lo, hi), start + k] = 1.0
        start += width
    return X, y
