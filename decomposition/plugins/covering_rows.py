r"""The LSCP by AID over its rows: the model on a subset of the aggregated rows (a relaxation),
grown by the rows its cover misses (docs/facility.md, "The LSCP on a subset of its rows").

The exact aggregation (:mod:`aidopt.data.coverage`) leaves one row per distinct coverage set,
and at a radius where every point sees many sites those rows are many (about :math:`10^5` for
:math:`10^6` uniform points and :math:`10^3` sites at a radius a dozen sites cover) while the
optimum is decided by few of them. This plug-in runs the LSCP

.. math:: \min \textstyle\sum_j f_j x_j \quad\text{s.t.}\quad \sum_{j \in N_r} x_j \ge 1
          \ \ (r \in S),\qquad x \in \{0, 1\}^s

on a subset S of the rows, the row-generation scheme of the p-center's client-subset
relaxation (Contardo, Iori & Kramer 2019) applied to the LSCP itself. On the AID contract:

* **partition**: the rows of S are clusters of one row; the other rows form clusters of more
  rows, which the aggregated model leaves out (dropping constraints: a relaxation, so the MIP's
  dual bound bounds the original optimum);
* **initial partition**: S holds the :data:`SUBSET_START` rows of smallest coverage sets, those
  with pairwise disjoint sets first (each needs a site of its own);
* **lift**: the MIP's sites, then sites added greedily (most uncovered rows per unit of cost)
  until every row is covered: a feasible cover, whose cost is the upper bound E;
* **split**: the rows the MIP's own sites miss join S (at most :data:`SUBSET_ADD` a round,
  chosen as the initial ones); none missed is the optimality condition (the MIP's sites cover
  every row, so E equals the relaxation's optimum).

The certificate is the covering plug-in's: the cover checked on every original point, its cost
against the best dual bound of the subset MIPs.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from aidopt.decomposition.partition import Partition
from aidopt.decomposition.plugins.covering import CoveringData, CoveringProblem
from aidopt.decomposition.protocol import Lifted, Split

from aidopt.data.coverage import Coverage, CoverRows, drop_dominated, spread
from aidopt.solvers import SolverError, TimeLimitReached

__all__ = ["CoveringRowsProblem", "SUBSET_ADD", "SUBSET_ROWS", "SUBSET_START"]

#: the LSCP runs on a subset of its rows (this plug-in) when the exactly aggregated rows, after
#: the dominance test, are more than this many (the door's choice; ``rows=`` overrides it).
#: Measured at 10^6 uniform points and 10^3 sites, 60 s: at 149,138 rows the MIP on every row
#: had no solution, the subset a cover of 19 sites with bound 16; at 42,351 and 52,143 rows
#: the MIP on every row ended with better covers at equal bounds (docs/benchmarks/facility.md)
SUBSET_ROWS = 100_000

#: rows in the first subset
SUBSET_START = 256

#: most rows a round adds to the subset
SUBSET_ADD = 256


class CoveringRowsProblem(CoveringProblem):
    """The uncapacitated LSCP on a growing subset of its aggregated rows (module docstring).

    Parameters
    ----------
    mip_gap : float
        Relative gap of each subset MIP.
    """

    element = "rows"
    method_name = "AID over the rows (the LSCP on a subset of them, grown by the rows it misses)"
    table_info = ("subset_rows",)

    def __init__(self, mip_gap: float = 1e-7):
        super().__init__("lscp", mip_gap=mip_gap, fixing=False)
        self.infeasible_proves = True  # a subset of the rows: a relaxation

    def size(self, data: CoveringData) -> int:
        return data.rows.n_rows if data.rows is not None else 1

    def min_clusters(self, data) -> int:
        return 1

    def initial_partition(self, data: CoveringData, n_clusters, rng, solve) -> Partition:
        if data.stopped:
            raise TimeLimitReached(data.stopped)
        rows = _as_coverage(data.rows, data.n_sites)
        start = spread(rows, np.arange(rows.n_points), SUBSET_START)
        return _with_singletons(np.zeros(rows.n_points, dtype=np.int64), start)

    def aggregate(self, data: CoveringData, partition: Partition, previous):
        """``data`` with the rows of the one-row clusters only (dominated ones dropped)."""
        if data.stopped:
            raise TimeLimitReached(data.stopped)
        S = np.flatnonzero(partition.counts[partition.labels] == 1)
        sub, _ = drop_dominated(_take(data.rows, S))
        return dataclasses.replace(data, rows=sub)

    def lift(self, model, outcome, partition, aggregated: CoveringData, data: CoveringData) -> Lifted:
        lifted = super().lift(model, outcome, partition, aggregated, data)
        chosen = np.union1d(lifted.solution["open"], data.fixed_open)
        cover = complete_cover(data.rows, data.n_sites, chosen, data.site_cost())
        lifted.info["subset_rows"] = float(aggregated.rows.n_rows)
        lifted.info["completed_sites"] = float(cover.size - chosen.size)
        return Lifted({"open": cover}, chosen, lifted.info)

    def split(self, partition: Partition, data: CoveringData, lifted: Lifted) -> Split:
        chosen = lifted.state  # the subset MIP's own sites (the forced ones included)
        rows = _as_coverage(data.rows, data.n_sites)
        missed = np.flatnonzero(~rows.covered(chosen))
        if missed.size == 0:
            return Split(None)  # the MIP's own sites cover every row
        inside = partition.counts[partition.labels[missed]] == 1
        if inside.any():  # the subset MIP's optimum covers its rows: a solver's failure
            raise SolverError(f"the subset MIP's sites miss {int(inside.sum())} row(s) of the "
                              "subset itself (first: row "
                              f"{int(missed[np.argmax(inside)])}); its solution is not feasible")
        add = spread(rows, missed, SUBSET_ADD)
        return Split(_with_singletons(partition.labels, add), int(add.size))

    def certify(self, data, best, *, bound, solve, tol, feasibility_tol=1e-6, history=()):
        cert = super().certify(data, best, bound=bound, solve=solve, tol=tol,
                               feasibility_tol=feasibility_tol, history=history)
        # the subset MIP's sites covered every row (an incumbent of a stopped MIP: not checked)
        cert.sign_condition = best.split is not None and best.split.holds
        cert.condition_name = "subset condition"
        cert.condition = ("the subset MIP's sites cover every row (then the relaxation's optimum "
                          "is attained by a cover of all rows)")
        cert.note = ("bound = the best MIP dual bound of the LSCP on a subset of the exactly "
                     "aggregated rows (a relaxation: a cover of all rows covers the subset)"
                     + ("; rounded up: every objective value is an integer" if data.integral
                        else ""))
        return cert


# ----------------------------------------------------------------------------- helpers
def _as_coverage(rows: CoverRows, n_sites: int) -> Coverage:
    """The rows as a :class:`Coverage` (a row per "point")."""
    return Coverage(rows.indptr, rows.sites, int(n_sites))


def _take(rows: CoverRows, S: np.ndarray) -> CoverRows:
    """The rows ``S`` of ``rows`` (``members``: every original row's place among them, -1)."""
    lengths = np.diff(rows.indptr)[S]
    indptr = np.zeros(S.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    start = np.repeat(rows.indptr[S] - indptr[:-1], lengths)
    members = np.full(rows.n_rows, -1, dtype=np.int64)
    members[S] = np.arange(S.size)
    return CoverRows(indptr, rows.sites[start + np.arange(int(lengths.sum()))],
                     rows.weight[S], members)


def _with_singletons(labels: np.ndarray, rows: np.ndarray) -> Partition:
    """``labels`` with each of ``rows`` made a cluster of its own."""
    labels = labels.copy()
    labels[rows] = labels.max() + 1 + np.arange(rows.size)
    return Partition.from_labels(labels)


def complete_cover(rows: CoverRows, n_sites: int, open_sites, cost) -> np.ndarray:
    """``open_sites`` and sites added greedily until every row is covered: each time the site
    covering the most uncovered rows per unit of cost (a row without sites is never covered and
    is skipped). Returns the sorted sites."""
    is_open = np.zeros(n_sites, dtype=bool)
    is_open[np.asarray(open_sites, dtype=np.int64)] = True
    cov = _as_coverage(rows, n_sites)
    missed = np.flatnonzero(~cov.covered(np.flatnonzero(is_open)) & (cov.sizes() > 0))
    while missed.size:
        left = _take(rows, missed)  # the uncovered rows' sites
        gain = np.bincount(left.sites, minlength=n_sites) / np.maximum(cost, 1e-300)
        j = int(np.argmax(gain))
        is_open[j] = True
        hit = np.add.reduceat((left.sites == j).astype(np.int64), left.indptr[:-1])
        missed = missed[hit == 0]
    return np.flatnonzero(is_open).astype(np.int64)
