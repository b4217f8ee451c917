"""Scale a read program into the range solvers' absolute tolerances are made for, and back.

Solvers stop on *absolute* tolerances: HiGHS's dual feasibility (1e-7) and MIP gap (``mip_abs_gap``
1e-6), Clarabel's feasibility and gap tolerances. A model whose costs are 1e-9 (a p-median in
kilometres written in metres times 1e-12, a LAD on data in tiny units) is then "optimal" at any
vertex: the p-median of 37 customers with integer costs x 1e-9 came back 17 % above the optimum.

:func:`scale_program` multiplies the objective by ``sigma`` and substitutes ``x = tau x'`` for a
program without integer columns, both powers of two (exact in floating point: every value maps
back bit for bit), so that the largest cost and the largest finite bound are about 1. Only programs
outside the range :data:`COMFORT` are scaled; others are passed as they are. :func:`unscale`
maps a solved outcome back: column values ``x = tau x'``, objective and bounds ``/ sigma``, row
duals ``/ (sigma tau)`` (from ``sigma tau grad f(x) = A'y'``).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .status import SolveOutcome

__all__ = ["COMFORT", "Scaling", "scale_program", "unscale"]

#: magnitudes of the largest cost and of the largest finite bound left as they are
COMFORT = (2.0 ** -10, 2.0 ** 20)


@dataclasses.dataclass(frozen=True)
class Scaling:
    """The factors applied: objective times ``sigma``, columns ``x = tau x'``."""

    sigma: float = 1.0
    tau: float = 1.0

    @property
    def identity(self) -> bool:
        return self.sigma == 1.0 and self.tau == 1.0


def _power_of_two_to_one(magnitude: float) -> float:
    """``2**k`` with ``magnitude * 2**k`` in [0.5, 1); 1 when ``magnitude`` is in COMFORT or 0."""
    if not (magnitude > 0 and math.isfinite(magnitude)) or COMFORT[0] <= magnitude <= COMFORT[1]:
        return 1.0
    return 2.0 ** -math.frexp(magnitude)[1]


def _largest(*arrays) -> float:
    out = 0.0
    for a in arrays:
        a = np.asarray(a, dtype=float)
        a = np.abs(a[np.isfinite(a)])
        if a.size:
            out = max(out, float(a.max()))
    return out


def scale_program(prog):
    """``(scaled program, Scaling)``; the program itself when no scaling is needed."""
    tau = 1.0
    if prog.n_integer == 0:
        tau = 1.0 / _power_of_two_to_one(
            _largest(prog.row_lower, prog.row_upper, prog.col_lower, prog.col_upper))
    Q = None if prog.Q is None else prog.Q * (tau * tau)
    c = prog.c * tau
    sigma = _power_of_two_to_one(_largest(c, [] if Q is None else Q.data))
    scaling = Scaling(sigma, tau)
    if scaling.identity:
        return prog, scaling
    return dataclasses.replace(
        prog, c=c * sigma, offset=prog.offset * sigma,
        Q=None if Q is None else Q * sigma,
        row_lower=prog.row_lower / tau, row_upper=prog.row_upper / tau,
        col_lower=prog.col_lower / tau, col_upper=prog.col_upper / tau,
    ), scaling


def unscale(outcome: SolveOutcome, prog, scaling: Scaling) -> SolveOutcome:
    """The outcome of the original program from that of the scaled one (column values already
    loaded into ``prog.columns`` are multiplied by ``tau``)."""
    if scaling.identity:
        return outcome
    sigma, tau = scaling.sigma, scaling.tau
    if tau != 1.0 and outcome.has_solution:
        for var in prog.columns:
            if var.value is not None:
                var.set_value(var.value * tau, skip_validation=True)
    duals = outcome.duals
    if duals is not None:
        for con in list(duals.keys()):
            duals[con] = duals[con] / (sigma * tau)

    def back(v):
        return None if v is None else v / sigma

    extra = dict(outcome.extra or {})
    if extra.get("mip_gap_bound") is not None:
        extra["mip_gap_bound"] = extra["mip_gap_bound"] / sigma
    extra["scaling"] = {"sigma": sigma, "tau": tau}
    return dataclasses.replace(outcome, objective=back(outcome.objective),
                               bound=back(outcome.bound), duals=duals, extra=extra)
