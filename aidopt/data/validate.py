"""Input validation and loading: every check happens here, before any model is built or solved."""

from __future__ import annotations

import functools
import numbers
import warnings
from functools import cached_property
from pathlib import Path

import numpy as np

from aidopt.data import chunked
from aidopt.data.chunked import ChunkedMatrix

__all__ = [
    "AggregateData",
    "ClassificationData",
    "ENGINES",
    "RegressionData",
    "SemiSupervisedData",
    "RankWarning",
    "as_aggregate_data",
    "as_classification_data",
    "MulticlassData",
    "as_multiclass_data",
    "as_regression_data",
    "as_semisupervised_data",
    "check_quantile",
    "check_quantiles",
    "check_quantile_levels",
    "load_table",
    "read_svmlight",
    "resolve_engine",
    "store_inputs",
]


_BLOCK = 1 << 16  # rows per block for O(nm) passes that would otherwise copy X

#: ``"numpy"``: X in memory; ``"dask"``: X a :class:`~aidopt.data.chunked.ChunkedMatrix`, streamed
ENGINES = ("numpy", "dask")


class RankWarning(UserWarning):
    """X has duplicate or all-zero columns: the optimal value is unique, the coefficients not."""


class RegressionData:
    """Validated regression data: float64 ``X`` (n, m), ``y`` (n,), sample weights ``s`` (n,).

    ``X`` is a numpy array, or with ``engine="dask"`` a :class:`~aidopt.data.chunked.ChunkedMatrix`
    (read chunk by chunk; ``y`` and ``s`` are numpy arrays in both cases). Build it with
    :func:`as_regression_data`; the constructor trusts its arguments.
    """

    def __init__(self, X, y, s, feature_names):
        self.X = X
        self.y = y
        self.s = s
        self.feature_names = list(feature_names)

    @property
    def n(self) -> int:
        return self.X.shape[0]

    @property
    def m(self) -> int:
        return self.X.shape[1]

    def counters(self) -> dict[str, int]:
        """Cumulative work on the data: ``{"data_passes": ...}`` (passes over X so far) for an
        out-of-core X, empty for X in memory."""
        return {"data_passes": self.X.passes} if isinstance(self.X, ChunkedMatrix) else {}

    def without_zero_weights(self):
        """``(data, keep)``: the rows with positive sample weight, and the boolean mask of them
        (``keep`` is ``None`` when every weight is positive and ``data`` is ``self``).

        A zero-weight row changes no objective, so the solve functions leave it out of every model
        (a cluster of total weight zero would have no centroid) and report its dual as 0.
        """
        keep = self.s > 0
        if keep.all():
            return self, None
        return self._subset(keep), keep

    def _subset(self, keep):
        return type(self)(_take_rows(self.X, keep), self.y[keep], self.s[keep], self.feature_names)

    @cached_property
    def column_scale(self) -> np.ndarray:
        """``sum_i s_i |x_ij|`` per column: the scale of the stationarity residual X'u.

        Computed in row blocks, so that no full-size copy of X is made (one pass over a
        :class:`~aidopt.data.chunked.ChunkedMatrix`).
        """
        if isinstance(self.X, ChunkedMatrix):
            parts = self.X.map_blocks(_abs_weighted_column_sum, self.s, kind="column_scale")
            return functools.reduce(np.add, parts)
        return _abs_weighted_column_sum(self.X, self.s)


def _abs_weighted_column_sum(block, s):
    """``sum_i s_i |x_ij|`` over the rows of ``block``, :data:`_BLOCK` rows at a time (``np.abs``
    of the whole block would copy it)."""
    total = np.zeros(block.shape[1])
    for start in range(0, block.shape[0], _BLOCK):
        stop = start + _BLOCK
        total += np.abs(block[start:stop]).T @ s[start:stop]
    return total


def _take_rows(X, keep):
    """The rows of boolean mask ``keep``: a copy in memory, or lazily for a ChunkedMatrix."""
    return X.subset(keep) if isinstance(X, ChunkedMatrix) else X[keep]


def _to_csr(X, name="X"):
    """scipy sparse ``X`` (any format) as a CSR matrix of float64 values with its duplicate entries
    summed, never densified: the given matrix itself when it already is one (it is not
    modified), else one conversion. Only the stored values are checked (finite, not huge)."""
    from scipy import sparse

    if X.dtype == object or X.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be numeric, got dtype {X.dtype}")
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-d, got {X.ndim} dimensions")
    canonical = X.format == "csr" and X.dtype == np.float64 and X.has_canonical_format
    X = sparse.csr_matrix(X, dtype=np.float64, copy=not canonical and X.format == "csr")
    X.sum_duplicates()
    for count, where, error in ((*_first_bad(~np.isfinite(X.data)), _nonfinite_error),
                                (*_first_bad(np.abs(X.data) >= HUGE), _huge_error)):
        if count:
            row = int(np.searchsorted(X.indptr, where, side="right")) - 1
            raise error(name, count, (row, int(X.indices[where])))
    return X


def _first_bad(mask):
    """``(count, first position)`` of the True entries of ``mask`` (position -1 when none)."""
    count = int(mask.sum())
    return count, int(np.argmax(mask)) if count else -1


def _is_sparse(X) -> bool:
    """Whether ``X`` is a scipy sparse matrix or array (without importing scipy for others)."""
    return hasattr(X, "tocsr") and hasattr(X, "nnz")


def _is_sparse_frame(X) -> bool:
    """Whether ``X`` is a pandas DataFrame with at least one sparse (``SparseDtype``) column."""
    if not (hasattr(X, "columns") and hasattr(X, "dtypes")):
        return False
    import pandas as pd

    return any(isinstance(dt, pd.SparseDtype) for dt in X.dtypes)


def _frame_to_coo(X, name="X"):
    """A DataFrame with sparse columns as ``(COO matrix, column names)``, never densified: a
    sparse column (fill value 0) gives its stored nonzeros; a dense column, or a sparse one
    with another fill value, its nonzero entries (n values of one column at a time).
    ``DataFrame.sparse.to_coo()`` does the same for all-sparse frames only."""
    import pandas as pd
    from scipy import sparse

    if len(X) == 0:
        raise ValueError(f"{name} has no rows (columns {[str(c) for c in X.columns]} only)")
    rows, cols, vals, bad = [], [], [], []
    for j, (column, dtype) in enumerate(X.dtypes.items()):
        kind = (dtype.subtype if isinstance(dtype, pd.SparseDtype) else dtype).kind
        if kind not in "biuf":
            bad.append(str(column))
            continue
        values = X.iloc[:, j].array
        if isinstance(dtype, pd.SparseDtype) and values.fill_value == 0:
            where, stored = values.sp_index.indices, np.asarray(values.sp_values, dtype=float)
        else:  # NaN (or another) fill value: the column's values, NaN caught by _to_csr
            stored = np.asarray(values, dtype=float)
            where = np.arange(stored.size)
        keep = stored != 0
        rows.append(np.asarray(where)[keep])
        vals.append(stored[keep])
        cols.append(np.full(int(keep.sum()), j, dtype=np.int64))
    if bad:
        raise TypeError(f"{name} has non-numeric columns {bad}: encode or drop them first")
    coo = sparse.coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                            shape=X.shape)
    return coo, [str(c) for c in X.columns]


def _to_float_matrix(X, name="X"):
    """Numeric 2-d float64 array from numpy, pandas, lists or scipy sparse; names of columns."""
    names = None
    if hasattr(X, "columns") and hasattr(X, "dtypes"):  # pandas DataFrame
        if len(X) == 0:
            raise ValueError(f"{name} has no rows (columns {[str(c) for c in X.columns]} only)")
        bad = [str(c) for c, dt in X.dtypes.items() if dt.kind not in "biuf"]
        if bad:
            raise TypeError(f"{name} has non-numeric columns {bad}: encode or drop them first")
        names = [str(c) for c in X.columns]
        X = X.to_numpy(dtype=float)
    elif hasattr(X, "toarray"):  # scipy sparse
        X = X.toarray()
    arr = np.asarray(X)
    if arr.dtype == object or arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be numeric, got dtype {arr.dtype}")
    return np.ascontiguousarray(arr, dtype=float), names


#: magnitudes from which the LP/QP solvers read a coefficient as infinite (HiGHS: 1e20)
HUGE = 1e20


def _check_finite(arr, name):
    """Raise ``ValueError`` for NaN / infinite values, then for values the solvers read as
    infinite (magnitude >= :data:`HUGE`), naming the count and the first index.

    The smallest and largest values decide first (NaN propagates to both, an infinity is one of
    them): two passes without temporaries. Masks are computed only to report what is wrong; on a
    10^6 x 100 X they took 6.7 s (``abs(X)`` is a copy of X), the two passes 0.2 s."""
    if isinstance(arr, ChunkedMatrix):
        return _check_finite_chunked(arr, name)
    if arr.size:
        lo, hi = float(np.min(arr)), float(np.max(arr))
        if np.isfinite(lo) and np.isfinite(hi) and max(-lo, hi) < HUGE:
            return
    bad = _nonfinite_mask(arr)
    if bad.any():
        raise _nonfinite_error(name, int(bad.sum()), np.argwhere(bad)[0])
    huge = _huge_mask(arr)
    if huge.any():
        raise _huge_error(name, int(huge.sum()), np.argwhere(huge)[0])


def _nonfinite_error(name, count, where) -> ValueError:
    return ValueError(
        f"{name} contains {count} NaN or infinite value(s) (first at index "
        f"{tuple(int(i) for i in where)}); remove or impute them before solving"
    )


def _huge_error(name, count, where) -> ValueError:
    return ValueError(
        f"{name} has {count} value(s) of magnitude >= {HUGE:g} (first at index "
        f"{tuple(int(i) for i in where)}), which the solvers read as infinite: scale the "
        "data (e.g. divide each column by its largest absolute value) before solving"
    )


def _nonfinite_mask(a) -> np.ndarray:
    """NaN or infinite entries of ``a`` (boolean masks only: no float copy of ``a``)."""
    mask = np.isfinite(a)
    return np.logical_not(mask, out=mask)


def _huge_mask(a) -> np.ndarray:
    """Entries of magnitude >= :data:`HUGE` (infinities included; boolean masks only)."""
    mask = a >= HUGE
    mask |= a <= -HUGE
    return mask


def _count_bad(block):
    """Per block: count and first flat index (-1 if none) of non-finite and of huge values."""
    out = []
    for find in (_nonfinite_mask, _huge_mask):
        mask = find(block).ravel()
        count = int(np.count_nonzero(mask))
        out += [count, int(np.argmax(mask)) if count else -1]
    return out


def _check_finite_chunked(X: ChunkedMatrix, name):
    """:func:`_check_finite` in one pass over the chunks of ``X``."""
    counts = np.array(X.map_blocks(_count_bad, kind="validate"), dtype=np.int64).reshape(-1, 4)
    m = X.shape[1]
    starts = np.concatenate([[0], np.cumsum(X.chunks)])
    for column, error in ((0, _nonfinite_error), (2, _huge_error)):
        total = int(counts[:, column].sum())
        if total:
            block = int(np.flatnonzero(counts[:, column])[0])
            row, col = divmod(int(counts[block, column + 1]), m)
            raise error(name, total, (starts[block] + row, col))


def resolve_engine(X, engine: str | None) -> str:
    """The data engine: ``engine`` itself, or for None ``"dask"`` when ``X`` is out of core (a
    dask array, a :class:`~aidopt.data.chunked.ChunkedMatrix` or a path to a data store) and
    ``"numpy"`` otherwise."""
    if engine is None:
        return "dask" if chunked.is_out_of_core(X) else "numpy"
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES} (or None: by the type of X), got {engine!r}")
    return engine


def _open(X, y, sample_weight, engine):
    """Open ``X`` for ``engine`` and read ``y`` / ``sample_weight`` given as names in X's store.

    Returns ``(X, y, sample_weight, names)``: X unchanged for in-memory input to the numpy engine
    (the path of every solve without Dask), a dask array or ChunkedMatrix for the dask engine
    (numpy input wrapped), a dask array that ``_to_float_matrix`` loads for a store opened with the
    numpy engine; ``names`` the store's column names or None.
    """
    named = {key: value for key, value in (("y", y), ("sample_weight", sample_weight))
             if isinstance(value, str)}
    if engine == "numpy" and not named and not chunked.is_out_of_core(X):
        return X, y, sample_weight, None
    names = None
    if chunked.is_path(X):
        store = chunked.open_store(X, vectors=list(named.values()))
        X, names = store.array, store.feature_names
        if "y" in named:
            y = store.vectors[y]
        if "sample_weight" in named:
            sample_weight = store.vectors[sample_weight]
    elif named:
        given = ", ".join(f"{key}={value!r}" for key, value in named.items())
        raise ValueError(f"{given} names a column, but X is not a Zarr group or Parquet store: "
                         "pass it as an array")
    if engine == "dask" and not (isinstance(X, ChunkedMatrix) or chunked.is_dask_array(X)):
        if not chunked.is_file_map(X):  # a memory map of a file is read from the file, not copied
            X, names = _to_float_matrix(X)
        X = chunked.to_dask(X)
    return X, y, sample_weight, names


def _rows(X, y, sample_weight, feature_names, *, allow_empty_X=False, engine: str | None = "numpy",
          sparse: bool = False):
    """Shared checks of ``X`` (2-d, numeric, finite), ``y`` (1-d, matching length) and weights.

    Returns float ``X`` (numpy; a ChunkedMatrix for ``engine="dask"``; with ``sparse``, a scipy
    sparse X as CSR, :func:`_to_csr`), raw 1-d ``y`` (numeric or not), float weights ``s`` and
    feature names.
    """
    engine = resolve_engine(X, engine)
    if engine == "dask" and (_is_sparse(X) or _is_sparse_frame(X)):
        raise ValueError(
            "engine='dask' streams dense row chunks and cannot take a sparse X (scipy sparse or "
            "a DataFrame with sparse columns): use engine='numpy' (the default), which keeps X "
            "sparse in memory as CSR, its nonzeros only (docs/dask.md)")
    X, y, sample_weight, names = _open(X, y, sample_weight, engine)
    kept = sparse and engine == "numpy" and (_is_sparse(X) or _is_sparse_frame(X))
    if kept:
        if _is_sparse_frame(X):
            X, names = _frame_to_coo(X)
        X = _to_csr(X)
    elif engine == "numpy":
        X, loaded_names = _to_float_matrix(X)
        names = names or loaded_names
    elif X.dtype.kind not in "biuf":
        raise TypeError(f"X must be numeric, got dtype {X.dtype}")
    if X.ndim == 1:
        raise ValueError("X must be 2-d (n rows, m columns); reshape a single feature to (-1, 1)")
    if X.ndim != 2:
        raise ValueError(f"X must be 2-d, got {X.ndim} dimensions")
    if engine == "dask" and not isinstance(X, ChunkedMatrix):
        X = ChunkedMatrix(X)
    if X.shape[0] == 0 or X.shape[1] == 0 and not allow_empty_X:
        raise ValueError(f"X is empty (shape {X.shape})")
    yv = np.asarray(y.to_numpy() if hasattr(y, "to_numpy") else y)
    if yv.ndim == 2 and 1 in yv.shape:
        yv = yv.reshape(-1)
    if yv.ndim != 1:
        raise ValueError(f"y must be 1-d, got shape {yv.shape}")
    if yv.shape[0] != X.shape[0]:
        raise ValueError(f"X has {X.shape[0]} rows but y has {yv.shape[0]} entries")
    if not (kept or isinstance(X, ChunkedMatrix)):  # out of core: one pass after all cheap checks
        _check_finite(X, "X")
    if sample_weight is None:
        s = np.ones(X.shape[0])
    else:
        s, _ = _to_float_matrix(np.asarray(sample_weight).reshape(-1), "sample_weight")
        if s.shape != yv.shape:
            raise ValueError(f"sample_weight has {s.shape[0]} entries, expected {yv.shape[0]}")
        _check_finite(s, "sample_weight")
        if (s < 0).any():
            raise ValueError(f"sample_weight has {int((s < 0).sum())} negative value(s)")
        if not (s > 0).any():
            raise ValueError("sample_weight is all zero")
    names = list(feature_names) if feature_names is not None else names
    if names is None:
        names = [f"x{j}" for j in range(X.shape[1])]
    if len(names) != X.shape[1]:
        raise ValueError(f"{len(names)} feature names for {X.shape[1]} columns")
    return X, yv, s, names


def as_regression_data(
    X, y, sample_weight=None, *, fit_intercept: bool = False, feature_names=None,
    engine: str = "numpy", sparse: bool = False, wide: bool = False,
) -> RegressionData:
    """Validate regression inputs and return :class:`RegressionData`.

    Parameters
    ----------
    X : array-like of shape (n, m), dask array, ChunkedMatrix or path
        numpy array, pandas DataFrame (numeric columns only), nested lists or scipy sparse; a
        dask array or :class:`~aidopt.data.chunked.ChunkedMatrix`; or a path to a Zarr store, a
        ``.npy`` file or Parquet file(s) (:func:`aidopt.data.chunked.open_store`).
    y : array-like of shape (n,) or str
        An array (a dask array is computed: n values fit in memory), or the name of a column /
        array in X's Zarr group or Parquet store.
    sample_weight : array-like of shape (n,) or str, optional
        Finite, non-negative, not all zero; a name as for ``y``.
    fit_intercept : bool
        Append a column of ones (named ``"intercept"``) as the last column.
    feature_names : list of str, optional
    engine : {"numpy", "dask"} or None, default "numpy"
        ``"numpy"`` holds X in memory (a dask array or store is loaded whole); ``"dask"`` keeps
        it out of core as a ChunkedMatrix and runs every check chunk by chunk (docs/dask.md);
        None chooses by X (:func:`resolve_engine`).
    sparse : bool, default False
        Keep a scipy sparse X (any format) or a DataFrame with sparse columns sparse, as CSR
        (:func:`_to_csr`; the intercept is a stored column of ones); otherwise it is densified.
    wide : bool, default False
        Accept ``n <= m`` (the caller has a method for it); otherwise refused.

    Raises
    ------
    TypeError
        Non-numeric data.
    ValueError
        Empty data, wrong shapes, NaN/inf, n <= m (unless ``wide``), invalid weights.

    Warns
    -----
    RankWarning
        Duplicate or all-zero columns (the optimum value is still unique, beta is not).
    """
    X, y, s, names = _rows(X, y, sample_weight, feature_names, allow_empty_X=fit_intercept,
                           engine=engine, sparse=sparse)
    yv, _ = _to_float_matrix(y, "y")
    _check_finite(yv, "y")
    if fit_intercept:
        if isinstance(X, ChunkedMatrix):
            X = X.with_ones_column()
        elif _is_sparse(X):
            from scipy import sparse as sp

            X = sp.hstack([X, np.ones((X.shape[0], 1))], format="csr")
        else:
            X = np.hstack([X, np.ones((X.shape[0], 1))])
        names = [*names, "intercept"]
    n, m = X.shape
    if n <= m and not wide:
        raise ValueError(
            f"need more rows than columns for regression: n={n} <= m={m}"
            + (" (including the intercept column)" if fit_intercept else "")
        )
    if isinstance(X, ChunkedMatrix):
        _check_finite(X, "X")
    _warn_rank(X, names)
    return RegressionData(X, yv, s, names)


def check_quantile(value, name: str = "quantile") -> float | None:
    r"""A quantile level :math:`\tau` of regression quantiles, checked: ``None`` (LAD) or a real
    number in the open interval (0, 1).

    Parameters
    ----------
    value : float or None
    name : str
        How the message names the value.

    Returns
    -------
    float or None

    Raises
    ------
    TypeError
        Not a real number (a string, a boolean, an array).
    ValueError
        Outside (0, 1), or NaN.
    """
    if value is None:
        return None
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number in (0, 1) or None, got {value!r}")
    tau = float(value)
    if not 0.0 < tau < 1.0:  # NaN fails too
        raise ValueError(f"{name} must be in the open interval (0, 1), got {value!r}"
                         + (": at 0 (1) every hyperplane below (above) all the points is optimal"
                            if tau in (0.0, 1.0) else ""))
    return tau


def check_quantiles(values, name: str = "quantile") -> tuple[float, ...]:
    r"""A sequence of quantile levels, each checked by :func:`check_quantile`, sorted; empty or
    repeated levels are refused.

    Returns
    -------
    tuple of float
        Increasing.

    Raises
    ------
    TypeError, ValueError
        As :func:`check_quantile` (naming the entry), an empty sequence or a repeated level.
    """
    if isinstance(values, str | bytes) or not hasattr(values, "__iter__"):
        raise TypeError(f"{name} must be a sequence of numbers in (0, 1), got {values!r}")
    taus = [check_quantile(v, f"{name}[{i}]") for i, v in enumerate(values)]
    if any(t is None for t in taus):
        raise TypeError(f"{name} must hold numbers in (0, 1), not None")
    if not taus:
        raise ValueError(f"{name} is an empty sequence: give at least one level in (0, 1)")
    ordered = tuple(sorted(taus))
    repeated = sorted({t for t in ordered if ordered.count(t) > 1})
    if repeated:
        raise ValueError(f"{name} repeats the level(s) {repeated}")
    return ordered


def check_quantile_levels(value, name: str = "quantile") -> float | tuple[float, ...] | None:
    """``None``, one level (:func:`check_quantile`) or a sequence of levels
    (:func:`check_quantiles`: a list, tuple or 1-d array), checked."""
    if value is None or isinstance(value, numbers.Real | str | bytes) or np.ndim(value) == 0:
        return check_quantile(value, name)
    return check_quantiles(value, name)


class ClassificationData(RegressionData):
    """Validated binary classification data: ``y`` in {-1, +1} (float), ``classes`` the two
    original labels (``classes[0]`` is -1, ``classes[1]`` is +1, as in scikit-learn)."""

    def __init__(self, X, y, s, feature_names, classes):
        super().__init__(X, y, s, feature_names)
        self.classes = np.asarray(classes)

    def _subset(self, keep):
        return type(self)(_take_rows(self.X, keep), self.y[keep], self.s[keep], self.feature_names,
                          self.classes)


def as_classification_data(X, y, sample_weight=None, *, feature_names=None,
                           engine: str = "numpy", sparse: bool = False) -> ClassificationData:
    """Validate binary classification inputs and return :class:`ClassificationData`.

    Parameters
    ----------
    X : array-like of shape (n, m), dask array, ChunkedMatrix or path
        As in :func:`as_regression_data`.
    y : array-like of shape (n,) or str
        Exactly two distinct labels (numbers or strings); the sorted first becomes -1. A str
        names a column / array of X's store.
    sample_weight : array-like of shape (n,) or str, optional
        Finite, non-negative, not all zero.
    feature_names : list of str, optional
    engine : {"numpy", "dask"} or None, default "numpy"
        As in :func:`as_regression_data`.
    sparse : bool, default False
        Keep a scipy sparse X (CSR, CSC, COO, ...) or a DataFrame with sparse (``SparseDtype``)
        columns sparse (the column names kept): ``X`` is then a CSR matrix of float64 values
        with duplicate entries summed, validated on its stored values without ever
        making the n x m array (the matrix given, when it already is such a CSR matrix; it is
        not modified). False densifies it.

    Raises
    ------
    TypeError
        Non-numeric X.
    ValueError
        Empty data, wrong shapes, NaN/inf in X, missing labels, not exactly two classes, a class
        whose rows all have zero weight, invalid weights.
    """
    X, y, s, names = _rows(X, y, sample_weight, feature_names, engine=engine, sparse=sparse)
    if y.dtype.kind == "f" and not np.isfinite(y).all():
        raise ValueError(f"y contains {int((~np.isfinite(y)).sum())} NaN or infinite label(s)")
    if y.dtype == object and any(v is None or (isinstance(v, float) and v != v) for v in y):
        raise ValueError("y contains missing labels (None or NaN)")
    classes, index = np.unique(y, return_inverse=True)
    if len(classes) != 2:
        shown = classes[:10].tolist()
        raise ValueError(
            f"y must have exactly two classes for a binary SVM, got {len(classes)}: {shown}"
            + ("" if len(classes) > 1 else "; both classes must be present")
        )
    labels = np.where(index == 1, 1.0, -1.0)
    for sign, cls in ((-1.0, classes[0]), (1.0, classes[1])):
        if not (s[labels == sign] > 0).any():
            raise ValueError(f"every row of class {cls!r} has zero sample weight")
    if isinstance(X, ChunkedMatrix):
        _check_finite(X, "X")
    return ClassificationData(X, labels, s, names, classes)


class MulticlassData(RegressionData):
    """Validated classification data of k >= 2 classes for a joint multi-class model (the
    Crammer-Singer SVM): ``y`` the class index of every row (int64, ``0..k-1``), ``classes``
    the k original labels, sorted (``classes[y]`` are the labels given)."""

    def __init__(self, X, y, s, feature_names, classes):
        super().__init__(X, y, s, feature_names)
        self.classes = np.asarray(classes)

    @property
    def k(self) -> int:
        return int(self.classes.size)

    def _subset(self, keep):
        return type(self)(_take_rows(self.X, keep), self.y[keep], self.s[keep], self.feature_names,
                          self.classes)


def as_multiclass_data(X, y, sample_weight=None, *, feature_names=None,
                       sparse: bool = False) -> MulticlassData:
    """Validate the inputs of a joint multi-class model and return :class:`MulticlassData`.

    Parameters
    ----------
    X : array-like or scipy sparse matrix of shape (n, m)
        As in :func:`as_classification_data` (in memory: ``engine="numpy"``).
    y : array-like of shape (n,)
        Two or more distinct labels (numbers or strings); ``y`` becomes their index in the sorted
        labels.
    sample_weight : array-like of shape (n,), optional
        Finite, non-negative; every class needs a row of positive weight.
    feature_names : list of str, optional
    sparse : bool, default False
        Keep a scipy sparse X sparse (CSR), as in :func:`as_classification_data`.

    Raises
    ------
    TypeError
        Non-numeric X.
    ValueError
        Empty data, wrong shapes, NaN/inf in X, missing labels, fewer than two classes, a class
        whose rows all have zero weight, invalid weights.
    """
    X, y, s, names = _rows(X, y, sample_weight, feature_names, engine="numpy", sparse=sparse)
    if y.dtype.kind == "f" and not np.isfinite(y).all():
        raise ValueError(f"y contains {int((~np.isfinite(y)).sum())} NaN or infinite label(s)")
    if y.dtype == object and any(v is None or (isinstance(v, float) and v != v) for v in y):
        raise ValueError("y contains missing labels (None or NaN)")
    classes, index = np.unique(y, return_inverse=True)
    if len(classes) < 2:
        raise ValueError(f"y must have at least two classes, got {len(classes)}: "
                         f"{classes[:10].tolist()}")
    index = index.astype(np.int64, copy=False).ravel()
    weight = np.bincount(index, weights=(s > 0).astype(float), minlength=len(classes))
    if (weight == 0).any():
        raise ValueError(f"every row of class {classes[int(np.argmin(weight))]!r} has zero "
                         "sample weight")
    return MulticlassData(X, index, s, names, classes)


class SemiSupervisedData(RegressionData):
    """Validated semi-supervised data: ``y`` is -1 / +1 on labeled rows and 0 on unlabeled
    ones; ``labeled`` the boolean mask; ``s`` all ones (no sample weights)."""

    def __init__(self, X, y, s, feature_names, labeled):
        super().__init__(X, y, s, feature_names)
        self.labeled = np.asarray(labeled, dtype=bool)

    @property
    def n_labeled(self) -> int:
        return int(self.labeled.sum())


def as_semisupervised_data(X, y, labeled=None, *, feature_names=None,
                           sparse: bool = False) -> SemiSupervisedData:
    """Validate semi-supervised inputs and return :class:`SemiSupervisedData`.

    Parameters
    ----------
    X : array-like or scipy sparse matrix of shape (n, m)
    y : array-like of shape (n,)
        -1 / +1 for labeled rows; 0 or NaN for unlabeled rows (when ``labeled`` is omitted).
    labeled : array-like of bool, shape (n,), optional
        Which rows are labeled; ``y`` of the other rows is ignored (it may hold the true labels,
        as in the benchmark sets).
    sparse : bool, default False
        Keep a sparse X (scipy, any format, or a DataFrame with sparse columns) sparse, as CSR,
        as in :func:`as_classification_data`.

    Raises
    ------
    ValueError
        Labels outside {-1, 0, +1} (or NaN), no labeled row of one class, no unlabeled row,
        wrong shapes, NaN/inf in X.
    """
    X, yv, s, names = _rows(X, y, None, feature_names, sparse=sparse)
    try:
        yv = yv.astype(float)
    except (TypeError, ValueError) as exc:
        raise ValueError("y must be numeric: -1 / +1 for labeled rows, 0 or NaN for unlabeled") from exc
    mask_given = labeled is not None
    if not mask_given:
        labeled = np.isfinite(yv) & (yv != 0)
    else:
        labeled = np.asarray(labeled)
        if labeled.shape != yv.shape or labeled.dtype != bool:
            raise ValueError(f"labeled must be a boolean array of {yv.shape[0]} entries")
    bad = labeled & ~np.isin(yv, (-1.0, 1.0))
    if not mask_given:
        bad |= np.isfinite(yv) & ~np.isin(yv, (-1.0, 0.0, 1.0))
        bad |= np.isinf(yv)
    if bad.any():
        shown = np.unique(yv[bad])[:10].tolist()
        raise ValueError(
            f"labels must be -1 or +1 (0 or NaN for unlabeled rows); got {int(bad.sum())} other "
            f"value(s): {shown}"
        )
    for sign in (-1.0, 1.0):
        if not (labeled & (yv == sign)).any():
            raise ValueError(f"no labeled row of class {int(sign):+d}: both classes need one")
    if labeled.all():
        raise ValueError("every row is labeled: there is nothing semi-supervised; use solve_svm")
    y_out = np.where(labeled, yv, 0.0)
    return SemiSupervisedData(X, y_out, s, names, labeled)


class AggregateData:
    """Validated aggregate-output data: rows ``X`` (n, m) in collections whose class-1 counts are
    known, but not the class of any row.

    Attributes
    ----------
    X : ndarray (n, m)
    collection : ndarray of int64 (n,)
        The collection of every row, numbered ``0..C-1`` in the order of ``ids``.
    ids : ndarray (C,)
        The user's collection id of each collection.
    counts : ndarray of int64 (C,)
        :math:`y_c`, the number of class-1 rows of collection c.
    sizes : ndarray of int64 (C,)
        :math:`|c|`, the number of rows of collection c.
    """

    def __init__(self, X, collection, ids, counts, feature_names):
        self.X = X
        self.collection = collection
        self.ids = ids
        self.counts = counts
        self.sizes = np.bincount(collection, minlength=len(ids)).astype(np.int64)
        self.s = np.ones(X.shape[0])
        self.feature_names = list(feature_names)

    @property
    def n(self) -> int:
        return self.X.shape[0]

    @property
    def m(self) -> int:
        return self.X.shape[1]

    @property
    def n_collections(self) -> int:
        return int(self.ids.size)

    def share(self) -> np.ndarray:
        """Per row, the class-1 share :math:`y_c / |c|` of its collection (the seed's
        :math:`a^i`; :math:`b^i = 1 - a^i`)."""
        return (self.counts / self.sizes)[self.collection]

    def count_accuracy(self, predicted) -> float:
        r"""Accuracy with respect to the aggregate information:
        :math:`1 - \sum_c |\hat y_c - y_c| / n`, where :math:`\hat y_c` counts the rows of c
        predicted in class 1 (``predicted``: 0/1 or boolean per row). It is an upper bound on the
        accuracy on the (unknown) individual labels."""
        predicted = np.asarray(predicted, dtype=float)
        counted = np.bincount(self.collection, weights=predicted, minlength=self.n_collections)
        return 1.0 - float(np.abs(counted - self.counts).sum()) / self.n


def as_aggregate_data(X, collections, counts, *, feature_names=None,
                      sparse: bool = False) -> AggregateData:
    """Validate aggregate-output inputs and return :class:`AggregateData`.

    Parameters
    ----------
    X : array-like or scipy sparse matrix of shape (n, m)
    collections : array-like of shape (n,)
        The collection id of every row (any hashable, sortable values: ints, strings).
    counts : mapping, pandas Series or array-like
        The number of class-1 rows per collection: a mapping ``{collection id: count}`` (a
        Series is read by its index, as a mapping), or an array indexed like the sorted distinct
        ids (``numpy.unique(collections)``).
    sparse : bool, default False
        Keep a sparse X (scipy, any format, or a DataFrame with sparse columns) sparse, as CSR,
        as in :func:`as_classification_data`.

    Raises
    ------
    ValueError
        NaN/inf in X, wrong shapes, a missing or NaN collection id, a count that is not an
        integer between 0 and the collection's size, a count for a collection without rows, a
        collection without a count.
    """
    n_ids = len(collections) if hasattr(collections, "__len__") else None
    n_rows = X.shape[0] if hasattr(X, "shape") else (len(X) if hasattr(X, "__len__") else None)
    if n_ids is not None and n_rows is not None and n_ids != n_rows:
        raise ValueError(f"collections has {n_ids} entries but X has {n_rows} rows: give one "
                         "collection id per row")
    X, ids_raw, _, names = _rows(X, collections, None, feature_names, sparse=sparse)
    if ids_raw.dtype.kind == "f" and not np.isfinite(ids_raw).all():
        raise ValueError("collections has NaN or infinite ids: every row needs one collection")
    if ids_raw.dtype == object and any(v is None for v in ids_raw):
        raise ValueError("collections has None ids: every row needs one collection")
    try:
        ids, collection = np.unique(ids_raw, return_inverse=True)
    except TypeError as exc:
        raise ValueError("collection ids must be of one sortable type") from exc
    collection = collection.astype(np.int64).reshape(-1)
    sizes = np.bincount(collection, minlength=ids.size)
    if hasattr(counts, "items") and (not hasattr(counts, "dtype") or hasattr(counts, "index")):
        # a mapping, or a pandas Series: indexed by collection id, not by position
        given = dict(counts.items())
        missing = [k for k in ids.tolist() if k not in given]
        if missing:
            raise ValueError(f"no count for {len(missing)} collection(s), e.g. {missing[:5]}")
        extra = set(given) - set(ids.tolist())
        if extra:
            shown = sorted(map(str, extra))[:5]
            raise ValueError(f"counts for {len(extra)} collection(s) without rows (empty "
                             f"collections), e.g. {shown}")
        raw = np.array([given[k] for k in ids.tolist()], dtype=object)
    else:
        raw = np.asarray(counts.to_numpy() if hasattr(counts, "to_numpy") else counts, dtype=object)
        if raw.ndim != 1 or raw.size != ids.size:
            raise ValueError(f"counts must have one entry per collection ({ids.size} distinct ids), "
                             f"got shape {raw.shape}; or pass a mapping id -> count")
    if any(isinstance(v, bool | np.bool_ | str | bytes) for v in raw.tolist()):
        raise ValueError("counts must be numbers (not booleans or strings)")
    try:
        values = raw.astype(float)
    except (TypeError, ValueError) as exc:
        raise ValueError("counts must be numbers") from exc
    bad = ~np.isfinite(values) | (values != np.round(values))
    if bad.any():
        raise ValueError(f"counts must be whole numbers; got {values[bad][:5].tolist()}")
    over = (values < 0) | (values > sizes)
    if over.any():
        k = int(np.flatnonzero(over)[0])
        raise ValueError(f"{int(over.sum())} count(s) outside 0..collection size, e.g. collection "
                         f"{ids.tolist()[k]!r}: count {int(values[k])} for {int(sizes[k])} row(s)")
    return AggregateData(X, collection, ids, values.astype(np.int64), names)


def _warn_rank(X, names):
    """Warn about all-zero and duplicate columns (cheap O(nm) checks, not a full rank test)."""
    v = np.random.default_rng(12345).standard_normal(X.shape[0])
    if isinstance(X, ChunkedMatrix):  # one pass for both
        parts = X.map_blocks(_nonzero_and_projection, v, kind="rank check")
        nonzero = np.logical_or.reduce([p[0] for p in parts])
        proj = functools.reduce(np.add, [p[1] for p in parts])
    elif _is_sparse(X):
        nonzero = np.asarray(abs(X).sum(axis=0)).ravel() > 0
        proj = np.asarray(v @ X).ravel()
    else:
        nonzero, proj = X.any(axis=0), v @ X
    zero = np.flatnonzero(~nonzero)
    problems = [f"all-zero column(s) {[names[j] for j in zero]}"] if zero.size else []
    order = np.argsort(proj, kind="stable")
    dups = []
    for a, b in zip(order[:-1], order[1:], strict=True):
        if proj[a] == proj[b] and a not in zero and _columns_equal(X, a, b):
            dups.append((names[min(a, b)], names[max(a, b)]))
    if dups:
        problems.append(f"duplicate column pair(s) {dups}")
    if problems:
        warnings.warn(
            "X is rank deficient: " + "; ".join(problems)
            + ". The optimal objective is still unique, the coefficients are not.",
            RankWarning,
            stacklevel=user_stacklevel(),
        )


def _nonzero_and_projection(block, v):
    return block.any(axis=0), v @ block


def _equal_columns(block, a, b):
    return np.array_equal(block[:, a], block[:, b])


def _columns_equal(X, a, b) -> bool:
    if isinstance(X, ChunkedMatrix):
        return all(X.map_blocks(functools.partial(_equal_columns, a=a, b=b), kind="rank check"))
    if _is_sparse(X):
        return (X[:, [a]] != X[:, [b]]).nnz == 0
    return np.array_equal(X[:, a], X[:, b])


def user_stacklevel() -> int:
    """``stacklevel`` for ``warnings.warn`` that points at the first frame outside aidopt."""
    import inspect

    level = 1
    frame = inspect.currentframe().f_back  # the caller of warnings.warn
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module != "aidopt" and not module.startswith("aidopt."):
            return level
        frame = frame.f_back
        level += 1
    return level


def read_svmlight(path, *, sparse: bool = False, query_id: bool = False):
    """Read an svmlight/LIBSVM file (``label [qid:q] idx:value ...``, 1-based indices) to
    ``(X, y)``, or with ``query_id`` to ``(X, y, qid)``.

    ``X`` is a dense array, or with ``sparse`` a scipy CSR matrix of float64 values (an index
    given twice in a line: its values are summed) that holds only the stored entries. ``qid``
    (with ``query_id``) holds every row's ``qid:`` value (int64); a row without one is refused
    then, and ignored otherwise."""
    labels, rows, cols, vals, qids = [], [], [], [], []
    with open(path) as fh:
        for number, line in enumerate(fh, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split()
            r = len(labels)
            labels.append(float(parts[0]))
            for tok in parts[1:]:
                if tok.startswith("qid:"):
                    if query_id and len(qids) == r:
                        qids.append(int(tok[4:]))
                    continue
                idx, val = tok.split(":", 1)
                rows.append(r)
                cols.append(int(idx) - 1)
                vals.append(float(val))
            if query_id and len(qids) == r:
                raise ValueError(f"{path}, line {number}: no qid: every row needs its query id")
    if min(cols, default=0) < 0:
        raise ValueError(f"{path}: svmlight feature indices start at 1")
    shape = (len(labels), max(cols, default=-1) + 1)
    if sparse:
        from scipy.sparse import csr_matrix

        X = csr_matrix((np.asarray(vals, dtype=float), (rows, cols)), shape=shape)
        X.sum_duplicates()
    else:
        X = np.zeros(shape)
        X[rows, cols] = vals
    if query_id:
        return X, np.asarray(labels), np.asarray(qids, dtype=np.int64)
    return X, np.asarray(labels)


def load_table(path, target: str | None = None, *, sparse: bool = False):
    """Load ``(X, y, feature_names)`` from CSV, Parquet, ``.npz`` or svmlight files.

    For CSV/Parquet, ``target`` names the response column (default: the last column); every other
    column is a feature. ``.npz`` files must hold arrays ``X`` and ``y``. Files ending in
    ``.svm``, ``.svmlight``, ``.libsvm`` or ``.txt`` are read as svmlight; with ``sparse`` their
    X is a scipy CSR matrix (:func:`read_svmlight`), never the n x m array.
    """
    import pandas as pd

    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"data file not found: {path}")
    suffix = path.suffix.lower()
    if suffix == ".npz":
        with np.load(path) as z:
            if "X" not in z or "y" not in z:
                raise ValueError(f"{path}: an .npz file must contain arrays 'X' and 'y'")
            X, y = z["X"], z["y"]
        return X, y, None
    if suffix in (".svm", ".svmlight", ".libsvm", ".txt"):
        X, y = read_svmlight(path, sparse=sparse)
        return X, y, None
    if path.stat().st_size == 0:
        raise ValueError(f"data file {path} is empty")
    if suffix in (".csv", ".tsv"):
        try:
            frame = pd.read_csv(path, sep="\t" if suffix == ".tsv" else ",", na_values=["?"])
        except pd.errors.EmptyDataError as exc:
            raise ValueError(f"data file {path} has no columns") from exc
    elif suffix in (".parquet", ".pq"):
        try:
            frame = pd.read_parquet(path)
        except ImportError as exc:
            raise ImportError("reading Parquet needs pyarrow: pip install 'aidopt[parquet]' "
                              "(or pip install pyarrow)") from exc
    else:
        raise ValueError(f"unsupported data file type {suffix!r}: use csv, parquet, npz or svmlight")
    target = target if target is not None else frame.columns[-1]
    if target not in frame.columns:
        raise ValueError(f"target column {target!r} not in {list(frame.columns)}")
    y = frame[target]
    X = frame.drop(columns=[target])
    return X, y.to_numpy(), [str(c) for c in X.columns]


def store_inputs(path, target: str | None = None):
    """``(X, y)`` for :func:`aidopt.solve_lad` / :func:`aidopt.solve_svm` with
    ``engine="dask"`` from a data store (the command line's ``--engine dask``).

    Parameters
    ----------
    path : str or os.PathLike
        A Parquet file or directory, a Zarr store or a ``.npy`` matrix
        (:func:`aidopt.data.chunked.open_store`).
    target : str, optional
        A ``.npy`` file with y (read into memory); else the name of y in the store: a Parquet
        column (default: the last column) or an array of a Zarr group (default ``"y"``). A
        ``.npy`` matrix or a Zarr array needs the ``.npy`` file.

    Returns
    -------
    (str, str or ndarray)
        The path and y (a name in the store, or the array).
    """
    kind = chunked.store_kind(path)
    if target is not None and str(target).lower().endswith(".npy"):
        if not Path(target).exists():
            raise FileNotFoundError(f"target file not found: {target}")
        return str(path), np.load(target)
    if kind == "parquet":
        return str(path), target if target is not None else chunked.parquet_columns(path)[-1]
    if kind == "zarr" and target is None:
        target = "y"
    if kind == "npy":
        raise ValueError(f"{path} is a .npy matrix: give y as a .npy file (--target y.npy)")
    return str(path), target
