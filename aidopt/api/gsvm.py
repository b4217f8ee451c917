r"""Generalized support vector machines (Mangasarian, "Generalized Support Vector Machines" §2):
SVMs that need no assumption on the kernel — not symmetric, not positive semidefinite, not even
continuous.

Decision function (1.2): class 1 where :math:`K(x', A')Du - \gamma \ge 0`. Three formulations,
each solved directly on the precomputed m x m kernel matrix :math:`K(A, A')` with a full
certificate (docs/gsvm.md):

* ``"lp_u"`` — the LP (1.11), :math:`\min \nu e'y + \|u\|_1`;
* ``"lp_Ku"`` — the LP (1.12), :math:`\min \nu e'y + \|K(A, A')Du\|_1`;
* ``"qp"`` — the QP (1.10) with :math:`H = I`, whose Hessian :math:`DKK'D` is positive
  semidefinite for any K.

Kernels (:func:`kernel_function`): the seed's polynomial :math:`(AB' + \mu ab')^d`, the shifted
polynomial of its Fig. 1.2 :math:`((A/\lambda - \rho)(B/\lambda - \rho)' - \mu)^d`, the
neural-network step kernel :math:`(AB' + \mu ab')_*` (1 where positive, else 0: discontinuous),
RBF, linear, or any callable ``K(A, B)``.
"""

from __future__ import annotations

import numbers
import time

import numpy as np

from aidopt.api import _front
from aidopt.api._params import Family, Param
from aidopt.api.estimator import _BaseEstimator
from aidopt.api.multiclass import _MulticlassMixin
from aidopt.data.validate import as_classification_data
from aidopt.decomposition.plugins.gsvm import FORMS as KU_FORMS
from aidopt.decomposition.plugins.gsvm import GSVMKuProblem
from aidopt.decomposition.plugins.svm import SVMProblem
from aidopt.decomposition.run import Run, RunConfig, call_deadline, clocked, run_scope
from aidopt.numerics.kernel_kmeans import BLOCK_ENTRIES
from aidopt.numerics.kernels import KERNELS, kernel_function, kernel_matrix
from aidopt.results import AIDResult, Termination
from aidopt.solvers import ProblemClass

__all__ = ['GSVMClassifier', 'FORMULATIONS', 'solve_gsvm']


FORMULATIONS = ("lp_u", "lp_Ku", "qp")

#: the parameters of the generalized SVMs: the one declaration behind solve_gsvm,
#: GSVMClassifier and ``aidopt gsvm``
GSVM = Family(
    "gsvm",
    Param("kernel", "poly",
          "A name of :data:`KERNELS` (parameters in ``kernel_params``) or any ``K(A, B)``.",
          kind="str or callable", choices=tuple(sorted(KERNELS))),
    Param("kernel_params", None,
          "E.g. ``{\"d\": 6, \"lam\": 100, \"rho\": 1, \"mu\": 0.5}`` for ``\"shifted_poly\"``.",
          kind="dict", flag=""),
    Param("formulation", "lp_u",
          "(1.11), (1.12) or (1.10).",
          kind="{\"lp_u\", \"lp_Ku\", \"qp\"}", choices=FORMULATIONS),
    Param("nu", 1.0,
          "Weight of the error :math:`e'y`, > 0.",
          kind="float"),
    Param("ku_form", "auto",
          "(1.12) only: the LP on K itself (``\"kernel\"``), on the factor :math:`U_r` of K's "
          "SVD with w recovered with r nonzeros (``\"svd\"``: a well-posed LP for a low-rank "
          "K), or ``\"auto\"``: the SVD when K is numerically singular and has at most 8,000 "
          "rows.",
          choices=KU_FORMS),
)


class GSVMClassifier(_MulticlassMixin, _BaseEstimator):
    """Generalized SVM (Mangasarian §2) with any kernel: the LPs (1.11) / (1.12) or the QP (1.10)
    on the precomputed kernel matrix; works in scikit-learn pipelines and ``GridSearchCV``.

    More than two classes are one GSVM per pair of classes (``multi_class="ovo"``, the default:
    each is solved on the kernel matrix of its own rows) or per class against the rest
    (``"ovr"``), each certified on its own (docs/multiclass.md).

    Parameters
    ----------

    Attributes
    ----------
    classes_ : ndarray of shape (k,)
        The labels of ``y`` (sorted). Two classes: ``classes_[0]`` is the row label -1 of D,
        ``classes_[1]`` the label +1 (``[-1, 1]`` for labels -1 / +1).
    dual_coef_ : ndarray of shape (n_samples,)
        Two classes: ``u`` of (1.1), the decision function is ``K(x', A') D u - gamma``.
    intercept_ : ndarray of shape (1,) or (n_subproblems,)
        ``-gamma`` (k classes: one per subproblem).
    support_ : ndarray of int
        Two classes: training rows with ``|u_i| > 1e-8 max |u|``.
    result_ : AIDResult or MulticlassResult
        k classes: :class:`aidopt.api.multiclass.MulticlassResult`.
    results_ : list of AIDResult
        One per subproblem (``[result_]`` for two classes), each with its certificate.
    certified_ : bool
        Every subproblem is certified optimal.
    estimators_ : list of GSVMClassifier
        k classes: the binary GSVM of each subproblem (labels -1 / +1), with its ``dual_coef_``
        and ``support_`` over that subproblem's rows.
    n_iter_ : int
        Always 1 (one direct solve per subproblem).
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

    _options_note = '``aid`` is ignored: GSVMs are solved directly'
    _family = GSVM
    _sparse_input = True
    _transient = ("_kfun",)
    _transient_solution = ("kernel",)

    def fit(self, X, y):
        """Fit on rows X with two or more classes.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Two classes, any labels (the sorted first is -1 in D, usually labels -1 / +1); more
            classes: one GSVM per subproblem (``multi_class``).

        Returns
        -------
        self
        """
        return self._fit_classes(X, y)

    def _fit_binary(self, X, y, sample_weight=None) -> None:
        """One GSVM on validated two-class data (``sample_weight`` is always None)."""
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

    def _restore(self) -> None:
        """The kernel function of the fit (a local function: not pickled), also in ``result_``
        (k classes: each subproblem's estimator has its own)."""
        from aidopt.numerics.kernels import kernel_function

        if len(self.classes_) > 2:
            return

        kernel, params = self._kernel_spec
        self._kfun = self.result_.solution["kernel"] = kernel_function(kernel, **params)

    def _decision(self, X) -> np.ndarray:
        """``K(x', A') D u - gamma`` on validated X; >= 0 means ``classes_[1]``."""
        from aidopt.numerics.kernels import kernel_matrix

        return kernel_matrix(self._kfun, X, self._A) @ self._w + self.intercept_[0]

    def _positive(self, f) -> np.ndarray:
        """The class +1 of (1.2) where ``f >= 0``."""
        return f >= 0


def _kernel_rows(kfun, A, deadline: float | None) -> np.ndarray | None:
    """``K(A, A')`` computed in blocks of rows, checked (finite, real); None when ``deadline``
    (a ``time.perf_counter()`` value) passes before it is complete."""
    n = A.shape[0]
    K = np.empty((n, n))
    step = max(1, BLOCK_ENTRIES // max(1, n))
    for start in range(0, n, step):
        if deadline is not None and time.perf_counter() > deadline:
            return None
        K[start:start + step] = kernel_matrix(kfun, A[start:start + step], A)
    return K


@GSVM.door()
@clocked  # the kernel matrix and the input's checks count against time_limit
def solve_gsvm(X, y, *, p, **options) -> AIDResult:
    r"""A generalized SVM (Mangasarian §2) on rows ``X`` with labels ``y`` in {-1, +1}.

    Parameters
    ----------
    X : array-like of shape (m, n)
        The points A.
    y : array-like of shape (m,)
        Labels -1 / +1 (the diagonal of D).
    solver : str, optional
        HiGHS for the LPs, Clarabel for the QP (1.10) by default.

    time_limit : float, optional
        Counted from the call: the kernel matrix (in blocks of rows), its factorisation, the
        build of the LP or QP (rows stop at the limit) and the solve. A limit reached before the
        solve gives termination ``time_limit`` and no solution.

    Returns
    -------
    AIDResult
        ``solution["u"]``, ``solution["gamma"]``, ``solution["w"]`` (= Du, the coefficients of the
        kernel expansion: decision :math:`K(x', A') w - \gamma`), ``solution["decision"]`` on the
        training rows, and ``solution["kernel"]``, the kernel function. ``certified_optimal`` when
        the LP/QP dual certificate holds on the full problem.
    """
    if p.formulation not in FORMULATIONS:
        raise ValueError(f"formulation must be one of {FORMULATIONS}, got {p.formulation!r}")
    if not (isinstance(p.nu, numbers.Real) and not isinstance(p.nu, bool) and np.isfinite(p.nu)
            and p.nu > 0):
        raise ValueError(f"nu must be a positive finite number, got {p.nu!r}")
    kfun = kernel_function(p.kernel, **(p.kernel_params or {}))
    points = as_classification_data(X, y)
    if not np.all(points.s == 1):
        raise ValueError("solve_gsvm takes no sample weights")
    norm = "l1" if p.formulation == "lp_u" else "l2"
    config = RunConfig.from_kwargs(options, caller="solve_gsvm",
                                   solver="highs" if p.formulation != "qp" else "clarabel")
    K = _kernel_rows(kfun, points.X, call_deadline(config.time_limit))
    if K is None:
        return _no_kernel_result(config, points.X.shape[0])
    data = as_classification_data(K, points.y)
    if p.formulation == "lp_Ku":
        result = _front.solve_direct(GSVMKuProblem(nu=p.nu, form=p.ku_form), data, config)
    else:
        result = _front.solve_direct(SVMProblem(C=p.nu, norm=norm), data, config)
        if "w" in result.solution:  # the SVM on the rows of K: x'w + b, so gamma = -b
            result.solution["gamma"] = -float(result.solution["b"])
            result.solution["decision"] = K @ result.solution["w"] - result.solution["gamma"]
    if "w" in result.solution:
        result.solution["u"] = points.y * result.solution["w"]
    result.solution["kernel"] = kfun
    result.solution["A"] = points.X
    return result


def _no_kernel_result(config: RunConfig, m: int) -> AIDResult:
    """The result of a run whose time limit passed while the kernel matrix was computed: no
    solution (the run counts from the call, as the solve would have)."""
    with run_scope(config):
        run = Run("gsvm", ProblemClass.LP, config, dimensions={"n": m, "m": m},
                  mode="direct full model (no aggregation)")
        return run.result(Termination.TIME_LIMIT,
                          f"time limit reached while computing the {m} x {m} kernel matrix: no "
                          "solve started", aid=False)
