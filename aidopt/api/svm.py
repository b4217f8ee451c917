"""Soft-margin SVMs: :func:`solve_svm` (2-norm QP, 1-norm / infinity-norm LPs, RLP, kernel AID, LP
chunking, SOR, the modified SVM), :class:`SVMClassifier`, :func:`solve_svm_sor` and the default
solver rule; the parameters are declared once in :data:`SVM`."""

from __future__ import annotations

import dataclasses
import logging
import math
import numbers

import numpy as np

from aidopt.api import _front, _shape
from aidopt.api._params import COEF0, DEGREE, GAMMA, Family, Param
from aidopt.api.estimator import WEIGHTED_FIT_DOC, _BaseEstimator
from aidopt.api.lpc import LPC
from aidopt.api.multiclass import _MulticlassMixin
from aidopt.data.validate import (
    as_classification_data,
    resolve_engine,
)
from aidopt.decomposition.plugins.svm import SVMProblem
from aidopt.decomposition.run import RunConfig, clocked
from aidopt.numerics.sor import _check_omega, sor_linear
from aidopt.results import AIDResult

__all__ = ['default_svm_solver', 'solve_svm', 'SVMClassifier', 'solve_svm_sor']


def default_svm_solver(norm: str = "l2", kernel=None) -> str:
    """The solver ``solve_svm`` uses when none is given.

    ``"smo"`` (:mod:`aidopt.numerics.smo`, warm-started SMO in double precision, handing a solve it does
    not finish to ``"fm"``) for kernel AID (rbf, poly, callable): with the working-set column
    generation it is what makes kernel AID competitive with LIBSVM (docs/benchmarks.md).
    ``"fm"`` (:mod:`aidopt.numerics.fm`, the Ferris–Munson interior point with dense normal equations)
    for the linear 2-norm QPs: 7x faster than Clarabel on the aggregated duals; Clarabel is the
    fallback of both. HiGHS's QP solver is an active-set method whose time grows about
    quadratically with the number of clusters (72 s on a 20,000 x 30 dual QP against Clarabel's
    2.3 s, docs/svm.md). HiGHS for the LP SVMs: its vertex solutions make the split test exact.
    """
    if kernel is not None and not (isinstance(kernel, str) and kernel == "linear"):
        return "smo"
    return "fm" if norm == "l2" else "highs"


#: the parameters of the linear and kernel SVMs: the one declaration behind solve_svm,
#: SVMClassifier and ``aidopt svm``
SVM = Family(
    "svm",
    Param("C", 1.0,
          "Misclassification cost (M in Park & Klabjan, nu in Bradley & Mangasarian).",
          kind="float"),
    Param("norm", "l2",
          "Regularizer R: 1/2 ||w||^2 (QP), ||w||_1, ||w||_inf (LPs) or none (RLP, an LP).",
          kind="{\"l2\", \"l1\", \"linf\", \"none\"}", choices=("l2", "l1", "linf", "none")),
    Param("kernel", None,
          "Kernel AID (Park & Klabjan Appendix B) on the aggregated dual; ``norm`` must be "
          "\"l2\". A callable takes ``(A, B)`` and returns the ``len(A) x len(B)`` kernel matrix.",
          kind="None, \"linear\", \"rbf\", \"poly\" or callable", choices=("linear", "rbf", "poly")),
    GAMMA,
    DEGREE,
    COEF0,
    Param("cache_size", None,
          "Kernel AID: MB for the cached mean-kernel columns (8 n bytes each; as SVC's "
          "``cache_size``). Past it the columns used least recently are dropped and recomputed "
          "when needed again: more kernel values, the same answer. Default: a third of the "
          "machine's physical memory.",
          kind="float", parse=float, metavar="MB"),
    Param("form", "auto",
          "Form of the aggregated QP or LP (see :class:`aidopt.decomposition.SVMProblem`).",
          kind="{\"auto\", \"dual\", \"primal\"}", choices=("auto", "dual", "primal")),
    Param("method", "aid",
          "``\"aid\"``: the method by shape (AID, the LP on the full data, or for the 1-norm SVM "
          "on wide X, ``m >= 4 n``, column generation over features; ``aid=False`` refuses "
          "the last, the LP on the full data). ``\"colgen\"``: column generation over features "
          "for the 1-norm SVM (``norm=\"l1\"``, linear) whatever the shape: restricted LPs on a "
          "working set of features, priced by one sparse product ``A'(d u)`` each round, certified "
          "on the full data (:mod:`aidopt.decomposition.colgen`, docs/svm.md). "
          "``\"lpc\"``: linear program chunking (Bradley–Mangasarian–Musicant Algorithm 3) for "
          "the 1-norm LSVM (1.28), ``norm=\"l1\"`` only, rows read block by block (docs/lpc.md). "
          "``\"sor\"``: successive overrelaxation (Algorithm 8 / (1.55), "
          ":func:`aidopt.api.svm.solve_svm_sor`) on the dual of the *modified* SVM (1.35) "
          ":math:`\\min C s'y + \\frac12 (w'w + \\gamma^2)`, whose offset is regularized: **not** "
          "the problem of ``norm=\"l2\"`` with ``method=\"aid\"`` nor LIBSVM's (close, not equal). "
          "Linear kernel and ``norm=\"l2\"`` only; ``solver`` must be None or ``\"sor\"``; ``tol`` "
          "is the relative duality gap at which SOR stops (checked on exact passes), "
          "``max_iter`` the number of sweeps (None: 10,000), ``time_limit`` is checked after "
          "every sweep, ``solver_options={\"omega\": w}`` sets the relaxation factor in (0, 2) "
          "(default 1). ``lower_bound`` is the dual (1.37) at SOR's ``u``, a valid bound for "
          "any ``u`` in the box ``0 <= u <= C s`` (no equality constraint); "
          "``certified_optimal`` only when the relative gap is within ``tol``, else "
          "``iteration_limit`` / ``time_limit`` (docs/sor.md).",
          kind="{\"aid\", \"colgen\", \"lpc\", \"sor\"}", choices=("aid", "colgen", "lpc", "sor"),
          estimator=False),
    Param("bias", "free",
          "``\"regularized\"`` (linear 2-norm only): the modified SVM (1.35), objective "
          ":math:`\\frac12 (w'w + b^2) + C \\sum_i s_i \\max(0, 1 - y_i(w x_i + b))` (LIBLINEAR's "
          "problem), by AID with **SOR as the aggregated solver** (``solver`` defaults to "
          "``\"sor\"``; any QP solver works too), certified on the full data by its dual (1.37) "
          "(:class:`aidopt.decomposition.ModifiedSVMProblem`, docs/sor.md). ``solver_options`` "
          "for SOR: ``omega`` (default 1), ``gap_tol`` (each aggregated solve's relative gap, "
          "default ``tol / 4``), ``max_sweeps`` (per solve, default 10,000).",
          kind="{\"free\", \"regularized\"}", choices=("free", "regularized"), estimator=False),
    dataclasses.replace(LPC.params["chunks"], estimator=False),
    dataclasses.replace(LPC.params["tau"], estimator=False),
    Param("engine", None,
          "As in :func:`solve_lad`; ``\"dask\"`` runs AID on the linear SVMs (``method=\"aid\"``, "
          "no kernel).",
          kind="{\"numpy\", \"dask\"}", estimator=False, flag=""),
)


@SVM.door()
@clocked  # the input's checks count against time_limit
def solve_svm(X, y, *, sample_weight=None, p, **options) -> AIDResult:
    r"""Soft-margin SVM :math:`\min_{w,b} R(w) + C \sum_i s_i \max(0, 1 - y_i(w x_i + b))`, certified.

    Parameters
    ----------
    X : array-like or scipy sparse matrix of shape (n, m), dask array, ChunkedMatrix or path
        Out of core with ``engine="dask"`` as in :func:`solve_lad`. A scipy sparse X (CSR, CSC,
        COO, ...) is validated and converted to CSR once and never densified by dual coordinate
        descent (``norm="l2"``, either ``bias``), the LPs on the full data, column generation over
        features (``norm="l1"``, chosen by shape when m >= 4 n), ``method="sor"`` /
        ``"lpc"`` and the kernels (kernel blocks from the stored entries; only small pieces, the
        k-means centres, the K x m centroids and kernel blocks, are dense). AID on a linear SVM
        densifies it (its centroids): the shape rule runs AID on tall, narrow, dense X only.
    y : array-like of shape (n,) or str
        Two classes (any two labels; the sorted first is -1, as in scikit-learn). A str names
        the labels in X's store.
    sample_weight : array-like of shape (n,) or str, optional
    solver : str, optional
        Default :func:`default_svm_solver`: "smo" for kernels (:mod:`aidopt.numerics.smo`), "fm"
        (aidopt's interior point, :mod:`aidopt.numerics.fm`) for linear 2-norm QPs, "highs" for LPs.
        The linear 2-norm SVM (``bias="free"``) is first dispatched by the data's shape
        (:func:`aidopt.api._shape.linear_method`, logged and noted in ``result.message``): AID
        with "fm" on tall, narrow, dense X; "dcd" (dual coordinate descent on the full data's
        sparse rows, :mod:`aidopt.numerics.dcd`; ``aid`` has no effect) on sparse or wide X.
        ``solver="dcd"`` chooses it whatever the shape (``solver_options``: ``tol``, the gap of
        its own stop, and ``max_iter``, passes over the rows; ``time_limit`` is checked between
        passes).
        r0 defaults to max(1.1 m / n, 0.0001). The other common options are listed below.

    Returns
    -------
    AIDResult
        ``solution["w"], solution["b"]`` and ``solution["alpha"]`` (lifted duals of the margin
        constraints, one per row); kernel AID returns ``alpha`` and ``b`` (``w`` lives in feature
        space) plus what ``decision_function`` needs. ``method="sor"`` adds ``solution["gamma"]``
        (``b = -gamma``) and ``alpha`` is its dual ``u``.

    Examples
    --------
    >>> import numpy as np, aidopt
    >>> rng = np.random.default_rng(0)
    >>> y = np.where(rng.random(3000) < 0.5, 1, -1)
    >>> X = rng.normal(size=(3000, 5)) + 0.5 * y[:, None]
    >>> res = aidopt.solve_svm(X, y, C=0.1, log=False)
    >>> res.certified
    True
    """
    if p.method not in ("aid", "colgen", "lpc", "sor"):
        raise ValueError(f"method must be 'aid', 'colgen', 'lpc' or 'sor', got {p.method!r}")
    if p.method == "colgen" and (p.norm != "l1" or p.kernel not in (None, "linear")
                                 or p.bias != "free"):
        raise ValueError("method='colgen' (column generation over features) solves the linear "
                         "1-norm SVM with a free offset: use norm='l1' without a kernel (got "
                         f"norm={p.norm!r}, kernel={p.kernel!r}, bias={p.bias!r}); the "
                         "infinity-norm optimum is dense in w (docs/svm.md)")
    streamed = p.method == "aid" and p.kernel in (None, "linear")  # what the dask engine runs
    engine = resolve_engine(X, p.engine if p.engine is not None or streamed else "numpy")
    if engine == "dask" and p.method == "colgen":
        raise ValueError("method='colgen' needs X in memory (engine='numpy'): its pricing reads "
                         "every column")
    if engine == "dask" and not streamed:
        raise ValueError("engine='dask' runs AID on the linear SVMs (method='aid', no kernel); got "
                         f"method={p.method!r}, kernel={p.kernel!r}: use engine='numpy' (X in memory)")
    if p.method == "sor":
        if p.norm != "l2" or p.kernel not in (None, "linear"):
            raise ValueError("method='sor' solves the modified linear SVM (1.35) (2-norm, gamma "
                             f"regularized): use norm='l2' without a kernel (got norm={p.norm!r}, "
                             f"kernel={p.kernel!r})")

        return solve_svm_sor(X, y, p.C, sample_weight=sample_weight, **options)
    if p.method == "lpc":
        if p.norm != "l1" or p.kernel not in (None, "linear"):
            raise ValueError("method='lpc' solves the 1-norm LSVM (1.28): use norm='l1' without a kernel")
        from aidopt.api.lpc import solve_lsvm_lpc

        data = as_classification_data(X, y, sample_weight, sparse=True)
        result = solve_lsvm_lpc(data.X, data.y, p.C, sample_weight=data.s, chunks=p.chunks, tau=p.tau,
                                **options)
        from scipy import sparse

        rows = (f"LP chunking on CSR row blocks ({int(data.X.nnz)} stored entries; X not "
                "densified)" if sparse.issparse(data.X) else "LP chunking on dense row blocks")
        return _with_note(_front.decorate(result, data), rows)
    if p.bias not in ("free", "regularized"):
        raise ValueError(f"bias must be 'free' or 'regularized', got {p.bias!r}")
    if p.bias == "regularized":
        if p.norm != "l2" or p.kernel not in (None, "linear"):
            raise ValueError("bias='regularized' is the modified linear 2-norm SVM (1.35): use "
                             f"norm='l2' without a kernel (got norm={p.norm!r}, kernel={p.kernel!r})")
        from aidopt.decomposition.plugins.modified_svm import ModifiedSVMProblem

        # fm by default: 0.30x SOR's wall time at 1e5 x 20 (docs/benchmarks.md); SOR (the seed's
        # method) with solver="sor"; on sparse or wide X dual coordinate descent on the full
        # data with the offset a regularized constant feature (the same rule as bias="free")
        config = RunConfig.from_kwargs(options, caller="solve_svm", solver="fm")
        data = as_classification_data(X, y, sample_weight, engine=engine, sparse=engine == "numpy")
        note = ""
        if engine == "numpy":
            data, config, note = _shape.prepare(data, options, config, what="modified SVM (1.35)")
        result = _front.decorate(_front.run_rows(ModifiedSVMProblem(C=p.C), data, config), data)
        return _with_note(result, note)
    config = RunConfig.from_kwargs(options, caller="solve_svm", solver=default_svm_solver(p.norm, p.kernel))
    linear = p.kernel in (None, "linear") and engine == "numpy"
    by_shape = p.norm == "l2" and linear
    lp_by_shape = p.norm != "l2" and linear
    data = as_classification_data(X, y, sample_weight, engine=engine, sparse=engine == "numpy")
    note = ""
    if by_shape:  # AID, or dual coordinate descent on sparse or wide X (docs/svm.md)
        data, config, note = _shape.prepare(data, options, config)
    colgen = False
    if lp_by_shape:  # AID, the LP on the full data, or column generation (docs/svm.md)
        data, config, note, colgen = _shape.prepare_lp_svm(data, options, config, norm=p.norm,
                                                           method=p.method)
    if p.kernel is None or p.kernel == "linear":
        if p.cache_size is not None:
            raise ValueError("cache_size is for kernel AID (kernel='rbf', 'poly' or a callable): "
                             "the linear SVM keeps no kernel columns")
        problem = SVMProblem(C=p.C, norm=p.norm, form=p.form)
    else:
        from aidopt.decomposition.plugins.kernel_svm import KernelSVMProblem

        if p.norm != "l2":
            raise ValueError(f"kernel AID solves the 2-norm SVM dual; norm={p.norm!r} is not supported")
        problem = KernelSVMProblem(C=p.C, kernel=p.kernel, gamma=p.gamma, degree=p.degree, coef0=p.coef0,
                                   cache_size=p.cache_size)
        # gamma="scale" over every row, as documented (and as scikit-learn's SVC): the run below
        # leaves rows of zero sample weight out of the model
        problem.gamma = problem.resolved_gamma(data)
        if _is_sparse(data.X):  # kept sparse (KernelSVMProblem: the kernel blocks from CSR rows)
            note = (f"kernel AID on the sparse rows (CSR, {int(data.X.nnz)} stored entries; "
                    "kernel blocks from the stored entries, X not densified)")
    engine_run = None
    if colgen:  # column generation over features: a loop of its own on the run framework
        from aidopt.decomposition.colgen import solve_l1_colgen

        engine_run = solve_l1_colgen
    result = _front.decorate(_front.run_rows(problem, data, config, run=engine_run), data)
    return _with_note(result, note)


def _is_sparse(X) -> bool:
    from scipy import sparse

    return sparse.issparse(X)


def _with_note(result, note: str):
    """``result`` with the shape rule's ``note`` (which method ran, and why) ending its message."""
    if note:
        result.message = f"{result.message}; {note}" if result.message else note
    return result


class SVMClassifier(_MulticlassMixin, _BaseEstimator):
    """Soft-margin SVM classifier (2-norm, 1-norm, infinity-norm, RLP, or kernel), certified.

    Two classes are one binary SVM. More classes are binary SVMs, one per class against the
    rest (``multi_class="ovr"``, the default of the linear SVMs, as LIBLINEAR) or one per pair
    of classes (``"ovo"``, the default of the kernel SVMs, as LIBSVM), each certified on its
    own, or (``"crammer_singer"``, linear 2-norm or 1-norm) the joint Crammer–Singer model of
    all classes, one problem with one certificate (docs/multiclass.md).

    Parameters
    ----------

    Attributes
    ----------
    classes_ : ndarray of shape (k,)
    coef_ : ndarray of shape (1, n_features) or (n_subproblems, n_features)
        Linear SVMs only; one row per subproblem (its +1 class against the rest or the pair's
        second class). ``multi_class="crammer_singer"``: one row per class (k >= 3), or
        ``w_1 - w_0`` for two classes.
    intercept_ : ndarray of shape (1,) or (n_subproblems,)
        Zeros for ``multi_class="crammer_singer"`` (no offset, as LIBLINEAR's ``-s 4``).
    support_ : ndarray of int
        Rows with a positive lifted dual ``alpha_i > 1e-8 C s_i`` (interior-point solvers return
        tiny positive values for non-support rows); k classes: in any subproblem.
    support_vectors_, dual_coef_ : kernel SVMs: ``f(x) = sum dual_coef_ K(sv, x) + intercept_``;
        k classes: ``dual_coef_`` has one row per subproblem (zero for the support vectors of
        the others).
    result_ : AIDResult or MulticlassResult
        k classes: :class:`aidopt.api.multiclass.MulticlassResult`, one result per subproblem;
        ``multi_class="crammer_singer"``: the one joint problem's ``AIDResult``.
    results_ : list of AIDResult
        One per subproblem (``[result_]`` for two classes and for Crammer–Singer, one problem),
        each with its certificate.
    certified_ : bool
        Every subproblem is certified optimal.
    estimators_ : list of SVMClassifier
        k classes: the binary classifier of each subproblem (labels -1 / +1).
    n_iter_ : int
        AID iterations (1 for a direct solve); k classes: the most of any subproblem.
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
    >>> from sklearn.datasets import load_iris
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = SVMClassifier().fit(X, y)
    >>> clf.coef_.shape, clf.certified_, clf.score(X, y) > 0.9
    ((3, 4), True, True)
    """

    _options_note = ('the solver defaults to "fm" (aidopt.numerics.fm) for the 2-norm QP, "smo" '
                     '(aidopt.numerics.smo) for kernels, "highs" for the LPs')
    _family = SVM
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

    #: sparse X reaches every path as it is: the linear ones (dcd, LPs, SOR, LPC) and the
    #: kernels (kernel blocks and decision values from the stored entries, never densified)
    _dense_input = False

    def fit(self, X, y, sample_weight=None):
        return self._fit_classes(X, y, sample_weight)

    fit.__doc__ = WEIGHTED_FIT_DOC.format(what="Fit by (certified) AID.")

    def _fit_binary(self, X, y, sample_weight) -> None:
        """One certified binary SVM on validated two-class data."""
        result = self._solve_binary(solve_svm, X, y, sample_weight, "SVM")
        sol = result.solution
        alpha = sol["alpha"]
        if alpha is not None:
            s = np.ones(len(alpha)) if sample_weight is None else np.asarray(sample_weight, float)
            self.support_ = np.flatnonzero(alpha > 1e-8 * self.C * s.max())
        if self._linear:
            self.coef_ = np.asarray(sol["w"], dtype=float)[None, :]
        else:
            from aidopt.data.validate import as_classification_data

            data = as_classification_data(X, y, sparse=True)
            self.support_vectors_ = data.X[self.support_]  # CSR rows for a sparse X
            self.dual_coef_ = (alpha * data.y)[self.support_][None, :]
            self._kernel_spec = (self.kernel, sol["gamma"], self.degree, self.coef0)
            self._restore()
        self._after_fit(X, result, "SVM", n_features=len(sol["feature_names"]))

    def _fit_joint(self, X, y, sample_weight) -> None:
        """``multi_class="crammer_singer"``: the joint model of all classes
        (:func:`aidopt.api.crammer_singer.solve_crammer_singer`), one certified result.

        k >= 3: ``coef_`` (k, m) holds the class weights w_r, ``intercept_`` (k,) zeros (no
        offset), ``decision_function`` (n, k) the scores ``X coef_'`` and ``predict`` their argmax.
        Two classes are fitted jointly too (as LIBLINEAR's ``-s 4``), with the binary shapes:
        ``coef_`` (1, m) is ``w_1 - w_0`` (``result_.solution["w"]`` has both).
        """
        from aidopt.api.crammer_singer import NORMS, solve_crammer_singer

        if not self._linear:
            raise ValueError("multi_class='crammer_singer' is a linear model: kernel must be None "
                             f"or 'linear', got {self.kernel!r} (kernels: 'ovr' or 'ovo')")
        if self.norm not in NORMS:
            raise ValueError(f"multi_class='crammer_singer' takes norm 'l2' (QP) or 'l1' (LP), got "
                             f"norm={self.norm!r}")
        if self.form == "dual":
            raise ValueError("multi_class='crammer_singer' solves its primal model (the certificate "
                             "reads the duals of its margin rows): form must be 'auto' or 'primal'")
        if self.cache_size is not None:
            raise ValueError("cache_size is for kernel AID (kernel='rbf', 'poly' or a callable): "
                             "the linear SVM keeps no kernel columns")
        names = RunConfig.names()
        options = {k: v for k, v in self.get_params().items() if k in names}
        result = solve_crammer_singer(X, y, C=self.C, norm=self.norm, sample_weight=sample_weight,
                                      **options)
        self._require_solution(result, "Crammer-Singer SVM")
        sol = result.solution
        self.classes_ = np.asarray(sol["classes"])
        w = np.asarray(sol["w"], dtype=float)
        if len(self.classes_) == 2:
            self.coef_, self.intercept_ = (w[1] - w[0])[None, :], np.zeros(1)
        else:
            self.coef_, self.intercept_ = w, np.zeros(len(w))
        if sol.get("alpha") is not None:
            s = np.ones(len(sol["alpha"])) if sample_weight is None else np.asarray(sample_weight, float)
            self.support_ = np.flatnonzero(np.asarray(sol["alpha"]).sum(axis=1) > 1e-8 * self.C * s.max())
        self._after_fit(X, result, "Crammer-Singer SVM", n_features=len(sol["feature_names"]))
        self.results_ = [result]
        self.certified_ = bool(result.certified)

    def _combine(self, estimators, rows) -> None:
        """``coef_`` / ``intercept_`` (:meth:`_MulticlassMixin._combine`), ``support_`` (the
        rows that are support vectors of any subproblem) and, for kernels,
        ``support_vectors_`` and a ``dual_coef_`` row per subproblem over them."""
        super()._combine(estimators, rows)
        if not all(hasattr(est, "support_") for est in estimators):
            return
        own = [est.support_ if r is None else r[est.support_] for est, r in zip(estimators, rows,
                                                                                 strict=True)]
        self.support_ = np.unique(np.concatenate(own))
        if self._linear:
            return
        position = {row: i for i, row in enumerate(self.support_.tolist())}
        self.dual_coef_ = np.zeros((len(estimators), self.support_.size))
        places = []
        for p, (est, sv) in enumerate(zip(estimators, own, strict=True)):
            at = np.array([position[row] for row in sv.tolist()], dtype=int)
            self.dual_coef_[p, at] = est.dual_coef_[0]
            places.append(at)
        # every support vector once, in the order of support_: the first subproblem's copy of
        # each row (dense or CSR rows alike)
        first = np.unique(np.concatenate(places), return_index=True)[1]
        vectors = [est.support_vectors_ for est in estimators]
        from scipy import sparse

        stacked = (sparse.vstack(vectors, format="csr") if sparse.issparse(vectors[0])
                   else np.concatenate(vectors))
        self.support_vectors_ = stacked[first]
        self._kernel_spec = estimators[0]._kernel_spec
        self._restore()

    def _restore(self) -> None:
        """The kernel function of the fit (a local function: not pickled)."""
        if not self._linear:
            from aidopt.numerics.kernels import svc_kernel

            self._kfun = svc_kernel(*self._kernel_spec)

    def _decision(self, X) -> np.ndarray:
        """The binary decision values on validated X."""
        if self._linear:
            return X @ self.coef_[0] + self.intercept_[0]
        return self._kfun(X, self.support_vectors_) @ self.dual_coef_[0] + self.intercept_[0]

    def _scores(self, X) -> np.ndarray:
        """The subproblems' decision values; a kernel is evaluated once on the support vectors
        of all subproblems."""
        if self._linear:
            return super()._scores(X)
        return self._kfun(X, self.support_vectors_) @ self.dual_coef_.T + self.intercept_


# ----------------------------------------------------------------------------------------------
# solve_svm(method="sor"): the linear SVM (1.35) with an AIDResult and a dual certificate

#: sweeps allowed by :func:`solve_svm_sor` when ``max_iter`` is None
SVM_MAX_SWEEPS = 10_000

_log = logging.getLogger("aidopt.sor")


def solve_svm_sor(X, y, C: float = 1.0, *, sample_weight=None, **options):
    r"""The modified linear SVM (1.35) by SOR (1.55), as an :class:`~aidopt.results.AIDResult`.

    ``solve_svm(X, y, C=..., method="sor")`` calls this. The problem is (1.35) with ``nu = C``::

        min_{w, gamma, y}  C s'y + 1/2 (w'w + gamma^2)   s.t.  D(Aw - e gamma) + y >= e,  y >= 0

    (``s`` the sample weights, default ones). The offset is regularized (``gamma^2``), so this is
    **not** the standard 2-norm SVM of LIBSVM or of ``solve_svm(norm="l2", method="aid")``: the
    solutions are close but not equal in general (docs/sor.md).

    Parameters
    ----------
    X : array-like or scipy sparse matrix of shape (n, m)
        A sparse X (CSR, CSC, COO, ...) is validated and converted to CSR once and swept on its
        stored entries (:func:`aidopt.numerics.sor.sor_linear`); it is never densified.
    y : array-like of shape (n,)
        Two classes (the sorted first is -1).
    C : float
        ``nu > 0`` of (1.35).
    sample_weight : array-like of shape (n,), optional
        Non-negative; the bounds become ``0 <= u_i <= C s_i``. Zero-weight rows are left out
        (their ``alpha`` is 0).
    **options
        The common options. ``tol``: stop when the relative duality gap
        ``(primal - dual) / max(1, |primal|)`` is ``<= tol`` (checked on exact passes over the
        data, see :func:`sor_linear`'s ``gap_tol``); ``feasibility_tol``: the bound violation of
        ``u`` (always 0: ``u`` is projected); ``max_iter``: the number of sweeps (``None``:
        :data:`SVM_MAX_SWEEPS`); ``time_limit``: checked after every sweep; ``log``: a progress
        table (at sweeps 0, 1, 2, 4, 8, ... and the last); ``solver``: ``None`` or ``"sor"``;
        ``solver_options``: only ``{"omega": w}``, the relaxation factor in ``(0, 2)``
        (default 1). ``seed``, ``aid``, ``r0``, ``threads``, ``tee``, ``write_models``,
        ``fallback`` and ``raise_on_failure`` have no effect; ``solver_options`` may also set
        ``order`` (``"cyclic"``, the default, or ``"random"``), ``shrinking`` and ``polish``
        (both default ``True``: measured faster, docs/sor.md) of :func:`sor_linear`.

    Returns
    -------
    AIDResult
        ``solution``: ``w``, ``b = -gamma`` (the decision function is ``X w + b`` as for the
        other SVM methods), ``gamma``, ``alpha = u`` (the dual of (1.37), one per row),
        ``feature_names``, ``classes``. ``objective`` is (1.35) at the returned ``(w, gamma)``
        with the best slacks; ``lower_bound`` the dual value (1.37) at ``u``. ``certificate``
        (method ``"sor_dual"``) is certified when the relative gap is ``<= tol`` and ``u`` is in
        its box; ``termination`` is ``certified_optimal`` only then, else ``iteration_limit`` or
        ``time_limit``.

    Notes
    -----
    *Why the dual value is a lower bound.* For ``u >= 0`` (multipliers of the margin rows) and
    ``r = C s - u >= 0`` (multipliers of ``y >= 0``), the Lagrangian of (1.35) is
    ``L = C s'y + 1/2 (w'w + gamma^2) - u'(D(Aw - e gamma) + y - e) - r'y``; it is ``<=`` the
    objective at every feasible ``(w, gamma, y)``. Its minimum over ``(w, gamma, y)`` (the ``y``
    terms cancel since ``r = C s - u``; ``w = A'Du``, ``gamma = -e'Du``) is
    ``e'u - 1/2 u'D(AA' + ee')Du``, the dual (1.37). So *every* ``u`` with ``0 <= u <= C s``
    gives a lower bound on the optimum of (1.35): no equality constraint (unlike (1.36)) has to
    hold, and SOR's iterates never leave the box. ``primal`` is a feasible point's objective,
    hence an upper bound; both are evaluated from ``v = H'u`` recomputed exactly from ``u``.
    """
    from scipy import sparse

    from aidopt.data.validate import as_classification_data
    from aidopt.decomposition.plugins.svm import gap_floor as svm_gap_floor
    from aidopt.decomposition.protocol import relative_gap
    from aidopt.decomposition.run import Column, Run, RunConfig, run_scope
    from aidopt.results import Certificate, IterationRecord, Termination
    from aidopt.solvers import ProblemClass

    if isinstance(C, bool) or not isinstance(C, numbers.Real) or not np.isfinite(C) or C <= 0:
        raise ValueError(f"C must be a positive finite number (nu of (1.35)), got {C!r}")
    config = RunConfig.from_kwargs(options, caller="solve_svm", solver="sor")
    if config.solver.lower() != "sor":
        raise ValueError(f"method='sor' runs aidopt's own SOR sweeps, not an external solver: "
                         f"solver must be None or 'sor', got {config.solver!r}")
    config.solver = "sor"
    unknown = sorted(set(config.solver_options) - {"omega", "order", "shrinking", "polish"})
    if unknown:
        raise ValueError("method='sor' takes solver_options 'omega', 'order', 'shrinking' and "
                         f"'polish', got {unknown}")
    omega = _check_omega(config.solver_options.get("omega", 1.0))
    order = config.solver_options.get("order", "cyclic")
    shrinking = config.solver_options.get("shrinking", True)
    polish = config.solver_options.get("polish", True)
    max_sweeps = SVM_MAX_SWEEPS if config.max_iter is None else int(config.max_iter)
    data = as_classification_data(X, y, sample_weight, sparse=True)
    is_sparse = sparse.issparse(data.X)
    used, keep = data.without_zero_weights()
    weights = None if np.all(used.s == 1.0) else used.s
    dimensions = {"n": data.n, "m": data.m, **({"nnz": int(data.X.nnz)} if is_sparse else {})}
    rows_note = (f"SOR on the sparse rows (CSR, {int(data.X.nnz)} stored entries; X not densified)"
                 if is_sparse else "SOR on the dense rows")
    run = Run("svm_sor", ProblemClass.QP, config, dimensions=dimensions,
              mode=f"modified SVM (1.35), gamma regularized; omega {omega:g}; {rows_note}")
    history: list = []
    floor = svm_gap_floor(used, float(C))  # the scale-invariant gap of the SVM certificates
    next_logged, printed = [0], [None]  # the next sweep count to print (0, 1, 2, 4, ...)

    def progress(sweeps, residual, primal, dual):
        rec = IterationRecord(t=sweeps, n_clusters=0, r_t=math.nan, F_t=dual, E_t=primal,
                              E_best=primal, lower_bound=dual, gap=relative_gap(primal, dual, floor),
                              n_split=0, info={"residual": residual})
        history.append(rec)
        if sweeps >= next_logged[0]:
            run.row(sweeps, residual, primal, dual, rec.gap)
            next_logged[0], printed[0] = max(1, 2 * sweeps), sweeps

    with run_scope(config):
        run.intro()
        run.header([Column("sweeps", 8, "d"), Column("residual", 10, ".3e"),
                    Column("primal E", 15, ".9g"), Column("dual bound", 15, ".9g"),
                    Column("rel gap", 10, ".2e")])
        res = sor_linear(used.X, used.y, float(C), omega=omega, tol=0.0, max_sweeps=max_sweeps,
                         weights=weights, gap_tol=config.tol, gap_scale=floor,
                         # the run's clock, which counts the checks of the input too
                         time_limit=None if run.remaining() is None else max(run.remaining(), 1e-9),
                         callback=progress, order=order, shrinking=shrinking, seed=config.seed,
                         polish=polish, interruptible=True)
        if history and history[-1].t != printed[0]:  # the last row, when not printed yet
            last = history[-1]
            run.row(last.t, last.info["residual"], last.E_t, last.lower_bound, last.gap)
        upper = float(C) * used.s
        violation = float(max(0.0, -float(res.u.min()), float(np.max(res.u - upper)))) / float(C)
        gap = relative_gap(res.primal, res.dual, floor)
        certified = bool(np.isfinite(res.primal) and np.isfinite(res.dual) and gap <= config.tol
                         and violation <= config.feasibility_tol)
        certificate = Certificate(
            method="sor_dual", certified=certified, primal_objective=res.primal,
            dual_objective=res.dual, relative_gap=gap,
            residuals={"natural residual (1.47)": res.residual, "bound violation": violation},
            tol=config.tol, feasibility_tol=config.feasibility_tol, checked=["bound violation"],
            note=("dual (1.37) at the SOR iterate u, 0 <= u <= C s: a lower bound on (1.35) for "
                  "any such u; (1.35) regularizes gamma, it is not LIBSVM's SVM"),
            dual_values={"u": res.u},
        )
        if certified:
            termination = Termination.CERTIFIED_OPTIMAL
            message = f"relative duality gap {gap:.2e} <= tol after {res.sweeps} sweeps"
        elif res.interrupted:
            termination = Termination.INTERRUPTED
            message = f"interrupted (Ctrl-C) after {res.sweeps} sweeps, relative gap {gap:.2e}"
        elif res.time_limited:
            termination = Termination.TIME_LIMIT
            message = f"time limit after {res.sweeps} sweeps, relative gap {gap:.2e}"
        else:
            termination = Termination.ITERATION_LIMIT
            message = f"{res.sweeps} sweeps, relative gap {gap:.2e} > tol"
        message += f"; {rows_note}"
        alpha = res.u
        if keep is not None:
            alpha = np.zeros(data.n)
            alpha[keep] = res.u
            message += f"; {int((~keep).sum())} row(s) with zero sample weight left out of the model"
        run.dimensions["sweeps"] = res.sweeps
        result = run.result(
            termination, message, objective=res.primal, lower=min(res.dual, res.primal),
            solution={"w": res.w, "b": -res.gamma, "gamma": res.gamma, "alpha": alpha,
                      "feature_names": list(data.feature_names), "classes": data.classes.tolist()},
            certificate=certificate, history=history, aid=False, floor=floor)
    return result
