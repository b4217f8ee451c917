r"""Linear program chunking (LPC): Bradley, Mangasarian & Musicant, section 4.2, Algorithm 3.

For :math:`\min_x\{c'x \mid Hx \ge b\}` (1.29) with many more rows than columns, the rows
:math:`[H\ b]` are split into :math:`\ell` blocks :math:`[H^l\ b^l]` and iteration
:math:`j = 1, 2, \dots` solves the chunk LP (1.30)

.. math::

    x^j \in \arg\mathrm{vertex}\min\{c'x \mid H^{l(j)} x \ge b^{l(j)},\
    \bar H^{j-1} x \ge \bar b^{j-1}\}, \qquad l(j) = ((j - 1) \bmod \ell) + 1,

where :math:`[\bar H^j\ \bar b^j]` are the rows active at :math:`x^j` with positive
multipliers, and, per Remark 7 (degenerate LPs), every active row (``keep="active"``, the
default; ``keep="positive"`` is Algorithm 3 as stated). It stops when
:math:`c'x^j = c'x^{j-\tau}` (Theorem 4 (ii): the values are nondecreasing and become constant).
Then every row of the full data is checked at :math:`x^j`: :math:`c'x^j` is a lower bound on
(1.29) (Theorem 4 (i): the chunk LP's rows are a subset), so a feasible :math:`x^j` is optimal.

This module is only that loop (:func:`solve_chunked`) and the two certificates; the rows come
from a :class:`~aidopt.data.rowblocks.RowSource` (array, memmap or Parquet, one block in memory at a
time), the chunk LP is a Pyomo model (:mod:`aidopt.models.lpc`) whose rows change in place
through a warm persistent handle, and the run framework (:class:`~.run.Run`) owns configuration,
limits, solver calls, failures, timing, the log and the result. Two problems use it:

* :class:`GeneralLP`: (1.29) itself, with optional bounds on ``x`` (always in the chunk LP).
  Certificate: the full-data rows at :math:`x^j` (largest scaled violation and its row), the
  bounds, and the dual bound of the chunk LP's multipliers (Remark 6's KKT check):
  :math:`u \ge 0` on the kept rows, reduced costs :math:`z = c - \bar H'u` paid by the bounds,
  :math:`D = \bar b'u + \sum_j z_j^+ lo_j - z_j^- hi_j \le \min (1.29)` by weak duality.
* :class:`LSVMChunks`: the 1-norm LSVM (1.28). A data row's slack :math:`y_i` appears only in its
  own row, so the chunk LP is solved over :math:`(w, \gamma, s)` and the slacks of its own rows;
  every other row takes :math:`y_i = \max(0, 1 - d_i(A_i w - \gamma))`, so the LSVM point is
  always feasible and its full objective :math:`E` is an upper bound. The chunk optimum is a
  lower bound (the dropped terms :math:`\nu y_i` are nonnegative), and it equals the dual
  objective of the chunk LP's multipliers :math:`\alpha`, which (zero on the other rows) are
  feasible for the full LSVM dual. Certificate: :math:`(E - D) / \max(1, |E|) \le` ``tol`` with
  :math:`D` recomputed on the full data (box, balance, dual norm), as the AID SVM certificate.
"""

from __future__ import annotations

import dataclasses
import logging
import math

import numpy as np
from aidopt.decomposition.run import Column, Run, RunConfig, pause_gc, run_scope
from aidopt.models import lpc as lpc_models
from scipy import sparse

from aidopt import solvers
from aidopt.results import AIDResult, Certificate, IterationRecord, Termination
from aidopt.solvers import ProblemClass

logger = logging.getLogger("aidopt.api.lpc")

__all__ = ["solve_chunked", "GeneralLP", "LSVMChunks", "COLUMNS", "KEEP", "ACTIVE_TOL"]

#: a row is active when its slack is at most this, relative to the size of its terms
ACTIVE_TOL = 1e-7
#: a multiplier is positive when above this, relative to max(1, |c|_inf)
POSITIVE_TOL = 1e-9
#: c'x^j = c'x^{j-tau} within this relative tolerance
EQUAL_TOL = 1e-9
#: rows are added to the chunk LP and loaded into the solver in pieces of about this many
#: matrix entries, the time limit checked between pieces
LOAD_ENTRIES = 100_000
#: failed full-data checks in a row without progress before the run gives up
MAX_FAILED_CHECKS = 3
KEEP = ("active", "positive")

COLUMNS = [
    Column("iter", 5, "d"), Column("block", 6, "d"), Column("rows", 8, "d"), Column("added", 8, "d"),
    Column("kept", 7, "d"), Column("degen", 6, "d"), Column("c'x^j", 17, ".10g"),
    Column("simplex", 8, "d"),
]


@dataclasses.dataclass
class _Rows:
    """The data rows in the chunk LP: global ids, matrix rows, vector entries (and duals)."""

    ids: np.ndarray
    M: np.ndarray
    v: np.ndarray
    u: np.ndarray | None = None

    @classmethod
    def empty(cls, n_cols: int, like=None) -> _Rows:
        """No rows; CSR (``like`` a sparse block or source matrix) or a dense array."""
        M = np.zeros((0, n_cols))
        if like is not None and sparse.issparse(like):
            M = sparse.csr_matrix((0, n_cols))
        return cls(np.zeros(0, dtype=np.int64), M, np.zeros(0))

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    def take(self, mask) -> _Rows:
        return _Rows(self.ids[mask], self.M[mask], self.v[mask], None if self.u is None else self.u[mask])

    def join(self, ids, M, v) -> _Rows:
        rows = (sparse.vstack([self.M, M], format="csr") if sparse.issparse(M)
                else np.concatenate([self.M, M]))
        return _Rows(np.concatenate([self.ids, ids]), rows, np.concatenate([self.v, v]))


# --------------------------------------------------------------------------- the problems


_TINY = np.finfo(float).tiny


def _power_of_two(value: float) -> float:
    """The power of two 2^e with value in [2^(e-1), 2^e) (value > 0): dividing by it is exact."""
    return math.ldexp(1.0, math.frexp(value)[1])


class GeneralLP:
    """(1.29): ``min c'x s.t. Hx >= b`` and ``lower <= x <= upper`` (the bounds always kept)."""

    name = "lp_chunked"
    matrix, vector = "H", "b"

    def __init__(self, c, lower, upper):
        self.c = np.asarray(c, dtype=float)
        self.lower, self.upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
        # scales from the data, never an absolute 1: c and b in any unit certify alike (with a
        # floor of 1, b x 1e-9 certified wrong optima, every violation below 1e-6 absolute)
        self.dual_scale = max(float(np.abs(self.c).max(initial=0.0)), _TINY)
        #: sigma, the smallest power of two above ||c||_inf: the chunk LPs minimize (c / sigma)'x.
        #: The solver's optimality tolerances are absolute (HiGHS: a reduced cost within 1e-7 is
        #: zero), so with ||c|| near 1e-7 any vertex passed for optimal, its multipliers had the
        #: wrong signs, rows that bind were dropped and LPC cycled. A power of two divides
        #: exactly: c and 2^k c give the same chunk LPs, bit for bit.
        self.objective_scale = _power_of_two(self.dual_scale) if np.any(self.c) else 1.0

    def dimensions(self, source) -> dict:
        return {"m": source.n_rows, "n": source.n_cols}

    def build(self, source):
        self.model = lpc_models.chunk_lp(self.c / self.objective_scale, self.lower, self.upper)
        return self.model

    def prepare(self, ids, M, v):
        return M, v

    def add(self, ids, M, v):
        return lpc_models.add_rows(self.model, ids, M, v), False

    def remove(self, ids):
        return lpc_models.remove_rows(self.model, ids)

    def duals(self, outcome, ids) -> np.ndarray:
        """The multipliers u of the rows ``ids`` for c (the chunk LP's, for c / sigma, times sigma)."""
        rows = self.model.rows
        u = np.array([outcome.duals.get(rows[i], 0.0) for i in ids.tolist()], dtype=float)
        return u * self.objective_scale

    def slack(self, rows: _Rows):
        x = lpc_models.values(self.model)
        activity = rows.M @ x
        scale = np.maximum(_TINY, np.maximum(np.abs(rows.v), np.abs(rows.M) @ np.abs(x)))
        return activity - rows.v, scale

    # the full-data check ---------------------------------------------------------------------
    def certify(self, source, blocks, kept: _Rows, F: float, *, tol, feasibility_tol):
        """Primal feasibility of x^j on every row (streamed) and the chunk duals' bound."""
        x = lpc_models.values(self.model)
        worst, worst_row, bad_blocks = 0.0, -1, set()
        for l, (start, stop) in enumerate(blocks):
            M, v = source.read(start, stop)
            r = M @ x - v
            scale = np.maximum(_TINY, np.maximum(np.abs(v), np.abs(M) @ np.abs(x)))
            viol = np.maximum(-r, 0.0) / scale
            k = int(np.argmax(viol)) if viol.size else 0
            if viol.size and viol[k] > feasibility_tol:
                bad_blocks.add(l)
            if viol.size and viol[k] > worst:
                worst, worst_row = float(viol[k]), start + k
            del M, v
        span = np.maximum(1.0, np.maximum(np.abs(self.lower), np.abs(self.upper)))
        span = np.where(np.isfinite(span), span, np.maximum(1.0, np.abs(x)))
        bound_viol = float(np.max(np.maximum(np.maximum(self.lower - x, x - self.upper), 0.0) / span,
                                  initial=0.0))
        primal = float(self.c @ x)
        residuals = {"max row violation": worst, "bound violation": bound_viol}
        checked = ["max row violation", "bound violation"]
        if kept.u is None:  # a solver without duals: the chunk optimum it reports is the bound
            dual, method = F, "lpc_feasibility"
        else:
            dual, dual_res = self._dual_bound(kept)
            residuals.update(dual_res)
            checked += list(dual_res)
            method = "lpc_chunk_duals"
        gap = (primal - dual) / max(abs(primal), float(np.abs(self.c) @ np.abs(x)), _TINY)
        ok = all(residuals[k] <= feasibility_tol for k in checked) and gap <= tol
        note = (f"x^j satisfies all {source.n_rows} rows" if worst <= feasibility_tol else
                f"x^j violates row {worst_row} by {worst:.3e} (scaled): c'x^j is only a lower bound")
        cert = Certificate(method=method, certified=bool(ok), primal_objective=primal,
                           dual_objective=float(dual), relative_gap=float(gap), residuals=residuals,
                           tol=tol, feasibility_tol=feasibility_tol, note=note, checked=checked,
                           dual_values={"rows": kept.ids, "u": kept.u})
        solution = {"x": x, "rows": kept.ids.copy(),
                    "multipliers": None if kept.u is None else kept.u.copy()}
        feasible = worst <= feasibility_tol and bound_viol <= feasibility_tol
        return cert, primal, float(dual), solution, bad_blocks, feasible

    def _dual_bound(self, kept: _Rows):
        """Weak duality with the kept rows' multipliers u (>= 0) and bound multipliers z."""
        u = kept.u
        negative = float(np.maximum(-u, 0.0).max(initial=0.0)) / self.dual_scale
        u = np.maximum(u, 0.0)
        z = self.c - kept.M.T @ u
        dual = float(kept.v @ u)
        unpaid = 0.0
        for j in np.flatnonzero(z):
            bound = self.lower[j] if z[j] > 0 else self.upper[j]
            if np.isfinite(bound):
                dual += float(z[j] * bound)
            else:
                unpaid = max(unpaid, abs(float(z[j])) / self.dual_scale)
        return dual, {"negative multiplier": negative, "dual residual |c - H'u|": unpaid}

    def public(self, solution):
        return solution


class LSVMChunks:
    """The 1-norm LSVM (1.28) ``min nu sum_i s_i y_i + ||w||_1`` with the data rows chunked."""

    name = "svm_l1_lpc"
    matrix, vector = "X", "y"

    def __init__(self, C: float, classes, weights=None, names=None):
        self.C = float(C)
        self.classes = np.asarray(classes)
        self.names = self.classes if names is None else np.asarray(names)
        self.weights = None if weights is None else np.asarray(weights, dtype=float)
        self.dual_scale = max(1.0, self.C * (1.0 if weights is None else float(self.weights.max())))
        self.objective_scale = 1.0  # the chunk LP's objective is (1.28)'s own

    def dimensions(self, source) -> dict:
        return {"n": source.n_rows, "m": source.n_cols}

    def build(self, source):
        self.chunk = lpc_models.LSVMChunkLP(source.n_cols, self.C)
        self.model = self.chunk.model
        return self.model

    def labels(self, v) -> np.ndarray:
        return np.where(v == self.classes[1], 1.0, -1.0)

    def prepare(self, ids, M, v):
        return M, self.labels(v)

    def _weights(self, ids) -> np.ndarray:
        return np.ones(len(ids)) if self.weights is None else self.weights[ids]

    def add(self, ids, M, d):
        return self.chunk.add_rows(ids, M, d, self._weights(ids), objective=False)

    def set_objective(self):
        """Rebuild the chunk LP's objective after :meth:`add` changed it."""
        self.chunk.set_objective()

    def remove(self, ids):
        return self.chunk.remove_rows(ids)

    def duals(self, outcome, ids) -> np.ndarray:
        margin = self.model.margin
        return np.array([outcome.duals.get(margin[i], 0.0) for i in ids.tolist()], dtype=float)

    def slack(self, rows: _Rows):
        w, gamma = self.chunk.point()
        f = rows.M @ w - gamma
        y = self.chunk.slacks(rows.ids)
        scale = np.maximum(1.0, np.maximum(np.abs(rows.M) @ np.abs(w) + abs(gamma), y))
        return rows.v * f + y - 1.0, scale

    def certify(self, source, blocks, kept: _Rows, F: float, *, tol, feasibility_tol):
        """Full objective E of (w, gamma) (streamed), the dual bound of the chunk multipliers."""
        from aidopt.numerics.fm import balanced

        w, gamma = self.chunk.point()
        b = -gamma
        C = self.C
        alpha = np.zeros(len(kept)) if kept.u is None else kept.u.copy()
        order = np.argsort(kept.ids)
        kept_ids, alpha_sorted = kept.ids[order], alpha[order]
        cap_k = C * self._weights(kept.ids)
        excess = max(float(np.maximum(alpha - cap_k, 0.0).max(initial=0.0)),
                     float(np.maximum(-alpha, 0.0).max(initial=0.0)))
        alpha = np.clip(alpha, 0.0, cap_k)
        balance = abs(float(alpha @ kept.v)) / max(1.0, float(alpha.sum()))
        alpha = balanced(alpha, kept.v)
        g = kept.M.T @ (alpha * kept.v)
        t = float(np.abs(g).max(initial=0.0))
        dual = float(alpha.sum()) / max(1.0, t)
        hinge, compl, outside, outside_row, bad = 0.0, 0.0, 0.0, -1, set()
        for l, (start, stop) in enumerate(blocks):
            X, lab = source.read(start, stop)
            d = self.labels(lab)
            f = X @ w + b
            xi = np.maximum(1.0 - d * f, 0.0)
            s = self._weights(np.arange(start, stop))
            hinge += float(s @ xi)
            a = np.zeros(stop - start)
            lo, hi = np.searchsorted(kept_ids, [start, stop])
            a[kept_ids[lo:hi] - start] = alpha_sorted[lo:hi]
            terms = (C * s - a) * xi + a * (xi - 1.0 + d * f)
            compl = max(compl, float(terms.max(initial=0.0)))
            off = np.ones(stop - start, dtype=bool)
            off[kept_ids[lo:hi] - start] = False
            if off.any():
                k = int(np.argmax(np.where(off, xi, -1.0)))
                if off[k] and xi[k] > feasibility_tol:
                    bad.add(l)
                if off[k] and xi[k] > outside:
                    outside, outside_row = float(xi[k]), start + k
            del X, lab
        primal = float(np.abs(w).sum()) + C * hinge
        residuals = {"dual bound 0<=alpha<=Cs": excess / self.dual_scale,
                     "balance |sum alpha y|": balance, "dual norm excess": max(1.0, t) - 1.0,
                     "complementarity": compl / max(1.0, abs(primal)),
                     "max hinge outside chunk LP": outside}
        checked = ["dual bound 0<=alpha<=Cs", "balance |sum alpha y|"]
        gap = (primal - dual) / max(1.0, abs(primal))
        ok = all(residuals[k] <= feasibility_tol for k in checked) and gap <= tol
        note = ("no row outside the last chunk LP has a positive hinge" if outside <= 0 else
                f"largest hinge outside the last chunk LP: row {outside_row}, {outside:.3e}")
        alpha_full = np.zeros(source.n_rows)
        alpha_full[kept.ids] = kept.u if kept.u is not None else 0.0
        cert = Certificate(method="lpc_chunk_duals", certified=bool(ok), primal_objective=primal,
                           dual_objective=dual, relative_gap=float(gap), residuals=residuals,
                           tol=tol, feasibility_tol=feasibility_tol, note=note, checked=checked,
                           dual_values={"alpha": alpha_full})
        solution = {"w": w, "b": b, "alpha": alpha_full, "classes": self.names.tolist()}
        # (w, gamma) with the hinge slacks is always feasible: E is an upper bound
        return cert, primal, dual, solution, bad, True

    def public(self, solution):
        return solution


# --------------------------------------------------------------------------- the loop


def solve_chunked(problem, source, config: RunConfig | None = None, *, chunks: int = 8,
                  tau: int = 4, keep: str = "active") -> AIDResult:
    """Run LPC (Algorithm 3) for ``problem`` on the rows of ``source`` and check the answer on
    every row. See the module docstring."""
    config = config or RunConfig()
    if config.solver is None:
        config = dataclasses.replace(config, solver=solvers.DEFAULT_SOLVER)
    return _LPC(problem, source, config, chunks, tau, keep).execute()


class _LPC:
    def __init__(self, problem, source, config, chunks, tau, keep):
        self.problem, self.source, self.config = problem, source, config
        self.blocks = source.blocks(chunks)
        self.tau, self.keep = tau, keep
        self.history: list[IterationRecord] = []
        self.values: list[float] = []
        self.rows = _Rows.empty(source.n_cols, getattr(source, "M", None))
        self.stop: tuple[Termination | str, str] | None = None
        self.lower = -math.inf
        self.max_rows = 0
        self.checks = 0
        self.certificate = None
        self.final = None

    def execute(self) -> AIDResult:
        problem, config = self.problem, self.config
        with run_scope(config):
            L = len(self.blocks)
            size = max(b - a for a, b in self.blocks)
            run = Run(problem.name, ProblemClass.LP, config, dimensions={
                **problem.dimensions(self.source), "blocks": L},
                mode=f"LPC, {L} blocks of <= {size} rows ({self.source.kind}), tau={self.tau}, "
                     f"keep={self.keep}")
            self.run = run
            run.intro()
            try:
                with run.guard():
                    self._iterate()
            except BaseException:
                handle = getattr(self, "handle", None)
                if handle is not None:
                    handle.close()
                raise
            if run.interrupted and self.stop is None:
                self.stop = (Termination.INTERRUPTED, "interrupted (Ctrl-C): the last iterate")
            return self._finish()

    # ------------------------------------------------------------------ iterations
    def _iterate(self) -> None:
        run, _config, problem, source = self.run, self.config, self.problem, self.source
        L = len(self.blocks)
        with pause_gc():
            model = problem.build(source)
            handle = run.persistent(model)
        self.handle = handle
        pending = set(range(L))        # blocks not loaded since the last failed check
        unbounded = False               # chunk LPs are unbounded: accumulate blocks
        failed_at = None                # objective value at the last failed check
        failed = 0
        run.header(COLUMNS)
        j = 0
        while True:
            j += 1
            l = (j - 1) % L
            start, stop = self.blocks[l]
            with run.timed("read"):
                M, v = source.read(start, stop)
                ids = np.arange(start, stop, dtype=np.int64)
                M, v = problem.prepare(ids, M, v)
                new = ~np.isin(ids, self.rows.ids)
            with run.timed("build"), pause_gc():
                loaded = self._load(ids[new], M[new], v[new])
            if not loaded:  # the chunk LP is incomplete: never solved
                self.stop = (Termination.TIME_LIMIT,
                             f"{run.elapsed():.1f} s, while block {l + 1}'s rows were loaded into "
                             f"the chunk LP of iteration {j} (not solved)")
                return
            self.rows = self.rows.join(ids[new], M[new], v[new])
            added = int(new.sum())
            del M, v
            pending.discard(l)
            self.max_rows = max(self.max_rows, len(self.rows))
            with run.timed("solve"):
                outcome = handle.solve(need_duals=True)
            iterations = int(outcome.extra.get("simplex_iterations", 0))
            if outcome.status in ("unbounded", "infeasible_or_unbounded"):
                if len(self.rows) == source.n_rows:  # the chunk LP is the whole LP
                    self._unsolvable(outcome, j)
                    return
                if not unbounded:
                    run.note("a chunk LP (1.30) is unbounded: blocks are accumulated until it "
                             "is bounded (Algorithm 3 assumes vertex solutions)")
                unbounded = True
                self._record(j, l, len(self.rows), added, len(self.rows), 0, -math.inf, iterations,
                             outcome)
                if self._limits(j):
                    return
                continue
            if outcome.status == "infeasible":
                self._unsolvable(outcome, j)
                return
            if not outcome.optimal:
                stop, text = run.failure(outcome)
                self.stop = (Termination(stop), text)
                return
            unbounded = False
            F = float(outcome.objective) * problem.objective_scale
            in_lp = len(self.rows)
            with run.timed("select"):
                u = problem.duals(outcome, self.rows.ids) if outcome.duals is not None else None
                slack, scale = problem.slack(self.rows)
                active = slack <= ACTIVE_TOL * scale
                positive = (u > POSITIVE_TOL * problem.dual_scale) if u is not None else active
                kept = positive | active if self.keep == "active" else positive
                degenerate = int((active & ~positive).sum())
                self.rows.u = u
                drop = self.rows.ids[~kept]
                with pause_gc():
                    handle.remove_constraints(problem.remove(drop))
                self.rows = self.rows.take(kept)
            self.values.append(F)
            self.lower = max(self.lower, F)
            self._record(j, l, in_lp, added, len(self.rows), degenerate, F, iterations, outcome)
            if run.interrupted:
                return
            if not pending and len(self.values) > self.tau and self._equal(F, self.values[-1 - self.tau]):
                self._certify(F)
                if self.certificate.certified:
                    self.stop = (Termination.CERTIFIED_OPTIMAL,
                                 f"c'x^j = c'x^(j-{self.tau}) and the full-data check passed")
                    return
                pending = set(self._bad_blocks)
                same = failed_at is not None and self._equal(F, failed_at)
                failed = failed + 1 if same else 1
                failed_at = F
                run.note(f"stopping rule held at iteration {j} but the full-data check failed "
                         f"({self.certificate.note}); resumed")
                if not pending:
                    self.stop = (Termination.GAP_TOLERANCE,
                                 "the stopping rule held but the full-data check failed, with no "
                                 "row outside the chunk LP beyond feasibility_tol to load")
                    return
                if failed >= MAX_FAILED_CHECKS:
                    self.stop = (Termination.GAP_TOLERANCE,
                                 f"the stopping rule held {failed} times at the same value but the "
                                 "full-data check failed each time")
                    return
            if self._limits(j):
                return

    def _load(self, ids, M, v) -> bool:
        """Add the rows to the chunk LP and load them into the solver, ``LOAD_ENTRIES`` matrix
        entries at a time, while the run's time is not up: False if it was up first (then the
        chunk LP holds only some of the rows). Building and loading cost about 80 us per 30-entry
        row here, so one block of 10^5 rows would otherwise outlast any time limit by seconds."""
        run, problem, handle = self.run, self.problem, self.handle
        per_row = M.nnz / max(1, M.shape[0]) if sparse.issparse(M) else M.shape[1]
        piece = max(1, int(LOAD_ENTRIES // max(1.0, per_row)))
        objective_changed = False
        for k in range(0, len(ids), piece):
            if run.past_deadline():
                return False
            datas, changed = problem.add(ids[k:k + piece], M[k:k + piece], v[k:k + piece])
            handle.add_constraints(datas)
            objective_changed |= changed
        if objective_changed:  # once: the LSVM's objective has a term per row
            problem.set_objective()
            handle.update_objective()
        return not run.past_deadline()

    def _equal(self, F, G) -> bool:
        """Whether two chunk optima are equal within ``EQUAL_TOL``, relative to the larger of |F|
        and sigma (the objective's scale, :attr:`GeneralLP.objective_scale`): c and s c compare
        alike for every s > 0."""
        return abs(F - G) <= EQUAL_TOL * max(self.problem.objective_scale, abs(F))

    def _limits(self, j) -> bool:
        run, config = self.run, self.config
        if config.max_iter is not None and j >= config.max_iter:
            self.stop = (Termination.ITERATION_LIMIT, f"{j} iterations")
        elif run.time_up():
            self.stop = (Termination.TIME_LIMIT, f"{run.elapsed():.1f} s")
        return self.stop is not None

    def _unsolvable(self, outcome, j) -> None:
        status = outcome.status
        if status == "infeasible":
            self.stop = (Termination.INFEASIBLE,
                         f"the chunk LP (1.30) of iteration {j} is infeasible, and its rows are "
                         "a subset of the LP's: the LP is infeasible")
        elif status == "unbounded":
            self.stop = (Termination.UNBOUNDED, "the LP with all its rows is unbounded")
        else:
            self.stop = (Termination.SOLVER_FAILURE,
                         f"the LP with all its rows is {status} ({outcome.message})")
        self._record(j, (j - 1) % len(self.blocks), len(self.rows), 0, len(self.rows), 0, math.nan,
                     int(outcome.extra.get("simplex_iterations", 0)), outcome)

    def _record(self, j, l, in_lp, added, kept, degenerate, F, iterations, outcome) -> None:
        run = self.run
        self.history.append(IterationRecord(
            t=j, n_clusters=in_lp, r_t=in_lp / self.source.n_rows, F_t=F, E_t=math.nan,
            E_best=math.nan, lower_bound=self.lower, gap=math.inf, n_split=added,
            seconds=run.take_seconds(),
            info={"block": l + 1, "rows_in_lp": in_lp, "added": added, "kept": kept,
                  "degenerate": degenerate, "simplex_iterations": iterations,
                  "warm": bool(outcome.extra.get("warm", False))},
        ))
        run.row(j, l + 1, in_lp, added, kept, degenerate, F, iterations)

    # ------------------------------------------------------------------ the certificate
    def _certify(self, F) -> None:
        run = self.run
        self.checks += 1
        with run.timed("check"):
            cert, primal, dual, solution, bad, feasible = self.problem.certify(
                self.source, self.blocks, self.rows, F, tol=self.config.tol,
                feasibility_tol=self.config.feasibility_tol)
        self.certificate, self._bad_blocks = cert, bad
        self.final = (primal, dual, solution, feasible, len(self.values))

    def _finish(self) -> AIDResult:
        run = self.run
        termination, message = self.stop or (Termination.SOLVER_FAILURE, "stopped")
        have_point = bool(self.values) and termination not in (
            Termination.INFEASIBLE, Termination.UNBOUNDED)
        if have_point and (self.final is None or self.final[4] != len(self.values)):
            with run.guard():  # the last iterate was not checked yet (a limit or Ctrl-C)
                self._certify(self.values[-1])
            if self.certificate is not None and self.certificate.certified:
                message = f"{message}; the last iterate is certified"
                termination = Termination.CERTIFIED_OPTIMAL
        if self.history:
            for key, val in run.take_seconds().items():
                self.history[-1].seconds[key] = round(self.history[-1].seconds.get(key, 0.0) + val, 6)
        handle = getattr(self, "handle", None)
        if handle is not None:
            run.dimensions.update(solves=handle.stats.solves, warm_solves=handle.stats.warm_solves)
            handle.close()
        run.dimensions.update(max_rows_in_lp=self.max_rows, full_checks=self.checks)
        if self.final is None or not have_point:
            return run.result(termination, message, history=self.history, aid=False)
        primal, dual, solution, feasible, _ = self.final
        cert = self.certificate
        # the reported bound is the certificate's when its residuals hold, else none: the chunk
        # LPs' values are solver-reported (within the solver's absolute tolerances, which on data
        # at 1e-9 put a "bound" 80 % above the optimum)
        primal_keys = ("max row violation", "bound violation")  # x^j's own feasibility
        dual_holds = cert is not None and all(
            cert.residuals[k] <= cert.feasibility_tol
            for k in (cert.checked or cert.residuals) if k not in primal_keys)
        bound = cert.dual_objective if dual_holds else -math.inf
        if not feasible:  # x^j violates rows
            objective, lower = math.inf, bound
            message = f"{message}; {cert.note}"
        elif cert.certified:
            objective, lower = primal, min(dual, primal)
        else:
            objective, lower = primal, min(bound, primal)
        return run.result(termination, message, objective=objective, lower=lower,
                          solution=self.problem.public(solution), certificate=cert,
                          history=self.history, aid=False)
