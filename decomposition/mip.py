"""What the MIP plug-ins (S3VM, aggregate outputs) share: tight gap options, the certificate
from a MIP solver's bound on the original big-M model, and the cluster-condition verdict of an
AID run whose aggregated MIPs are not relaxations.

For these problems an aggregated MIP (one binary per cluster) is **not** a relaxation of the
original one, so its optimum ``F_t`` is no lower bound. Two statements remain:

* a solve of the original model (every row its own cluster) with a big-M that is valid at some
  optimum has the solver's branch-and-bound bound as a bound on the optimum
  (:func:`mip_bound_certificate`);
* an AID run that stops because no cluster violates the plug-in's condition has ``E = F`` and,
  with every aggregated MIP solved to optimality, is optimal among labellings constant on the
  final clusters (:func:`cluster_certificate`): a statement about a restricted problem, not a
  global optimality proof.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import sparse

from aidopt.results import Certificate

__all__ = ["MIP_GAP_OPTIONS", "QUADRATIC_OPTIONS", "cluster_certificate", "largest_gap",
           "max_outside_rows", "mip_bound_certificate", "mip_gap", "mip_options",
           "original_bound_certificate", "original_iterate", "row_norms"]

#: relative slack added to a norm computed from sparse rows by expanding a square (rounding of
#: ``||x||^2 - 2 x c + ||c||^2`` is far below it): the big-M bounds built on them stay bounds
SPARSE_SLACK = 1e-10


def max_outside_rows(X, g) -> np.ndarray:
    """Per row of the CSR matrix ``X`` (no duplicate entries), the largest ``g[j]`` over the
    columns j the row does not store (``-inf`` when it stores every column): the value of
    ``max_j g_j(x_kj)`` over the implicit zeros, without the n x m array. One sort of the
    stored entries by the rank of their column in ``g``: the answer is the first rank a row
    lacks."""
    g = np.asarray(g, dtype=float)
    n, m = X.shape
    order = np.argsort(-g, kind="stable")
    rank = np.empty(m, dtype=np.int64)
    rank[order] = np.arange(m)
    lengths = np.diff(X.indptr)
    row = np.repeat(np.arange(n), lengths)
    ranks = rank[X.indices]
    ranks = ranks[np.lexsort((ranks, row))]  # rows stay grouped, ranks increase within a row
    position = np.arange(ranks.size) - X.indptr[:-1][row]
    first = lengths.astype(np.int64)  # the first missing rank: the row length when 0..len-1
    missing = np.flatnonzero(ranks != position)
    np.minimum.at(first, row[missing], position[missing])
    out = np.full(n, -np.inf)
    some = first < m
    out[some] = g[order[first[some]]]
    return out


def row_norms(X, norm: str, centre=None) -> np.ndarray:
    r"""Per row, :math:`\|x_k - c\|` (``centre`` c, default 0) in the 2-norm (``"l2"``) or the
    :math:`\infty`-norm (``"inf"``): the dual norms the big-M bounds of the MIP plug-ins use.

    A dense X: computed on ``X - c``, as before. A sparse X (CSR): from its stored entries,
    never densified: :math:`\|x_k - c\|_2^2` is the stored part plus :math:`\|c\|^2` minus
    the stored columns' :math:`c_j^2` (the square raised by :data:`SPARSE_SLACK`
    :math:`\|c\|^2`, so that rounding cannot bring it below the exact norm), and
    :math:`\|x_k - c\|_\infty` is the larger of the stored part and the largest
    :math:`|c_j|` of the other columns (:func:`max_outside_rows`), exactly.
    """
    if norm not in ("l2", "inf"):
        raise ValueError(f"norm must be 'l2' or 'inf', got {norm!r}")
    if not sparse.issparse(X):
        Z = X if centre is None else X - centre
        return (np.linalg.norm(Z, axis=1) if norm == "l2"
                else np.abs(Z).max(axis=1, initial=0.0))
    X = sparse.csr_matrix(X)
    n = X.shape[0]
    row = np.repeat(np.arange(n), np.diff(X.indptr))
    c = np.zeros(X.shape[1]) if centre is None else np.asarray(centre, dtype=float).ravel()
    stored = X.data - c[X.indices]
    if norm == "inf":
        out = np.zeros(n)
        np.maximum.at(out, row, np.abs(stored))
        return np.maximum(out, max_outside_rows(X, np.abs(c)))
    squares = np.bincount(row, weights=stored * stored - c[X.indices] ** 2, minlength=n)
    c2 = float(c @ c)
    return np.sqrt(np.maximum(squares + c2, 0.0) + SPARSE_SLACK * c2)

MIP_GAP_OPTIONS = {"gurobi": {"MIPGap": 1e-6}, "highs": {"mip_rel_gap": 1e-6},
                   "cplex": {"mip_tolerances_mipgap": 1e-6}, "xpress": {"miprelstop": 1e-6}}
"""MIP gap tolerances tighter than the solvers' defaults (most stop at 1e-4)."""

QUADRATIC_OPTIONS = {"scip": {"numerics/feastol": 1e-9}}
"""Options for a quadratic objective. SCIP moves it into a constraint, which it holds to its
feasibility tolerance (1e-6, an absolute one for values below 1): the MIQP's "bound" then lay
up to 1e-6 below the quadratic it stands for, above the true optimum of an objective of 0.07
(an S2RLSC labelling, 3e-7 relative, found by the fuzz suite)."""


def mip_options(solver: str, problem_class) -> dict:
    """The run's default options of ``solver`` for a mixed-integer ``problem_class``: the gap
    of :data:`MIP_GAP_OPTIONS`, and for a quadratic objective :data:`QUADRATIC_OPTIONS`."""
    options = dict(MIP_GAP_OPTIONS.get(solver, {}))
    if getattr(problem_class, "quadratic", False):
        options.update(QUADRATIC_OPTIONS.get(solver, {}))
    return options


def mip_gap(objective, bound) -> float:
    """The solver's relative gap ``(objective - bound) / max(1, |objective|)`` (NaN without a
    finite bound)."""
    if objective is None or bound is None or not math.isfinite(bound):
        return math.nan
    return max(0.0, objective - bound) / max(1.0, abs(objective))


def largest_gap(best, history) -> float:
    """The largest aggregated MIP gap over the run (NaN when none was finite)."""
    gaps = [r.info.get("mip_gap", math.nan) for r in history] + [best.lifted.info["mip_gap"]]
    return max((g for g in gaps if math.isfinite(g)), default=math.nan)


def original_iterate(data_size: int, best, bound):
    """The iterate that solved the original model (every row its own cluster), or ``None``."""
    if bound is not None and bound.partition.n_clusters == data_size:
        return bound
    return best if best.partition.n_clusters == data_size else None


def original_bound_certificate(size: int, best, bound, history, *, tol: float,
                               feasibility_tol: float, reference: str):
    """``(certificate, residuals)``: the :func:`mip_bound_certificate` of ``best`` when the run
    solved the original model (every one of ``size`` elements its own cluster) and its solver
    proved a finite bound, else ``None``; ``residuals`` holds the largest aggregated MIP gap."""
    residuals = {"largest aggregated MIP gap": largest_gap(best, history)}
    original = original_iterate(size, best, bound)
    if original is None or not math.isfinite(original.lifted.info["mip_bound"]):
        return None, residuals
    return mip_bound_certificate(best.E_t, original.lifted.info, tol=tol,
                                 feasibility_tol=feasibility_tol, residuals=residuals,
                                 reference=reference), residuals


def mip_bound_certificate(E: float, info: dict, *, tol: float, feasibility_tol: float,
                          residuals: dict, reference: str) -> Certificate:
    """The certificate of a solution of value ``E`` from the bound of a solve of the original
    model, whose lift recorded ``info["mip_bound"]``, ``info["big_M"]`` (largest value) and
    ``info["big_M_verified"]`` (1.0 when the big-M is valid at an optimum); ``reference`` names
    the documentation of that argument."""
    mip_bound = info["mip_bound"]
    verified = bool(info["big_M_verified"])
    consistent = mip_bound <= E + tol * max(1.0, abs(E))
    lower = min(mip_bound, E)
    rel = (E - lower) / max(1.0, abs(E))
    residuals = {**residuals, "big-M verified": float(verified)}
    note = (f"bound = the MIP solver's branch-and-bound bound on the full big-M model "
            f"(largest big-M {info['big_M']:.4g}, "
            + (f"valid: {reference})" if verified else
               "NOT verified to be valid at an optimum: the model may cut the optima off, so "
               "its bound proves nothing)"))
    if not consistent:
        note += f"; the bound {mip_bound:.10g} exceeds E: not a bound of this problem"
    ok = verified and consistent
    return Certificate(
        method="mip_bound", certified=bool(ok and rel <= tol), primal_objective=E,
        dual_objective=lower if ok else -math.inf, relative_gap=float(rel) if ok else math.inf,
        residuals=residuals, tol=tol, feasibility_tol=feasibility_tol, checked=[], note=note,
    )


def cluster_certificate(E: float, violations: int | None, *, method: str, condition: str,
                        tol: float, feasibility_tol: float, residuals: dict,
                        name: str = "cluster condition") -> Certificate:
    """The verdict of an AID run of a MIP plug-in that did not solve the original model:
    ``violations`` clusters broke the plug-in's ``condition`` (named ``name`` in the summary) at
    the returned solution (``None``: not checked). Never ``certified``; ``sign_condition`` tells
    whether the condition held."""
    residuals = {**residuals, f"clusters violating {condition}": math.nan if violations is None
                 else float(violations)}
    holds = violations == 0
    note = ("no dual certificate exists for this non-convex MIP; F_t is not a lower bound. "
            + (f"{condition} holds for the returned solution: E = F and every aggregated MIP "
               "was solved to optimality (within the solver's MIP gap), so it is optimal among "
               "labellings constant on the final clusters (not a global optimality proof)"
               if holds else
               f"{condition} does not hold for the returned solution: no optimality claim"))
    return Certificate(
        method=method, certified=False, primal_objective=E, dual_objective=-math.inf,
        relative_gap=math.inf, residuals=residuals, tol=tol, feasibility_tol=feasibility_tol,
        sign_condition=bool(holds), note=note, checked=[], condition_name=name,
        condition="E = F: optimal among solutions constant on the final clusters",
    )
