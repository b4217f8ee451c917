r"""A seeded generator of one-hot encoded tabular classification data (categorical columns with
many levels each, plus numeric columns).

The table has k categorical columns and ``numeric`` numeric ones. The ``m - numeric`` one-hot
columns are shared out among the k categorical columns as evenly as possible (the first
``(m - numeric) mod k`` get one more); categorical column c has :math:`L_c` levels, one per
one-hot column, or one more with ``drop_first`` (its level 0 is then the reference level,
encoded as no entry, as ``OneHotEncoder(drop="first")`` does). Level :math:`l = 0..L_c - 1` of
column c has frequency :math:`p_{cl} \propto (l + 1)^{-a}` (Zipf: a few common levels, a long
tail of rare ones), drawn independently for every row and column. The numeric values are
:math:`z_{ij} \sim N(0, 1)`.

Each level carries an effect :math:`\theta_{cl} \sim N(0, \sigma^2 / k)` and each numeric column a
coefficient :math:`\gamma_j \sim N(0, \sigma^2 / \mathrm{numeric})`; the score of a row is
:math:`s_i = \sum_c \theta_{c, l_{ic}} + \sum_j \gamma_j z_{ij}`, and the half of the rows with the
largest scores (ties by row order) are class +1, the other half -1. A share ``flip`` of the labels
is then flipped, so that the classes overlap.

X is a scipy CSR matrix: the k one-hot blocks in column order, then the numeric columns; a row
stores one entry 1.0 per categorical column (none at a dropped reference level) and its numeric
values, so its density is at most :math:`(k + \mathrm{numeric}) / m`.
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["onehot_instance", "onehot_levels"]


def onehot_levels(m: int, k: int, numeric: int, drop_first: bool = False) -> list[int]:
    """The number of levels of each of the k categorical columns when the table has m columns
    after encoding, ``numeric`` of them numeric (module docstring)."""
    if not all(isinstance(v, numbers.Integral) for v in (m, k, numeric)):
        raise ValueError(f"m, k and numeric must be integers, got {m!r}, {k!r}, {numeric!r}")
    if k < 1 or numeric < 0 or m - numeric < k:
        raise ValueError(f"need k >= 1 categorical columns, numeric >= 0 and m - numeric >= k "
                         f"(one one-hot column per categorical column at least), got m={m}, "
                         f"k={k}, numeric={numeric}")
    base, extra = divmod(m - numeric, k)
    return [base + (c < extra) + bool(drop_first) for c in range(k)]


def onehot_instance(n: int = 20_000, m: int = 10_010, k: int = 10, numeric: int = 10, *,
                    seed: int = 0, zipf: float = 1.0, signal: float = 1.0, flip: float = 0.05,
                    drop_first: bool = False):
    r"""Generate ``(X, y)``: ``X`` a scipy CSR matrix (n x m, float64) of k one-hot encoded
    categorical columns followed by ``numeric`` numeric columns, ``y`` in {-1, +1}.

    Parameters
    ----------
    n : int
        Rows, ``n >= 2``.
    m : int
        Columns after encoding, ``m >= k + numeric``; the ``m - numeric`` one-hot columns are
        shared out among the k categorical columns as evenly as possible.
    k : int, default 10
        Categorical columns.
    numeric : int, default 10
        Numeric columns, :math:`N(0, 1)`, the last ones of X.
    seed : int
    zipf : float, default 1.0
        Exponent a of the level frequencies :math:`p_l \propto (l + 1)^{-a}` (0: uniform).
    signal : float, default 1.0
        Standard deviation :math:`\sigma` of the score (the level effects and the numeric
        coefficients share it; 0: the classes are indistinguishable).
    flip : float, default 0.05
        Share of labels flipped after the classes are assigned.
    drop_first : bool, default False
        Encode level 0 of every categorical column as no entry (a reference level, so that with
        an intercept column the one-hot blocks are not collinear); column c then has one level
        more than one-hot columns.

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n, m)
    y : ndarray of shape (n,)
        Both classes present, :math:`\lfloor n / 2 \rfloor` rows of class +1 before the flips.
    """
    from scipy import sparse

    if not (isinstance(n, numbers.Integral) and n >= 2):
        raise ValueError(f"need an integer n >= 2, got n={n!r}")
    levels = onehot_levels(m, k, numeric, drop_first)
    if not zipf >= 0:
        raise ValueError(f"zipf must be >= 0, got {zipf!r}")
    if not signal >= 0:
        raise ValueError(f"signal must be >= 0, got {signal!r}")
    if not 0 <= flip < 0.5:
        raise ValueError(f"flip must be in [0, 0.5), got {flip!r}")
    rng = np.random.default_rng(seed)
    score = np.zeros(n)
    rows, cols = [], []
    first = 0  # the first one-hot column of the current categorical column
    for L in levels:
        p = np.arange(1, L + 1, dtype=float) ** -float(zipf)
        level = rng.choice(L, size=n, p=p / p.sum())
        score += rng.normal(scale=signal / np.sqrt(k), size=L)[level]
        keep = level > 0 if drop_first else np.ones(n, dtype=bool)
        rows.append(np.flatnonzero(keep))
        cols.append(first + level[keep] - int(drop_first))
        first += L - int(drop_first)
    z = rng.standard_normal((n, numeric))
    if numeric:
        score += z @ rng.normal(scale=signal / np.sqrt(numeric), size=numeric)
    rows.append(np.repeat(np.arange(n), numeric))
    cols.append(np.tile(np.arange(first, first + numeric), n))
    values = np.concatenate([np.ones(sum(r.size for r in rows[:-1])), z.ravel()])
    X = sparse.csr_matrix((values, (np.concatenate(rows), np.concatenate(cols))), shape=(n, m))
    X.sort_indices()
    y = -np.ones(n)
    y[np.argsort(-score, kind="stable")[: n // 2]] = 1.0
    flipped = rng.random(n) < flip
    flipped[np.argmax(y > 0)] = flipped[np.argmax(y < 0)] = False  # both classes stay
    y[flipped] *= -1.0
    return X, y
