"""LAD regression: :func:`solve_lad`, :class:`LADRegressor` and :func:`bootstrap_coefficients`.

The parameters of the family are declared once in :data:`LAD` (aidopt.api._params)."""

from __future__ import annotations

import numbers

import numpy as np

from aidopt.api import _front
from aidopt.api._params import ENGINE, Family, Param
from aidopt.api.estimator import _BaseEstimator, _RegressorMixin
from aidopt.data.validate import (
    as_regression_data,
    resolve_engine,
)
from aidopt.decomposition.plugins.lad import LADProblem
from aidopt.decomposition.run import RunConfig, clocked
from aidopt.results import AIDResult

__all__ = ['solve_lad', 'bootstrap_coefficients', 'LADRegressor']


#: the aggregated (and direct) solver by default: aidopt's Frisch-Newton interior point
#: (:mod:`aidopt.numerics.fn`), measured 4-5x faster than HiGHS through Pyomo at half its memory
#: (docs/benchmarks.md, "LAD: the default solver"); HiGHS is its fallback and ``solver="highs"``
DEFAULT_SOLVER = "fn"

#: the parameters of LAD regression: the one declaration behind solve_lad, LADRegressor and
#: ``aidopt lad``
LAD = Family(
    "lad",
    Param("fit_intercept", False,
          "Append a column of ones (its coefficient is the last entry of ``beta``). "
          "``solve_lad`` takes X as the paper's design matrix, used as given (default False); "
          "``LADRegressor`` and ``aidopt lad`` fit an intercept by default (True), as "
          "scikit-learn's regressors and R's ``rq(y ~ x)`` do.",
          model_default=True,
          flag_help="Fit no intercept: use the data's columns as the design matrix, as given."),
    Param("form", "auto", "LP form of the aggregated problems (see "
          ":class:`aidopt.decomposition.LADProblem`).", choices=("auto", "dual", "primal")),
    ENGINE,
)


@LAD.door()
@clocked  # the input's checks count against time_limit
def solve_lad(X, y, *, sample_weight=None, p, **options) -> AIDResult:
    r"""Least-absolute-deviation regression :math:`\min_\beta \sum_i s_i |y_i - x_i\beta|`, certified.

    Parameters
    ----------
    X : array-like of shape (n, m), dask array, ChunkedMatrix or path
        Used as given: no intercept column is added unless ``fit_intercept=True``. Out of core
        (``engine="dask"``): a dask array, a :class:`aidopt.data.chunked.ChunkedMatrix`, or a path to
        a Zarr store, a ``.npy`` file or Parquet file(s) (docs/dask.md).
    y : array-like of shape (n,) or str
        A str names y in X's store (a Parquet column, an array of a Zarr group).
    sample_weight : array-like of shape (n,) or str, optional
        Non-negative row weights :math:`s_i` (default 1); a str as for ``y``.

    Returns
    -------
    AIDResult
        ``solution["beta"]``; ``termination == "certified_optimal"`` only when the full-data
        certificate (``result.certificate``) passed.

    Examples
    --------
    >>> import numpy as np, aidopt
    >>> rng = np.random.default_rng(0)
    >>> X = np.column_stack([np.ones(2000), rng.normal(size=(2000, 3))])
    >>> y = X @ [1.0, 2.0, -1.0, 0.5] + rng.laplace(size=2000)
    >>> res = aidopt.solve_lad(X, y, log=False)
    >>> res.termination
    <Termination.CERTIFIED_OPTIMAL: 'certified_optimal'>
    """
    config = RunConfig.from_kwargs(options, caller="solve_lad", solver=DEFAULT_SOLVER)
    data = as_regression_data(X, y, sample_weight, fit_intercept=p.fit_intercept,
                              engine=resolve_engine(X, p.engine))
    problem = LADProblem(form=p.form)
    return _front.decorate(_front.run_rows(problem, data, config), data)


def bootstrap_coefficients(solve, X, y, *, B: int = 50, seed: int = 0, sample_weight=None,
                           **kwargs) -> np.ndarray:
    r"""Coefficients of ``B`` bootstrap refits, for standard errors (R's ``summary(rq(...),
    se="boot")`` is the model).

    Each refit draws n rows with replacement; drawing row i :math:`k_i` times is the same problem
    as sample weight :math:`k_i s_i` (a weighted LAD / hinge loss is the loss on repeated rows),
    so every refit is one certified solve of the same function with those weights, rows drawn 0
    times left out. The standard errors are ``bootstrap_coefficients(...).std(axis=0, ddof=1)``.

    Parameters
    ----------
    solve : callable
        :func:`solve_lad` or :func:`solve_svm` (linear), called as
        ``solve(X, y, sample_weight=..., log=False, **kwargs)``.
    X, y, sample_weight
        The data of the original fit.
    B : int, default 50
        Number of resamples (at least 2).
    seed : int, default 0
        Seed of the draws.
    **kwargs
        Passed to every refit (``C=``, ``fit_intercept=``, ``solver=``, ...).

    Returns
    -------
    ndarray of shape (B, p)
        One row per refit, in the order of :meth:`AIDResult.coefficients` (``beta``; or ``w``
        then ``b``). A refit that is not certified raises ``RuntimeError`` (its coefficients
        would not be the resample's estimate).
    """
    if isinstance(B, bool) or not isinstance(B, numbers.Integral) or B < 2:
        raise ValueError(f"B must be an integer >= 2, got {B!r}")
    n = len(y)
    base = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    if base.shape != (n,):
        raise ValueError(f"sample_weight must have shape ({n},), got {base.shape}")
    rng = np.random.default_rng(seed)
    rows = []
    for b in range(int(B)):
        counts = np.bincount(rng.integers(0, n, size=n), minlength=n).astype(float)
        result = solve(X, y, sample_weight=base * counts, log=False, **kwargs)
        if not result.certified:
            raise RuntimeError(f"bootstrap refit {b} ended {result.termination.value}, not "
                               "certified: raise time_limit or check the data")
        rows.append([value for _, value in result.coefficients()])
    return np.asarray(rows, dtype=float)


class LADRegressor(_RegressorMixin, _BaseEstimator):
    """Least-absolute-deviation (median) regression, solved exactly and certified.

    Parameters
    ----------

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
    result_ : AIDResult
        Full result, with ``termination``, ``certificate`` and ``history``.
    n_iter_ : int
        AID iterations (1 for a direct solve).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        The column names, when X was a DataFrame with string column names.

    Notes
    -----
    LAD needs more rows than columns (``n > m``, the intercept column included): smaller data
    raise ``ValueError``, as does X without columns (scikit-learn's convention; the
    intercept-only model, the median, is ``solve_lad(np.ones((n, 1)), y)``). A zero sample
    weight removes a row, an integer weight k counts it k times (the weighted LP is the LP on
    repeated rows).

    Examples
    --------
    >>> import numpy as np
    >>> from aidopt import LADRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 2)); y = 1 + X @ [2.0, -1.0] + rng.laplace(size=500)
    >>> est = LADRegressor(fit_intercept=True).fit(X, y)
    >>> est.result_.certified
    True
    """

    _family = LAD
    _sparse_input = True

    def _sklearn_expected_failed_checks(self) -> dict:
        """The checks LAD fails by design (see :meth:`_BaseEstimator._sklearn_expected_failed_checks`)."""
        tall = ("the check's data has 15 rows and 30 columns: LAD needs more rows than columns "
                "(n <= m is rejected by design; its optimum would not be unique)")
        return {"check_sample_weight_equivalence_on_dense_data": tall,
                "check_sample_weight_equivalence_on_sparse_data": tall}

    def fit(self, X, y, sample_weight=None):
        """Fit by (certified) LAD.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative row weights, not all zero.

        Returns
        -------
        self
        """
        X, y = self._validate_fit(X, y, target="continuous")
        result = solve_lad(X, y, sample_weight=sample_weight, **self._solve_kwargs())
        self._require_solution(result, "LAD")
        beta = result.solution["beta"]
        n_features = beta.size - int(self.fit_intercept)
        self.coef_ = beta[:n_features].copy()
        self.intercept_ = float(beta[-1]) if self.fit_intercept else 0.0
        self._after_fit(X, result, "LAD", n_features=n_features)
        return self

    def predict(self, X) -> np.ndarray:
        """Predicted values ``X coef_ + intercept_``."""
        return self._check_X(X, dense=False) @ self.coef_ + self.intercept_
