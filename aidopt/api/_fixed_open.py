r"""Sites forced open (``fixed_open``) for the p-median and UFL of
:func:`aidopt.solve_facility_location`: an exact reduction that every method solves unchanged,
and the check of its answer on the original problem (docs/facility.md, "Sites forced open").

With forced sites :math:`F`, opening costs :math:`f` and :math:`d_i = \min_{k \in F} c_{ik}`
(customer i's cost at its nearest forced site), the constrained problem

.. math:: \min_{S \supseteq F,\ |S| \le p} \sum_{j \in S} f_j + \sum_i w_i \min_{j \in S} c_{ij}

equals :math:`\sum_{j \in F} f_j` plus the unconstrained problem on the reduced data

* opening cost :math:`f'_j = 0` for :math:`j \in F` (:math:`f_j` elsewhere);
* with a ``p``: costs :math:`c'_{ij} = \min(c_{ij}, d_i)` (:class:`CappedCosts` for a cost
  oracle) and at most :math:`p' = p - |F|`
  further sites. For every :math:`S'` with :math:`|S'| \le p'`,
  :math:`\min_{j \in S'} c'_{ij} = \min_{j \in S' \cup F} c_{ij}`, so the cost of
  :math:`S'` in the reduced problem is the cost of :math:`S' \cup F` in the constrained one,
  and :math:`|S' \cup F| \le p`. When :math:`p = |F|` the reduced problem keeps only the
  forced sites' columns (all equal to :math:`d_i`) with :math:`p' = 1`: its one answer is
  :math:`F`;
* without ``p`` (UFL) the costs are kept: a forced site costs nothing to open in the reduced
  problem, so adding :math:`F` to any of its solutions never raises the cost.

Either way the values of the two problems differ by the constant :math:`\sum_{j \in F} f_j`,
so the reduced problem's bound plus that constant bounds the constrained problem, which is
what :meth:`FixedOpen.lift` reports; the objective is priced again on the original data, with
:math:`F` added to the open sites and every customer at its cheapest open site.
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np

from aidopt.data.facility import FacilityData, nearest_sites
from aidopt.results import Termination

__all__ = ["CappedCosts", "FixedOpen", "check_fixed_open"]


def check_fixed_open(fixed_open, n_sites: int, *, repeats: str = "refuse") -> np.ndarray:
    """``fixed_open`` as a sorted int64 array of distinct site indices in ``0..n_sites - 1``
    (empty for ``None`` or ``[]``).

    ``repeats="warn"``: a site given twice is dropped with a ``FutureWarning`` (the covering
    models, the p-center and the p-dispersion accepted repeats before; refused from 0.3.0).

    Raises
    ------
    ValueError
        Not a 1-d list of integers, an index out of range, or (``repeats="refuse"``) a site
        given twice.
    """
    if fixed_open is None:
        return np.zeros(0, dtype=np.int64)
    arr = np.asarray(fixed_open)
    if arr.size == 0:
        return np.zeros(0, dtype=np.int64)
    if arr.ndim != 1 or arr.dtype == bool or arr.dtype.kind not in "iu":
        raise ValueError(f"fixed_open must be a list of site indices (integers), got {fixed_open!r}")
    bad = arr[(arr < 0) | (arr >= n_sites)]
    if bad.size:
        raise ValueError(f"fixed_open: site index {int(bad[0])} is not in 0..{n_sites - 1}")
    sites, counts = np.unique(arr.astype(np.int64), return_counts=True)
    if (counts > 1).any():
        message = f"fixed_open: site {int(sites[counts > 1][0])} is given more than once"
        if repeats != "warn":
            raise ValueError(message)
        warnings.warn(f"{message}; a repeated site is dropped for now and refused from aidopt "
                      "0.3.0: list each site once", FutureWarning, stacklevel=5)
    return sites


class CappedCosts:
    r"""A cost oracle (:class:`~aidopt.data.facility.EuclideanCosts`,
    :class:`~aidopt.data.facility.GraphCosts`) with customer i's costs capped at ``cap[i]``:
    :math:`\min(c_{ij}, \mathrm{cap}_i)`, read through the oracle's own methods (capping keeps
    each customer's order of sites, so its nearest sites stay the nearest)."""

    def __init__(self, costs, cap):
        self.costs, self.cap = costs, np.asarray(cap, dtype=float)

    @property
    def shape(self) -> tuple[int, int]:
        return self.costs.shape

    @property
    def integral(self) -> bool:
        return self.costs.integral  # every cap is one of the costs

    def rows(self, customers) -> np.ndarray:
        customers = np.asarray(customers, dtype=np.int64)
        return np.minimum(self.costs.rows(customers), self.cap[customers, None])

    def columns(self, sites) -> np.ndarray:
        return np.minimum(self.costs.columns(sites), self.cap[:, None])

    def pairs(self, customers, sites) -> np.ndarray:
        customers = np.asarray(customers, dtype=np.int64)
        return np.minimum(self.costs.pairs(customers, sites), self.cap[customers])

    def row_extremes(self) -> tuple[np.ndarray, np.ndarray]:
        lo, hi = self.costs.row_extremes()
        return np.minimum(lo, self.cap), np.minimum(hi, self.cap)

    def nearest(self, customers, k: int) -> tuple[np.ndarray, np.ndarray]:
        order, costs = self.costs.nearest(customers, k)
        return order, np.minimum(costs, self.cap[np.asarray(customers, dtype=np.int64), None])

    def with_sites(self, sites) -> CappedCosts:
        return CappedCosts(self.costs.with_sites(sites), self.cap)


class FixedOpen:
    """The p-median / UFL ``data`` with the sites ``fixed_open`` forced open, as the reduced
    problem of the module docstring (:attr:`reduced`), and the way back (:meth:`lift`).

    Parameters
    ----------
    data : FacilityData
        The validated original problem (no capacities).
    fixed_open : array-like of int
        The forced sites (checked by :func:`check_fixed_open`; at most ``p`` of them).

    Raises
    ------
    ValueError
        Bad ``fixed_open``, more forced sites than ``p``, or capacities.
    """

    def __init__(self, data: FacilityData, fixed_open):
        if data.capacity is not None:
            raise ValueError("fixed_open is not offered with capacity (capacitated facility "
                             "location): force a site open by giving it a zero opening cost")
        forced = check_fixed_open(fixed_open, data.n_sites)
        if forced.size == 0:
            raise ValueError("fixed_open is empty: nothing to force open (pass None)")
        if data.p is not None and forced.size > data.p:
            raise ValueError(f"fixed_open forces {forced.size} sites open, more than p = {data.p}")
        self.original, self.forced = data, forced
        self.constant = 0.0 if data.fixed is None else float(data.fixed[forced].sum())
        fixed = None
        if data.fixed is not None:
            fixed = data.fixed.copy()
            fixed[forced] = 0.0
        #: reduced site -> original site (None: the same indices)
        self.site_map: np.ndarray | None = None
        costs, p, site_xy = data.costs, data.p, data.site_xy
        if p is not None:
            near = data.cost_columns(forced).min(axis=1)
            p = p - forced.size
            if p == 0:  # the forced sites are the answer: their columns, one site to open
                self.site_map, p = forced, 1
                costs = (data.costs[:, forced] if data.dense
                         else data.costs.with_sites(forced))
                fixed = None if fixed is None else fixed[forced]
                site_xy = None if site_xy is None else site_xy[forced]
            costs = (np.minimum(costs, near[:, None]) if data.dense
                     else CappedCosts(costs, near))
        self.reduced = FacilityData(costs, data.demand, fixed, p, None, data.customer_xy,
                                    site_xy, data.name)

    def lift(self, result, tol: float):
        """``result`` (a run on :attr:`reduced`) as a result of the original problem, in place:
        the forced sites added to ``solution["open"]``, every customer assigned to its cheapest
        open site, ``objective`` priced on the original data, ``lower_bound`` the reduced
        problem's plus the forced sites' opening costs, and the certificate checked again (forced
        sites open, at most ``p`` sites, gap within ``tol``)."""
        from aidopt.decomposition.plugins.facility import FacilityProblem

        data, forced, shift = self.original, self.forced, self.constant
        for rec in result.history:  # the run's own numbers, in the original problem's terms
            rec.F_t, rec.E_t, rec.E_best = rec.F_t + shift, rec.E_t + shift, rec.E_best + shift
            rec.lower_bound += shift
        sol = result.solution
        if not sol or "open" not in sol:
            return result
        opened = np.asarray(sol["open"], dtype=np.int64)
        if self.site_map is not None:
            opened = self.site_map[opened]
        open_ = np.union1d(opened, forced)
        assign = nearest_sites(data.costs, open_)
        objective = data.objective(open_, assign)
        cert = result.certificate
        bound = result.lower_bound if cert is None else cert.dual_objective
        lower = min(float(bound) + shift, objective)
        floor = FacilityProblem().gap_floor(data)
        rel = (objective - lower) / max(floor, abs(objective)) if math.isfinite(lower) else math.inf
        over_p = 0.0 if data.p is None else float(max(0, open_.size - data.p))
        closed = float(np.count_nonzero(~np.isin(forced, open_)))
        sol["open"], sol["assign"] = open_, assign
        sol["fixed_open"] = forced
        result.objective, result.lower_bound, result.gap = objective, lower, float(rel)
        if cert is not None:
            residuals = dict(cert.residuals)
            residuals["sites open beyond p"] = over_p
            residuals["forced sites closed"] = closed
            checked = None if cert.checked is None else [*cert.checked, "forced sites closed"]
            note = (f"{cert.note}; " if cert.note else "") + (
                f"fixed_open: {forced.size} forced site(s), solved as the reduced problem "
                "(docs/facility.md, \"Sites forced open\"), objective and forced sites checked "
                "on the original data")
            certified = bool(cert.certified and over_p == 0 and closed == 0 and rel <= tol)
            result.certificate = dataclasses.replace(
                cert, certified=certified, primal_objective=objective, dual_objective=lower,
                relative_gap=float(rel), residuals=residuals, checked=checked, note=note)
            if certified:
                result.termination = Termination.CERTIFIED_OPTIMAL
            elif result.termination == Termination.CERTIFIED_OPTIMAL:
                result.termination = Termination.GAP_TOLERANCE
        return result
