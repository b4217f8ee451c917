"""scikit-learn style estimators (validate in ``fit``, trailing-underscore attributes, return self).

scikit-learn is not a dependency: the estimators follow its conventions (``get_params`` /
``set_params``, ``fit`` / ``predict`` / ``score``) so they work inside its pipelines and
``clone`` when it is installed.
"""

from __future__ import annotations

import dataclasses
import inspect
import warnings

import numpy as np

from aidopt.aggout import solve_aggregate_outputs
from aidopt.api import solve_fsv, solve_lad, solve_s3vm, solve_svm
from aidopt.data import _check_finite, _to_float_matrix
from aidopt.decomposition.run import RunConfig
from aidopt.gsvm import solve_gsvm
from aidopt.results import Termination

__all__ = ["LADRegressor", "SVMClassifier", "S3VMClassifier", "FSVClassifier", "ConvergenceWarning"]


class ConvergenceWarning(UserWarning):
    """A fit stopped at a limit before its certificate passed; the best solution is kept."""


try:  # with scikit-learn installed, be a real scikit-learn estimator (tags, clone, pipelines)
    from sklearn.base import BaseEstimator as _SklearnBase
except ImportError:  # pragma: no cover - scikit-learn is optional
    _SklearnBase = object


class _BaseEstimator(_SklearnBase):
    """``get_params`` / ``set_params`` from the ``__init__`` signature (sklearn style).

    Each subclass declares its own parameters in ``_params`` (name -> default); the common
    options of every solve (:class:`aidopt.decomposition.RunConfig`: solver, aid, tol, max_iter,
    time_limit, r0, seed, ...) are added from that one definition, with the same defaults except
    ``log=False`` (estimators are quiet, as scikit-learn's are). ``__init__`` only stores them.
    """

    _params: dict = {}
    _overrides = {"log": False}

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
        names = [p for p in inspect.signature(type(self).__init__).parameters if p != "self"]
        return {name: getattr(self, name) for name in names}

    def set_params(self, **params):
        valid = self.get_params()
        for key, val in params.items():
            if key not in valid:
                raise ValueError(f"invalid parameter {key!r} for {type(self).__name__}")
            setattr(self, key, val)
        return self

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    @staticmethod
    def _require_solution(result, what: str) -> None:
        """A fit that ended without any solution (a limit or Ctrl-C inside the first solve)
        cannot set the fitted attributes: say why instead of failing on a missing key."""
        if not result.solution or all(k in ("feature_names", "classes") for k in result.solution):
            raise RuntimeError(
                f"{what} fit found no solution: termination {result.termination.value!r}"
                + (f" ({result.message})" if result.message else "")
                + "; raise time_limit / max_iter or check the solver")

    def _after_fit(self, X, result, what: str, accepted=(Termination.CERTIFIED_OPTIMAL,)) -> None:
        """Feature names seen in fit, and a warning when the fit ended in none of ``accepted``."""
        if hasattr(X, "columns"):
            self.feature_names_in_ = np.asarray([str(c) for c in X.columns], dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        if result.termination not in accepted:
            warnings.warn(
                f"{what} fit stopped with termination {result.termination.value!r}, "
                f"relative gap {result.gap:.2e}: not certified optimal"
                + ("".join(f" (nor {t.value})" for t in accepted[1:])),
                ConvergenceWarning,
                stacklevel=3,
            )

    def _check_X(self, X) -> np.ndarray:
        """Validated float X for predict: fitted, 2-d, as many features as in fit, finite."""
        if not hasattr(self, "result_"):
            raise RuntimeError(f"this {type(self).__name__} is not fitted yet; call fit first")
        X, _ = _to_float_matrix(X)
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has shape {X.shape}, expected (n, {self.n_features_in_}) as in fit"
            )
        _check_finite(X, "X")
        return X


class LADRegressor(_BaseEstimator):
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
    n_features_in_ : int

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

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.estimator_type = "regressor"
        return tags

    def fit(self, X, y, sample_weight=None):
        """Fit by (certified) LAD; returns ``self``."""
        result = solve_lad(X, y, sample_weight=sample_weight, **self._solve_kwargs())
        self._require_solution(result, "LAD")
        beta = result.solution["beta"]
        self.result_ = result
        self.n_features_in_ = beta.size - int(self.fit_intercept)
        self.coef_ = beta[: self.n_features_in_].copy()
        self.intercept_ = float(beta[-1]) if self.fit_intercept else 0.0
        self._after_fit(X, result, "LAD")
        return self

    def predict(self, X) -> np.ndarray:
        """Predicted values ``X coef_ + intercept_``."""
        return self._check_X(X) @ self.coef_ + self.intercept_

    def score(self, X, y, sample_weight=None) -> float:
        """Coefficient of determination R^2 of the prediction (as scikit-learn regressors)."""
        y = np.asarray(y, dtype=float)
        pred = self.predict(X)
        w = np.ones_like(y) if sample_weight is None else np.asarray(sample_weight, dtype=float)
        ss_res = np.sum(w * (y - pred) ** 2)
        ss_tot = np.sum(w * (y - np.average(y, weights=w)) ** 2)
        return float(1.0 - ss_res / ss_tot) if ss_tot > 0 else 0.0


class SVMClassifier(_BaseEstimator):
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
    form : {"auto", "dual", "primal"}, default "auto"
    solver, aid, tol, feasibility_tol, max_iter, time_limit, r0, seed, write_models, log,
    solver_options, threads, tee, raise_on_failure, fallback
        The common options (:class:`aidopt.decomposition.RunConfig`), with ``log=False``; the
        solver defaults to "clarabel" for the 2-norm and kernel QPs, "highs" for the LPs.

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
    n_features_in_ : int

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
               "form": "auto"}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.estimator_type = "classifier"
        return tags

    @property
    def _linear(self) -> bool:
        return self.kernel is None or self.kernel == "linear"

    def fit(self, X, y, sample_weight=None):
        """Fit by (certified) AID; returns ``self``."""
        result = solve_svm(X, y, sample_weight=sample_weight, **self._solve_kwargs())
        self._require_solution(result, "SVM")
        sol = result.solution
        self.result_ = result
        self.classes_ = np.asarray(sol["classes"])
        self.n_features_in_ = len(sol["feature_names"])
        self.intercept_ = np.array([float(sol["b"])])
        alpha = sol["alpha"]
        if alpha is not None:
            s = np.ones(len(alpha)) if sample_weight is None else np.asarray(sample_weight, float)
            self.support_ = np.flatnonzero(alpha > 1e-8 * self.C * s.max())
        if self._linear:
            self.coef_ = np.asarray(sol["w"], dtype=float)[None, :]
        else:
            from aidopt.data import as_classification_data
            from aidopt.models.kernel_svm import kernel_function

            data = as_classification_data(X, y)
            self.support_vectors_ = data.X[self.support_]
            self.dual_coef_ = (alpha * data.y)[self.support_][None, :]
            self._kfun = kernel_function(self.kernel, sol["gamma"], self.degree, self.coef0)
        self._after_fit(X, result, "SVM")
        return self

    def decision_function(self, X) -> np.ndarray:
        """Signed score ``w x + b`` (or ``sum_i alpha_i y_i K(x_i, x) + b``); > 0 means ``classes_[1]``."""
        X = self._check_X(X)
        if self._linear:
            return X @ self.coef_[0] + self.intercept_[0]
        return self._kfun(X, self.support_vectors_) @ self.dual_coef_[0] + self.intercept_[0]

    def predict(self, X) -> np.ndarray:
        """Class labels (``classes_[1]`` where the decision function is > 0)."""
        f = self.decision_function(X)  # checks that the classifier is fitted
        return self.classes_[(f > 0).astype(int)]

    def score(self, X, y, sample_weight=None) -> float:
        """Mean accuracy (weighted by ``sample_weight``), as scikit-learn classifiers."""
        correct = self.predict(X) == np.asarray(y)
        return float(np.average(correct, weights=sample_weight))


class S3VMClassifier(_BaseEstimator):
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
    n_features_in_ : int

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

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.estimator_type = "classifier"
        return tags

    def fit(self, X, y):
        """Fit on labeled and unlabeled rows together; returns ``self``."""
        result = solve_s3vm(X, y, **self._solve_kwargs())
        self._require_solution(result, "S3VM")
        sol = result.solution
        self.result_ = result
        self.classes_ = np.array([-1, 1])
        self.n_features_in_ = len(sol["feature_names"])
        self.coef_ = np.asarray(sol["w"], dtype=float)[None, :]
        self.intercept_ = np.array([float(sol["b"])])
        self.transduction_ = sol["transduction"].astype(int)
        self._after_fit(X, result, "S3VM",
                        accepted=(Termination.CERTIFIED_OPTIMAL, Termination.PROP5_OPTIMAL))
        return self

    def decision_function(self, X) -> np.ndarray:
        """``w x + b``; > 0 means class +1."""
        X = self._check_X(X)
        return X @ self.coef_[0] + self.intercept_[0]

    def predict(self, X) -> np.ndarray:
        """Labels -1 / +1."""
        return np.where(self.decision_function(X) >= 0, 1, -1)

    def score(self, X, y) -> float:
        """Mean accuracy against labels -1 / +1."""
        return float(np.mean(self.predict(X) == np.asarray(y)))


class AggregateOutputClassifier(_BaseEstimator):
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
    n_features_in_ : int

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

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.estimator_type = "classifier"
        return tags

    def fit(self, X, collections, counts):
        """Fit on rows, their collections and the collections' class-1 counts; returns
        ``self``."""
        result = solve_aggregate_outputs(X, collections, counts, **self._solve_kwargs())
        self._require_solution(result, "aggregate-output classifier")
        sol = result.solution
        self.result_ = result
        self.classes_ = np.array([0, 1])
        self.n_features_in_ = len(sol["feature_names"])
        self.coef_ = np.asarray(sol["w"], dtype=float)[None, :]
        self.intercept_ = np.array([-float(sol["b"])])
        self.labels_ = np.asarray(sol["labels"]).astype(int)
        self._after_fit(X, result, "aggregate-output classifier",
                        accepted=(Termination.CERTIFIED_OPTIMAL, Termination.CLUSTER_OPTIMAL,
                                  Termination.NO_IMPROVEMENT, Termination.STATIONARY))
        return self

    def decision_function(self, X) -> np.ndarray:
        """``w x - b``; >= 0 means class 1."""
        X = self._check_X(X)
        return X @ self.coef_[0] + self.intercept_[0]

    def predict(self, X) -> np.ndarray:
        """Labels 0 / 1."""
        return (self.decision_function(X) >= 0).astype(int)

    def score(self, X, y) -> float:
        """Mean accuracy against individual labels 0 / 1."""
        return float(np.mean(self.predict(X) == np.asarray(y)))


class GSVMClassifier(_BaseEstimator):
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
    classes_ : ndarray ``[-1, 1]``
    dual_coef_ : ndarray of shape (n_samples,)
        ``u`` of (1.1): the decision function is ``K(x', A') D u - gamma``.
    intercept_ : ndarray of shape (1,)
        ``-gamma``.
    support_ : ndarray of int
        Training rows with ``|u_i| > 1e-8 max |u|``.
    result_ : AIDResult
    n_features_in_ : int

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

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.estimator_type = "classifier"
        return tags

    def fit(self, X, y):
        """Fit on rows X with labels -1 / +1; returns ``self``."""
        result = solve_gsvm(X, y, **self._solve_kwargs())
        self._require_solution(result, "GSVM")
        sol = result.solution
        self.result_ = result
        self.classes_ = np.array([-1, 1])
        self.n_features_in_ = int(sol["A"].shape[1])
        self._A, self._kernel, self._w = sol["A"], sol["kernel"], np.asarray(sol["w"], dtype=float)
        self.dual_coef_ = np.asarray(sol["u"], dtype=float)
        self.intercept_ = np.array([-float(sol["gamma"])])
        scale = float(np.abs(self.dual_coef_).max(initial=0.0))
        self.support_ = np.flatnonzero(np.abs(self.dual_coef_) > 1e-8 * max(scale, 1e-300))
        self._after_fit(X, result, "GSVM")
        return self

    def decision_function(self, X) -> np.ndarray:
        """``K(x', A') D u - gamma``; >= 0 means class +1."""
        from aidopt.gsvm import kernel_matrix

        X = self._check_X(X)
        return kernel_matrix(self._kernel, X, self._A) @ self._w + self.intercept_[0]

    def predict(self, X) -> np.ndarray:
        """Labels -1 / +1."""
        return np.where(self.decision_function(X) >= 0, 1, -1)

    def score(self, X, y) -> float:
        """Mean accuracy against labels -1 / +1."""
        return float(np.mean(self.predict(X) == np.asarray(y)))


class FSVClassifier(_BaseEstimator):
    """Sparse linear classifier and feature selector by FSV (successive linearization).

    ``fit`` solves the feature-selection concave problem (Bradley, Mangasarian & Musicant (1.21))
    to a stationary point; ``predict`` uses the plane ``x'w = gamma`` midway between the bounding
    planes; ``get_support`` / ``transform`` make it a feature selector in a scikit-learn
    ``Pipeline``.

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
    n_features_in_ : int

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

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.estimator_type = "classifier"
        return tags

    def fit(self, X, y, sample_weight=None):
        """Fit by FSV; returns ``self``."""
        result = solve_fsv(X, y, sample_weight=sample_weight, **self._solve_kwargs())
        self._require_solution(result, "FSV")
        sol = result.solution
        self.result_ = result
        self.classes_ = np.asarray(sol["classes"])
        self.n_features_in_ = len(sol["feature_names"])
        self.coef_ = np.asarray(sol["w"], dtype=float)[None, :]
        self.intercept_ = np.array([float(sol["b"])])
        self.support_ = np.asarray(sol["support"], dtype=int)
        self._after_fit(X, result, "FSV", accepted=(Termination.STATIONARY,))
        return self

    def decision_function(self, X) -> np.ndarray:
        """``x'w - gamma``; > 0 means ``classes_[1]``."""
        return self._check_X(X) @ self.coef_[0] + self.intercept_[0]

    def predict(self, X) -> np.ndarray:
        return self.classes_[(self.decision_function(X) > 0).astype(int)]

    def score(self, X, y, sample_weight=None) -> float:
        """Mean accuracy."""
        return float(np.average(self.predict(X) == np.asarray(y), weights=sample_weight))

    def get_support(self, indices: bool = False):
        """The selected features: a boolean mask, or their indices."""
        if not hasattr(self, "support_"):
            raise RuntimeError("this FSVClassifier is not fitted yet; call fit first")
        if indices:
            return self.support_.copy()
        mask = np.zeros(self.n_features_in_, dtype=bool)
        mask[self.support_] = True
        return mask

    def transform(self, X) -> np.ndarray:
        """The selected columns of X."""
        return self._check_X(X)[:, self.get_support()]

    def fit_transform(self, X, y, sample_weight=None) -> np.ndarray:
        return self.fit(X, y, sample_weight=sample_weight).transform(X)
