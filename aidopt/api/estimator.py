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

scipy sparse X is accepted everywhere (``input_tags.sparse``).
:class:`~aidopt.api.svm.SVMClassifier` passes it through as it is: the linear SVMs keep it
sparse where their method works on sparse rows (dual coordinate descent and the LPs on the full
data, chosen by the data's shape, docs/svm.md), the kernel SVMs always (kernel blocks from the
stored entries, sparse ``support_vectors_``); other models densify it (a dense LP / QP / MIP).
Linear and kernel decision functions are evaluated on sparse X without densifying it.
"""

from __future__ import annotations

import dataclasses
import inspect
import warnings

import numpy as np
from scipy.sparse import issparse

from aidopt.data.validate import _check_finite, _to_float_matrix
from aidopt.decomposition.run import RunConfig
from aidopt.results import Termination

__all__ = ['ConvergenceWarning', 'NotFittedError']

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


def _document(doc: str | None, families, overrides: dict, note: str) -> str:
    """``doc`` with the estimator parameters of ``families`` (the family's own, then those the
    estimator adds, e.g. the multi-class options), then the common options (with the estimator's
    ``overrides`` of their defaults and its ``note`` on them), listed first under "Parameters"."""
    import textwrap

    doc = doc or ""
    head = "Parameters\n    ----------\n"
    entries = [p.doc(user=True) for family in families for p in family.params.values()
               if p.estimator]
    names = [f.name for f in dataclasses.fields(RunConfig)]
    changed = ", ".join(f"``{k}={v!r}``" for k, v in overrides.items())
    common = (f"The common options (:class:`aidopt.decomposition.RunConfig`), with {changed}"
              + (f"; {note}" if note else "") + ".")
    entries.append(textwrap.fill(", ".join(names), 92) + "\n"
                   + textwrap.fill(common, 92, initial_indent="    ", subsequent_indent="    "))
    block = textwrap.indent("\n".join(entries), "    ") + "\n"
    return doc.replace(head, head + block, 1) if head in doc else doc


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
    _family = None
    """The family's :class:`~aidopt.api._params.Family`: ``_params`` and the documented
    parameters come from it (classes without one list ``_params`` themselves)."""
    _extra_families: tuple = ()
    """Families of estimator-only parameters added after the family's own (the multi-class
    options of :mod:`aidopt.api.multiclass`: the estimator's, not the ``solve_*`` function's)."""
    _overrides = {"log": False}
    _options_note = ""
    """What the estimator's documentation adds about the common options (e.g. which it ignores)."""
    _sparse_input = False
    _sklearn_checks_skipped: str | None = None
    _transient: tuple = ()
    _transient_solution: tuple = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        family = cls.__dict__.get("_family")
        if family is not None:  # the family's one declaration: parameters and their docs
            families = (family, *cls._extra_families)
            cls._params = {k: v for f in families for k, v in f.estimator_params().items()}
            cls.__doc__ = _document(cls.__doc__, families, cls._overrides, cls._options_note)
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
        solution = getattr(result, "solution", None)  # a multi-class result has none of its own
        if solution is not None and any(k in solution for k in self._transient_solution):
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

    def _check_params(self) -> None:
        """Refuse a non-boolean value of a boolean parameter of the family
        (:meth:`~aidopt.api._params.Family.check_bools`) before anything is validated or solved;
        the common options are checked by :class:`~aidopt.decomposition.RunConfig`."""
        if self._family is not None:
            values = {name: getattr(self, name) for name in self._params}
            for family in (self._family, *self._extra_families):
                family.check_bools(values)

    def _validate_fit(self, X, y=None, *, target: str | None):
        """Check the parameters (:meth:`_check_params`) and the structure of the training data;
        return ``(X, y)`` for the solve function.

        With scikit-learn (>= 1.6): ``validate_data`` converts X to float64 (dense or sparse),
        rejects complex data, 1-d X and fewer than two rows or one column, warns on a
        column-vector y, and records ``n_features_in_`` / ``feature_names_in_``. NaN / inf
        are left to the solve function (aidopt's messages name the first bad entry). A
        DataFrame is passed on as given, so that the result names its columns. Without
        scikit-learn, X without columns is refused and X and y are returned otherwise
        unchanged (the solve function validates them).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,), optional
        target : {"continuous", "binary", "classes", "labels"} or None
            Numeric y (regression); exactly two classes of any labels; two or more classes of
            any labels; semi-supervised labels (-1 / +1, 0 or NaN unlabelled: only made 1-d);
            or no y.

        Returns
        -------
        X, y
            Validated; X is the DataFrame itself when a DataFrame was given.

        Raises
        ------
        TypeError
            A DataFrame with non-numeric columns (named), or X holding non-numbers.
        TypeError
            A boolean parameter that is not True or False.
        ValueError
            Complex data, wrong shapes, empty data (no rows or no columns), a target that is
            not what ``target`` says (for "binary": ``Only binary classification is supported``
            for more classes; for "binary" and "classes": one class only).
        """
        self._check_params()
        if validate_data is None:
            shape = _shape(X)
            if len(shape) == 2 and shape[1] == 0:
                raise ValueError(f"X has 0 features (shape {shape}): at least 1 is required")
            return X, y
        frame = hasattr(X, "columns") and hasattr(X, "dtypes")
        if frame and len(X):
            _to_float_matrix(X.iloc[:1])  # aidopt's TypeError naming the non-numeric columns
        rows = (_n_rows(X), _n_rows(y)) if target is not None else (None, None)
        if None not in rows and rows[0] != rows[1]:  # aidopt's message, as the solve functions'
            raise ValueError(f"X has {rows[0]} rows but y has {rows[1]} entries")
        check = dict(accept_sparse=True, dtype=np.float64, ensure_all_finite=False,
                     ensure_min_samples=2, ensure_min_features=1)
        if target in (None, "labels"):
            Xv = validate_data(self, X, **check)
            if target == "labels":
                y = column_or_1d(y, warn=True)
        else:
            Xv, y = validate_data(self, X, y, y_numeric=target == "continuous", **check)
            if target == "binary":
                self._check_binary(y)
            elif target == "classes":
                self._check_classes(y)
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

    def _check_classes(self, y) -> None:
        """Two or more classes (any labels), with scikit-learn's messages for other targets."""
        check_classification_targets(y)  # "Unknown label type" for continuous targets
        kind = type_of_target(y, input_name="y")
        classes = np.unique(y)
        if kind not in ("binary", "multiclass") or classes.size < 2:
            raise ValueError(
                ("" if kind in ("binary", "multiclass") else f"The type of the target is {kind}: ")
                + f"{type(self).__name__} needs at least two classes, got {classes.size} "
                + ("class" if classes.size == 1 else "classes") + f": {classes[:10].tolist()}")

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


#: the documentation of ``fit(X, y, sample_weight=None)`` of the weighted classifiers
WEIGHTED_FIT_DOC = """{what}

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Two or more classes, any labels. Two classes: one binary fit (the sorted first
            class is the negative one); more: one binary fit per subproblem, one-vs-rest or
            one-vs-one (``multi_class``, docs/multiclass.md).
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative row weights; an integer weight k counts the row k times.

        Returns
        -------
        self
        """


class _BinaryClassifierMixin(_ClassifierMixin):
    """A classifier of two classes (any two labels; the sorted first is the negative class)."""

    def _solve_binary(self, solve, X, y, sample_weight, what: str):
        """Solve on validated two-class data with the estimator's parameters and set
        ``classes_`` and ``intercept_``: the result, for the rest of the fit."""
        result = solve(X, y, sample_weight=sample_weight, **self._solve_kwargs())
        self._require_solution(result, what)
        self.classes_ = np.asarray(result.solution["classes"])
        self.intercept_ = np.array([float(result.solution["b"])])
        return result

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags
