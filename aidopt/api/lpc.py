r"""Public entry points of linear program chunking (LPC, Bradley, Mangasarian & Musicant, §4.2).

* :func:`solve_lp_chunked`: ``min c'x s.t. Hx >= b`` (1.29) by Algorithm 3, with the rows read
  one block at a time from an array, a memmap or a Parquet file, and the answer checked on every
  row.
* :func:`solve_lsvm_lpc`: the 1-norm linear SVM (1.28) by the same loop, the data rows chunked;
  ``solve_svm(..., norm="l1", method="lpc")`` calls it.

Both validate every argument (and scan the rows for NaN / infinity, block by block) before any
solve, take the common options of every ``solve_*`` function (:class:`~aidopt.decomposition.run.RunConfig`)
and return an :class:`~aidopt.results.AIDResult` whose ``termination`` is ``certified_optimal``
only when the full-data check passed. docs/lpc.md has the algorithm and the certificates.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from aidopt.api._params import Family, Param, number
from aidopt.data.rowblocks import RowSource, row_source
from aidopt.data.validate import _check_finite
from aidopt.decomposition.lpc import KEEP, GeneralLP, LSVMChunks, solve_chunked
from aidopt.decomposition.run import RunConfig
from aidopt.results import AIDResult

__all__ = ["solve_lp_chunked", "solve_lsvm_lpc", "n_blocks"]


def n_blocks(chunks, n_rows: int) -> int:
    """The number of blocks ℓ: ``chunks`` itself (an integer >= 1) or, for a fraction in (0, 1),
    ``ceil(1 / chunks)`` blocks of about ``chunks * n_rows`` rows; at most ``n_rows``."""
    if isinstance(chunks, numbers.Integral) and not isinstance(chunks, bool):
        if chunks < 1:
            raise ValueError(f"chunks must be a positive number of blocks or a fraction in (0, 1), "
                             f"got {chunks!r}")
        count = int(chunks)
    elif isinstance(chunks, numbers.Real) and not isinstance(chunks, bool) and 0 < chunks < 1:
        count = math.ceil(1.0 / float(chunks) - 1e-9)
    else:
        raise ValueError(f"chunks must be a positive number of blocks or a fraction in (0, 1), "
                         f"got {chunks!r}")
    return max(1, min(count, n_rows))


def _check_loop_args(tau, keep):
    if not (isinstance(tau, numbers.Integral) and not isinstance(tau, bool) and tau >= 1):
        raise ValueError(f"tau must be a positive integer, got {tau!r}")
    if keep not in KEEP:
        raise ValueError(f"keep must be one of {KEEP}, got {keep!r}")


def _bounds(bounds, n: int):
    """``(lower, upper)`` arrays from None, one ``(lo, hi)`` pair or ``n`` pairs (None: none)."""
    lower, upper = np.full(n, -np.inf), np.full(n, np.inf)
    if bounds is None:
        return lower, upper
    pairs = [bounds] if _is_pair(bounds) else bounds
    try:  # None is "no bound": -inf below, +inf above
        arr = np.array([[-np.inf if pair[0] is None else pair[0],
                         np.inf if pair[1] is None else pair[1]] for pair in pairs], dtype=float)
    except (TypeError, ValueError, IndexError) as exc:
        raise ValueError("bounds must be None, one (lower, upper) pair or one pair per column "
                         "(None for no bound)") from exc
    if arr.ndim != 2 or arr.shape[1] != 2 or arr.shape[0] not in (1, n):
        raise ValueError(f"bounds must be one (lower, upper) pair or {n} pairs, got shape {arr.shape}")
    if np.isnan(arr).any():
        row = int(np.flatnonzero(np.isnan(arr).any(axis=1))[0])
        raise ValueError(f"bounds of column {row} hold NaN: give a number, or None for no bound")
    lo, hi = arr[:, 0], arr[:, 1]
    if np.any(lo == np.inf) or np.any(hi == -np.inf):
        raise ValueError("a lower bound of +inf or an upper bound of -inf leaves no feasible point")
    bad = np.flatnonzero(lo > hi)
    if bad.size:
        raise ValueError(f"bounds of column {int(bad[0])}: lower {lo[bad[0]]} > upper {hi[bad[0]]}")
    lower[:], upper[:] = lo, hi
    return lower, upper


def _is_pair(bounds) -> bool:
    try:
        items = list(bounds)
    except TypeError:
        return False
    return len(items) == 2 and all(v is None or isinstance(v, numbers.Real) for v in items)


#: the parameters of linear program chunking: the one declaration behind solve_lp_chunked,
#: solve_lsvm_lpc and solve_svm(method="lpc")
LPC = Family(
    "lpc",
    Param("chunks", 8,
          "The number of blocks ℓ, or a fraction in (0, 1): blocks of about that share of the "
          "rows (``chunks=1/8`` is ℓ = 8).",
          kind="int or float", parse=number),
    Param("tau", 4,
          "Stop when :math:`c'x^j = c'x^{j-\\tau}` (then every row is checked).",
          kind="int"),
    Param("keep", "active",
          "Rows kept between chunk LPs: every active row (Remark 7, for degenerate LPs) or only"
          " the active rows with positive multipliers (Algorithm 3 as stated).",
          kind="{\"active\", \"positive\"}", choices=KEEP),
    Param("columns", None,
          "The Parquet columns of H (default: all but b's).",
          kind="list of str", flag=""),
)


@LPC.door(exclude=("aid", "r0", "fallback"))
def solve_lp_chunked(c, H, b=None, *, bounds=None, p, **options) -> AIDResult:
    r"""Solve :math:`\min_x\{c'x \mid Hx \ge b\}` (1.29) by linear program chunking (Algorithm 3).

    Parameters
    ----------
    c : array-like of shape (n,)
    H : ndarray, numpy.memmap, path to a ``.npy`` file, path to a Parquet file, or a RowSource
        The m x n constraint matrix, m >> n. A ``.npy`` path is memory-mapped; a Parquet file is
        read row group by row group (only the row groups of the block being read).
    b : array-like of shape (m,), path to a ``.npy`` file, or str
        The right-hand side; for a Parquet ``H``, the name of its column (default ``"b"``; the
        other columns, or ``columns``, are H).
    bounds : None, (lower, upper), or a sequence of n such pairs
        Bounds on x (None entries: no bound); always in every chunk LP. Default: x free.

    Returns
    -------
    AIDResult
        ``solution["x"]``, ``solution["rows"]`` (the rows kept at the end) and
        ``solution["multipliers"]`` (their duals); ``termination`` is ``certified_optimal`` only
        when x satisfies every row and bound within ``feasibility_tol`` and the chunk duals'
        bound is within ``tol`` of c'x; ``infeasible`` or ``unbounded`` for such LPs (proved by
        the solver on a chunk LP or the whole LP). When x violates a row, ``objective`` is
        ``inf`` and ``lower_bound`` is c'x^j. Also ``result.dimensions``: ``m`` rows, ``n``
        columns, ``blocks``, ``max_rows_in_lp``, ``full_checks``, ``solves``, ``warm_solves``.

    Examples
    --------
    >>> import numpy as np, aidopt
    >>> from aidopt.api.lpc import solve_lp_chunked
    >>> rng = np.random.default_rng(0)
    >>> H = rng.normal(size=(2000, 3)); b = H @ np.ones(3) - rng.random(2000)
    >>> res = solve_lp_chunked(H[:5].sum(axis=0), H, b, chunks=4, log=False)
    >>> res.certified
    True
    """
    config = RunConfig.from_kwargs(options, caller="solve_lp_chunked", solver="highs")
    _check_loop_args(p.tau, p.keep)
    c = np.asarray(c, dtype=float)
    if c.ndim != 1 or c.size == 0 or not np.isfinite(c).all():
        raise ValueError(f"c must be a non-empty 1-D array of finite numbers, got shape {c.shape}")
    _check_finite(c, "c")  # magnitudes the solvers read as infinite
    source = row_source(H, b, vector="b", columns=p.columns, matrix_name="H", vector_name="b")
    if source.n_cols != c.size:
        raise ValueError(f"H has {source.n_cols} columns but c has {c.size} entries")
    if source.n_rows == 0:
        raise ValueError("H has no rows")
    lower, upper = _bounds(bounds, c.size)
    _check_duals(config, p.keep)
    source.validate("H", "b")
    problem = GeneralLP(c, lower, upper)
    return solve_chunked(problem, source, config, chunks=n_blocks(p.chunks, source.n_rows), tau=int(p.tau),
                         keep=p.keep)


def _check_duals(config, keep):
    from aidopt import solvers
    from aidopt.solvers.registry import spec_of

    spec = spec_of(config.solver)
    if keep == "positive" and spec is not None and not spec.duals:
        raise solvers.SolverCapabilityError(
            f"keep='positive' needs the chunk LPs' multipliers, which {config.solver!r} does not "
            "return; use keep='active' or a solver with duals (highs)")


def _labels(source: RowSource) -> np.ndarray:
    """The two labels of a data source (sorted), read block by block."""
    seen = np.zeros(0)
    for _, _, v in source.scan():
        seen = np.union1d(seen, np.unique(v))
        if seen.size > 2:
            raise ValueError(f"y must have two classes, found at least {seen.size}: {seen[:5]}")
    if seen.size != 2:
        raise ValueError(f"y must have two classes, found {seen.size}")
    return seen


@LPC.door(exclude=("aid", "r0", "fallback"))
def solve_lsvm_lpc(X, y=None, C: float = 1.0, *, sample_weight=None, p, **options) -> AIDResult:
    r"""The 1-norm linear SVM (1.28) :math:`\min \|w\|_1 + C \sum_i s_i \max(0, 1 - y_i(w x_i + b))`
    by linear program chunking over the data rows, certified on the full data.

    Parameters
    ----------
    X : ndarray, numpy.memmap, scipy sparse matrix, path to a ``.npy`` or Parquet file, or a RowSource
        The n x m data (n points, m features), read one block at a time. A sparse X is kept as
        CSR: its blocks are CSR slices and the chunk LPs hold their stored entries only
        (:func:`aidopt.models.lpc.row_terms`); it is never densified.
    y : array-like of shape (n,), path to a ``.npy`` file, or str
        Two classes (any two labels; the sorted first is -1); for a Parquet ``X``, the name of its
        column (default ``"y"``).
    C : float, default 1.0
        Misclassification cost (nu in (1.28)).
    sample_weight : array-like of shape (n,), optional
        Non-negative row weights s_i (default 1).

    Returns
    -------
    AIDResult
        ``solution["w"]``, ``solution["b"]`` (``b = -gamma``), ``solution["alpha"]`` (the chunk
        LP's margin multipliers, 0 for rows outside the last chunk LP) and
        ``solution["classes"]``; ``objective`` is the full-data objective E (always feasible),
        ``termination == "certified_optimal"`` when the chunk multipliers' dual bound on the full
        data is within ``tol`` of E (docs/lpc.md, "The LSVM").
    """
    config = RunConfig.from_kwargs(options, caller="solve_lsvm_lpc", solver="highs")
    _check_loop_args(p.tau, p.keep)
    if not (isinstance(C, numbers.Real) and not isinstance(C, bool) and np.isfinite(C) and C > 0):
        raise ValueError(f"C must be a positive finite number, got {C!r}")
    names = None
    if y is not None and not isinstance(y, str) and not hasattr(y, "__fspath__") \
            and not isinstance(y, np.memmap):
        labels = np.asarray(y)
        if labels.ndim != 1:
            raise ValueError(f"y must be 1-D, got shape {labels.shape}")
        names = np.unique(labels)
        if names.size != 2:
            raise ValueError(f"y must have two classes, found {names.size}")
        y = np.where(labels == names[1], 1.0, -1.0)
    source = row_source(X, y, vector="y", columns=p.columns, matrix_name="X", vector_name="y")
    if source.n_rows < 2:
        raise ValueError("X needs at least two rows")
    weights = None
    if sample_weight is not None:
        weights = np.asarray(sample_weight, dtype=float)
        if weights.shape != (source.n_rows,):
            raise ValueError(f"sample_weight must have shape ({source.n_rows},), got {weights.shape}")
        if not np.isfinite(weights).all() or (weights < 0).any() or weights.sum() <= 0:
            raise ValueError("sample_weight must be finite, non-negative and not all zero")
    _check_duals(config, p.keep)
    source.validate("X", "y")
    classes = _labels(source) if names is None else np.array([-1.0, 1.0])
    problem = LSVMChunks(C, classes, weights, names=names)
    result = solve_chunked(problem, source, config, chunks=n_blocks(p.chunks, source.n_rows),
                           tau=int(p.tau), keep=p.keep)
    names = getattr(source, "columns", None) or [f"x{j}" for j in range(source.n_cols)]
    result.solution["feature_names"] = list(names)
    return result
