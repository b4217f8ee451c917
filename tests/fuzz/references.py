"""Independent references for the fuzz campaign (``tests/fuzz/campaign.py``).

Every reference is built here from the mathematical problem, never from aidopt's models, plug-ins
or numerics: linear programs through SciPy's ``linprog`` / ``milp`` (HiGHS behind SciPy's own
interface), quadratic programs through Clarabel's native API, enumeration, and the TSPLIB
distance formulas written from the TSPLIB 95 documentation. Kernel matrices are computed here.

Where a reference returns a primal point, the campaign evaluates that point's objective on the
original data (:func:`hinge`, :func:`facility_value`, ...): a feasible point's value is an upper
bound on the optimum whatever the reference solver's accuracy, so "aidopt's certified objective
exceeds it by more than the tolerance" proves a certified answer wrong.
"""

from __future__ import annotations

import itertools
import math

import clarabel
import numpy as np
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, linprog, milp
from scipy.spatial.distance import cdist

__all__ = [
    "hinge", "best_offset", "kernel", "clarabel_qp", "kernel_svm_reference", "svm_l2_reference",
    "lp_svm_reference", "modified_svm_reference", "lad_reference", "gsvm_reference",
    "fsv_lp_value", "facility_value", "facility_brute_force", "facility_mip",
    "tsplib_geo", "tsplib_att", "weighted_kernel_svm_reference",
]


# --------------------------------------------------------------------------- shared pieces
def hinge(y, f):
    """``max(0, 1 - y f)`` elementwise."""
    return np.maximum(0.0, 1.0 - y * f)


def best_offset(g, y, s):
    """``argmin_b sum_i s_i max(0, 1 - y_i (g_i + b))`` exactly: the function is convex and
    piecewise linear in b, so a minimum lies at a breakpoint ``b = y_i - g_i`` (y = +-1)."""
    cand = np.unique(y - g)
    if cand.size > 4000:  # keep the enumeration O(n * 4000)
        cand = np.unique(np.quantile(cand, np.linspace(0, 1, 4000)))
    vals = [(float(s @ hinge(y, g + b)), float(b)) for b in cand]
    return min(vals)[1]


def kernel(name, A, B, *, gamma=1.0, degree=3, coef0=1.0):
    """Kernel matrices written from their definitions: ``rbf`` exp(-gamma ||a - b||^2),
    ``poly`` (gamma a'b + coef0)^degree, ``laplacian`` exp(-gamma ||a - b||_1), ``linear`` a'b."""
    if name == "rbf":
        return np.exp(-gamma * cdist(A, B, "sqeuclidean"))
    if name == "poly":
        return (gamma * (A @ B.T) + coef0) ** degree
    if name == "laplacian":
        return np.exp(-gamma * cdist(A, B, "cityblock"))
    if name == "linear":
        return A @ B.T
    raise ValueError(name)


def _settings():
    s = clarabel.DefaultSettings()
    s.verbose = False
    s.tol_gap_abs = 1e-11
    s.tol_gap_rel = 1e-11
    s.tol_feas = 1e-11
    s.tol_ktratio = 1e-9
    s.max_iter = 500
    return s


def clarabel_qp(P, q, A, b, cones):
    """``min 1/2 x'Px + q'x  s.t.  b - Ax in cones`` by Clarabel's native API: ``(x, status)``."""
    solver = clarabel.DefaultSolver(sp.csc_matrix(sp.triu(sp.csc_matrix(P))), np.asarray(q, float),
                                    sp.csc_matrix(A), np.asarray(b, float), cones, _settings())
    sol = solver.solve()
    return np.asarray(sol.x), str(sol.status)


def _ok(status):
    return status in ("Solved", "AlmostSolved")


# --------------------------------------------------------------------------- SVMs
def weighted_kernel_svm_reference(K, y, s, C):
    """The kernel 2-norm SVM ``min 1/2 ||w||^2 + C sum s_i xi_i`` through its dual
    ``min 1/2 a'Qa - e'a, 0 <= a <= C s, y'a = 0`` (Q = D K D) by Clarabel.

    Returns ``(upper, lower, a, b)``: ``upper`` the primal objective of ``w = sum a_i y_i phi(x_i)``
    with the best offset (a feasible point, evaluated exactly), ``lower`` the dual value of ``a``.
    """
    n = len(y)
    Q = (y[:, None] * K) * y[None, :]
    Q = 0.5 * (Q + Q.T)
    A = sp.vstack([sp.csr_matrix(y[None, :]), -sp.eye(n), sp.eye(n)])
    b = np.concatenate([[0.0], np.zeros(n), C * s])
    a, status = clarabel_qp(Q, -np.ones(n), A, b, [clarabel.ZeroConeT(1), clarabel.NonnegativeConeT(2 * n)])
    if not _ok(status):  # a second reference: LIBSVM (scikit-learn's SVC) on the same kernel
        a = _libsvm_dual(K, y, s, C)
        if a is None:
            return math.nan, math.nan, None, None
    a = np.clip(a, 0.0, C * s)
    coef = a * y
    g = K @ coef
    quad = float(coef @ g)
    off = best_offset(g, y, s)
    upper = 0.5 * quad + C * float(s @ hinge(y, g + off))
    # the dual value needs y'a = 0 exactly: scale the larger class's side down
    pos, neg = a[y > 0].sum(), a[y < 0].sum()
    if pos > 0 and neg > 0:
        a_b = a.copy()
        if pos > neg:
            a_b[y > 0] *= neg / pos
        else:
            a_b[y < 0] *= pos / neg
        cb = a_b * y
        lower = float(a_b.sum()) - 0.5 * float(cb @ K @ cb)
    else:
        lower = -math.inf
    return upper, lower, a, off


def _libsvm_dual(K, y, s, C):
    """The dual point of scikit-learn's ``SVC(kernel="precomputed")`` with sample weights (box
    ``C s_i``), tight tolerance; None when it fails."""
    import warnings

    from sklearn.svm import SVC

    keep = s > 0
    if len(np.unique(y[keep])) < 2:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = SVC(C=C, kernel="precomputed", tol=1e-10, max_iter=10**7).fit(
                K[np.ix_(keep, keep)], y[keep], sample_weight=s[keep])
    except Exception:
        return None
    a = np.zeros(len(y))
    rows = np.flatnonzero(keep)[est.support_]
    a[rows] = np.abs(est.dual_coef_[0])
    return a


def kernel_svm_reference(K, y, s, C):
    """Alias of :func:`weighted_kernel_svm_reference` (row weights ``s``)."""
    return weighted_kernel_svm_reference(K, y, s, C)


def svm_l2_reference(X, y, s, C):
    """The linear 2-norm SVM (free offset) as a primal QP by Clarabel: ``(upper, w, b)`` with
    ``upper`` its objective recomputed at ``(w, b)``."""
    n, m = X.shape
    P = sp.diags(np.concatenate([np.ones(m), np.zeros(1 + n)]))
    q = np.concatenate([np.zeros(m + 1), C * s])
    Yx = y[:, None] * X
    A = sp.vstack([sp.hstack([sp.csr_matrix(-Yx), sp.csr_matrix(-y[:, None]), -sp.eye(n)]),
                   sp.hstack([sp.csr_matrix((n, m + 1)), -sp.eye(n)])])
    b = np.concatenate([-np.ones(n), np.zeros(n)])
    x, status = clarabel_qp(P, q, A, b, [clarabel.NonnegativeConeT(2 * n)])
    if not _ok(status):
        return math.nan, None, None
    w, off = x[:m], float(x[m])
    return 0.5 * float(w @ w) + C * float(s @ hinge(y, X @ w + off)), w, off


def lp_svm_reference(X, y, s, C, norm):
    """1-norm, inf-norm or no-regularizer (RLP) hinge SVM as an LP in (w+, w-, b, xi, t) by
    ``linprog``: ``(upper, w, b)``, ``upper`` recomputed at ``(w, b)``."""
    n, m = X.shape
    nv = 2 * m + 1 + n + 1
    c = np.zeros(nv)
    c[2 * m + 1: 2 * m + 1 + n] = C * s
    if norm == "l1":
        c[: 2 * m] = 1.0
    elif norm == "linf":
        c[-1] = 1.0
    Yx = y[:, None] * X
    A = [sp.hstack([sp.csr_matrix(-Yx), sp.csr_matrix(Yx), sp.csr_matrix(-y[:, None]), -sp.eye(n),
                    sp.csr_matrix((n, 1))])]
    b = [-np.ones(n)]
    if norm == "linf":
        A.append(sp.hstack([sp.eye(m), sp.eye(m), sp.csr_matrix((m, 1 + n)), -np.ones((m, 1))]))
        b.append(np.zeros(m))
    bounds = [(0, None)] * (2 * m) + [(None, None)] + [(0, None)] * n + [(0, None)]
    res = linprog(c, A_ub=sp.vstack(A).tocsr(), b_ub=np.concatenate(b), bounds=bounds, method="highs")
    if res.status != 0:
        return math.nan, None, None
    w = res.x[:m] - res.x[m:2 * m]
    off = float(res.x[2 * m])
    return lp_svm_value(X, y, s, C, norm, w, off), w, off


def lp_svm_value(X, y, s, C, norm, w, b):
    """The LP SVM objective at ``(w, b)``."""
    reg = {"l1": float(np.abs(w).sum()), "linf": float(np.abs(w).max(initial=0.0)), "none": 0.0,
           "l2": 0.5 * float(w @ w)}[norm]
    return reg + C * float(s @ hinge(y, X @ w + b))


def modified_svm_reference(A, d, s, C):
    """The modified SVM (1.35) ``min C s'xi + 1/2 (w'w + gamma^2)`` through its dual (1.37)
    ``max e'u - 1/2 u'D(AA' + ee')Du, 0 <= u <= C s`` by Clarabel: ``(upper, lower)`` with
    ``upper`` (1.35) at ``w = A'Du, gamma = -e'Du`` recomputed exactly."""
    n = len(d)
    G = d[:, None] * (A @ A.T + 1.0) * d[None, :]
    G = 0.5 * (G + G.T)
    Acon = sp.vstack([-sp.eye(n), sp.eye(n)])
    b = np.concatenate([np.zeros(n), C * s])
    u, status = clarabel_qp(G, -np.ones(n), Acon, b, [clarabel.NonnegativeConeT(2 * n)])
    if not _ok(status):
        return math.nan, math.nan
    u = np.clip(u, 0.0, C * s)
    w = A.T @ (d * u)
    gamma = -float(d @ u)
    upper = modified_svm_value(A, d, s, C, w, gamma)
    lower = float(u.sum()) - 0.5 * float(u @ G @ u)
    return upper, lower


def modified_svm_value(A, d, s, C, w, gamma):
    """(1.35) at ``(w, gamma)`` with the best slacks."""
    return 0.5 * (float(w @ w) + gamma * gamma) + C * float(s @ hinge(d, A @ w - gamma))


def lad_reference(X, y, s):
    """``min sum_i s_i |y_i - x_i beta|`` as an LP by ``linprog``: ``(upper, beta)``."""
    n, m = X.shape
    c = np.concatenate([np.zeros(m), s, s])
    A = sp.hstack([sp.csr_matrix(X), sp.eye(n), -sp.eye(n)]).tocsr()
    bounds = [(None, None)] * m + [(0, None)] * (2 * n)
    res = linprog(c, A_eq=A, b_eq=y, bounds=bounds, method="highs")
    if res.status != 0:
        return math.nan, None
    beta = res.x[:m]
    return float(s @ np.abs(y - X @ beta)), beta


# --------------------------------------------------------------------------- GSVM (Mangasarian)
def gsvm_value(K, d, nu, formulation, u, gamma):
    """(1.11) / (1.12) / (1.10) (H = I) at ``(u, gamma)``, slacks at their best."""
    f = K @ (d * u)
    err = nu * float(hinge(d, f - gamma).sum())
    if formulation == "lp_u":
        return err + float(np.abs(u).sum())
    if formulation == "lp_Ku":
        return err + float(np.abs(f).sum())
    return err + 0.5 * float(u @ u)


def gsvm_reference(K, d, nu, formulation):
    """The GSVM (1.11), (1.12) (LPs by ``linprog``) or (1.10) with H = I (a QP by Clarabel)
    on the kernel matrix K: ``(upper, u, gamma)``, ``upper`` recomputed at ``(u, gamma)``."""
    m = len(d)
    KD = K * d[None, :]  # K D
    DKD = d[:, None] * KD
    if formulation == "qp":
        # x = (u, gamma, y): min nu e'y + 1/2 u'u  s.t. -DKDu + d gamma - y <= -e, -y <= 0
        P = sp.diags(np.concatenate([np.ones(m), np.zeros(1 + m)]))
        q = np.concatenate([np.zeros(m + 1), nu * np.ones(m)])
        A = sp.vstack([sp.hstack([sp.csr_matrix(-DKD), sp.csr_matrix(d[:, None]), -sp.eye(m)]),
                       sp.hstack([sp.csr_matrix((m, m + 1)), -sp.eye(m)])])
        b = np.concatenate([-np.ones(m), np.zeros(m)])
        x, status = clarabel_qp(P, q, A, b, [clarabel.NonnegativeConeT(2 * m)])
        if not _ok(status):
            return math.nan, None, None
        u, gamma = x[:m], float(x[m])
        return gsvm_value(K, d, nu, formulation, u, gamma), u, gamma
    # x = (u, gamma, y, t): min nu e'y + e't
    nv = 3 * m + 1
    c = np.concatenate([np.zeros(m + 1), nu * np.ones(m), np.ones(m)])
    G = np.eye(m) if formulation == "lp_u" else KD
    Z = sp.csr_matrix((m, m))
    rows = [sp.hstack([sp.csr_matrix(-DKD), sp.csr_matrix(d[:, None]), -sp.eye(m), Z]),   # margin
            sp.hstack([sp.csr_matrix(G), sp.csr_matrix((m, 1)), Z, -sp.eye(m)]),           # G u <= t
            sp.hstack([sp.csr_matrix(-G), sp.csr_matrix((m, 1)), Z, -sp.eye(m)])]          # -G u <= t
    rhs = np.concatenate([-np.ones(m), np.zeros(2 * m)])
    bounds = [(None, None)] * (m + 1) + [(0, None)] * (2 * m)
    G_ub = sp.vstack(rows).tocsr()
    for method in ("highs", "highs-ds", "highs-ipm"):  # the next one where HiGHS's choice fails
        res = linprog(c, A_ub=G_ub, b_ub=rhs, bounds=bounds, method=method)
        if res.status == 0:
            x = res.x
            break
    else:  # Clarabel on the same LP (y, t >= 0 as rows)
        lower = sp.hstack([sp.csr_matrix((2 * m, m + 1)), -sp.eye(2 * m)])
        x, status = clarabel_qp(sp.csr_matrix((nv, nv)), c, sp.vstack([G_ub, lower]),
                                np.concatenate([rhs, np.zeros(2 * m)]), [clarabel.NonnegativeConeT(5 * m)])
        if not _ok(status):
            return math.nan, None, None
    assert len(x) == nv
    u, gamma = x[:m], float(x[m])
    return gsvm_value(K, d, nu, formulation, u, gamma), u, gamma


# --------------------------------------------------------------------------- FSV
def fsv_lp_value(A, d, s, nu, t, v_at):
    """The FSV step LP (1.22) linearized at ``v_at`` with weights ``t``:
    ``min nu s'y + t'(v - v_at)`` over ``d(Aw - gamma) + y >= e, -v <= w <= v, y, v >= 0``."""
    n, m = A.shape
    # x = (w, gamma, y, v)
    c = np.concatenate([np.zeros(m + 1), nu * s, t])
    Dm = d[:, None] * A
    rows = [sp.hstack([sp.csr_matrix(-Dm), sp.csr_matrix(d[:, None]), -sp.eye(n), sp.csr_matrix((n, m))]),
            sp.hstack([sp.eye(m), sp.csr_matrix((m, 1 + n)), -sp.eye(m)]),
            sp.hstack([-sp.eye(m), sp.csr_matrix((m, 1 + n)), -sp.eye(m)])]
    rhs = np.concatenate([-np.ones(n), np.zeros(2 * m)])
    bounds = [(None, None)] * (m + 1) + [(0, None)] * (n + m)
    res = linprog(c, A_ub=sp.vstack(rows).tocsr(), b_ub=rhs, bounds=bounds, method="highs")
    if res.status != 0:
        return math.nan
    w = res.x[:m]
    gamma = float(res.x[m])
    # the LP's value at the point it returned, slacks and v at their best (a feasible point)
    return nu * float(s @ hinge(d, A @ w - gamma)) + float(t @ (np.abs(w) - v_at))


# --------------------------------------------------------------------------- facility location
def facility_value(D, f, w, open_sites):
    """``sum_j f_j + sum_i w_i min_{j open} D_ij`` (uncapacitated)."""
    open_sites = np.asarray(open_sites, dtype=int)
    if open_sites.size == 0:
        return math.inf
    fixed = 0.0 if f is None else float(np.asarray(f)[open_sites].sum())
    return fixed + float(w @ D[:, open_sites].min(axis=1))


def facility_brute_force(D, f, w, p):
    """The optimum over every open set of 1 ... (p or every) sites."""
    s = D.shape[1]
    top = s if p is None else p
    return min(facility_value(D, f, w, S) for k in range(1, top + 1)
               for S in itertools.combinations(range(s), k))


def facility_mip(D, f, w, p, capacity=None, time_limit=600.0):
    """The textbook strong formulation ``min f'y + sum w_i D_ij x_ij``, ``sum_j x_ij = 1``,
    ``x_ij <= y_j``, ``sum_j y_j <= p``, (capacities: ``sum_i w_i x_ij <= cap_j y_j``), y binary,
    x continuous in [0, 1], by ``scipy.optimize.milp`` (HiGHS) with a relative gap of 1e-9.

    Returns ``(upper, lower, open_sites)``: ``upper`` recomputed from the open set (and, with
    capacities, from the solver's shares), ``lower`` HiGHS's dual bound."""
    n, s = D.shape
    nx = n * s
    c = np.concatenate([(w[:, None] * D).ravel(), np.zeros(s) if f is None else np.asarray(f, float)])
    rows, lo, hi = [], [], []
    # sum_j x_ij = 1
    rows.append(sp.hstack([sp.kron(sp.eye(n), np.ones((1, s))), sp.csr_matrix((n, s))]))
    lo.append(np.ones(n))
    hi.append(np.ones(n))
    # x_ij - y_j <= 0
    rows.append(sp.hstack([sp.eye(nx), -sp.kron(np.ones((n, 1)), sp.eye(s))]))
    lo.append(np.full(nx, -np.inf))
    hi.append(np.zeros(nx))
    if p is not None:
        rows.append(sp.hstack([sp.csr_matrix((1, nx)), sp.csr_matrix(np.ones((1, s)))]))
        lo.append([-np.inf])
        hi.append([float(p)])
    if capacity is not None:
        # sum_i w_i x_ij - cap_j y_j <= 0
        rows.append(sp.hstack([sp.kron(w[None, :], sp.eye(s)), -sp.diags(np.asarray(capacity, float))]))
        lo.append(np.full(s, -np.inf))
        hi.append(np.zeros(s))
    A = sp.vstack(rows).tocsr()
    cons = LinearConstraint(A, np.concatenate(lo), np.concatenate(hi))
    integrality = np.concatenate([np.zeros(nx), np.ones(s)])
    res = milp(c, constraints=cons, integrality=integrality, bounds=Bounds(0, 1),
               options={"mip_rel_gap": 1e-9, "time_limit": time_limit})
    if res.x is None or res.status != 0:
        return math.nan, math.nan, None
    y = res.x[nx:]
    open_sites = np.flatnonzero(y > 0.5)
    if capacity is None:
        upper = facility_value(D, f, w, open_sites)
    else:
        x = np.clip(res.x[:nx].reshape(n, s), 0.0, 1.0)
        x[:, y <= 0.5] = 0.0
        x /= x.sum(axis=1, keepdims=True)
        upper = float((w[:, None] * D * x).sum()) + (0.0 if f is None else float(np.asarray(f)[open_sites].sum()))
    return upper, float(getattr(res, "mip_dual_bound", math.nan)), open_sites


# --------------------------------------------------------------------------- TSPLIB (TSPLIB 95 doc)
def tsplib_geo(xy):
    """GEO distances as TSPLIB 95 (section 2.4) defines them, pair by pair in plain Python:
    ``PI = 3.141592``, coordinates ``DDD.MM`` converted with ``deg = (int) x`` (truncation, as the
    reference implementation and the TSPLIB FAQ do), ``min = x - deg``,
    ``rad = PI (deg + 5 min / 3) / 180``; ``RRR = 6378.388``;
    ``d = (int)(RRR acos(0.5 ((1 + q1) q2 - (1 - q1) q3)) + 1)``. The acos argument is clipped
    to [-1, 1] (C's acos gives NaN beyond it, which only rounding can cause)."""
    PI, RRR = 3.141592, 6378.388

    def rad(x):
        deg = int(x)  # truncation toward zero
        mins = x - deg
        return PI * (deg + 5.0 * mins / 3.0) / 180.0

    lat = [rad(float(a)) for a in xy[:, 0]]
    lon = [rad(float(b)) for b in xy[:, 1]]
    n = len(lat)
    out = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            q1 = math.cos(lon[i] - lon[j])
            q2 = math.cos(lat[i] - lat[j])
            q3 = math.cos(lat[i] + lat[j])
            arg = min(1.0, max(-1.0, 0.5 * ((1.0 + q1) * q2 - (1.0 - q1) * q3)))
            out[i, j] = int(RRR * math.acos(arg) + 1.0)
    return out


def tsplib_att(xy):
    """ATT (pseudo-Euclidean) distances as TSPLIB 95 defines them:
    ``r = sqrt((xd^2 + yd^2) / 10)``, ``t = nint(r)``, ``d = t + 1 if t < r else t``, with
    ``nint(x) = (int)(x + 0.5)`` (TSPLIB's nearest integer)."""
    n = len(xy)
    out = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            xd = float(xy[i, 0]) - float(xy[j, 0])
            yd = float(xy[i, 1]) - float(xy[j, 1])
            r = math.sqrt((xd * xd + yd * yd) / 10.0)
            t = int(r + 0.5)
            out[i, j] = t + 1 if t < r else t
    return out
