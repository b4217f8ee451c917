"""``S2RLSCClassifier``: semi-supervised / unsupervised RLSC (Gieseke et al. 2012) as a
scikit-learn estimator, on :func:`aidopt.s2rlsc.solve_s2rlsc`."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np

from aidopt.estimators import ConvergenceWarning, _BaseEstimator, _ClassifierMixin
from aidopt.results import Termination
from aidopt.s2rlsc import kernel_function, solve_s2rlsc

__all__ = ["S2RLSCClassifier"]


class S2RLSCClassifier(_ClassifierMixin, _BaseEstimator):
    """Semi-supervised (or, with no labels, clustering) regularized least-squares classifier.

    ``fit(X, y)`` takes ``y`` = -1 / +1 on labelled points and 0 or NaN on unlabelled ones (as
    :class:`aidopt.S3VMClassifier`); the labels found for the unlabelled points are
    ``transduction_``. The decision function is the RLSC expansion :math:`f(x) = \\sum_i c^*_i
    k(x_i, x)` of eq. (9) / (12) (no offset, as in the paper).

    Parameters
    ----------
    kernel : {"linear", "rbf"} or callable, default "linear"
    sigma : float, optional
        RBF width (default 0.1 s, :func:`aidopt.s2rlsc.rbf_scale`).
    lam, lam_prime : float, default 1 and 1
        :math:`\\lambda` and :math:`\\lambda'` of (10).
    eps : float, default 0.1
    b_c : float, optional
        Default: the share of +1 among the labels (0.5 when clustering).
    r : int, optional
        Nyström landmarks (default: the full kernel).
    search : {"mu+nu", "1+1"}, default "mu+nu"
    mu, nu, restarts, patience
        As in :func:`aidopt.s2rlsc.solve_s2rlsc` (5, 25, best of 10, n).
    aggregate : int or float, optional
        AID-style aggregated warm start (number or share of clusters).
    method : {"search", "exact"}, default "search"
    mode : {"auto", "semi-supervised", "clustering"}, default "auto"
    solver, aid, tol, feasibility_tol, max_iter, time_limit, r0, seed, write_models, log,
    solver_options, threads, tee, raise_on_failure, fallback
        The common options (:class:`aidopt.decomposition.RunConfig`), with ``log=False``;
        ``aid``, ``feasibility_tol`` and ``r0`` are not used.

    Attributes
    ----------
    classes_ : ndarray ``[-1, 1]``
    transduction_ : ndarray of shape (n_samples,)
        -1 / +1 for every training point (the given labels on the labelled ones).
    dual_coef_ : ndarray of shape (n_samples,)
        :math:`c^*` of eq. (12).
    fitness_ : float
        F(transduction_), eq. (11).
    result_ : aidopt.s2rlsc.S2RLSCResult
    n_iter_ : int
        Local-search runs (restarts) that ran.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        The column names, when X was a DataFrame with string column names.

    Notes
    -----
    Not a standard scikit-learn classifier: the labels are -1 / +1 and 0 / NaN marks the
    unlabelled points, at least one of which is required (as :class:`aidopt.S3VMClassifier`).
    scikit-learn's common checks (which fit fully labelled data with arbitrary labels, 0 among
    them) are therefore skipped (``tags._skip_test``); ``tests/unit/test_sklearn_checks.py`` runs
    the checks that need no fit and tests the conventions (features, fitted state, pickling) on
    semi-supervised data.

    Examples
    --------
    >>> import numpy as np
    >>> from aidopt.s2rlsc_estimator import S2RLSCClassifier
    >>> from aidopt.instances.s2rlsc import gaussian2c, ssl_split
    >>> X, y = gaussian2c(200, 20, seed=0)
    >>> Xtr, ytr, Xte, yte, truth = ssl_split(X, y, l=10, u=90, seed=0)
    >>> clf = S2RLSCClassifier(search="1+1").fit(Xtr, ytr)
    >>> clf.score(Xte, yte) > 0.9
    True
    """

    _params = {"kernel": "linear", "sigma": None, "lam": 1.0, "lam_prime": 1.0, "eps": 0.1,
               "b_c": None, "r": None, "search": "mu+nu", "mu": 5, "nu": 25, "restarts": 10,
               "patience": None, "aggregate": None, "method": "search", "mode": "auto"}
    #: the kernel function of the fit (a local function): left out of pickles and rebuilt from
    #: ``_kernel_spec`` (:meth:`_BaseEstimator.__getstate__` / :meth:`_restore`)
    _transient = ("_kfun",)
    _sparse_input = True
    _sklearn_checks_skipped = (
        "semi-supervised: y is -1 / +1 on labelled points and 0 / NaN on unlabelled ones, at "
        "least one unlabelled; the common checks fit fully labelled y with arbitrary labels (0 "
        "among them)")

    def fit(self, X, y=None):
        """Fit on labelled and unlabelled points together.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,), optional
            -1 / +1 on labelled points, 0 or NaN on unlabelled ones; None: no labels
            (clustering).

        Returns
        -------
        self
        """
        X, y = self._validate_fit(X, y, target=None if y is None else "labels")
        result = solve_s2rlsc(X, y, **self._solve_kwargs())
        # not _after_fit: S2RLSCResult has no history (a local search, not AID iterations)
        self.result_, self.n_iter_ = result, len(result.search["restart_fitness"])
        # the width as used (the default 0.1 s resolved on X): the kernel can be rebuilt
        self._kernel_spec = (self.kernel, result.params["sigma"])
        self._kfun = result.predictor[0]
        self.classes_ = np.array([-1, 1])
        self._record_features(X, int(result.predictor[1].shape[1]))
        self.transduction_ = result.labels.astype(int)
        self.dual_coef_ = result.coef.copy()
        self.fitness_ = float(result.fitness)
        if self.method == "exact" and result.termination is not Termination.CERTIFIED_OPTIMAL:
            warnings.warn(f"S2RLSC exact fit ended {result.termination.value!r} (relative gap "
                          f"{result.gap:.2e}): not proven optimal", ConvergenceWarning, stacklevel=2)
        return self

    def __getstate__(self):
        state = super().__getstate__()  # without _kfun
        result = state.get("result_")
        if result is not None:
            state["result_"] = dataclasses.replace(result, predictor=(None, *result.predictor[1:]))
        return state

    def _restore(self) -> None:
        """The kernel function of the fit, in ``_kfun`` and ``result_.predictor`` (after
        unpickling)."""
        kernel, sigma = self._kernel_spec
        self._kfun = kernel_function(kernel, sigma if kernel == "rbf" else None)
        self.result_.predictor = (self._kfun, *self.result_.predictor[1:])

    def decision_function(self, X) -> np.ndarray:
        """:math:`f(x) = \\sum_i c^*_i k(x_i, x)` (Nyström: :math:`\\tilde k`); > 0 means +1.

        Raises
        ------
        NotFittedError
            Before ``fit``.
        ValueError
            NaN / inf, or other features (count, or names with scikit-learn) than in fit.
        """
        X = self._check_X(X)  # before result_ is read: NotFittedError
        return self.result_.decision_function(X)

    def predict(self, X) -> np.ndarray:
        """Labels -1 / +1 (0 counts as +1)."""
        return np.where(self.decision_function(X) >= 0, 1, -1)  # checks that it is fitted
