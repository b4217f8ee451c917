"""LAD regression and regression quantiles: :func:`solve_lad`, :class:`LADRegressor` and
:func:`bootstrap_coefficients` (results and inference: :mod:`aidopt.api.rq`).

The parameters of the family are declared once in :data:`LAD` (aidopt.api._params)."""

from __future__ import annotations

import numbers

import numpy as np

from aidopt.api import _shape, rq
from aidopt.api._params import ENGINE, Family, Param
from aidopt.api.estimator import _BaseEstimator, _RegressorMixin
from aidopt.data.validate import (
    as_regression_data,
    check_quantile_levels,
    resolve_engine,
)
from aidopt.decomposition.run import RunConfig, clocked

__all__ = ['solve_lad', 'bootstrap_coefficients', 'LADRegressor']


#: the aggregated (and direct) solver by default: aidopt's Frisch-Newton interior point
#: (:mod:`aidopt.numerics.fn`), measured 4-5x faster than HiGHS through Pyomo at half its memory
#: (docs/benchmarks.md, "LAD: the default solver"); HiGHS is its fallback and ``solver="highs"``
DEFAULT_SOLVER = "fn"


def quantile_arg(text: str) -> float | tuple[float, ...] | None:
    """CLI: ``0.25`` one level, ``0.1,0.5,0.9`` a sequence, ``none`` LAD (ranges are checked by
    :func:`solve_lad`)."""
    if text.strip().lower() == "none":
        return None
    levels = tuple(float(part) for part in text.split(","))
    return levels[0] if len(levels) == 1 else levels


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
    Param("quantile", None,
          "The level :math:`\\tau \\in (0, 1)` of a regression quantile: minimise "
          ":math:`\\sum_i s_i \\rho_{\\tau}(y_i - x_i\\beta)`, "
          ":math:`\\rho_{\\tau}(r) = r(\\tau - 1\\{r < 0\\})` (R quantreg's scale: "
          ":math:`\\tau = 0.5` gives half the LAD objective). A sequence of levels "
          "(``solve_lad`` and the CLI, ``0.1,0.5,0.9``; the estimator takes one) fits each, "
          "started from its neighbour's coefficients, and returns an "
          ":class:`~aidopt.api.rq.QuantileResults`. None: LAD, "
          ":math:`\\sum_i s_i |y_i - x_i\\beta|` (docs/quantiles.md).",
          kind="float, sequence of float or None", parse=quantile_arg,
          metavar="TAU[,TAU...]"),
    ENGINE,
)


@LAD.door()
@clocked  # the input's checks count against time_limit
def solve_lad(X, y, *, sample_weight=None, p, **options) -> rq.LADResult | rq.QuantileResults:
    r"""Least-absolute-deviation regression :math:`\min_\beta \sum_i s_i |y_i - x_i\beta|`, or the
    regression quantile :math:`\min_\beta \sum_i s_i \rho_\tau(y_i - x_i\beta)`, certified.

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
    LADResult or QuantileResults
        :class:`~aidopt.api.rq.LADResult` (an :class:`~aidopt.results.AIDResult`):
        ``solution["beta"]``; ``termination == "certified_optimal"`` only when the full-data
        certificate (``result.certificate``) passed; ``result.summary(se="nid")`` adds standard
        errors. For a sequence of levels, :class:`~aidopt.api.rq.QuantileResults`: one
        LADResult per level, ``coefficients()`` by level, ``plot()``.

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
    levels = check_quantile_levels(p.quantile)
    engine = resolve_engine(X, p.engine)
    in_memory = engine == "numpy"
    data = as_regression_data(X, y, sample_weight, fit_intercept=p.fit_intercept, engine=engine,
                              sparse=in_memory, wide=in_memory)
    note = ""
    if in_memory:  # AID, or the dual LP on sparse or wide X (docs/lad.md)
        data, config, note = _shape.prepare_lad(data, options, config)
    if isinstance(levels, tuple):
        results = rq.fit_sequence(data, levels, config, p.form)
        for result in results:
            _add_note(result, note)
        return results
    return _add_note(rq.fit(data, levels, config, p.form), note)


def _add_note(result, note: str):
    """``result`` with the method's choice (``note``) appended to its message."""
    if note:
        result.message = f"{result.message}; {note}" if result.message else note
    return result


def bootstrap_coefficients(solve, X, y, *, B: int = 50, seed: int = 0, sample_weight=None,
                           **kwargs) -> np.ndarray:
    r"""Coefficients of ``B`` bootstrap refits, for standard errors (R's ``summary(rq(...),
    se="boot")`` is the model).

    Each refit draws n rows with replacement; drawing row i :math:`k_i` times is the same problem
    as sample weight :math:`k_i s_i` (a weighted LAD / hinge loss is the loss on repeated rows),
    so every refit is one certified solve of the same function with those weights, rows drawn 0
    times left out. The standard errors are ``bootstrap_coefficients(...).std(axis=0, ddof=1)``.
    For :func:`solve_lad` the data are fitted once and every refit starts from that fit's final
    partition (:meth:`aidopt.api.rq.LADResult.bootstrap`, the same resamples); the linear
    SVM's refits start cold.

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
    if solve is solve_lad:  # warm: every refit from the full fit's partition
        fit = solve_lad(X, y, sample_weight=sample_weight, log=False, **kwargs)
        if not isinstance(fit, rq.LADResult):
            raise ValueError("bootstrap_coefficients takes one quantile level, not a sequence")
        if not fit.certified:
            raise RuntimeError(f"the fit ended {fit.termination.value}, not certified: raise "
                               "time_limit or check the data")
        return fit.bootstrap(B=int(B), seed=seed)
    rows = []
    for b, counts in enumerate(rq.resample_counts(n, int(B), seed)):
        result = solve(X, y, sample_weight=base * counts, log=False, **kwargs)
        if not result.certified:
            raise RuntimeError(f"bootstrap refit {b} ended {result.termination.value}, not "
                               "certified: raise time_limit or check the data")
        rows.append([value for _, value in result.coefficients()])
    return np.asarray(rows, dtype=float)


class LADRegressor(_RegressorMixin, _BaseEstimator):
    """Least-absolute-deviation (median) regression, or the regression quantile of one level
    ``quantile``, solved exactly and certified.

    Parameters
    ----------

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
    result_ : LADResult
        Full result, with ``termination``, ``certificate`` and ``history``;
        :meth:`summary` gives the coefficients with standard errors.
    n_iter_ : int
        AID iterations (1 for a direct solve).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        The column names, when X was a DataFrame with string column names.

    Notes
    -----
    Sparse X (CSR, CSC, COO) stays sparse, and X with as many columns as rows or more is
    accepted: both are solved as the dual LP on the full data (docs/lad.md, "Sparse and wide
    data"); with ``n <= m`` the optimal coefficients are not unique and any optimal one is
    returned, certified. X without columns raises ``ValueError`` (scikit-learn's convention; the
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
        tall = ("the check's data has 15 rows and 30 columns: with n <= m LAD's optimal "
                "coefficients are not unique (every optimal beta is an answer, each certified), "
                "so the weighted and the repeated-rows fits may predict differently")
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
        if isinstance(check_quantile_levels(self.quantile), tuple):
            raise ValueError("LADRegressor fits one quantile level: give a number in (0, 1) "
                             "(solve_lad(X, y, quantile=[...]) fits a sequence)")
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

    def summary(self, se: str | None = "nid", **options) -> str:
        """The fit's report with the coefficient table of R's ``summary(rq(...), se=...)``:
        estimate, standard error, t value, p-value and interval (:meth:`LADResult.inference
        <aidopt.api.rq.LADResult.inference>`: ``se`` "iid", "nid", "boot" or "rank"; ``alpha``,
        ``bandwidth``, ``B``, ``seed``); ``se=None``: the coefficients alone."""
        self._check_fitted()
        return self.result_.summary(se=se, **options)
