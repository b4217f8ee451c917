r"""AID plug-in for the modified SVM (1.35): the 2-norm SVM with a regularized offset, by SOR.

On sparse or wide X the door runs it on the full data by dual coordinate descent instead
(``solver="dcd"``, :func:`aidopt.numerics.dcd.dcd` with ``bias="regularized"``: the offset is
LIBLINEAR's constant feature, exactly the :math:`\tfrac12 b^2` term below), certified by the
same full-data certificate; AID with ``fm`` stays the path of tall, narrow, dense X.

Bradley, Mangasarian & Musicant, *Optimization methods in massive datasets*, (1.35), with
:math:`\nu = C`, sample weights :math:`s` and the offset written :math:`b = -\gamma`:

.. math::

    \min_{w, b}\ \tfrac12 (w'w + b^2) + C \sum_i s_i \max(0, 1 - y_i (w x_i + b)).

It is the 2-norm SVM of :class:`~.svm.SVMProblem` with :math:`\tfrac12 b^2` added (the problem
LIBLINEAR solves: its bias is a constant feature, regularized with ``w``). Its dual (1.37),
:math:`\max\ e'u - \tfrac12 \|H'u\|^2` over :math:`0 \le u \le C s` with
:math:`H = D[A\ \ {-e}]`, has **bounds only**, which is what lets SOR (Algorithm 8, (1.55)) solve
it one row at a time.

AID is the one of :class:`~.svm.SVMProblem` (label-pure clusters, weighted centroids
:math:`\bar x_k`, weights :math:`W_k`, split of the clusters with rows on both sides of the
margin); what changes:

* **Aggregated solver** ``solver="sor"``: :func:`aidopt.numerics.sor.sor_linear` on the centroids with
  bounds :math:`0 \le \bar u_k \le C W_k`, never forming the |K| x |K| matrix. It is
  **warm-started** from the previous iterate: :math:`\bar u_k^0 = \sum_{i \in C_k} \alpha_i`
  with the lifted :math:`\alpha_i = s_i \bar u_{k(i)} / W_{k(i)}`, which lies in the new box and
  gives exactly the previous :math:`(w, b)` (a split cluster's centroid, weighted by its share of
  :math:`\bar u`, adds up to its parent's). It stops when its own relative duality gap on the
  aggregated problem is within ``gap_tol`` (default ``tol / 4``). Any QP solver (Clarabel, HiGHS,
  Gurobi, ...) solves the same aggregated problem through its Pyomo model
  (:func:`aidopt.models.svm.create_instance` with ``bias="regularized"``), e.g. to cross-check.
* **Bound**: for *any* :math:`\bar u` in the aggregated box, the lifted :math:`\alpha` is in the
  full box and :math:`H'\alpha = \bar H'\bar u`, so the full dual (1.37) at :math:`\alpha` equals
  the aggregated dual at :math:`\bar u`: the aggregated dual value is a lower bound on the optimum
  of the original (1.35) at every iteration, even at an SOR iterate that has not converged.
* **Certificate**: :func:`~.svm.certificate` with ``bias="regularized"``: the lifted ``alpha``
  clipped to the box (nothing to rebalance: there is no :math:`\sum \alpha_i y_i = 0`), the
  full-data dual value and the relative gap, within ``tol``.
"""

from __future__ import annotations

import numbers

import numpy as np
from aidopt.decomposition.plugins.svm import AggregatedSVM, SVMProblem
from aidopt.decomposition.protocol import Iterate

from aidopt import solvers
from aidopt.solvers import SolveOutcome, SolveStatus

__all__ = ["ModifiedSVMProblem", "SOR_OPTIONS"]

#: ``solver_options`` of ``solver="sor"``: relaxation factor, the aggregated solves' relative gap
#: (default ``tol / 4``), the sweep limit per solve, and :func:`aidopt.numerics.sor.sor_linear`'s row
#: order (default ``"cyclic"``), shrinking and polishing (both default ``True``)
SOR_OPTIONS = ("omega", "gap_tol", "max_sweeps", "order", "shrinking", "polish")
#: default sweep limit of one aggregated solve (a full sweep over |K| centroids costs O(|K| m);
#: with shrinking most sweeps visit only the few rows off their bounds). SOR converges linearly at
#: a rate that degrades with ``nu`` and the conditioning of the rows: past this budget the same
#: aggregated problem goes to the fallback (Clarabel, an interior point that does not degrade so)
MAX_SWEEPS = 10_000
#: relative duality gap of the SOR solve on the random sample that gives the initial hyperplane
SAMPLE_GAP = 1e-4


class ModifiedSVMProblem(SVMProblem):
    """The modified SVM (1.35) (offset regularized) under AID; SOR as the aggregated solver.

    Parameters
    ----------
    C : float
        ``nu`` of (1.35).
    sample_size : int, optional
        As in :class:`~.svm.SVMProblem`.
    """

    bias = "regularized"

    def __init__(self, C: float = 1.0, sample_size: int | None = None):
        super().__init__(C=C, norm="l2", form="auto", sample_size=sample_size)
        self.name = "svm_l2_regularized_bias"
        #: ``"dcd"``: dual coordinate descent with the offset as a regularized constant feature
        #: (:func:`aidopt.numerics.dcd.dcd`, ``bias="regularized"``), chosen by the door on the
        #: full data of sparse or wide X (:func:`aidopt.api._shape.prepare`)
        self.native_methods = ("sor", "fm", "dcd")

    # ----------------------------------------------------------------- SOR
    def fallbacks(self, solver: str) -> list[tuple[str, str | None]]:
        """After an SOR solve that missed its gap within ``max_sweeps``: Clarabel on the dual
        form of the same aggregated problem; for a Pyomo solver, :class:`~.svm.SVMProblem`'s.
        None after dcd: it runs on the full data, which a Pyomo model would hold entry by entry."""
        if solver == "dcd":
            return []
        if solver in self.native_methods:
            return [("clarabel", "dual")]
        return super().fallbacks(solver)

    def solve_native(self, method, aggregated: AggregatedSVM, previous: Iterate | None, partition,
                     *, tol, time_limit, options) -> tuple[object, SolveOutcome]:
        """SOR (1.55) on the aggregated dual (1.37), warm-started from ``previous``; or the
        interior point of :class:`~.svm.SVMProblem` (``solver="fm"``)."""
        if method != "sor":
            return super().solve_native(method, aggregated, previous, partition, tol=tol,
                                        time_limit=time_limit, options=options)
        kwargs = sor_options(options, tol)
        # the gap's denominator: the last E (none at t = 1: the SVM's floor, svm.gap_floor)
        u0, scale = None, np.finfo(float).tiny
        if previous is not None:
            u0 = np.bincount(partition.labels, weights=previous.lifted.solution["alpha"],
                             minlength=partition.n_clusters)
            scale = max(scale, abs(previous.E_t))
        return _sor(aggregated, self.C, time_limit=time_limit, u0=u0, scale=scale, **kwargs)

    def _sample_plane(self, sample: AggregatedSVM, solve) -> tuple[np.ndarray, float]:
        if self.method != "sor":
            return super()._sample_plane(sample, solve)
        # any point of the box gives a plane; the sweep budget bounds the time (no run clock here)
        result, _ = _sor(sample, self.C, time_limit=None,
                         **{**sor_options({}, SAMPLE_GAP), "gap_tol": SAMPLE_GAP})
        return result.w, -result.gamma

    def on_nonoptimal(self, outcome: SolveOutcome) -> bool:
        """An SOR iterate stopped by a limit is in the box: its plane is feasible and its dual
        value a valid bound, so it is lifted and evaluated."""
        return outcome.solver in self.native_methods and outcome.has_solution

    def _read(self, model, outcome):
        from aidopt.numerics.sor import SORLinearResult

        if isinstance(model, SORLinearResult):
            return model.w, -model.gamma, model.u
        return super()._read(model, outcome)


def sor_options(options: dict, tol: float) -> dict:
    """Keyword arguments of :func:`aidopt.numerics.sor.sor_linear` from the user's ``solver_options``
    (validated here or by ``sor_linear``)."""
    unknown = sorted(set(options) - set(SOR_OPTIONS))
    if unknown:
        raise ValueError(f"solver='sor' takes solver_options {list(SOR_OPTIONS)}, got {unknown}")
    omega = options.get("omega", 1.0)
    gap_tol = options.get("gap_tol", tol / 4)
    max_sweeps = options.get("max_sweeps", MAX_SWEEPS)
    if isinstance(gap_tol, bool) or not isinstance(gap_tol, numbers.Real) or not 0 <= gap_tol < 1:
        raise ValueError(f"solver_options gap_tol must be a number in [0, 1), got {gap_tol!r}")
    if isinstance(max_sweeps, bool) or not isinstance(max_sweeps, numbers.Integral) or max_sweeps < 1:
        raise ValueError(f"solver_options max_sweeps must be a positive integer, got {max_sweeps!r}")
    return {"omega": omega, "gap_tol": float(gap_tol), "max_sweeps": int(max_sweeps),
            "order": options.get("order", "cyclic"), "shrinking": options.get("shrinking", True),
            "polish": options.get("polish", True)}


def _sor(aggregated: AggregatedSVM, C, *, omega, gap_tol, max_sweeps, time_limit, u0=None,
         scale=1.0, order="cyclic", shrinking=True, polish=True):
    """:func:`aidopt.numerics.sor.sor_linear` on weighted rows, as ``(result, SolveOutcome)``."""
    from aidopt._version import __version__
    from aidopt.numerics.sor import sor_linear

    if time_limit is not None and time_limit <= 0:
        raise solvers.TimeLimitReached("time limit reached before the SOR solve")
    res = sor_linear(aggregated.X, aggregated.y, C, omega=omega, tol=0.0, max_sweeps=max_sweeps,
                     weights=aggregated.w, u0=u0, gap_tol=gap_tol, gap_scale=scale,
                     time_limit=time_limit, order=order, shrinking=shrinking, polish=polish)
    gap = res.gap / max(scale, abs(res.primal))
    if np.isfinite(gap) and gap <= gap_tol:
        status = SolveStatus.OPTIMAL
    elif res.time_limited:
        status = SolveStatus.TIME_LIMIT
    else:
        status = SolveStatus.ITERATION_LIMIT
    outcome = SolveOutcome(
        status, res.primal, None, True, "sor", f"aidopt {__version__}", res.seconds,
        f"{res.sweeps} sweeps, relative gap {gap:.2e} (stop at {gap_tol:.2e})",
        extra={"sweeps": res.sweeps, "residual": res.residual, "polished": res.polished},
        bound=res.dual,
    )
    return res, outcome
