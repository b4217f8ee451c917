r"""Learning from aggregate outputs: ``solve_aggregate_outputs``.

Rows come in collections; of each collection only the number of class-1 rows is known. Two
methods (the mathematics in docs/aggout.md):

* ``method="miqp"``: the Musicant et al. MIQP (1/2 ||w||^2, or its 1-norm MILP), solved by AID
  over clusters of rows within collections (:class:`aidopt.decomposition.AggregateOutputProblem`)
  or directly (``aid=False``), with the MIP solver's bound;
* ``method="slaag"``: Dutt & Kumar's successive linear approximation (problem (3), then the
  step-2 programs), a heuristic that is orders of magnitude faster.
"""

from __future__ import annotations

import math
import numbers

from aidopt.data import as_aggregate_data
from aidopt.decomposition import RunConfig, solve, solve_direct
from aidopt.decomposition.aggout import AggregateOutputProblem
from aidopt.decomposition.run import common_options
from aidopt.decomposition.sla import successive_linearization
from aidopt.decomposition.slaag import SLAAGStep, class_costs
from aidopt.results import AIDResult

__all__ = ["solve_aggregate_outputs", "METHODS"]

METHODS = ("miqp", "slaag")


def _cost(name, value):
    if value is None:
        return None
    if not (isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)
            and value >= 0):
        raise ValueError(f"{name} must be a non-negative finite number, got {value!r}")
    return float(value)


@common_options()
def solve_aggregate_outputs(
    X,
    collections,
    counts,
    *,
    method: str = "slaag",
    C: float | None = None,
    D: float | None = None,
    E: float = 1.0,
    norm: str = "l2",
    big_M: float | None = None,
    **options,
) -> AIDResult:
    r"""Learn a linear classifier :math:`f(x) = w x - b` (class 1 where :math:`f \ge 0`) from
    class-1 counts per collection of rows.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n, m)
    collections : array-like of shape (n,)
        The collection id of every row.
    counts : mapping or array-like
        Class-1 count :math:`y_c` per collection: ``{id: count}``, or an array over the sorted
        distinct ids.
    method : {"slaag", "miqp"}, default "slaag"
        SLAAG's successive linear approximation, or the Musicant et al. mixed-integer program.
    C, D : float, optional
        ``"miqp"``: costs of the hinges and of a collection's count deviation (default 1 and 1).
        ``"slaag"``: costs of problem (3)'s class-1 and class-0 hinges (default: the class-0 and
        class-1 shares of all rows, the seed's section 5).
    E : float, default 1
        ``"slaag"``: cost of the step-2 linearization.
    norm : {"l2", "l1"}, default "l2"
        1/2 ||w||^2 (the seeds' objectives: an MIQP for SCIP / Gurobi, or a QP) or ||w||_1 (an
        MILP / an LP, HiGHS).
    big_M : float, optional
        ``"miqp"``: use this big-M instead of the data-derived one (then no bound is claimed).
    solver : str, optional
        ``"miqp"``: as :func:`aidopt.solve_s3vm` (HiGHS for l1; Gurobi, else SCIP for l2);
        ``"slaag"``: Clarabel for the l2 QP (about ten times faster here than HiGHS's QP
        solver, even warm: docs/benchmarks.md), HiGHS for the l1 LP (warm simplex).
    aid : bool, default True
        ``"miqp"``: ``False`` solves the full MIP directly (its bound is the MIP solver's).
        Ignored by SLAAG.

    Returns
    -------
    AIDResult
        ``solution["w"], solution["b"]``, ``solution["decision"]`` (f on every training row),
        ``solution["labels"]`` (0/1 per training row: the MIP's best labelling, or SLAAG's
        predicted class). Termination: ``"miqp"`` direct: ``certified_optimal`` when the MIP gap
        is within ``tol``; AID: ``cluster_optimal`` when no cluster violates the cluster
        condition (optimal among labellings constant on the final clusters, not a global proof);
        ``"slaag"``: ``no_improvement`` (the seed's stopping rule) or ``stationary``.

    Examples
    --------
    >>> import numpy as np, aidopt
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 2)); truth = (X[:, 0] > 0).astype(int)
    >>> collections = np.arange(200) // 5
    >>> counts = np.bincount(collections, weights=truth).astype(int)
    >>> res = aidopt.solve_aggregate_outputs(X, collections, counts, log=False)
    >>> float(((res.solution["decision"] >= 0) == truth).mean()) > 0.9
    True
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    C, D, E = _cost("C", C), _cost("D", D), _cost("E", E)
    if norm not in ("l2", "l1"):
        raise ValueError(f"norm must be 'l2' or 'l1', got {norm!r}")
    if method == "slaag" and big_M is not None:
        raise ValueError("big_M is a parameter of method='miqp' (SLAAG has no binaries)")
    if method == "slaag" and (E == 0 or (C == 0 and D == 0)):
        raise ValueError("SLAAG needs E > 0 and C + D > 0: with zero hinge costs every program "
                         "is min R(w) and b is arbitrary")
    data = as_aggregate_data(X, collections, counts)
    dimensions = {"n": data.n, "m": data.m, "collections": data.n_collections}
    if method == "slaag":
        config = RunConfig.from_kwargs(options, caller="solve_aggregate_outputs",
                                       solver="clarabel" if norm == "l2" else "highs")
        C0, D0 = class_costs(data)
        step = SLAAGStep(data, C=C0 if C is None else C, D=D0 if D is None else D, E=E, norm=norm)
        config.aid = False
        result = successive_linearization(step, config, dimensions=dimensions,
                                          mode="SLAAG: problem (3), then step-2 programs")
    else:
        from aidopt.api import default_s3vm_solver

        problem = AggregateOutputProblem(C=1.0 if C is None else C, D=1.0 if D is None else D,
                                         norm=norm, big_M=big_M)
        config = RunConfig.from_kwargs(options, caller="solve_aggregate_outputs",
                                       solver=options.get("solver") or default_s3vm_solver(norm))
        result = solve(problem, data, config) if config.aid else solve_direct(problem, data, config)
    result.solution["feature_names"] = list(data.feature_names)
    return result
