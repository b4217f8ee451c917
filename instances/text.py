r"""A seeded generator of text-like sparse classification data (bag of words, tf-idf, unit rows).

Documents are drawn from a Zipf vocabulary: word :math:`j` (rank :math:`j = 1..m`) has base
frequency :math:`p_j \propto j^{-a}`. Each word carries a class log-odds
:math:`\delta_j \sim N(0, \sigma^2)`, and a document of class :math:`y` draws its words from
:math:`p_j e^{y \delta_j / 2}` (normalised), so that frequent words are frequent in both classes and
any single word is weak evidence. A document has a Poisson number of tokens, calibrated so that
its expected number of *distinct* words is ``nnz``. The counts become tf-idf weights as
scikit-learn's ``TfidfVectorizer`` makes them by default (raw counts, smooth idf
:math:`\log((1 + n) / (1 + \mathrm{df}_j)) + 1`) and every row is scaled to unit Euclidean
length (a document without words stays a zero row). A share ``flip`` of the labels is flipped, so
that the classes overlap.
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["text_instance"]


def _tokens_for(p, nnz: float) -> float:
    r"""The number of tokens L whose expected number of distinct words
    :math:`\sum_j 1 - (1 - p_j)^L` is ``nnz`` (bisection; the function is increasing in L)."""
    lo, hi = float(nnz), float(nnz)
    log_miss = np.log1p(-np.minimum(p, 1.0 - 1e-16))

    def distinct(L):
        return float(np.sum(-np.expm1(L * log_miss)))

    while distinct(hi) < nnz:
        hi *= 2.0
        if hi > 1e9:
            raise ValueError(f"nnz={nnz} distinct words per row cannot be reached with this vocabulary")
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if distinct(mid) < nnz else (lo, mid)
    return hi


def text_instance(n: int = 20_000, m: int = 20_000, nnz: float = 40, *, seed: int = 0,
                  zipf: float = 1.1, signal: float = 1.0, flip: float = 0.05):
    """Generate ``(X, y)``: ``X`` a scipy CSR matrix (n x m, float64, tf-idf rows of unit length),
    ``y`` in {-1, +1}.

    Parameters
    ----------
    n, m : int
        Documents (rows) and vocabulary size (columns), ``n >= 2``, ``m >= 1``.
    nnz : float, default 40
        Expected distinct words per document (the mean number of nonzeros of a row), at most m.
    seed : int
    zipf : float, default 1.1
        Exponent a of the word frequencies :math:`p_j \\propto j^{-a}`.
    signal : float, default 1.0
        Standard deviation of the words' class log-odds (0: the classes are indistinguishable).
    flip : float, default 0.05
        Share of labels flipped after the documents are drawn.

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n, m)
    y : ndarray of shape (n,)
        Both classes present.
    """
    from scipy import sparse

    if not (isinstance(n, numbers.Integral) and isinstance(m, numbers.Integral) and n >= 2 and m >= 1):
        raise ValueError(f"need integers n >= 2, m >= 1, got n={n!r}, m={m!r}")
    if not 0 < nnz <= m:
        raise ValueError(f"nnz must be in (0, m], got {nnz!r}")
    if not 0 <= flip < 0.5:
        raise ValueError(f"flip must be in [0, 0.5), got {flip!r}")
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    y[0], y[1] = 1.0, -1.0
    base = np.arange(1, m + 1, dtype=float) ** -float(zipf)
    base /= base.sum()
    delta = rng.normal(scale=signal, size=m)
    lengths = rng.poisson(_tokens_for(base, float(nnz)), size=n)
    rows, cols = [], []
    for sign in (-1.0, 1.0):
        p = base * np.exp(0.5 * sign * delta)
        docs = np.flatnonzero(y == sign)
        counts = lengths[docs]
        rows.append(np.repeat(docs, counts))
        cols.append(rng.choice(m, size=int(counts.sum()), p=p / p.sum()))
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    X = sparse.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(n, m))  # counts (summed)
    X.sum_duplicates()
    df = np.bincount(X.indices, minlength=m)
    X.data *= (np.log((1.0 + n) / (1.0 + df)) + 1.0)[X.indices]
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    X = sparse.diags(np.where(norms > 0, 1.0 / np.where(norms > 0, norms, 1.0), 0.0)) @ X
    X = sparse.csr_matrix(X)
    X.sort_indices()
    flipped = rng.random(n) < flip
    flipped[:2] = False
    y[flipped] *= -1.0
    return X, y
