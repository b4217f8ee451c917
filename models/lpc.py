r"""Chunk linear programs (1.30) of linear program chunking (LPC), as Pyomo models.

Bradley, Mangasarian & Musicant, section 4.2. LPC solves :math:`\min\{c'x \mid Hx \ge b\}`
(1.29) through a sequence of small LPs (1.30), each with one block :math:`[H^l\ b^l]` of rows and
the rows :math:`[\bar H\ \bar b]` kept from the previous one. Rows of a scipy sparse matrix
enter a chunk LP with their stored entries only (:func:`row_terms`). The model of (1.30) is built once
and its rows change in place: rows are added and removed by their **global row id** (the index
of the row in ``H``), and a persistent solver handle (:meth:`aidopt.decomposition.run.Run.persistent`)
is told which rows changed. The Pyomo model stays the single source of truth: writing it
(``write_models``) writes exactly the chunk LP that was solved.

**General LP** (:func:`chunk_lp`), model name ``lpc_chunk``::

    min   sum_j c[j] x[j]
    s.t.  rows[i]:  sum_j H[i,j] x[j] >= b[i]          i in the chunk and the kept rows
          lower[j] <= x[j] <= upper[j]                  (the bounds: always in the model)

**LSVM (1.28)** (:class:`LSVMChunkLP`), model name ``lsvm_lpc_chunk``: the data rows
``margin[i]: d_i (A_i w - gamma) + y_i >= 1`` are the chunked rows; ``-s <= w <= s`` and
``y >= 0`` are always in the model. The slack :math:`y_i` of a data row appears only in that
row and the objective, so it is a column of the chunk LP only while its row is: the model holds
one slack variable per *slot* (``y[k]``), and a row entering the chunk LP takes a free slot
(slots are reused, so the number of columns is bounded by the largest chunk LP, not by the
number of data points)::

    min   nu sum_k c_k y[k] + sum_j s[j]
    s.t.  margin[i]:  d_i (A_i w - gamma) + y[slot(i)] >= 1      i in the chunk and the kept rows
          upper[j]:   w[j] - s[j] <= 0,    lower[j]:  -w[j] - s[j] <= 0
          y, s >= 0

(``c_k`` is the sample weight of the row in slot ``k``; a free slot keeps no row, so its slack is
0 at every optimum.) Rows are :class:`~pyomo.core.expr.numeric_expr.LinearExpression` bodies, which
aidopt's solver layer reads without walking expressions.
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
from pyomo.core.expr.numeric_expr import LinearExpression

__all__ = ["chunk_lp", "add_rows", "remove_rows", "values", "row_terms", "LSVMChunkLP"]


def _bound(value):
    return None if value is None or not np.isfinite(value) else float(value)


def chunk_lp(c, lower=None, upper=None) -> pyo.ConcreteModel:
    """The chunk LP (1.30) of ``min c'x s.t. Hx >= b, lower <= x <= upper`` with no rows yet.

    Parameters
    ----------
    c : ndarray of shape (n,)
    lower, upper : ndarray of shape (n,), optional
        Bounds of ``x`` (``-inf`` / ``inf`` entries: none); default free.

    Returns
    -------
    pyomo.environ.ConcreteModel
        Variables ``x[j]``, objective ``objective``, rows ``rows[i]`` (empty; indexed by global
        row id, see :func:`add_rows`).
    """
    c = np.asarray(c, dtype=float)
    n = c.shape[0]
    lower = np.full(n, -np.inf) if lower is None else np.asarray(lower, dtype=float)
    upper = np.full(n, np.inf) if upper is None else np.asarray(upper, dtype=float)
    model = pyo.ConcreteModel(name="lpc_chunk")
    model.J = pyo.RangeSet(0, n - 1, doc="columns of H")
    model.x = pyo.Var(model.J, bounds=lambda m, j: (_bound(lower[j]), _bound(upper[j])))
    model.objective = pyo.Objective(
        expr=LinearExpression(constant=0.0, linear_coefs=c.tolist(), linear_vars=list(model.x.values())),
        sense=pyo.minimize)
    model.rows = pyo.Constraint(pyo.Any, doc="row i of Hx >= b (global row id i)")
    return model


def row_terms(H):
    """``(positions, values)`` of every row of ``H``: a dense array's every entry (positions
    ``None``), a scipy sparse matrix's stored entries only (as CSR), so a chunk LP built from
    sparse rows holds their nonzeros and is built in time linear in them."""
    from scipy import sparse

    if not sparse.issparse(H):
        for h in np.asarray(H).tolist():
            yield None, h
        return
    H = sparse.csr_matrix(H)
    indptr, indices, data = H.indptr.tolist(), H.indices.tolist(), H.data.tolist()
    for k in range(H.shape[0]):
        yield indices[indptr[k]:indptr[k + 1]], data[indptr[k]:indptr[k + 1]]


def add_rows(model, ids, H, b) -> list:
    """Add rows ``H[k] x >= b[k]`` as ``model.rows[ids[k]]`` (a sparse ``H``: its stored entries
    only); return their constraint datas."""
    xs = list(model.x.values())
    rows = model.rows
    out = []
    for i, (at, h), bi in zip(np.asarray(ids).tolist(), row_terms(H), np.asarray(b).tolist(),
                              strict=True):
        terms = xs if at is None else [xs[j] for j in at]
        rows[i] = LinearExpression(constant=0.0, linear_coefs=h, linear_vars=terms) >= bi
        out.append(rows[i])
    return out


def remove_rows(model, ids) -> list:
    """Delete ``model.rows[i]`` for ``i`` in ``ids``; return the deleted datas (for the handle)."""
    rows = model.rows
    out = []
    for i in np.asarray(ids).tolist():
        out.append(rows[i])
        del rows[i]
    return out


def values(model) -> np.ndarray:
    """The current ``x`` as an array (``nan`` for a variable without a value)."""
    return np.array([np.nan if v.value is None else v.value for v in model.x.values()], dtype=float)


class LSVMChunkLP:
    """The chunk LP of the LSVM (1.28) with one slack slot per row in the model.

    Parameters
    ----------
    n_features : int
    nu : float
        Weight of the misclassification error (``C`` in the public API).

    Attributes
    ----------
    model : pyomo.environ.ConcreteModel
        ``w[j]``, ``gamma``, ``s[j]``, slots ``y[k]``, rows ``margin[i]`` (global row id i),
        ``upper[j]``, ``lower[j]``, ``objective``.
    """

    def __init__(self, n_features: int, nu: float):
        self.nu = float(nu)
        model = pyo.ConcreteModel(name="lsvm_lpc_chunk")
        model.J = pyo.RangeSet(0, n_features - 1, doc="features")
        model.w = pyo.Var(model.J, doc="normal of the plane x'w = gamma")
        model.gamma = pyo.Var(doc="location of the plane")
        model.s = pyo.Var(model.J, within=pyo.NonNegativeReals, doc="s_j >= |w_j|")
        model.y = pyo.Var(pyo.Any, dense=False, within=pyo.NonNegativeReals,
                          doc="slack (hinge) of the data row in slot k")
        model.upper = pyo.Constraint(model.J, rule=lambda m, j: LinearExpression(
            constant=0.0, linear_coefs=[1.0, -1.0], linear_vars=[m.w[j], m.s[j]]) <= 0.0)
        model.lower = pyo.Constraint(model.J, rule=lambda m, j: LinearExpression(
            constant=0.0, linear_coefs=[-1.0, -1.0], linear_vars=[m.w[j], m.s[j]]) <= 0.0)
        model.margin = pyo.Constraint(pyo.Any, doc="d_i (A_i w - gamma) + y_slot(i) >= 1")
        self.model = model
        self._ws = list(model.w.values())
        self.slot_of: dict[int, int] = {}      # row id -> slot
        self._free: list[int] = []             # free slots
        self._weight: list[float] = []         # weight c_k of the row in slot k
        self.set_objective()

    @property
    def n_slots(self) -> int:
        return len(self._weight)

    def set_objective(self) -> None:
        """(Re)build ``objective`` from the slots' weights."""
        m = self.model
        coefs = [self.nu * c for c in self._weight] + [1.0] * len(m.J)
        variables = [m.y[k] for k in range(self.n_slots)] + list(m.s.values())
        expr = LinearExpression(constant=0.0, linear_coefs=coefs, linear_vars=variables)
        if hasattr(m, "objective"):
            m.objective.set_value(expr)
        else:
            m.objective = pyo.Objective(expr=expr, sense=pyo.minimize)

    def add_rows(self, ids, A, d, weights, *, objective: bool = True) -> tuple[list, bool]:
        """Add ``margin[i]`` for the rows ``ids`` (data ``A``, labels ``d`` in {-1, +1}, sample
        weights); return the constraint datas and whether the objective changed (a new slot, or a
        reused slot with another weight). With ``objective=False`` the objective is not rebuilt:
        the caller calls :meth:`set_objective` after its last ``add_rows`` (rows added in pieces
        then cost one rebuild of the objective, which has a term per slot, not one per piece)."""
        m = self.model
        margin, y, gamma = m.margin, m.y, m.gamma
        changed = False
        out = []
        ws = self._ws
        for i, (at, a), di, ci in zip(np.asarray(ids).tolist(), row_terms(A),
                                      np.asarray(d).tolist(), np.asarray(weights).tolist(),
                                      strict=True):
            if self._free:
                k = self._free.pop()
                if self._weight[k] != ci:
                    self._weight[k] = ci
                    changed = True
            else:
                k = self.n_slots
                self._weight.append(ci)
                changed = True
            self.slot_of[i] = k
            margin[i] = LinearExpression(
                constant=0.0, linear_coefs=[di * aj for aj in a] + [-di, 1.0],
                linear_vars=[*(ws if at is None else [ws[j] for j in at]), gamma, y[k]]) >= 1.0
            out.append(margin[i])
        if changed and objective:
            self.set_objective()
        return out, changed

    def remove_rows(self, ids) -> list:
        """Delete ``margin[i]`` for ``i`` in ``ids`` and free their slots; return the datas."""
        margin = self.model.margin
        out = []
        for i in np.asarray(ids).tolist():
            out.append(margin[i])
            del margin[i]
            self._free.append(self.slot_of.pop(i))
        return out

    def point(self) -> tuple[np.ndarray, float]:
        """``(w, gamma)`` of the last solve."""
        m = self.model
        w = np.array([v.value for v in m.w.values()], dtype=float)
        return w, float(m.gamma.value)

    def slacks(self, ids) -> np.ndarray:
        """The values ``y[slot(i)]`` of the rows ``ids``."""
        y = self.model.y
        return np.array([y[self.slot_of[i]].value for i in np.asarray(ids).tolist()], dtype=float)
