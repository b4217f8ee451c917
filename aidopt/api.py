"""Public solve functions (DESIGN.md section 5): validate, then run AID or the direct solve."""

from __future__ import annotations

from aidopt.data import as_regression_data
from aidopt.decomposition import AIDConfig, LADProblem, solve, solve_direct
from aidopt.results import AIDResult

__all__ = ["solve_lad"]


def solve_lad(
    X,
    y,
    *,
    sample_weight=None,
    fit_intercept: bool = False,
    solver: str = "highs",
    aid: bool = True,
    tol: float = 1e-6,
    feasibility_tol: float = 1e-6,
    max_iter: int | None = None,
    time_limit: float | None = None,
    r0: float | None = None,
    seed: int = 0,
    write_models=None,
    log: bool = True,
    solver_options: dict | None = None,
    threads: int | None = None,
    tee: bool = False,
    raise_on_failure: bool = True,
    form: str = "auto",
) -> AIDResult:
    r"""Least-absolute-deviation regression :math:`\min_\beta \sum_i s_i |y_i - x_i\beta|`, certified.

    Parameters
    ----------
    X : array-like of shape (n, m)
        Used as given: no intercept column is added unless ``fit_intercept=True``.
    y : array-like of shape (n,)
    sample_weight : array-like of shape (n,), optional
        Non-negative row weights :math:`s_i` (default 1).
    fit_intercept : bool, default False
        Append a column of ones (its coefficient is the last entry of ``beta``).
    solver : str, default "highs"
        ``"highs"``, ``"gurobi"``, ``"scip"`` or any Pyomo solver name.
    aid : bool, default True
        Solve by Aggregate and Iterative Disaggregate; ``False`` solves the full LP directly.
    tol : float, default 1e-6
        Relative duality gap accepted as optimal.
    feasibility_tol : float, default 1e-6
        Tolerance on the certificate's scaled dual residuals.
    max_iter, time_limit : optional
        AID iteration limit; wall-clock limit in seconds.
    r0 : float, optional
        Initial aggregation rate; default max(2m/n, 0.005) (max(3m/n, 0.0005) when mn > 5e8).
    seed : int, default 0
    write_models : path, optional
        Directory for every solved model as ``.lp`` and ``.mps``.
    log : bool, default True
        Print the iteration table and termination block.
    solver_options : dict, optional
        Passed through to the solver (aidopt's default for HiGHS is ``{"solver": "ipm"}``).
    threads : int, optional
    tee : bool, default False
        Show the solver's own log.
    raise_on_failure : bool, default True
        Raise when a solve fails instead of returning the best solution so far.
    form : {"auto", "dual", "primal"}
        LP form of the aggregated problems (see :class:`aidopt.decomposition.LADProblem`).

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
    data = as_regression_data(X, y, sample_weight, fit_intercept=fit_intercept)
    config = AIDConfig(
        solver=solver, tol=tol, feasibility_tol=feasibility_tol, max_iter=max_iter,
        time_limit=time_limit, r0=r0, seed=seed, write_models=write_models, log=log,
        solver_options=solver_options or {}, threads=threads, tee=tee,
        raise_on_failure=raise_on_failure,
    )
    problem = LADProblem(form=form)
    result = solve(problem, data, config) if aid else solve_direct(problem, data, config)
    result.solution["feature_names"] = list(data.feature_names)
    return result
