"""Feature selection concave (Bradley, Mangasarian & Musicant (1.21)) by successive
linearization: :func:`solve_fsv` and :class:`FSVClassifier`; the parameters are declared once in
:data:`FSV`."""

from __future__ import annotations

import numpy as np

from aidopt.api import _front, _shape
from aidopt.api._params import Family, Param
from aidopt.api.estimator import WEIGHTED_FIT_DOC, _BaseEstimator, _SelectorMixin
from aidopt.api.multiclass import _MulticlassMixin
from aidopt.data.validate import (
    as_classification_data,
)
from aidopt.decomposition.run import RunConfig
from aidopt.results import AIDResult, Termination

__all__ = ['solve_fsv', 'FSVClassifier']


#: ``solve_fsv`` solves each linearized LP by AID above this many rows (``aid=None``)
FSV_AID_ABOVE = 20_000


#: the parameters of feature selection concave: the one declaration behind solve_fsv,
#: FSVClassifier and ``aidopt fsv``
FSV = Family(
    "fsv",
    Param("nu", 1.0,
          "Weight of the misclassification error (chosen by cross-validation in the paper).",
          kind="float"),
    Param("alpha", 5.0,
          "Exponent of the concave step approximation (1.20); the paper found 5 satisfactory.",
          kind="float"),
    Param("start", "random",
          "The paper's random start (seeded by ``seed``) or the RLP (1.17) plane.",
          kind="{\"random\", \"rlp\"}", choices=("random", "rlp")),
    Param("support_tol", 1e-6,
          "A feature is selected when ``|w_j| > support_tol * max(1, max |w|)``.",
          kind="float"),
)


@FSV.door(aid=None)
def solve_fsv(X, y, *, sample_weight=None, p, **options) -> AIDResult:
    r"""Feature selection concave (FSV): a sparse separating plane by successive linearization.

    Bradley, Mangasarian & Musicant (1.21): minimize
    :math:`\nu \sum_i s_i y_i + \sum_j (1 - e^{-\alpha v_j})` subject to
    :math:`D(Aw - e\gamma) + y \ge e`, :math:`-v \le w \le v`, :math:`y \ge 0`, a concave objective
    that approximates the number of features used. Algorithm 2 solves a linear program (1.22)
    per step and stops when (1.23) holds: a **stationary point** (minimum principle), never
    called optimal (``termination == "stationary"``). The separating plane is ``x'w = gamma``,
    midway between the bounding planes (1.13).

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n, m)
        A scipy sparse X (CSR, CSC, COO) or a DataFrame with sparse columns stays sparse (CSR)
        on the LP on the full data, whose rows hold its stored entries only; AID's centroids
        need it dense.
    y : array-like of shape (n,)
        Two classes (the sorted first is -1).
    sample_weight : array-like of shape (n,), optional
    aid : bool or None, default None
        Solve each linearized LP by AID (with its full-data certificate) or directly with a warm
        persistent solver; ``None``: the LP on the full data up to 20,000 rows, above it by the
        data's shape as the LP SVMs (:func:`aidopt.api._shape.prepare_fsv`: the LP on the full
        data for sparse or wide X, AID on tall, narrow, dense X), logged and noted in
        ``result.message``.
    tol
        The stopping rule (1.23) holds when the LP decreases by at most ``tol * max(1, |f|)``.
    max_iter
        Limit on the number of LPs.

    Returns
    -------
    AIDResult
        ``solution["w"], solution["gamma"]`` (and ``b = -gamma`` for ``w x + b``),
        ``solution["support"]`` (indices of the selected features); ``history`` has one record
        per LP (``F_t`` its value, ``E_t`` the concave objective (1.21), ``info["support"]``,
        ``info["decrease"]``); ``certificate`` (method ``minimum_principle``) reports the last
        decrease and is never ``certified``.
    """
    from aidopt.decomposition.plugins.fsv import FSVStep
    from aidopt.decomposition.sla import successive_linearization

    aid = options.pop("aid", None)
    config = RunConfig.from_kwargs(options, caller="solve_fsv", solver="highs")
    for name, value in (("nu", p.nu), ("alpha", p.alpha)):
        if not (isinstance(value, int | float | np.floating) and not isinstance(value, bool)
                and np.isfinite(value) and value > 0):
            raise ValueError(f"{name} must be a positive finite number, got {value!r}")
    if p.start not in ("random", "rlp"):
        raise ValueError(f"start must be 'random' or 'rlp', got {p.start!r}")
    if not (isinstance(p.support_tol, int | float) and 0 <= p.support_tol < 1):
        raise ValueError(f"support_tol must be in [0, 1), got {p.support_tol!r}")
    if not (aid is None or isinstance(aid, bool)):
        raise TypeError(f"aid must be True, False or None, got {aid!r}")
    data = as_classification_data(X, y, sample_weight, sparse=True)
    used, keep = data.without_zero_weights()
    used, aid, note = _shape.prepare_fsv(used, aid, FSV_AID_ABOVE, config.log)
    config.aid = aid
    step = FSVStep(used, nu=p.nu, alpha=p.alpha, start=p.start, aid=aid, support_tol=p.support_tol)
    result = successive_linearization(
        step, config, dimensions={"n": data.n, "m": data.m},
        mode=f"successive linearization, each LP by {'AID' if aid else 'a warm direct solve'}")
    _front.decorate(result, data)
    result.message = f"{result.message}; {note}" if result.message else note
    return result


class FSVClassifier(_MulticlassMixin, _SelectorMixin, _BaseEstimator):
    """Sparse linear classifier and feature selector by FSV (successive linearization).

    ``fit`` solves the feature-selection concave problem (Bradley, Mangasarian & Musicant (1.21))
    to a stationary point; ``predict`` uses the plane ``x'w = gamma`` midway between the bounding
    planes; ``get_support`` / ``transform`` make it a feature selector in a scikit-learn
    ``Pipeline`` (scikit-learn's ``SelectorMixin``). More than two classes are one FSV problem
    per class against the rest (``multi_class="ovr"``, the default) or per pair of classes
    (``"ovo"``); a feature is selected when any of them uses it (docs/multiclass.md).

    Parameters
    ----------
    aid : bool or None, default None
        AID for each linearized LP above 20,000 rows (None), always (True) or never (False).

    Attributes
    ----------
    classes_ : ndarray of shape (k,)
    coef_ : ndarray of shape (1, n_features) or (n_subproblems, n_features)
    intercept_ : ndarray of shape (1,) or (n_subproblems,)
        ``-gamma``: the decision function is ``X @ coef_[0] + intercept_[0]`` (k classes: one
        column per subproblem).
    support_ : ndarray of int
        Indices of the selected features (k classes: selected by any subproblem).
    result_ : AIDResult or MulticlassResult
        Termination ``stationary`` when (1.23) held (a stationary point, not a proven optimum).
        k classes: :class:`aidopt.api.multiclass.MulticlassResult`.
    results_ : list of AIDResult
        One per subproblem (``[result_]`` for two classes).
    certified_ : bool
        Always False: FSV ends at a stationary point, never with a certificate.
    estimators_ : list of FSVClassifier
        k classes: the binary classifier of each subproblem (labels -1 / +1).
    n_iter_ : int
        The number of linear programs solved (k classes: the most of any subproblem).
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

    _family = FSV
    _overrides = {"log": False, "aid": None}
    _sparse_input = True
    _linear = True
    _dense_input = False

    def fit(self, X, y, sample_weight=None):
        return self._fit_classes(X, y, sample_weight)

    fit.__doc__ = WEIGHTED_FIT_DOC.format(what="Fit by FSV.")

    def _fit_binary(self, X, y, sample_weight) -> None:
        """One FSV problem on validated two-class data."""
        result = self._solve_binary(solve_fsv, X, y, sample_weight, "FSV")
        sol = result.solution
        self.coef_ = np.asarray(sol["w"], dtype=float)[None, :]
        self.support_ = np.asarray(sol["support"], dtype=int)
        self._after_fit(X, result, "FSV", n_features=len(sol["feature_names"]),
                        accepted=(Termination.STATIONARY,))

    def _combine(self, estimators, rows) -> None:
        """``coef_`` / ``intercept_`` and ``support_``: the features any subproblem selects."""
        super()._combine(estimators, rows)
        self.support_ = np.unique(np.concatenate([est.support_ for est in estimators]))

    def _decision(self, X) -> np.ndarray:
        """``x'w - gamma`` on validated X; > 0 means ``classes_[1]``."""
        return X @ self.coef_[0] + self.intercept_[0]

    def _get_support_mask(self) -> np.ndarray:
        """Boolean mask of the selected features (``get_support`` / ``transform`` use it)."""
        self._check_fitted()
        mask = np.zeros(self.n_features_in_, dtype=bool)
        mask[self.support_] = True
        return mask
