"""Result objects: why a run stopped, what it found, and the certificate behind "optimal"."""

from __future__ import annotations

import enum
import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["RunResult", "Termination", "Certificate", "IterationRecord", "AIDResult"]


class Termination(enum.StrEnum):
    """Why a run stopped."""

    CERTIFIED_OPTIMAL = "certified_optimal"
    """The full-data certificate holds: dual feasible and duality gap within ``tol``."""
    GAP_TOLERANCE = "gap_tolerance"
    """The run stopped on ``gap <= tol`` (or a direct MIP solve at the solver's own gap
    tolerance) but the full-data certificate did not pass (see it)."""
    ITERATION_LIMIT = "iteration_limit"
    TIME_LIMIT = "time_limit"
    SOLVER_FAILURE = "solver_failure"
    """A solver did not return an optimal solution; the best solution so far is kept."""
    STATIONARY = "stationary"
    """A successive-linearization run stopped where its stopping rule holds: a stationary point
    (minimum principle) of a concave minimization, not a proven optimum."""
    NO_IMPROVEMENT = "no_improvement"
    """A successive-linearization run stopped by its problem's own rule (SLAAG: the accuracy on the
    aggregate information did not increase); the last point that improved is returned. Not an
    optimality claim."""
    INTERRUPTED = "interrupted"
    """Stopped by the user (Ctrl-C); the best solution so far is kept, with its bound and gap."""
    INFEASIBLE = "infeasible"
    """The problem has no feasible point, proved by a solver on a subproblem whose constraints
    are a subset of the problem's (e.g. an infeasible chunk LP of linear program chunking)."""
    UNBOUNDED = "unbounded"
    """The objective is unbounded below, proved by a solver on the whole problem."""
    PROP5_OPTIMAL = "prop5_optimal"
    """S3VM under AID: the paper's Prop. 5 holds for the returned solution and every aggregated MIP
    was solved to optimality. Optimal among labellings constant on the final clusters; for this
    non-convex problem it is not a global optimality proof (no dual certificate exists)."""
    CLUSTER_OPTIMAL = "cluster_optimal"
    """AID on a MIP whose aggregated problems are not relaxations (aggregate outputs): no cluster
    violates the plug-in's cluster condition at the returned solution, E = F and every aggregated
    MIP was solved to optimality. Optimal among labellings constant on the final clusters; not a
    global optimality proof (only the MIP solver's bound on the original model gives one)."""
    PROP5_NOT_BEST = "prop5_not_best"
    """S3VM under AID: Prop. 5 held at the last iteration, but an earlier iterate has a lower
    objective and is returned, so the condition certified nothing about it."""


@dataclass
class Certificate:
    """Optimality certificate checked on the original (full) data.

    Attributes
    ----------
    method : str
        How the dual vector was obtained: ``"solver_duals"`` (duals of the solved model, lifted to
        the full data), ``"dual_lp"`` (the aggregated dual LP solved as a model of its own, for
        solvers without duals), or ``"none"``.
    certified : bool
        ``True`` only if every checked residual is within ``feasibility_tol`` and the relative
        duality gap is within ``tol``.
    primal_objective, dual_objective : float
        Full-data objective of the solution, and the dual objective (a lower bound).
    relative_gap : float
        ``(primal - dual) / max(floor, |primal|)``, ``floor`` a tiny fraction of the objective
        of the zero solution (scale-invariant; see :func:`aidopt.decomposition.protocol.relative_gap`).
    residuals : dict
        Named full-data residuals (scaled, see docs).
    checked : list of str or None
        The residuals the verdict requires within ``feasibility_tol`` (dual feasibility); the
        others (complementarity, stationarity implied by the gap) are reported only. ``None``:
        all of them.
    sign_condition : bool or None
        Whether the plug-in's optimality condition (its split test: nothing to split) held at
        the returned solution, when known.
    condition_name, condition : str
        How the summary names that condition (default "split condition") and what its holding
        means, in the plug-in's own terms (default: nothing to split at this solution).
    """

    method: str
    certified: bool
    primal_objective: float
    dual_objective: float
    relative_gap: float
    residuals: dict[str, float]
    tol: float
    feasibility_tol: float
    sign_condition: bool | None = None
    note: str = ""
    checked: list[str] | None = None
    dual_values: dict | None = field(default=None, repr=False, compare=False)
    """The full-data dual vector(s) behind the bound (e.g. ``{"u": u}``); not serialised."""
    condition_name: str = "split condition"
    condition: str = ""

    @property
    def gap(self) -> float:
        return self.primal_objective - self.dual_objective

    @property
    def bound_holds(self) -> bool:
        """Whether ``dual_objective`` is a proven lower bound: every checked residual (dual
        feasibility) is within ``feasibility_tol``. A bound that fails them proves nothing."""
        keys = self.residuals if self.checked is None else self.checked
        return all(self.residuals[k] <= self.feasibility_tol for k in keys)

    def summary(self) -> str:
        lines = [
            f"certificate ({self.method}): {'CERTIFIED' if self.certified else 'NOT certified'}",
            f"  primal objective E      {self.primal_objective:.10g}",
        ]
        if math.isfinite(self.dual_objective):
            lines += [
                f"  dual objective (bound)  {self.dual_objective:.10g}",
                f"  relative gap            {self.relative_gap:.3e}   (tol {self.tol:g})",
            ]
        else:
            lines.append("  lower bound             none")
        for key, val in self.residuals.items():
            required = self.checked is None or key in self.checked
            lines.append(
                f"  {key:<23} {val:.3e}   "
                + (f"(tol {self.feasibility_tol:g})" if required else "(reported)")
            )
        if self.sign_condition is not None:
            if self.sign_condition:
                state = f"holds ({self.condition or 'nothing to split at this solution'})"
            else:
                state = "not met at this iterate" + (
                    " (not needed: the duality gap certifies it)" if self.certified else "")
            lines.append(f"  {self.condition_name:<23} {state}")
        if self.note:
            lines.append(f"  note: {self.note}")
        return "\n".join(lines)


class RunResult:
    """The base of every result aidopt returns: :class:`AIDResult` (AID, the direct solves, SLA,
    LPC, SOR), ``SCMResult`` and ``S2RLSCResult`` extend it.

    Every result has ``termination`` (why the run stopped), ``message``, ``seconds``,
    ``certificate`` (the check on the original problem, or ``None``) and ``certified``, and
    offers the same views: :meth:`summary`, :meth:`to_dict` / :meth:`to_json`,
    :meth:`history_frame` (one row per iteration, round or restart) and :meth:`plot`. A subclass
    writes :meth:`summary`, :meth:`to_dict`, :meth:`history_rows` and :meth:`plot`.
    """

    #: ``certificate``: the :class:`Certificate` checked on the original problem, or ``None``
    #: (a field or a property of each subclass; not declared here, where a descriptor would
    #: shadow the subclasses' dataclass fields)

    @property
    def certified(self) -> bool:
        """True only when the certificate passed."""
        certificate = getattr(self, "certificate", None)
        return certificate is not None and certificate.certified

    def summary(self) -> str:
        raise NotImplementedError

    def to_dict(self) -> dict[str, Any]:
        raise NotImplementedError

    def to_json(self, path=None) -> str:
        """Serialise :meth:`to_dict` to JSON (non-finite floats as strings); write it to ``path``
        when given."""
        return json_text(self.to_dict(), path)

    def history_rows(self) -> list[dict[str, Any]]:
        """One flat dict per iteration (round, restart): the rows of :meth:`history_frame`."""
        return []

    def history_frame(self):
        """The history as a pandas DataFrame (:meth:`history_rows`)."""
        import pandas as pd

        return pd.DataFrame(self.history_rows())

    def plot(self, path=None):
        raise NotImplementedError


@dataclass
class IterationRecord:
    """One AID iteration (or the single direct solve)."""

    t: int
    n_clusters: int
    r_t: float
    F_t: float
    E_t: float
    E_best: float
    lower_bound: float
    gap: float
    n_split: int
    seconds: dict[str, float] = field(default_factory=dict)
    info: dict[str, float] = field(default_factory=dict)
    """Numbers the plug-in reports for this iteration (e.g. an aggregated MIP's gap)."""
    solver: str = ""
    """The solver that produced this iteration's solution: a fallback's when one was used
    (``""``: not recorded)."""


#: the plots of :meth:`AIDResult.plot` besides the convergence plot, by ``kind``: registered by
#: the layers above that draw them (:func:`register_plot`; ``"map"``:
#: :func:`aidopt.api.facility_plot.plot_facility`), so this foundation imports none of them
PLOTS: dict = {}


def register_plot(kind: str, draw) -> None:
    """Make ``result.plot(kind=kind, path=..., **kwargs)`` call ``draw(result, path=..., **kwargs)``."""
    PLOTS[kind] = draw


@dataclass
class AIDResult(RunResult):
    """What ``solve_*`` returns (the attributes are described in README.md and docs/design.md).

    ``lower_bound`` is the certificate's full-data dual objective when the run is certified;
    otherwise the best aggregated optimum F_t the solver reported (not verified on the full data).
    Either is capped at ``objective``: a tolerance-level excess (an interior-point value, a dual
    equality met to 1e-9) is not reported as a bound above the answer.
    """

    problem: str
    termination: Termination
    objective: float
    lower_bound: float
    gap: float
    solution: dict[str, np.ndarray]
    certificate: Certificate | None
    history: list[IterationRecord]
    solver: str
    solver_version: str
    aid: bool
    n: int | None
    m: int | None
    seconds: float
    config: dict[str, Any]
    message: str = ""
    dimensions: dict[str, int] = field(default_factory=dict)
    """Problem sizes as the plug-in names them (``{"n", "m"}`` for data problems)."""
    partition: Any = field(default=None, repr=False)
    """The last partition of an AID run (the refined one when the loop went on to split): a
    related solve can start from it (``aidopt.decomposition.solve(..., partition=...)``); not
    serialised."""

    def history_rows(self) -> list[dict[str, Any]]:
        """One row per iteration: its record, a ``sec_<step>`` column per step time and the
        plug-in's ``info`` numbers."""
        rows = []
        for rec in self.history:
            row = {k: v for k, v in asdict(rec).items() if k not in ("seconds", "info")}
            row.update({f"sec_{k}": v for k, v in rec.seconds.items()})
            row.update(rec.info)
            rows.append(row)
        return rows

    def to_dict(self) -> dict[str, Any]:
        return {
            "problem": self.problem,
            "termination": self.termination.value,
            "objective": self.objective,
            "lower_bound": self.lower_bound,
            "gap": self.gap,
            "solution": {k: _plain(v) for k, v in self.solution.items()
                         if not callable(v)},  # a function (GSVM's kernel) is no data
            "certificate": None if self.certificate is None else {
                k: v for k, v in asdict(self.certificate).items() if k != "dual_values"},
            "history": [asdict(r) for r in self.history],
            "solver": self.solver,
            "solver_version": self.solver_version,
            "aid": self.aid,
            "n": self.n,
            "m": self.m,
            "dimensions": self.dimensions,
            "seconds": self.seconds,
            "config": self.config,
            "message": self.message,
        }

    def plot(self, path=None, kind: str = "convergence", **kwargs):
        """Convergence plot: F_t and E_best (log scale), relative gap and r_t against t; or,
        with ``kind="map"``, the map of a facility-location answer
        (:func:`aidopt.api.facility_plot.plot_facility`, which takes ``kwargs``). Returns the
        figure; ``path`` saves it (and closes it)."""
        if kind in PLOTS:
            return PLOTS[kind](self, path=path, **kwargs)
        if kind != "convergence":
            raise ValueError(f"kind must be {' or '.join(repr(k) for k in ['convergence', *PLOTS])}, "
                             f"got {kind!r}"
                             + ("; kind='map' draws facility-location answers (import "
                                "aidopt.api.facility)" if kind == "map" else ""))
        if kwargs:
            raise TypeError(f"the convergence plot takes no {', '.join(sorted(kwargs))}")
        plt = pyplot()
        frame = self.history_frame()
        fig, axes = plt.subplots(1, 3, figsize=(12, 3.5))
        axes[0].plot(frame.t, frame.F_t, "o-", label="F_t (aggregated optimum)")
        lower = frame.lower_bound.to_numpy(dtype=float)
        if np.isfinite(lower).any():
            axes[0].plot(frame.t, lower, "^-", label="best proven lower bound")
        axes[0].plot(frame.t, frame.E_best, "s-", label="E_best (upper bound)")
        axes[0].set_xlabel("iteration t")
        axes[0].set_ylabel("objective")
        axes[0].legend()
        gaps = np.maximum(frame.gap.to_numpy(dtype=float), 1e-16)
        axes[1].semilogy(frame.t, gaps, "o-")
        axes[1].set_xlabel("iteration t")
        axes[1].set_ylabel("relative gap")
        axes[2].plot(frame.t, frame.r_t, "o-")
        axes[2].set_xlabel("iteration t")
        axes[2].set_ylabel("r_t = |K_t| / n")
        dims = ", ".join(f"{k}={v}" for k, v in (self.dimensions or {"n": self.n, "m": self.m}).items())
        fig.suptitle(f"AID on {self.problem}: {dims}, {self.termination.value}")
        fig.tight_layout()
        if path is not None:
            fig.savefig(path, dpi=120)
            plt.close(fig)
        return fig

    def coefficients(self) -> list[tuple[str, float]]:
        """The fitted linear model as ``(name, value)`` rows: ``beta`` (LAD) or ``w`` then the
        offset ``b`` (linear SVMs), named by ``solution["feature_names"]`` (``x0, x1, ...`` when
        absent); a ``w`` of one row per class (the Crammer-Singer SVM) as ``"class: feature"``
        rows; ``[]`` for a model without coefficients (kernel SVM, facility location)."""
        sol = self.solution or {}
        key = "beta" if sol.get("beta") is not None else "w" if sol.get("w") is not None else None
        if key is None:
            return []
        values = np.asarray(sol[key], dtype=float)
        names = list(sol.get("feature_names") or [])
        if values.ndim == 2:  # one w per class (the Crammer-Singer SVM): "class: feature"
            classes = list(sol.get("classes") or [])
            if len(classes) != values.shape[0]:
                classes = list(range(values.shape[0]))
            if len(names) != values.shape[1]:
                names = [f"x{j}" for j in range(values.shape[1])]
            names = [f"{c}: {name}" for c in classes for name in names]
        values = values.ravel()
        if len(names) != values.size:
            names = [f"x{j}" for j in range(values.size)]
        rows = [(str(name), float(v)) for name, v in zip(names, values, strict=True)]
        if key == "w" and sol.get("b") is not None:
            rows.append(("(offset b)", float(sol["b"])))
        return rows

    def coefficient_table(self, standard_errors=None, max_rows: int = 50) -> str:
        """The coefficients as an aligned table (R's ``summary(rq(...))`` layout), with a
        ``std. error`` column when ``standard_errors`` (one per row of :meth:`coefficients`) are
        given; at most ``max_rows`` rows (the largest in absolute value when there are more)."""
        rows = self.coefficients()
        if not rows:
            return ""
        se = None if standard_errors is None else np.asarray(standard_errors, dtype=float)
        if se is not None and se.size != len(rows):
            raise ValueError(f"{se.size} standard errors for {len(rows)} coefficients")
        order = list(range(len(rows)))
        hidden = 0
        if len(rows) > max_rows:
            order = sorted(np.argsort([-abs(v) for _, v in rows])[:max_rows].tolist())
            hidden = len(rows) - max_rows
        width = max(12, *(len(rows[i][0]) for i in order))
        head = f"  {'coefficient':<{width}} {'value':>14}" + (f" {'std. error':>12}" if se is not None else "")
        lines = ["coefficients:", head]
        for i in order:
            name, value = rows[i]
            line = f"  {name:<{width}} {value + 0.0:>14.6g}"  # + 0.0: -0.0 printed as 0
            if se is not None:
                line += f" {se[i]:>12.4g}"
            lines.append(line)
        if hidden:
            lines.append(f"  ... {hidden} more (the {max_rows} largest in absolute value shown)")
        return "\n".join(lines)

    def summary(self, coefficients: bool = True) -> str:
        """A short human-readable report (termination, objective, bound, certificate and, for a
        linear model and ``coefficients``, the coefficient table)."""
        dims = ", ".join(f"{k}={v}" for k, v in (self.dimensions or {"n": self.n, "m": self.m}).items())
        lines = [
            f"aidopt {self.problem}: {dims}, solver={self.solver} "
            f"{self.solver_version}, {'AID' if self.aid else 'direct'}",
            f"termination             {self.termination.value}"
            + (f"  ({self.message})" if self.message else ""),
            f"objective (E_best)      {self.objective:.10g}",
            f"lower bound             {self.lower_bound:.10g}",
            f"relative gap            {self.gap:.3e}",
            f"iterations              {len(self.history)}",
            f"time                    {self.seconds:.2f} s",
        ]
        used = [h.solver for h in self.history if h.solver]
        if len(set(used)) > 1:  # a fallback solved some iterations
            lines.append("solvers by iteration    " + ", ".join(
                f"{s} {used.count(s)}" for s in dict.fromkeys(used)))
        if self.certificate is not None:
            lines.append(self.certificate.summary())
        table = self.coefficient_table() if coefficients else ""
        if table:
            lines.append(table)
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (
            f"AIDResult(problem={self.problem!r}, termination={self.termination.value!r}, "
            f"objective={self.objective:.10g}, gap={self.gap:.2e}, certified={self.certified})"
        )


def json_text(data: dict, path=None) -> str:
    """``data`` as indented JSON (non-finite floats as strings); written to ``path`` when given."""
    text = json.dumps(_json_safe(data), indent=2)
    if path is not None:
        Path(path).write_text(text)
    return text


def pyplot():
    """``matplotlib.pyplot`` on the non-interactive Agg backend, or an ImportError naming the
    extra to install."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the extra
        raise ImportError("plotting needs matplotlib: pip install 'aidopt[plot]'") from exc
    return plt


def _json_safe(obj):
    if isinstance(obj, dict):
        return {str(k): _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_json_safe(v) for v in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return str(obj)
    if isinstance(obj, enum.Enum):
        return obj.value
    return obj


def _plain(value):
    """A solution entry as lists: a sparse matrix (e.g. the capacitated LSCP's shares) as its
    nonzeros ``{"shape", "row", "col", "value"}``, anything else by ``np.asarray(...).tolist()``."""
    if hasattr(value, "tocoo") and hasattr(value, "nnz"):
        coo = value.tocoo()
        return {"shape": list(coo.shape), "row": coo.row.tolist(), "col": coo.col.tolist(),
                "value": coo.data.tolist()}
    return np.asarray(value).tolist()
