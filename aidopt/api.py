"""Public solve functions: validate, then run AID (or another algorithm) or the direct solve."""

from __future__ import annotations

import numbers
import warnings

import numpy as np

from aidopt import solvers
from aidopt.chunked import ChunkedMatrix
from aidopt.data import as_classification_data, as_regression_data, as_semisupervised_data, resolve_engine
from aidopt.decomposition import LADProblem, RunConfig, S3VMProblem, SVMProblem, solve, solve_direct
from aidopt.decomposition.run import common_options
from aidopt.results import AIDResult

__all__ = ["solve_lad", "solve_svm", "solve_s3vm", "solve_fsv", "default_svm_solver", "default_s3vm_solver",
           "bootstrap_coefficients"]


@common_options()
def solve_lad(
    X,
    y,
    *,
    sample_weight=None,
    fit_intercept: bool = False,
    form: str = "auto",
    engine: str | None = None,
    **options,
) -> AIDResult:
    r"""Least-absolute-deviation regression :math:`\min_\beta \sum_i s_i |y_i - x_i\beta|`, certified.

    Parameters
    ----------
    X : array-like of shape (n, m), dask array, ChunkedMatrix or path
        Used as given: no intercept column is added unless ``fit_intercept=True``. Out of core
        (``engine="dask"``): a dask array, a :class:`aidopt.chunked.ChunkedMatrix`, or a path to
        a Zarr store, a ``.npy`` file or Parquet file(s) (docs/dask.md).
    y : array-like of shape (n,) or str
        A str names y in X's store (a Parquet column, an array of a Zarr group).
    sample_weight : array-like of shape (n,) or str, optional
        Non-negative row weights :math:`s_i` (default 1); a str as for ``y``.
    fit_intercept : bool, default False
        Append a column of ones (its coefficient is the last entry of ``beta``). The default is
        the same in :class:`aidopt.LADRegressor` and ``aidopt lad`` (``--fit-intercept``): X is
        the paper's design matrix, used as given.
    form : {"auto", "dual", "primal"}
        LP form of the aggregated problems (see :class:`aidopt.decomposition.LADProblem`).
    engine : {"numpy", "dask"}, optional
        ``"numpy"`` holds X in memory; ``"dask"`` streams it chunk by chunk (every pass over the
        data runs on Dask: on a ``dask.distributed`` cluster when a ``Client`` is active; the
        aggregated models are solved here). Default: ``"dask"`` for a dask array, a
        ChunkedMatrix or a path, else ``"numpy"``. The number of passes over X is reported in
        ``result.dimensions["data_passes"]`` and ``result.message``.

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
    config = RunConfig.from_kwargs(options, caller="solve_lad", solver="highs")
    data = as_regression_data(X, y, sample_weight, fit_intercept=fit_intercept,
                              engine=resolve_engine(X, engine))
    problem = LADProblem(form=form)
    result = _run(problem, data, config)
    result.solution["feature_names"] = list(data.feature_names)
    return result


def _run(problem, data, config: RunConfig) -> AIDResult:
    """AID or the direct solve on the rows with positive sample weight; per-row arrays of the
    solution (``alpha``) are expanded back to all rows, with 0 for the zero-weight ones."""
    used, keep = data.without_zero_weights()
    if used.n <= used.m and not hasattr(data, "classes"):
        raise ValueError(
            f"only {used.n} rows have a positive sample weight, need more than m={used.m}"
        )
    streamed = data.X if isinstance(data.X, ChunkedMatrix) else None
    validating = streamed.passes if streamed is not None else 0
    result = solve(problem, used, config) if config.aid else solve_direct(problem, used, config)
    if streamed is not None:
        _report_passes(result, streamed, validating)
    if keep is not None:
        for key in problem.per_element_keys:  # per-row arrays (alpha), not w
            if result.solution.get(key) is not None:
                full = np.zeros(data.n)
                full[keep] = result.solution[key]
                result.solution[key] = full
        note = f"{int((~keep).sum())} row(s) with zero sample weight left out of the model"
        result.message = f"{result.message}; {note}" if result.message else note
        result.n = result.dimensions["n"] = data.n
    return result


def _report_passes(result: AIDResult, X: ChunkedMatrix, before: int) -> None:
    """Put the dask engine's passes over X in ``result.dimensions["data_passes"]`` and the
    message (the passes of validation before the run, and of the run by kind)."""
    result.dimensions["data_passes"] = X.passes
    kinds = ", ".join(f"{kind} {count}" for kind, count in X.pass_counts.items())
    note = (f"dask engine: {X.passes} passes over X ({before} validating, {X.passes - before} in "
            f"the run; {kinds}), {len(X.chunks)} chunks of <= {max(X.chunks)} rows")
    result.message = f"{result.message}; {note}" if result.message else note


def default_svm_solver(norm: str = "l2", kernel=None) -> str:
    """The solver ``solve_svm`` uses when none is given.

    ``"smo"`` (:mod:`aidopt.smo`, warm-started SMO in double precision, handing a solve it does
    not finish to ``"fm"``) for kernel AID (rbf, poly, callable): with the working-set column
    generation it is what makes kernel AID competitive with LIBSVM (docs/benchmarks.md).
    ``"fm"`` (:mod:`aidopt.fm`, the Ferris–Munson interior point with dense normal equations)
    for the linear 2-norm QPs: 7x faster than Clarabel on the aggregated duals; Clarabel is the
    fallback of both. HiGHS's QP solver is an active-set method whose time grows about
    quadratically with the number of clusters (72 s on a 20,000 x 30 dual QP against Clarabel's
    2.3 s, docs/svm.md). HiGHS for the LP SVMs: its vertex solutions make the split test exact.
    """
    if kernel is not None and not (isinstance(kernel, str) and kernel == "linear"):
        return "smo"
    return "fm" if norm == "l2" else "highs"


@common_options()
def solve_svm(
    X,
    y,
    *,
    C: float = 1.0,
    norm: str = "l2",
    kernel=None,
    gamma: float | str = "scale",
    degree: int = 3,
    coef0: float = 1.0,
    cache_size: float | None = None,
    sample_weight=None,
    form: str = "auto",
    method: str = "aid",
    bias: str = "free",
    chunks=8,
    tau: int = 4,
    engine: str | None = None,
    **options,
) -> AIDResult:
    r"""Soft-margin SVM :math:`\min_{w,b} R(w) + C \sum_i s_i \max(0, 1 - y_i(w x_i + b))`, certified.

    Parameters
    ----------
    X : array-like of shape (n, m), dask array, ChunkedMatrix or path
        Out of core with ``engine="dask"`` as in :func:`solve_lad`.
    y : array-like of shape (n,) or str
        Two classes (any two labels; the sorted first is -1, as in scikit-learn). A str names
        the labels in X's store.
    C : float, default 1.0
        Misclassification cost (M in Park & Klabjan, nu in Bradley & Mangasarian).
    norm : {"l2", "l1", "linf", "none"}, default "l2"
        Regularizer R: 1/2 ||w||^2 (QP), ||w||_1, ||w||_inf (LPs) or none (RLP, an LP).
    kernel : None, "linear", "rbf", "poly" or callable, optional
        Kernel AID (Park & Klabjan Appendix B) on the aggregated dual; ``norm`` must be "l2".
        A callable takes ``(A, B)`` and returns the ``len(A) x len(B)`` kernel matrix.
    gamma, degree, coef0
        Kernel parameters as in scikit-learn's SVC (``gamma="scale"`` is 1 / (m Var(X))).
    cache_size : float, optional
        Kernel AID: MB for the cached mean-kernel columns (8 n bytes each; as SVC's
        ``cache_size``). Past it the columns used least recently are dropped and recomputed
        when needed again: more kernel values, the same answer. Default: a third of the machine's
        physical memory.
    sample_weight : array-like of shape (n,) or str, optional
    solver : str, optional
        Default :func:`default_svm_solver`: "smo" for kernels (:mod:`aidopt.smo`), "fm"
        (aidopt's interior point, :mod:`aidopt.fm`) for linear 2-norm QPs, "highs" for LPs.
        r0 defaults to max(1.1 m / n, 0.0001). The other common options are listed below.
    form : {"auto", "dual", "primal"}
        Form of the aggregated QP or LP (see :class:`aidopt.decomposition.SVMProblem`).
    method : {"aid", "lpc", "sor"}, default "aid"
        ``"lpc"``: linear program chunking (Bradley–Mangasarian–Musicant Algorithm 3) for the
        1-norm LSVM (1.28), ``norm="l1"`` only, rows read block by block (docs/lpc.md).
        ``"sor"``: successive overrelaxation (Algorithm 8 / (1.55), :func:`aidopt.sor.solve_svm_sor`)
        on the dual of the *modified* SVM (1.35)
        :math:`\min C s'y + \frac12 (w'w + \gamma^2)`, whose offset is regularized: **not** the
        problem of ``norm="l2"`` with ``method="aid"`` nor LIBSVM's (close, not equal). Linear
        kernel and ``norm="l2"`` only; ``solver`` must be None or ``"sor"``; ``tol`` is the
        relative duality gap at which SOR stops (checked on exact passes), ``max_iter`` the
        number of sweeps (None: 10,000), ``time_limit`` is checked after every sweep,
        ``solver_options={"omega": w}`` sets the relaxation factor in (0, 2) (default 1).
        ``lower_bound`` is the dual (1.37) at SOR's ``u``, a valid bound for any ``u`` in the box
        ``0 <= u <= C s`` (no equality constraint); ``certified_optimal`` only when the relative
        gap is within ``tol``, else ``iteration_limit`` / ``time_limit`` (docs/sor.md).
    bias : {"free", "regularized"}, default "free"
        ``"regularized"`` (linear 2-norm only): the modified SVM (1.35), objective
        :math:`\frac12 (w'w + b^2) + C \sum_i s_i \max(0, 1 - y_i(w x_i + b))` (LIBLINEAR's
        problem), by AID with **SOR as the aggregated solver** (``solver`` defaults to ``"sor"``;
        any QP solver works too), certified on the full data by its dual (1.37)
        (:class:`aidopt.decomposition.ModifiedSVMProblem`, docs/sor.md). ``solver_options`` for
        SOR: ``omega`` (default 1), ``gap_tol`` (each aggregated solve's relative gap, default
        ``tol / 4``), ``max_sweeps`` (per solve, default 10,000).
    chunks, tau
        LPC: the number of row blocks (or a fraction such as 1/8) and the stopping window.
    engine : {"numpy", "dask"}, optional
        As in :func:`solve_lad`; ``"dask"`` runs AID on the linear SVMs (``method="aid"``, no
        kernel).

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
    if method not in ("aid", "lpc", "sor"):
        raise ValueError(f"method must be 'aid', 'lpc' or 'sor', got {method!r}")
    streamed = method == "aid" and kernel in (None, "linear")  # what the dask engine runs
    engine = resolve_engine(X, engine if engine is not None or streamed else "numpy")
    if engine == "dask" and not streamed:
        raise ValueError("engine='dask' runs AID on the linear SVMs (method='aid', no kernel); got "
                         f"method={method!r}, kernel={kernel!r}: use engine='numpy' (X in memory)")
    if method == "sor":
        if norm != "l2" or kernel not in (None, "linear"):
            raise ValueError("method='sor' solves the modified linear SVM (1.35) (2-norm, gamma "
                             f"regularized): use norm='l2' without a kernel (got norm={norm!r}, "
                             f"kernel={kernel!r})")
        from aidopt.sor import solve_svm_sor

        return solve_svm_sor(X, y, C, sample_weight=sample_weight, **options)
    if method == "lpc":
        if norm != "l1" or kernel not in (None, "linear"):
            raise ValueError("method='lpc' solves the 1-norm LSVM (1.28): use norm='l1' without a kernel")
        from aidopt.lpc import solve_lsvm_lpc

        data = as_classification_data(X, y, sample_weight)
        result = solve_lsvm_lpc(data.X, data.y, C, sample_weight=data.s, chunks=chunks, tau=tau,
                                **options)
        result.solution["feature_names"] = list(data.feature_names)
        result.solution["classes"] = data.classes.tolist()
        return result
    if bias not in ("free", "regularized"):
        raise ValueError(f"bias must be 'free' or 'regularized', got {bias!r}")
    if bias == "regularized":
        if norm != "l2" or kernel not in (None, "linear"):
            raise ValueError("bias='regularized' is the modified linear 2-norm SVM (1.35): use "
                             f"norm='l2' without a kernel (got norm={norm!r}, kernel={kernel!r})")
        from aidopt.decomposition.modified_svm import ModifiedSVMProblem

        config = RunConfig.from_kwargs(options, caller="solve_svm", solver="sor")
        data = as_classification_data(X, y, sample_weight, engine=engine)
        result = _run(ModifiedSVMProblem(C=C), data, config)
        result.solution["feature_names"] = list(data.feature_names)
        result.solution["classes"] = data.classes.tolist()
        return result
    config = RunConfig.from_kwargs(options, caller="solve_svm", solver=default_svm_solver(norm, kernel))
    data = as_classification_data(X, y, sample_weight, engine=engine)
    if kernel is None or kernel == "linear":
        if cache_size is not None:
            raise ValueError("cache_size is for kernel AID (kernel='rbf', 'poly' or a callable): "
                             "the linear SVM keeps no kernel columns")
        problem = SVMProblem(C=C, norm=norm, form=form)
    else:
        from aidopt.decomposition.kernel_svm import KernelSVMProblem

        if norm != "l2":
            raise ValueError(f"kernel AID solves the 2-norm SVM dual; norm={norm!r} is not supported")
        problem = KernelSVMProblem(C=C, kernel=kernel, gamma=gamma, degree=degree, coef0=coef0,
                                   cache_size=cache_size)
    result = _run(problem, data, config)
    result.solution["feature_names"] = list(data.feature_names)
    result.solution["classes"] = data.classes.tolist()
    return result


def default_s3vm_solver(norm: str = "l2") -> str:
    """The solver ``solve_s3vm`` uses when none is given: HiGHS for the l1 MILP; for the l2 MIQP
    (HiGHS has none) Gurobi when installed, else SCIP. Gurobi solved a 44-cluster aggregated
    Digit1 MIQP in 0.6 s where SCIP 6.3 needed 87 s (docs/s3vm.md); when the size-limited pip
    licence (200 variables in a quadratic model) refuses a larger aggregated model, AID retries it
    with SCIP."""
    if norm != "l2":
        return "highs"
    for name in ("gurobi", "scip"):
        if solvers.availability(name) in ("full", "limited"):
            return name
    raise solvers.SolverUnavailableError(
        "the l2 S3VM is an MIQP, which HiGHS cannot solve: install SCIP (pip install "
        "'aidopt[scip]') or Gurobi (pip install 'aidopt[gurobi]'), or use norm='l1' (a MILP "
        "that HiGHS solves)"
    )


@common_options()
def solve_s3vm(
    X,
    y,
    *,
    labeled=None,
    Ml: float = 5.0,
    Mu: float = 1.0,
    balance: str | None = "constraint",
    norm: str = "l2",
    big_M: float | None = None,
    regularizer: str | None = None,
    **options,
) -> AIDResult:
    r"""Semi-supervised SVM (Bennett & Demiriz's MIQP / MILP) by AID (Park & Klabjan section 3.3).

    :math:`\min R(w) + M_l \sum_{labeled} \max(0, 1 - y_i(w x_i + b))
    + M_u \sum_{unlabeled} \max(0, 1 - |w x_i + b|)`, written with one binary per unlabeled
    row (cluster, under AID) and big-M rows (:mod:`aidopt.models.s3vm`).

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n, m)
    y : array-like of shape (n,)
        -1 / +1 for labeled rows, 0 or NaN for unlabeled ones.
    labeled : array-like of bool, optional
        Which rows are labeled (then ``y`` of the others is ignored).
    Ml, Mu : float, default 5 and 1
        Costs of the labeled and unlabeled hinges.
    balance : {"constraint", "cost", None}, default "constraint"
        Mean of ``w x + b`` over unlabeled rows = mean labeled label; or class-balanced
        labeled costs; or neither.
    norm : {"l2", "l1"}, default "l2"
        Regularizer 1/2 ||w||^2 (MIQP: SCIP or Gurobi) or ||w||_1 (MILP: HiGHS too); the same
        name as in :func:`solve_svm`.
    big_M : float, optional
        Override the data-derived big-M.
    regularizer : {"l2", "l1"}, optional
        Deprecated spelling of ``norm`` (a ``FutureWarning``).
    solver : str, optional
        Default :func:`default_s3vm_solver`. ``solver="highs"`` with ``norm="l2"`` raises
        :class:`aidopt.solvers.SolverCapabilityError` naming Gurobi and SCIP.
    aid : bool, default True
        ``False`` solves the full MIP directly (its bound is the MIP solver's).
    max_iter : int, optional
        Iteration limit: 1 and 5 are the paper's AID1 and AID5. r0 defaults to 0.01 for
        n <= 10^4, else 0.0001 (the paper's smaller rates; at least 12 clusters).

    Returns
    -------
    AIDResult
        ``solution["w"], solution["b"]``, ``solution["decision"]`` (w x_i + b for every row) and
        ``solution["transduction"]`` (the sign labels, -1 / +1, of every row). Termination:
        ``prop5_optimal`` when Prop. 5 holds for the returned solution (optimal among labellings
        constant on the final clusters; not a global certificate), ``certified_optimal`` only
        for a direct solve whose MIP gap is within ``tol``, otherwise the limit that stopped it.
    """
    if regularizer is not None:
        warnings.warn("solve_s3vm(regularizer=...) is now spelled norm=... (as in solve_svm)",
                      FutureWarning, stacklevel=2)
        norm = regularizer
    problem = S3VMProblem(Ml=Ml, Mu=Mu, balance=balance, norm=norm, big_M=big_M)
    config = RunConfig.from_kwargs(options, caller="solve_s3vm", solver=options.get("solver")
                                   or default_s3vm_solver(norm))
    data = as_semisupervised_data(X, y, labeled)
    result = solve(problem, data, config) if config.aid else solve_direct(problem, data, config)
    if "decision" in result.solution:
        result.solution["transduction"] = np.where(result.solution["decision"] >= 0, 1.0, -1.0)
    result.solution["feature_names"] = list(data.feature_names)
    return result


#: ``solve_fsv`` solves each linearized LP by AID above this many rows (``aid=None``)
FSV_AID_ABOVE = 20_000


@common_options(aid=None)
def solve_fsv(
    X,
    y,
    *,
    nu: float = 1.0,
    alpha: float = 5.0,
    start: str = "random",
    sample_weight=None,
    support_tol: float = 1e-6,
    **options,
) -> AIDResult:
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
    X : array-like of shape (n, m)
    y : array-like of shape (n,)
        Two classes (the sorted first is -1).
    nu : float, default 1.0
        Weight of the misclassification error (chosen by cross-validation in the paper).
    alpha : float, default 5.0
        Exponent of the concave step approximation (1.20); the paper found 5 satisfactory.
    start : {"random", "rlp"}, default "random"
        The paper's random start (seeded by ``seed``) or the RLP (1.17) plane.
    sample_weight : array-like of shape (n,), optional
    support_tol : float, default 1e-6
        A feature is selected when ``|w_j| > support_tol * max(1, max |w|)``.
    aid : bool or None, default None
        Solve each linearized LP by AID (with its full-data certificate) or directly with a warm
        persistent solver; ``None``: AID when n > 20,000.
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
    from aidopt.decomposition.fsv import FSVStep
    from aidopt.decomposition.sla import successive_linearization

    aid = options.pop("aid", None)
    config = RunConfig.from_kwargs(options, caller="solve_fsv", solver="highs")
    for name, value in (("nu", nu), ("alpha", alpha)):
        if not (isinstance(value, int | float | np.floating) and not isinstance(value, bool)
                and np.isfinite(value) and value > 0):
            raise ValueError(f"{name} must be a positive finite number, got {value!r}")
    if start not in ("random", "rlp"):
        raise ValueError(f"start must be 'random' or 'rlp', got {start!r}")
    if not (isinstance(support_tol, int | float) and 0 <= support_tol < 1):
        raise ValueError(f"support_tol must be in [0, 1), got {support_tol!r}")
    data = as_classification_data(X, y, sample_weight)
    used, keep = data.without_zero_weights()
    if aid is None:
        aid = used.n > FSV_AID_ABOVE
    if not isinstance(aid, bool):
        raise TypeError(f"aid must be True, False or None, got {aid!r}")
    config.aid = aid
    step = FSVStep(used, nu=nu, alpha=alpha, start=start, aid=aid, support_tol=support_tol)
    result = successive_linearization(
        step, config, dimensions={"n": data.n, "m": data.m},
        mode=f"successive linearization, each LP by {'AID' if aid else 'a warm direct solve'}")
    result.solution["feature_names"] = list(data.feature_names)
    result.solution["classes"] = data.classes.tolist()
    return result


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
