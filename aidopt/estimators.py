"""scikit-learn style estimators (validate in ``fit``, trailing-underscore attributes, return self).

scikit-learn is not a dependency. Without it the estimators keep its conventions
(``get_params`` / ``set_params``, ``fit`` / ``predict`` / ``score``, ``n_features_in_``) with
aidopt's own input checks. With it (1.6 or later) they are scikit-learn estimators: they inherit
its mixins in the order it requires (tags, ``score``; :class:`FSVClassifier` is also a
``SelectorMixin``), raise its ``NotFittedError`` and validate their inputs with
:func:`sklearn.utils.validation.validate_data`. ``tests/unit/test_sklearn_checks.py`` runs
scikit-learn's estimator checks on every one of them.

Validation is split in two. scikit-learn checks the *structure* of the data and records it:
conversion to float64 (object arrays of numbers are converted, complex data rejected), 2-d X,
at least two rows, column-vector y (a ``DataConversionWarning``), ``n_features_in_`` and
``feature_names_in_``, and, in ``predict``, the same features as in fit. The ``solve_*``
function then checks the *content* with aidopt's messages, exactly as when it is called directly:
NaN / inf and huge values, more rows than columns, the two classes, the sample weights.

scipy sparse X is accepted everywhere (``input_tags.sparse``) and densified: every model here is
a dense LP / QP / MIP. Linear decision functions are evaluated on sparse X without densifying it.
"""

from __future__ import annotations

import dataclasses
import inspect
import warnings

import numpy as np
from scipy.sparse import issparse

from aidopt.aggout import solve_aggregate_outputs
from aidopt.api import solve_fsv, solve_lad, solve_s3vm, solve_svm
from aidopt.data import _check_finite, _to_float_matrix
from aidopt.decomposition.run import RunConfig
from aidopt.gsvm import solve_gsvm
from aidopt.results import Termination

__all__ = [
    "LADRegressor",
    "SVMClassifier",
    "S3VMClassifier",
    "AggregateOutputClassifier",
    "GSVMClassifier",
    "FSVClassifier",
    "ConvergenceWarning",
    "NotFittedError",
]

try:  # with scikit-learn installed, be real scikit-learn estimators (tags, clone, pipelines)
    from sklearn.base import BaseEstimator as _SklearnBase
    from sklearn.base import ClassifierMixin as _ClassifierMixin
    from sklearn.base import RegressorMixin as _RegressorMixin
    from sklearn.exceptions import ConvergenceWarning as _ConvergenceWarningBase
    from sklearn.exceptions import NotFittedError as _NotFittedErrorBase
    from sklearn.feature_selection import SelectorMixin as _SelectorMixin
    from sklearn.utils.multiclass import check_classification_targets, type_of_target
    from sklearn.utils.validation import column_or_1d
except ImportError:  # pragma: no cover - scikit-learn is optional
    _SklearnBase = object
    _ConvergenceWarningBase = UserWarning

    class _NotFittedErrorBase(ValueError, AttributeError):
        """Stands in for ``sklearn.exceptions.NotFittedError`` (the same bases)."""

    class _ClassifierMixin:
        """Stands in for scikit-learn's ``ClassifierMixin``: mean accuracy as ``score``."""

        _estimator_type = "classifier"

        def score(self, X, y, sample_weight=None) -> float:
            """Mean accuracy of ``predict(X)`` against ``y``, weighted by ``sample_weight``."""
            return float(np.average(self.predict(X) == np.asarray(y), weights=sample_weight))

    class _RegressorMixin:
        """Stands in for scikit-learn's ``RegressorMixin``: R^2 as ``score``."""

        _estimator_type = "regressor"

        def score(self, X, y, sample_weight=None) -> float:
            """Coefficient of determination R^2 of ``predict(X)``, weighted by ``sample_weight``."""
            y = np.asarray(y, dtype=float)
            w = np.ones_like(y) if sample_weight is None else np.asarray(sample_weight, dtype=float)
            ss_res = np.sum(w * (y - self.predict(X)) ** 2)
            ss_tot = np.sum(w * (y - np.average(y, weights=w)) ** 2)
            return float(1.0 - ss_res / ss_tot) if ss_tot > 0 else 0.0

    class _SelectorMixin:
        """Stands in for scikit-learn's ``SelectorMixin`` (``get_support``, ``transform``)."""

        def get_support(self, indices: bool = False):
            """The selected features: a boolean mask, or their indices."""
            mask = self._get_support_mask()
            return np.flatnonzero(mask) if indices else mask

        def transform(self, X):
            """The selected columns of X."""
            return self._check_X(X)[:, self._get_support_mask()]

        def fit_transform(self, X, y=None, **fit_params):
            """``fit(X, y, **fit_params).transform(X)``."""
            return self.fit(X, y, **fit_params).transform(X)

try:
    from sklearn.utils.validation import validate_data
except ImportError:  # pragma: no cover - scikit-learn missing or older than 1.6
    validate_data = None


def _n_rows(a) -> int | None:
    """The number of rows of an array, sparse matrix, DataFrame or list; None when it has none."""
    shape = getattr(a, "shape", None)
    if shape is not None:
        return int(shape[0]) if len(shape) else None
    try:
        return len(a)
    except TypeError:
        return None


def _shape(a) -> tuple:
    """The shape of an array, sparse matrix, DataFrame or nested list; () when it has none."""
    try:
        return tuple(int(k) for k in (a.shape if hasattr(a, "shape") else np.shape(a)))
    except (TypeError, ValueError):  # ragged lists
        return ()


class ConvergenceWarning(_ConvergenceWarningBase):
    """A fit stopped at a limit before its certificate passed; the best solution is kept.

    A subclass of scikit-learn's ``ConvergenceWarning`` when scikit-learn is installed (so its
    warning filters apply), otherwise of ``UserWarning``.
    """


class NotFittedError(_NotFittedErrorBase, RuntimeError):
    """A method that needs the fitted model was called before ``fit``.

    scikit-learn's ``NotFittedError`` (a ``ValueError`` and ``AttributeError``) when scikit-learn
    is installed, and a ``RuntimeError``, which aidopt's estimators raised before.
    """


class _BaseEstimator(_SklearnBase):
    """``get_params`` / ``set_params`` from the ``__init__`` signature (sklearn style), and the
    validation, fitted-state and pickling logic every aidopt estimator shares.

    Each subclass declares its own parameters in ``_params`` (name -> default); the common
    options of every solve (:class:`aidopt.decomposition.RunConfig`: solver, aid, tol, max_iter,
    time_limit, r0, seed, ...) are added from that one definition, with the same defaults except
    ``log=False`` (estimators are quiet, as scikit-learn's are). ``__init__`` only stores them.

    Class attributes read by scikit-learn's tags and checks:

    ``_sparse_input``
        scipy sparse X is accepted (``input_tags.sparse``).
    ``_sklearn_checks_skipped``
        ``None``, or why scikit-learn's common checks cannot drive this estimator at all (its
        ``fit`` is not ``fit(X, y)`` with ordinary labels); then ``tags._skip_test`` is set.
    ``_transient``
        Fitted attributes holding local functions (kernels), left out of pickles and rebuilt by
        ``_restore`` on unpickling; ``_transient_solution`` the same for keys of
        ``result_.solution``.
    """

    _params: dict = {}
    _overrides = {"log": False}
    _sparse_input = False
    _sklearn_checks_skipped: str | None = None
    _transient: tuple = ()
    _transient_solution: tuple = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        params = [inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY, default=v)
                  for k, v in cls._params.items()]
        for f in dataclasses.fields(RunConfig):
            default = cls._overrides.get(f.name, None if f.name == "solver_options" else f.default)
            params.append(inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=default))
        names = [p.name for p in params]
        defaults = {p.name: p.default for p in params}

        def __init__(self, **kwargs):
            unknown = [k for k in kwargs if k not in defaults]
            if unknown:
                raise TypeError(f"{cls.__name__} got unexpected parameter(s) {unknown}; "
                                f"parameters are {names}")
            for name, default in defaults.items():
                setattr(self, name, kwargs.get(name, default))

        __init__.__signature__ = inspect.Signature(
            [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD), *params])
        __init__.__qualname__ = f"{cls.__name__}.__init__"
        __init__.__doc__ = f"Store the parameters ({', '.join(names)}); see the class docstring."
        cls.__init__ = __init__

    def _solve_kwargs(self) -> dict:
        """Every parameter, as keyword arguments of the ``solve_*`` function."""
        return self.get_params()

    def get_params(self, deep: bool = True) -> dict:
        """The parameters, by name (``deep`` is accepted for scikit-learn; there are no nested
        estimators)."""
        names = [p for p in inspect.signature(type(self).__init__).parameters if p != "self"]
        return {name: getattr(self, name) for name in names}

    def set_params(self, **params):
        """Set parameters by name; returns ``self``. An unknown name raises ``ValueError``."""
        valid = self.get_params()
        for key, val in params.items():
            if key not in valid:
                raise ValueError(f"invalid parameter {key!r} for {type(self).__name__}")
            setattr(self, key, val)
        return self

    if _SklearnBase is object:  # pragma: no cover - with scikit-learn, its repr (changed params)

        def __repr__(self) -> str:
            args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
            return f"{type(self).__name__}({args})"

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = self._sparse_input
        tags._skip_test = self._sklearn_checks_skipped is not None
        return tags

    def _sklearn_expected_failed_checks(self) -> dict:
        """``{check name: reason}``: scikit-learn's checks that fail by design with the current
        parameters, for ``parametrize_with_checks(..., expected_failed_checks=...)`` and
        ``check_estimator(..., expected_failed_checks=...)``. Empty by default."""
        return {}

    # ------------------------------------------------------------------ fitted state

    def __sklearn_is_fitted__(self) -> bool:
        """Fitted once ``fit`` has stored its result (what ``check_is_fitted`` asks)."""
        return hasattr(self, "result_")

    def _check_fitted(self) -> None:
        """Raise :class:`NotFittedError` (scikit-learn's wording) before ``fit``."""
        if not self.__sklearn_is_fitted__():
            raise NotFittedError(
                f"This {type(self).__name__} instance is not fitted yet. Call 'fit' with "
                "appropriate arguments before using this estimator.")

    def __getstate__(self):
        state = dict(super().__getstate__())
        for name in self._transient:
            state.pop(name, None)
        result = state.get("result_")
        if result is not None and any(k in result.solution for k in self._transient_solution):
            kept = {k: v for k, v in result.solution.items() if k not in self._transient_solution}
            state["result_"] = dataclasses.replace(result, solution=kept)
        return state

    def __setstate__(self, state):
        parent = getattr(super(), "__setstate__", None)
        if parent is None:  # pragma: no cover - object has no __setstate__ without scikit-learn
            self.__dict__.update(state)
        else:
            parent(state)
        if self._transient and self.__sklearn_is_fitted__():
            self._restore()

    def _restore(self) -> None:
        """Rebuild the ``_transient`` attributes after unpickling (classes that have some)."""

    # ------------------------------------------------------------------ validation

    def _validate_fit(self, X, y=None, *, target: str | None, min_features: int = 1):
        """Check the structure of the training data; return ``(X, y)`` for the solve function.

        With scikit-learn (>= 1.6): ``validate_data`` converts X to float64 (dense or sparse),
        rejects complex data, 1-d X and fewer than two rows or ``min_features`` columns, warns
        on a column-vector y, and records ``n_features_in_`` / ``feature_names_in_``. NaN / inf
        are left to the solve function (aidopt's messages name the first bad entry). A
        DataFrame is passed on as given, so that the result names its columns. Without
        scikit-learn, X and y are returned unchanged (the solve function validates them).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,), optional
        target : {"continuous", "binary", "labels"} or None
            Numeric y (regression); exactly two classes of any labels; semi-supervised labels
            (-1 / +1, 0 or NaN unlabelled: only made 1-d); or no y.
        min_features : int, default 1
            0 where a model without columns is valid (LAD with an intercept: the median).

        Returns
        -------
        X, y
            Validated; X is the DataFrame itself when a DataFrame was given.

        Raises
        ------
        TypeError
            A DataFrame with non-numeric columns (named), or X holding non-numbers.
        ValueError
            Complex data, wrong shapes, empty data, a target that is not what ``target`` says
            (for "binary": ``Only binary classification is supported`` for more classes).
        """
        if validate_data is None:
            return X, y
        frame = hasattr(X, "columns") and hasattr(X, "dtypes")
        if frame and len(X):
            _to_float_matrix(X.iloc[:1])  # aidopt's TypeError naming the non-numeric columns
        rows = (_n_rows(X), _n_rows(y)) if target is not None else (None, None)
        if None not in rows and rows[0] != rows[1]:  # aidopt's message, as the solve functions'
            raise ValueError(f"X has {rows[0]} rows but y has {rows[1]} entries")
        check = dict(accept_sparse=True, dtype=np.float64, ensure_all_finite=False,
                     ensure_min_samples=2, ensure_min_features=min_features)
        if target in (None, "labels"):
            Xv = validate_data(self, X, **check)
            if target == "labels":
                y = column_or_1d(y, warn=True)
        else:
            Xv, y = validate_data(self, X, y, y_numeric=target == "continuous", **check)
            if target == "binary":
                self._check_binary(y)
        return (X if frame else Xv), y

    def _check_binary(self, y) -> None:
        """Exactly two classes (any labels), with scikit-learn's messages for other targets."""
        check_classification_targets(y)  # "Unknown label type" for continuous targets
        kind = type_of_target(y, input_name="y")
        classes = np.unique(y)
        if kind != "binary" or classes.size != 2:
            shown = classes[:10].tolist()
            raise ValueError(
                ("" if kind == "binary" else
                 f"Only binary classification is supported. The type of the target is {kind}: ")
                + f"{type(self).__name__} needs exactly two classes, got {classes.size} "
                + ("class" if classes.size == 1 else "classes") + f": {shown}")

    def _check_X(self, X, *, dense: bool = True):
        """Validated float X for predict: fitted, 2-d, the features (count and names) of fit.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        dense : bool, default True
            Densify sparse X (kernels); False keeps it sparse (linear decision functions).

        Raises
        ------
        NotFittedError
            Before ``fit``.
        ValueError
            NaN / inf, 1-d X, another number of features (the message gives the expected
            shape) or, with scikit-learn, other feature names than in fit.
        """
        self._check_fitted()
        expected = f"expected (n, {self.n_features_in_}) as in fit"
        if validate_data is None:
            X, _ = _to_float_matrix(X)
            if X.ndim != 2 or X.shape[1] != self.n_features_in_:
                raise ValueError(f"X has shape {X.shape}, {expected}")
            _check_finite(X, "X")
            return X
        try:
            # csr / csc / coo: the formats whose NaN / inf scikit-learn can check (dok, lil, ...
            # are converted to csr)
            Xv = validate_data(self, X, reset=False, accept_sparse=("csr", "csc", "coo"),
                               dtype=np.float64)
        except ValueError as exc:
            shape = _shape(X)
            if len(shape) == 2 and shape[1] != self.n_features_in_:
                raise ValueError(f"{exc} X has shape {shape}, {expected}") from exc
            raise
        return Xv.toarray() if dense and issparse(Xv) else Xv

    # ------------------------------------------------------------------ results

    @staticmethod
    def _require_solution(result, what: str) -> None:
        """A fit that ended without any solution (a limit or Ctrl-C inside the first solve)
        cannot set the fitted attributes: say why instead of failing on a missing key."""
        if not result.solution or all(k in ("feature_names", "classes") for k in result.solution):
            raise RuntimeError(
                f"{what} fit found no solution: termination {result.termination.value!r}"
                + (f" ({result.message})" if result.message else "")
                + "; raise time_limit / max_iter or check the solver")

    def _record_features(self, X, n_features: int) -> None:
        """``n_features_in_`` and ``feature_names_in_`` when scikit-learn is not installed (with
        it, :meth:`_validate_fit` recorded them)."""
        if validate_data is not None:
            return
        self.n_features_in_ = n_features
        if hasattr(X, "columns"):
            self.feature_names_in_ = np.asarray([str(c) for c in X.columns], dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_

    def _after_fit(self, X, result, what: str, *, n_features: int,
                   accepted=(Termination.CERTIFIED_OPTIMAL,)) -> None:
        """Store ``result_`` and ``n_iter_`` (the number of iterations / linear programs in its
        history), the features seen in fit when scikit-learn did not record them, and warn when
        the fit ended in none of ``accepted``."""
        self._record_features(X, n_features)
        self.n_iter_ = len(result.history)
        self.result_ = result
        if result.termination not in accepted:
            warnings.warn(
                f"{what} fit stopped with termination {result.termination.value!r}, "
                f"relative gap {result.gap:.2e}: not certified optimal"
                + ("".join(f" (nor {t.value})" for t in accepted[1:])),
                ConvergenceWarning,
                stacklevel=3,
            )


class _BinaryClassifierMixin(_ClassifierMixin):
    """A classifier of two classes (any two labels; the sorted first is the negative class)."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags


class LADRegressor(_RegressorMixin, _BaseEstimator):
    """Least-absolute-deviation (median) regression, solved exactly and certified.

    Parameters
    ----------
    fit_intercept : bool, default False
        Append a column of ones; the same default as :func:`aidopt.solve_lad` and ``aidopt lad``.
    form : {"auto", "dual", "primal"}, default "auto"
    solver, aid, tol, feasibility_tol, max_iter, time_limit, r0, seed, write_models, log,
    solver_options, threads, tee, raise_on_failure, fallback
        The common options (:class:`aidopt.decomposition.RunConfig`), with ``log=False``.

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
    raise ``ValueError``. A zero sample weight removes a row, an integer weight k counts it k
    times (the weighted LP is the LP on repeated rows).

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

    _params = {"fit_intercept": False, "form": "auto"}
    _sparse_input = True

    def _sklearn_expected_failed_checks(self) -> dict:
        """The checks LAD fails by design (see :meth:`_BaseEstimator._sklearn_expected_failed_checks`)."""
        tall = ("the check's data has 15 rows and 30 columns: LAD needs more rows than columns "
                "(n <= m is rejected by design; its optimum would not be unique)")
        failures = {"check_sample_weight_equivalence_on_dense_data": tall,
                    "check_sample_weight_equivalence_on_sparse_data": tall}
        if self.fit_intercept:
            failures["check_estimators_empty_data_messages"] = (
                "with fit_intercept=True, X with no columns is the intercept-only (median) model: "
                "valid, not an error")
        return failures

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
        X, y = self._validate_fit(X, y, target="continuous", min_features=0 if self.fit_intercept else 1)
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


class SVMClassifier(_BinaryClassifierMixin, _BaseEstimator):
    """Soft-margin SVM classifier (2-norm, 1-norm, infinity-norm, RLP, or kernel), certified.

    Parameters
    ----------
    C : float, default 1.0
        Misclassification cost, as scikit-learn's ``C``.
    norm : {"l2", "l1", "linf", "none"}, default "l2"
    kernel : None, "linear", "rbf", "poly" or callable, default None
        None / "linear": the linear SVM with ``coef_``; otherwise kernel AID (``norm="l2"``).
    gamma, degree, coef0
        Kernel parameters as in scikit-learn's SVC.
    cache_size : float or None, default None
        Kernel AID: MB for the cached mean-kernel columns (None: a third of the machine's memory);
        see :func:`aidopt.solve_svm`.
    form : {"auto", "dual", "primal"}, default "auto"
    solver, aid, tol, feasibility_tol, max_iter, time_limit, r0, seed, write_models, log,
    solver_options, threads, tee, raise_on_failure, fallback
        The common options (:class:`aidopt.decomposition.RunConfig`), with ``log=False``; the
        solver defaults to "fm" (aidopt.fm) for the 2-norm QP, "smo" (aidopt.smo) for kernels,
        "highs" for the LPs.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    coef_ : ndarray of shape (1, n_features)
        Linear SVMs only.
    intercept_ : ndarray of shape (1,)
    support_ : ndarray of int
        Rows with a positive lifted dual ``alpha_i > 1e-8 C s_i`` (interior-point solvers return
        tiny positive values for non-support rows).
    support_vectors_, dual_coef_ : kernel SVMs: ``f(x) = sum dual_coef_ K(sv, x) + intercept_``.
    result_ : AIDResult
    n_iter_ : int
        AID iterations (1 for a direct solve).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        The column names, when X was a DataFrame with string column names.

    Examples
    --------
    >>> import numpy as np
    >>> from aidopt import SVMClassifier
    >>> rng = np.random.default_rng(0)
    >>> y = np.where(rng.random(1000) < 0.5, 1, -1)
    >>> X = rng.normal(size=(1000, 3)) + y[:, None]
    >>> clf = SVMClassifier(C=0.1).fit(X, y)
    >>> clf.result_.certified, clf.score(X, y) > 0.9
    (True, True)
    """

    _params = {"C": 1.0, "norm": "l2", "kernel": None, "gamma": "scale", "degree": 3, "coef0": 1.0,
               "cache_size": None, "form": "auto"}
    _sparse_input = True
    _transient = ("_kfun",)

    def _sklearn_expected_failed_checks(self) -> dict:
        """The checks a kernel SVM with ``gamma="scale"`` fails by design (see
        :meth:`_BaseEstimator._sklearn_expected_failed_checks`)."""
        if self._linear or not (isinstance(self.gamma, str) and self.gamma == "scale"):
            return {}
        reason = ("gamma='scale' is 1 / (m Var(X)) over the rows, unweighted (as scikit-learn's "
                  "SVC): repeating rows changes the kernel, weighting them does not")
        return {"check_sample_weight_equivalence_on_dense_data": reason,
                "check_sample_weight_equivalence_on_sparse_data": reason}

    @property
    def _linear(self) -> bool:
        return self.kernel is None or (isinstance(self.kernel, str) and self.kernel == "linear")

    def fit(self, X, y, sample_weight=None):
        """Fit by (certified) AID.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Two classes, any labels (the sorted first is the negative class).
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative row weights; an integer weight k counts the row k times.

        Returns
        -------
        self
        """
        X, y = self._validate_fit(X, y, target="binary")
        result = solve_svm(X, y, sample_weight=sample_weight, **self._solve_kwargs())
        self._require_solution(result, "SVM")
        sol = result.solution
        self.classes_ = np.asarray(sol["classes"])
        self.intercept_ = np.array([float(sol["b"])])
        alpha = sol["alpha"]
        if alpha is not None:
            s = np.ones(len(alpha)) if sample_weight is None else np.asarray(sample_weight, float)
            self.support_ = np.flatnonzero(alpha > 1e-8 * self.C * s.max())
        if self._linear:
            self.coef_ = np.asarray(sol["w"], dtype=float)[None, :]
        else:
            from aidopt.data import as_classification_data

            data = as_classification_data(X, y)
            self.support_vectors_ = data.X[self.support_]
            self.dual_coef_ = (alpha * data.y)[self.support_][None, :]
            self._kernel_spec = (self.kernel, sol["gamma"], self.degree, self.coef0)
            self._restore()
        self._after_fit(X, result, "SVM", n_features=len(sol["feature_names"]))
        return self

    def _restore(self) -> None:
        """The kernel function of the fit (a local function: not pickled)."""
        if not self._linear:
            from aidopt.models.kernel_svm import kernel_function

            self._kfun = kernel_function(*self._kernel_spec)

    def decision_function(self, X) -> np.ndarray:
        """Signed score ``w x + b`` (or ``sum_i alpha_i y_i K(x_i, x) + b``); > 0 means ``classes_[1]``."""
        X = self._check_X(X, dense=not self._linear)
        if self._linear:
            return X @ self.coef_[0] + self.intercept_[0]
        return self._kfun(X, self.support_vectors_) @ self.dual_coef_[0] + self.intercept_[0]

    def predict(self, X) -> np.ndarray:
        """Class labels (``classes_[1]`` where the decision function is > 0)."""
        f = self.decision_function(X)  # checks that the classifier is fitted
        return self.classes_[(f > 0).astype(int)]


class S3VMClassifier(_ClassifierMixin, _BaseEstimator):
    """Semi-supervised linear SVM (Bennett & Demiriz MIQP / MILP) solved by AID.

    ``fit(X, y)`` takes ``y`` = -1 / +1 on labeled rows and 0 or NaN on unlabeled rows (the
    labels of the unlabeled rows are inferred: ``transduction_``).

    Parameters
    ----------
    Ml, Mu : float, default 5 and 1
    balance : {"constraint", "cost", None}, default "constraint"
    norm : {"l2", "l1"}, default "l2"
        Regularizer (l2: an MIQP for SCIP or Gurobi; l1: a MILP, HiGHS too).
    big_M : float, optional
    solver, aid, tol, feasibility_tol, max_iter, time_limit, r0, seed, write_models, log,
    solver_options, threads, tee, raise_on_failure, fallback
        The common options (:class:`aidopt.decomposition.RunConfig`), with ``log=False``;
        ``max_iter=1`` / ``5`` are the paper's AID1 / AID5.

    Attributes
    ----------
    classes_ : ndarray ``[-1, 1]``
    coef_ : ndarray of shape (1, n_features)
    intercept_ : ndarray of shape (1,)
    transduction_ : ndarray of shape (n_samples,)
        Predicted label (-1 / +1) of every training row; ``transduction_[y == 0]`` are the
        labels given to the unlabeled rows.
    result_ : AIDResult
    n_iter_ : int
        AID iterations (1 for a direct solve).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        The column names, when X was a DataFrame with string column names.

    Notes
    -----
    Not a standard scikit-learn classifier: the labels are -1 / +1 and 0 / NaN marks the
    unlabeled rows, at least one of which is required. scikit-learn's common checks (which fit
    fully labeled data with arbitrary labels, 0 among them) are therefore skipped
    (``tags._skip_test``); ``tests/unit/test_sklearn_checks.py`` runs the checks that need no
    fit and tests the conventions (features, fitted state, pickling) on semi-supervised data.

    Examples
    --------
    >>> import numpy as np
    >>> from aidopt import S3VMClassifier
    >>> from aidopt.instances import s3vm_instance
    >>> X, y, truth = s3vm_instance(n=120, n_labeled=6, separation=4.0, seed=0)
    >>> clf = S3VMClassifier(norm="l1").fit(X, y)
    >>> float((clf.transduction_ == truth).mean()) > 0.9
    True
    """

    _params = {"Ml": 5.0, "Mu": 1.0, "balance": "constraint", "norm": "l2", "big_M": None}
    _sparse_input = True
    _sklearn_checks_skipped = (
        "transductive: y is -1 / +1 on labeled rows and 0 / NaN on unlabeled ones, at least one "
        "unlabeled; the common checks fit fully labeled y with arbitrary labels (0 among them)")

    def fit(self, X, y):
        """Fit on labeled and unlabeled rows together.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            -1 / +1 on labeled rows, 0 or NaN on unlabeled rows.

        Returns
        -------
        self
        """
        X, y = self._validate_fit(X, y, target="labels")
        result = solve_s3vm(X, y, **self._solve_kwargs())
        self._require_solution(result, "S3VM")
        sol = result.solution
        self.classes_ = np.array([-1, 1])
        self.coef_ = np.asarray(sol["w"], dtype=float)[None, :]
        self.intercept_ = np.array([float(sol["b"])])
        self.transduction_ = sol["transduction"].astype(int)
        self._after_fit(X, result, "S3VM", n_features=len(sol["feature_names"]),
                        accepted=(Termination.CERTIFIED_OPTIMAL, Termination.PROP5_OPTIMAL))
        return self

    def decision_function(self, X) -> np.ndarray:
        """``w x + b``; >= 0 means class +1."""
        X = self._check_X(X, dense=False)
        return X @ self.coef_[0] + self.intercept_[0]

    def predict(self, X) -> np.ndarray:
        """Labels -1 / +1."""
        return np.where(self.decision_function(X) >= 0, 1, -1)


class AggregateOutputClassifier(_ClassifierMixin, _BaseEstimator):
    """Linear classifier learned from class-1 counts per collection of rows (aggregate outputs).

    ``fit(X, collections, counts)`` takes the collection id of every row and the number of
    class-1 rows per collection (a mapping id -> count, or an array over the sorted ids);
    ``predict`` labels individual rows 0 / 1.

    Parameters
    ----------
    method : {"slaag", "miqp"}, default "slaag"
        Dutt & Kumar's SLAAG, or the Musicant et al. MIQP (AID or direct).
    C, D, E, norm, big_M
        As in :func:`aidopt.solve_aggregate_outputs`.
    solver, aid, tol, feasibility_tol, max_iter, time_limit, r0, seed, write_models, log,
    solver_options, threads, tee, raise_on_failure, fallback
        The common options (:class:`aidopt.decomposition.RunConfig`), with ``log=False``.

    Attributes
    ----------
    classes_ : ndarray ``[0, 1]``
    coef_ : ndarray of shape (1, n_features)
    intercept_ : ndarray of shape (1,)
        ``-b``: the decision function is ``X coef_ + intercept_ = w x - b``.
    labels_ : ndarray of shape (n_samples,)
        The label (0 / 1) given to every training row.
    result_ : AIDResult
    n_iter_ : int
        SLAAG programs, or AID iterations of the MIQP (1 for a direct solve).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        The column names, when X was a DataFrame with string column names.

    Notes
    -----
    Not a standard scikit-learn classifier: it is never given individual labels, so
    ``fit(X, collections, counts)`` replaces ``fit(X, y)`` and scikit-learn's common checks,
    which all fit ``(X, y)``, are skipped (``tags._skip_test``);
    ``tests/unit/test_sklearn_checks.py`` runs the checks that need no fit and tests the
    conventions (features, fitted state, pickling) with collections and counts. ``predict`` /
    ``score`` are those of a classifier (``score`` against individual labels).

    Examples
    --------
    >>> import numpy as np
    >>> from aidopt import AggregateOutputClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 2)); truth = (X[:, 0] > 0).astype(int)
    >>> collections = np.arange(200) // 5
    >>> counts = np.bincount(collections, weights=truth)
    >>> clf = AggregateOutputClassifier().fit(X, collections, counts)
    >>> clf.score(X, truth) > 0.9
    True
    """

    _params = {"method": "slaag", "C": None, "D": None, "E": 1.0, "norm": "l2", "big_M": None}
    _sparse_input = True
    _sklearn_checks_skipped = (
        "fit(X, collections, counts) learns from class-1 counts per collection, never from "
        "individual labels; the common checks call fit(X, y)")

    def fit(self, X, collections, counts):
        """Fit on rows, their collections and the collections' class-1 counts.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        collections : array-like of shape (n_samples,)
            The collection id of every row.
        counts : mapping or array-like
            Class-1 count per collection: ``{id: count}``, or an array over the sorted ids.

        Returns
        -------
        self
        """
        X, _ = self._validate_fit(X, target=None)
        result = solve_aggregate_outputs(X, collections, counts, **self._solve_kwargs())
        self._require_solution(result, "aggregate-output classifier")
        sol = result.solution
        self.classes_ = np.array([0, 1])
        self.coef_ = np.asarray(sol["w"], dtype=float)[None, :]
        self.intercept_ = np.array([-float(sol["b"])])
        self.labels_ = np.asarray(sol["labels"]).astype(int)
        self._after_fit(X, result, "aggregate-output classifier",
                        n_features=len(sol["feature_names"]),
                        accepted=(Termination.CERTIFIED_OPTIMAL, Termination.CLUSTER_OPTIMAL,
                                  Termination.NO_IMPROVEMENT, Termination.STATIONARY))
        return self

    def decision_function(self, X) -> np.ndarray:
        """``w x - b``; >= 0 means class 1."""
        X = self._check_X(X, dense=False)
        return X @ self.coef_[0] + self.intercept_[0]

    def predict(self, X) -> np.ndarray:
        """Labels 0 / 1."""
        return (self.decision_function(X) >= 0).astype(int)


class GSVMClassifier(_BinaryClassifierMixin, _BaseEstimator):
    """Generalized SVM (Mangasarian §2) with any kernel: the LPs (1.11) / (1.12) or the QP (1.10)
    on the precomputed kernel matrix; works in scikit-learn pipelines and ``GridSearchCV``.

    Parameters
    ----------
    kernel : str or callable, default "poly"
        A name of :data:`aidopt.gsvm.KERNELS` or any ``K(A, B)``.
    kernel_params : dict, optional
    formulation : {"lp_u", "lp_Ku", "qp"}, default "lp_u"
    nu : float, default 1
    solver, aid, tol, feasibility_tol, max_iter, time_limit, r0, seed, write_models, log,
    solver_options, threads, tee, raise_on_failure, fallback
        The common options (:class:`aidopt.decomposition.RunConfig`), with ``log=False``
        (``aid`` is ignored: GSVMs are solved directly).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The two labels of ``y`` (sorted): ``classes_[0]`` is the row label -1 of D, ``classes_[1]``
        the label +1 (``[-1, 1]`` for labels -1 / +1).
    dual_coef_ : ndarray of shape (n_samples,)
        ``u`` of (1.1): the decision function is ``K(x', A') D u - gamma``.
    intercept_ : ndarray of shape (1,)
        ``-gamma``.
    support_ : ndarray of int
        Training rows with ``|u_i| > 1e-8 max |u|``.
    result_ : AIDResult
    n_iter_ : int
        Always 1 (one direct solve).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        The column names, when X was a DataFrame with string column names.

    Examples
    --------
    >>> from aidopt import GSVMClassifier
    >>> from aidopt.instances import checkerboard
    >>> X, y = checkerboard(300, seed=0)
    >>> clf = GSVMClassifier(kernel="shifted_poly", nu=1e4, tol=1e-5).fit(X, y)
    >>> clf.score(X, y) > 0.95
    True
    """

    _params = {"kernel": "poly", "kernel_params": None, "formulation": "lp_u", "nu": 1.0}
    _sparse_input = True
    _transient = ("_kfun",)
    _transient_solution = ("kernel",)

    def fit(self, X, y):
        """Fit on rows X with two classes.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Two classes, any labels (the sorted first is -1 in D, usually labels -1 / +1).

        Returns
        -------
        self
        """
        X, y = self._validate_fit(X, y, target="binary")
        result = solve_gsvm(X, y, **self._solve_kwargs())
        self._require_solution(result, "GSVM")
        sol = result.solution
        self.classes_ = np.unique(np.asarray(y))
        self._A, self._w = sol["A"], np.asarray(sol["w"], dtype=float)
        self._kfun = sol["kernel"]
        self._kernel_spec = (self.kernel, dict(self.kernel_params or {}))
        self.dual_coef_ = np.asarray(sol["u"], dtype=float)
        self.intercept_ = np.array([-float(sol["gamma"])])
        scale = float(np.abs(self.dual_coef_).max(initial=0.0))
        self.support_ = np.flatnonzero(np.abs(self.dual_coef_) > 1e-8 * max(scale, 1e-300))
        self._after_fit(X, result, "GSVM", n_features=int(sol["A"].shape[1]))
        return self

    def _restore(self) -> None:
        """The kernel function of the fit (a local function: not pickled), also in ``result_``."""
        from aidopt.gsvm import kernel_function

        kernel, params = self._kernel_spec
        self._kfun = self.result_.solution["kernel"] = kernel_function(kernel, **params)

    def decision_function(self, X) -> np.ndarray:
        """``K(x', A') D u - gamma``; >= 0 means ``classes_[1]``."""
        from aidopt.gsvm import kernel_matrix

        X = self._check_X(X)
        return kernel_matrix(self._kfun, X, self._A) @ self._w + self.intercept_[0]

    def predict(self, X) -> np.ndarray:
        """Class labels (``classes_[1]`` where the decision function is >= 0)."""
        f = self.decision_function(X)  # checks that the classifier is fitted
        return self.classes_[(f >= 0).astype(int)]


class FSVClassifier(_BinaryClassifierMixin, _SelectorMixin, _BaseEstimator):
    """Sparse linear classifier and feature selector by FSV (successive linearization).

    ``fit`` solves the feature-selection concave problem (Bradley, Mangasarian & Musicant (1.21))
    to a stationary point; ``predict`` uses the plane ``x'w = gamma`` midway between the bounding
    planes; ``get_support`` / ``transform`` make it a feature selector in a scikit-learn
    ``Pipeline`` (scikit-learn's ``SelectorMixin``).

    Parameters
    ----------
    nu : float, default 1.0
    alpha : float, default 5.0
    start : {"random", "rlp"}, default "random"
    support_tol : float, default 1e-6
    aid : bool or None, default None
        AID for each linearized LP above 20,000 rows (None), always (True) or never (False).
    solver, tol, feasibility_tol, max_iter, time_limit, r0, seed, write_models, log,
    solver_options, threads, tee, raise_on_failure, fallback
        The common options (:class:`aidopt.decomposition.RunConfig`), with ``log=False``.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    coef_ : ndarray of shape (1, n_features)
    intercept_ : ndarray of shape (1,)
        ``-gamma``: the decision function is ``X @ coef_[0] + intercept_[0]``.
    support_ : ndarray of int
        Indices of the selected features.
    result_ : AIDResult
        Termination ``stationary`` when (1.23) held (a stationary point, not a proven optimum).
    n_iter_ : int
        The number of linear programs solved.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        The column names, when X was a DataFrame with string column names.

    Examples
    --------
    >>> import numpy as np
    >>> from aidopt import FSVClassifier
    >>> rng = np.random.default_rng(0)
    >>> y = np.where(rng.random(400) < 0.5, 1, -1)
    >>> X = rng.normal(size=(400, 6)); X[:, 0] += y
    >>> clf = FSVClassifier(nu=0.05).fit(X, y)
    >>> clf.get_support(indices=True).tolist(), clf.score(X, y) > 0.8
    ([0], True)
    """

    _params = {"nu": 1.0, "alpha": 5.0, "start": "random", "support_tol": 1e-6}
    _overrides = {"log": False, "aid": None}
    _sparse_input = True

    def fit(self, X, y, sample_weight=None):
        """Fit by FSV.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Two classes, any labels (the sorted first is the negative class).
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative row weights; an integer weight k counts the row k times.

        Returns
        -------
        self
        """
        X, y = self._validate_fit(X, y, target="binary")
        result = solve_fsv(X, y, sample_weight=sample_weight, **self._solve_kwargs())
        self._require_solution(result, "FSV")
        sol = result.solution
        self.classes_ = np.asarray(sol["classes"])
        self.coef_ = np.asarray(sol["w"], dtype=float)[None, :]
        self.intercept_ = np.array([float(sol["b"])])
        self.support_ = np.asarray(sol["support"], dtype=int)
        self._after_fit(X, result, "FSV", n_features=len(sol["feature_names"]),
                        accepted=(Termination.STATIONARY,))
        return self

    def decision_function(self, X) -> np.ndarray:
        """``x'w - gamma``; > 0 means ``classes_[1]``."""
        return self._check_X(X, dense=False) @ self.coef_[0] + self.intercept_[0]

    def predict(self, X) -> np.ndarray:
        """Class labels (``classes_[1]`` where the decision function is > 0)."""
        f = self.decision_function(X)  # checks that the classifier is fitted
        return self.classes_[(f > 0).astype(int)]

    def _get_support_mask(self) -> np.ndarray:
        """Boolean mask of the selected features (``get_support`` / ``transform`` use it)."""
        self._check_fitted()
        mask = np.zeros(self.n_features_in_, dtype=bool)
        mask[self.support_] = True
        return mask
