"""The fuzz campaign: every family against an independent reference, one seeded run at a time.

Off by default: the test suite runs one or two seeds per family (``tests/fuzz/test_campaign.py``,
a few seconds). A campaign is run from the repository root, in the background, and resumes where
it stopped (runs already in the log are skipped)::

    nice -n 10 python -m tests.fuzz.campaign run --plan full --out /tmp/fuzzlogs/campaign.jsonl
    python -m tests.fuzz.campaign summary /tmp/fuzzlogs/campaign.jsonl     # counts per family
    python -m tests.fuzz.campaign one kernel_svm 17                       # one run, printed

``run --families kernel_svm,gsvm --seeds 0-499`` runs a part; ``--plan full`` is the number of
seeds per family in :data:`PLAN` (11,000 runs, about an hour on two shared cores). Each chunk of
seeds runs in a worker process; a run that gives no sign of life for ``--hang`` seconds is
killed and recorded as ``hang`` (past its limit), and the campaign goes on with the next seed.

Every run records its family, seed, options, termination, the reported and independently
recomputed objective, the reference and a verdict:

* ``certified_but_wrong``: termination ``certified_optimal`` (SCM: its representatives' SVM
  certified) and the objective recomputed on the original data exceeds the reference optimum by
  more than the run's ``tol`` (relative to the objective, with the family's documented gap
  floor), or the reported objective disagrees with the recomputed one;
* ``wrong``: another promise broken (a reported lower bound above the optimum, FSV claiming
  optimality or a stationarity the LP refutes, a misreported SCM full-data gap, TSPLIB costs
  that differ from the TSPLIB formulas, the CLI's JSON disagreeing with the API);
* ``certified`` / ``uncertified``: nothing broken; ``error``: aidopt raised; ``ref_failed``:
  the reference could not solve (not counted).

``past_limit`` marks a run whose aidopt call returned later than its ``time_limit + 10`` s
(every run has a limit: 60 s, or 0.5-5 s in the ``time_limit`` family on larger instances).

The references (``tests/fuzz/references.py``) never use aidopt's models: SciPy's ``linprog`` /
``milp`` (HiGHS behind SciPy's own interface), Clarabel's native API, enumeration, and the TSPLIB
formulas written from the TSPLIB 95 documentation. A reference's primal point is evaluated on
the original data, so it bounds the optimum from above whatever its solver's accuracy.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import itertools
import json
import logging
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import zlib
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
from scipy.optimize import linprog

import tests.fuzz.references as ref

TINY = np.finfo(float).tiny
LIMIT = 60.0  # the time limit of every run outside the time_limit family
OVER = 10.0  # a run past its limit + OVER seconds is counted
REF_SLACK = 1e-9  # relative: rounding of a recomputed reference value
MATCH = 1e-7  # relative: the reported objective against the recomputed one


class AidoptError(Exception):
    """aidopt raised (the run's verdict is ``error``)."""


@dataclasses.dataclass
class Family:
    name: str
    case: object
    plan: int
    default_seeds: tuple = (0,)
    in_suite: bool = True


FAMILIES: dict[str, Family] = {}


def family(name, plan, default_seeds=(0,), in_suite=True):
    def deco(fn):
        FAMILIES[name] = Family(name, fn, plan, tuple(default_seeds), in_suite)
        return fn
    return deco


# --------------------------------------------------------------------------- one run
def new_record(name, seed):
    return {"family": name, "seed": int(seed), "options": {}, "termination": None,
            "certified": False, "objective": None, "recomputed": None, "reference": None,
            "lower_bound": None, "tol": 1e-6, "limit": LIMIT, "wall": 0.0, "past_limit": False,
            "failures": [], "notes": [], "verdict": None}


def run_case(name, seed) -> dict:
    """One run of family ``name`` at ``seed``: the record, with its verdict."""
    rec = new_record(name, seed)
    rng = np.random.default_rng([zlib.crc32(name.encode()), int(seed)])
    try:
        fam = FAMILIES[name]
        status = fam.case(rng, rec)
        if status == "ref_failed":
            rec["verdict"] = "ref_failed"
    except AidoptError as exc:
        rec["verdict"] = "error"
        rec["failures"].append(str(exc)[:2000])
    except Exception as exc:  # the harness itself (a bug here, or a reference that raised)
        rec["verdict"] = "harness_error"
        rec["failures"].append("".join(traceback.format_exception(exc))[-3000:])
    if rec["verdict"] is None:
        if rec["failures"]:
            cbw = any(f.startswith("CBW") for f in rec["failures"])
            rec["verdict"] = "certified_but_wrong" if cbw else "wrong"
        else:
            rec["verdict"] = "certified" if rec["certified"] else "uncertified"
    return _jsonable(rec)


def _jsonable(x):
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, float | int | str | bool) or x is None:
        return x
    return str(x)


def solve(rec, fn, *args, limit=None, common=True, **kwargs):
    """Call aidopt's ``fn`` with the run's time limit, quietly; time it. An exception becomes
    :class:`AidoptError`."""
    limit = rec["limit"] if limit is None else limit
    if common:
        kwargs = {"time_limit": limit, "log": False, "raise_on_failure": False, **kwargs}
    t = time.perf_counter()
    try:
        out = fn(*args, **kwargs)
    except Exception as exc:
        wall = time.perf_counter() - t
        rec["wall"] += wall
        rec["past_limit"] = rec["past_limit"] or wall > limit + OVER
        raise AidoptError(f"{type(exc).__name__}: {exc}") from exc
    wall = time.perf_counter() - t
    rec["wall"] += wall
    if wall > limit + OVER:
        rec["past_limit"] = True
        rec["failures"].append(f"returned {wall:.1f} s after a {limit:g} s limit")
    return out


def termination_of(result):
    t = getattr(result, "termination", None)
    return getattr(t, "value", t)


def judge(rec, *, certified, reported, recomputed, upper, tol=1e-6, floor=TINY, lower_bound=None,
          slack=REF_SLACK, match=MATCH, lower=None):
    """The verdict's numbers: ``upper`` is a reference objective at a feasible point (>= the
    optimum), ``lower`` a reference lower bound (optional, reported only)."""
    rec.update(certified=bool(certified), objective=_f(reported), recomputed=_f(recomputed),
               reference=_f(upper), reference_lower=_f(lower), tol=tol, lower_bound=_f(lower_bound))
    if upper is None or not np.isfinite(upper):
        rec["verdict"] = "ref_failed"
        return
    scale = max(abs(upper), abs(recomputed) if recomputed is not None and np.isfinite(recomputed) else 0.0,
                floor)
    if certified:
        if recomputed is None or not np.isfinite(recomputed):
            rec["failures"].append("CBW: certified without a finite recomputed objective")
        else:
            if reported is None or not abs(reported - recomputed) <= match * max(abs(recomputed), floor):
                rec["failures"].append(f"CBW: reported objective {reported!r} != recomputed {recomputed!r}")
            excess = recomputed - upper
            if excess > tol * scale + slack * scale:
                rec["failures"].append(f"CBW: certified {recomputed!r} above the reference {upper!r} "
                                       f"(excess {excess / scale:.3e} relative > tol {tol:g})")
    elif (recomputed is not None and reported is not None and np.isfinite(reported)
          and np.isfinite(recomputed) and abs(reported - recomputed) > match * max(abs(recomputed), floor)):
        # not a promise of an uncertified run (its objective may be ill-conditioned in its point)
        rec["notes"].append(f"reported objective {reported!r} != recomputed {recomputed!r} (uncertified)")
        rec["uncertified_mismatch"] = True
    if lower_bound is not None and np.isfinite(lower_bound) and lower_bound > upper + 1e-9 * scale + slack * scale:
        rec["failures"].append(f"lower bound {lower_bound!r} above the reference optimum {upper!r}")


def _f(x):
    if x is None:
        return None
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def pick(rng, options, p=None):
    """One of ``options`` (any objects), by ``rng``."""
    i = int(rng.choice(len(options), p=p))
    return options[i]


def both_classes(y):
    y[0], y[1] = 1.0, -1.0
    return y


def weights(rng, n, kinds=("none", "int", "real", "zeros"), p=(0.4, 0.3, 0.2, 0.1)):
    kind = pick(rng, list(kinds), p=list(p))
    if kind == "none":
        return kind, None
    if kind == "int":
        s = rng.integers(1, 4, n).astype(float)
    elif kind == "real":
        s = rng.uniform(0.1, 3.0, n)
    else:
        s = rng.integers(1, 3, n).astype(float)
        s[rng.random(n) < 0.25] = 0.0
        s[:2] = 1.0
    return kind, s


# =========================================================================== new families
# --------------------------------------------------------------------------- kernel SVM
@family("kernel_svm", plan=1300, default_seeds=(0, 1))
def kernel_svm_case(rng, rec):
    import aidopt

    n, m = int(rng.integers(20, 161)), int(rng.integers(1, 6))
    y = both_classes(np.where(rng.random(n) < pick(rng, [0.5, 0.3]), 1.0, -1.0))
    X = rng.normal(size=(n, m)) + pick(rng, [0.3, 1.0, 2.5]) * y[:, None] * rng.normal(size=m)
    dup = pick(rng, ["none", "rows", "rows_labels"], p=[0.5, 0.25, 0.25])
    if dup != "none":
        idx = rng.integers(0, max(2, n // int(rng.integers(2, 8))), n)
        X = X[idx]
        if dup == "rows_labels":
            y = both_classes(y[idx])
    kname = pick(rng, ["rbf", "poly", "laplacian"], p=[0.5, 0.35, 0.15])
    gamma = pick(rng, [0.05, 0.3, 1.0, 5.0, "scale"] if kname != "poly" else [0.1, 0.5, 1.0, "scale"])
    if gamma == "scale":
        X = X * pick(rng, [1e-2, 1.0, 1e2])
    degree, coef0 = int(pick(rng, [2, 3])), float(pick(rng, [0.0, 1.0, 2.5]))
    wkind, s = weights(rng, n)
    C = float(pick(rng, [0.01, 0.1, 1.0, 10.0, 100.0]))
    solver = pick(rng, ["smo", "fm", "libsvm", "clarabel"])
    aid = bool(rng.random() < 0.85)
    g = 1.0 / (m * X.var()) if gamma == "scale" else float(gamma)
    rec["options"] = dict(n=n, m=m, dup=dup, kernel=kname, gamma=gamma, degree=degree, coef0=coef0,
                          weights=wkind, C=C, solver=solver, aid=aid)
    kw = dict(C=C, solver=solver, aid=aid)
    if kname == "laplacian":
        kw["kernel"] = lambda A, B: np.exp(-g * ref.cdist(A, B, "cityblock"))
    else:
        kw.update(kernel=kname, gamma=gamma, degree=degree, coef0=coef0)
    r = solve(rec, aidopt.solve_svm, X, y, sample_weight=s, **kw)
    sw = np.ones(n) if s is None else s
    sol = r.solution or {}
    if (kname != "laplacian" and sol.get("gamma") is not None
            and not math.isclose(float(sol["gamma"]), g, rel_tol=1e-12)):
        # a broken promise about the model, not about its certificate: the run is judged on the
        # kernel it reports it used
        rec["failures"].append(f"gamma resolved to {float(sol['gamma'])!r}, the documented rule "
                               f"(1 / (m Var(X)) over every row) gives {g!r}")
        g = float(sol["gamma"])
    K = ref.kernel(kname, X, X, gamma=g, degree=degree, coef0=coef0)
    upper, lower, _, _ = ref.kernel_svm_reference(K, y, sw, C)
    rec["termination"] = termination_of(r)
    E = None
    if sol.get("alpha") is not None and sol.get("b") is not None:
        coef = np.asarray(sol["alpha"], float) * y
        f = K @ coef + float(sol["b"])
        E = 0.5 * float(coef @ K @ coef) + C * float(sw @ ref.hinge(y, f))
    judge(rec, certified=r.certified, reported=r.objective, recomputed=E, upper=upper, lower=lower,
          lower_bound=r.lower_bound)


# --------------------------------------------------------------------------- GSVM
def gsvm_kernel(name, params, A):
    """Mangasarian's kernels as docs/gsvm.md writes them, computed here."""
    if name == "linear":
        return A @ A.T
    if name == "poly":
        return (A @ A.T + params["mu"]) ** params["d"]
    if name == "shifted_poly":
        Z = A / params["lam"] - params["rho"]
        return (Z @ Z.T - params["mu"]) ** params["d"]
    if name == "step":
        return (A @ A.T + params["mu"] > 0).astype(float)
    return np.exp(-params["gamma"] * ref.cdist(A, A, "sqeuclidean"))


@family("gsvm", plan=900, default_seeds=(0, 1, 2))
def gsvm_case(rng, rec):
    import aidopt

    n, m = int(rng.integers(10, 71)), int(rng.integers(1, 5))
    kname = pick(rng, ["linear", "poly", "rbf", "shifted_poly", "step"])
    d = both_classes(np.where(rng.random(n) < 0.5, 1.0, -1.0))
    if kname == "shifted_poly":
        A = rng.uniform(0, 200, (n, m))
        params = {"d": int(pick(rng, [2, 4, 6])), "lam": 100.0, "rho": 1.0, "mu": 0.5}
    else:
        A = rng.normal(size=(n, m)) + pick(rng, [0.0, 1.0]) * d[:, None]
        params = {"linear": {}, "poly": {"d": int(pick(rng, [2, 3])), "mu": float(pick(rng, [0.0, 1.0]))},
                  "rbf": {"gamma": float(pick(rng, [0.1, 1.0, 5.0]))},
                  "step": {"mu": float(pick(rng, [0.0, 0.5]))}}[kname]
    if rng.random() < 0.25:  # repeated points
        idx = rng.integers(0, max(2, n // 3), n)
        A = A[idx]
    formulation = pick(rng, ["lp_u", "lp_Ku", "qp"])
    ku_form = pick(rng, ["auto", "kernel", "svd"]) if formulation == "lp_Ku" else "auto"
    nu = float(pick(rng, [0.01, 0.1, 1.0, 10.0, 100.0]))
    rec["options"] = dict(n=n, m=m, kernel=kname, params=params, formulation=formulation,
                          ku_form=ku_form, nu=nu)
    r = solve(rec, aidopt.solve_gsvm, A, d, kernel=kname, kernel_params=params,
              formulation=formulation, ku_form=ku_form, nu=nu)
    K = gsvm_kernel(kname, params, A)
    upper, _, _ = ref.gsvm_reference(K, d, nu, formulation)
    rec["termination"] = termination_of(r)
    sol = r.solution or {}
    E = None
    if sol.get("u") is not None and sol.get("gamma") is not None:
        E = ref.gsvm_value(K, d, nu, formulation, np.asarray(sol["u"], float), float(sol["gamma"]))
    # (1.12)'s gap is relative to max(1, |E|) (docs/gsvm.md); (1.11) and (1.10) are SVMs on K
    floor = 1.0 if formulation == "lp_Ku" else TINY
    judge(rec, certified=r.certified, reported=r.objective, recomputed=E, upper=upper, floor=floor,
          lower_bound=r.lower_bound, slack=1e-8)


# --------------------------------------------------------------------------- FSV
@family("fsv", plan=500, default_seeds=(0, 1))
def fsv_case(rng, rec):
    import aidopt

    n, m = int(rng.integers(20, 201)), int(rng.integers(2, 13))
    d = both_classes(np.where(rng.random(n) < 0.5, 1.0, -1.0))
    informative = int(rng.integers(1, min(3, m) + 1))
    A = rng.normal(size=(n, m))
    A[:, :informative] += pick(rng, [0.5, 1.5]) * d[:, None]
    A *= pick(rng, [1.0, 1.0, 1e-2, 1e2])
    wkind, s = weights(rng, n, kinds=("none", "int", "real"), p=(0.6, 0.2, 0.2))
    nu = float(pick(rng, [0.01, 0.05, 0.2, 1.0]))
    alpha = float(pick(rng, [1.0, 5.0, 10.0]))
    start = pick(rng, ["random", "rlp"])
    aid = bool(rng.random() < 0.35)
    seed = int(rng.integers(0, 1000))
    rec["options"] = dict(n=n, m=m, weights=wkind, nu=nu, alpha=alpha, start=start, aid=aid, seed=seed)
    r = solve(rec, aidopt.solve_fsv, A, d, sample_weight=s, nu=nu, alpha=alpha, start=start, aid=aid,
              seed=seed)
    sw = np.ones(n) if s is None else s
    term = termination_of(r)
    rec["termination"] = term
    # FSV's claim is stationarity: "certified" counts stationary runs, its own verdict
    rec["certified"] = term == "stationary"
    if term in ("certified_optimal", "optimal") or (r.certificate is not None and r.certificate.certified):
        rec["failures"].append(f"FSV claims optimality: termination {term}, certified "
                               f"{getattr(r.certificate, 'certified', None)}")
    sol = r.solution or {}
    if sol.get("w") is None:
        rec["objective"] = _f(r.objective)
        return
    w, gamma = np.asarray(sol["w"], float), float(sol["gamma"])
    err = float(sw @ ref.hinge(d, A @ w - gamma))
    E = nu * err + float((1.0 - np.exp(-alpha * np.abs(w))).sum())
    rec.update(objective=_f(r.objective), recomputed=E)
    if not abs(r.objective - E) <= MATCH * max(abs(E), 1e-300):
        rec["failures"].append(f"reported objective {r.objective!r} != recomputed {E!r}")
    if aid:
        inner = [h.info.get("inner_certified") for h in r.history]
        rec["notes"].append(f"inner AID LPs certified: {sum(1 for c in inner if c)}/{len(inner)}")
        rec["inner_uncertified"] = sum(1 for c in inner if not c)
    if term == "stationary":
        # the LP (1.22) linearized at the returned point, solved here: (1.23) holds when it
        # cannot decrease nu s'y + t'(v - v_at) below the value at the point itself
        v = np.abs(w)
        t = np.maximum(alpha * np.exp(-alpha * v), 1e-9)  # the documented weight floor
        lp = ref.fsv_lp_value(A, d, sw, nu, t, v)
        if not np.isfinite(lp):
            rec["verdict"] = "ref_failed"
            return
        at_point = nu * err
        scale = max(abs(E), TINY)
        rec["reference"] = lp
        decrease = lp - at_point
        rec["decrease"] = decrease
        if decrease < -(r.config["tol"] * scale + 1e-7 * max(abs(at_point), abs(lp), scale)):
            rec["failures"].append(f"stationary, but the linearized LP at the returned point decreases by "
                                   f"{-decrease:.3e} (> tol x {scale:.3g})")
        last = r.history[-1].F_t if r.history else math.nan
        if last > lp + r.config["tol"] * scale + 1e-7 * max(abs(lp), scale):
            rec["failures"].append(f"the last LP's reported value {last!r} is above its optimum {lp!r}")


# --------------------------------------------------------------------------- LPC
@family("lpc", plan=900, default_seeds=(0, 1, 2, 4))
def lpc_case(rng, rec):
    import aidopt

    mode = pick(rng, ["lp", "lsvm"], p=[0.55, 0.45])
    chunks = pick(rng, [2, 4, 8, 40, 0.25])
    tau = int(pick(rng, [1, 2, 4]))
    keep = pick(rng, ["active", "positive"])
    if mode == "lp":
        m, n = int(rng.integers(10, 200)), int(rng.integers(2, 9))
        H = rng.normal(size=(m, n))
        b = H @ rng.normal(size=n) - rng.uniform(0, 1, m)
        c = H.T @ rng.uniform(0, 1, m)
        kind = pick(rng, ["bounded", "unbounded", "infeasible", "boxed"], p=[0.45, 0.15, 0.15, 0.25])
        bounds = None
        if kind == "unbounded":
            c = -c
        elif kind == "infeasible":
            H = np.vstack([H, H[:1], -H[:1]])
            b = np.concatenate([b, [1.0 + abs(b[0])], [abs(b[0]) + 1.0]])
        elif kind == "boxed":
            c = rng.normal(size=n)
            bounds = [(float(-rng.uniform(0.5, 3)), float(rng.uniform(0.5, 3))) if rng.random() < 0.7
                      else (None, None) for _ in range(n)]
            b = H @ rng.uniform(-0.3, 0.3, n) - rng.uniform(0, 1, H.shape[0])
        sc, sb = float(pick(rng, [1e-6, 1e-3, 1.0, 1e3, 1e6])), float(pick(rng, [1e-6, 1e-3, 1.0, 1e3, 1e6]))
        if bounds is not None:
            sb = 1.0  # x's box is in the unscaled units
        rec["options"] = dict(mode=mode, m=H.shape[0], n=n, kind=kind, sc=sc, sb=sb, chunks=chunks,
                              tau=tau, keep=keep)
        r = solve(rec, aidopt.solve_lp_chunked, c * sc, H, b * sb, bounds=bounds,
                  chunks=min(chunks, H.shape[0]) if isinstance(chunks, int) else chunks, tau=tau, keep=keep)
        rb = [(None, None)] * n if bounds is None else bounds
        res = linprog(c, A_ub=-H, b_ub=-b, bounds=rb, method="highs")
        rec["termination"] = termination_of(r)
        rec["reference_status"] = int(res.status)
        if res.status == 0:
            opt = float(res.fun) * sc * sb
            x = (r.solution or {}).get("x")
            E = None
            if x is not None:
                x = np.asarray(x, float)
                E = float((c * sc) @ x)
                viol = np.maximum(sb * b - H @ x, 0.0) / np.maximum(np.abs(sb * b), np.abs(H) @ np.abs(x) + TINY)
                rec["max_scaled_violation"] = float(viol.max(initial=0.0))
                if r.certified and rec["max_scaled_violation"] > 10 * r.config["feasibility_tol"]:
                    rec["failures"].append("CBW: certified x violates a row by "
                                           f"{rec['max_scaled_violation']:.3e} (scaled)")
                floor = float(np.abs(c * sc) @ np.abs(x))
            else:
                floor = TINY
            reported = r.objective if np.isfinite(r.objective) else None
            judge(rec, certified=r.certified, reported=reported if reported is not None else E,
                  recomputed=E, upper=opt, floor=max(floor, TINY), lower_bound=r.lower_bound, slack=1e-7)
        elif res.status in (2, 3):
            rec["certified"] = r.certified
            if r.certified:
                rec["failures"].append(f"CBW: certified an LP the reference finds {res.message}")
        else:
            rec["verdict"] = "ref_failed"
        return
    n, m = int(rng.integers(30, 301)), int(rng.integers(1, 7))
    y = both_classes(np.where(rng.random(n) < pick(rng, [0.5, 0.25]), 1.0, -1.0))
    X = rng.normal(size=(n, m)) + pick(rng, [0.3, 1.0, 3.0]) * y[:, None]
    wkind, s = weights(rng, n, kinds=("none", "int", "real"), p=(0.5, 0.25, 0.25))
    C = float(pick(rng, [0.05, 1.0, 20.0]))
    rec["options"] = dict(mode=mode, n=n, m=m, weights=wkind, C=C, chunks=chunks, tau=tau, keep=keep)
    r = solve(rec, aidopt.solve_svm, X, y, C=C, norm="l1", method="lpc", sample_weight=s,
              chunks=chunks, tau=tau)
    sw = np.ones(n) if s is None else s
    upper, _, _ = ref.lp_svm_reference(X, y, sw, C, "l1")
    rec["termination"] = termination_of(r)
    sol = r.solution or {}
    E = None
    if sol.get("w") is not None:
        E = ref.lp_svm_value(X, y, sw, C, "l1", np.asarray(sol["w"], float), float(sol["b"]))
    judge(rec, certified=r.certified, reported=r.objective, recomputed=E, upper=upper,
          lower_bound=r.lower_bound)


# --------------------------------------------------------------------------- SOR / modified SVM
@family("sor", plan=900, default_seeds=(0, 1, 2))
def sor_case(rng, rec):
    import aidopt

    n, m = int(rng.integers(20, 301)), int(rng.integers(1, 7))
    d = both_classes(np.where(rng.random(n) < 0.5, 1.0, -1.0))
    A = rng.normal(size=(n, m)) + pick(rng, [0.3, 1.0, 2.0]) * d[:, None] * rng.normal(size=m)
    if rng.random() < 0.3:
        A = A[rng.integers(0, max(2, n // 5), n)]
    A *= pick(rng, [1.0, 1.0, 0.1, 10.0])
    wkind, s = weights(rng, n)
    C = float(pick(rng, [0.01, 0.1, 1.0, 100.0, 1000.0]))
    how = pick(rng, ["method_sor", "aid_fm", "aid_sor", "aid_clarabel", "direct_fm", "direct_sor"])
    omega = float(pick(rng, [1.0, 1.0, 0.5, 1.5]))
    rec["options"] = dict(n=n, m=m, weights=wkind, C=C, how=how, omega=omega)
    if how == "method_sor":
        kw = dict(method="sor", solver_options={"omega": omega})
    else:
        solver = how.split("_")[1]
        kw = dict(bias="regularized", solver=solver, aid=how.startswith("aid"))
        if solver == "sor":
            kw["solver_options"] = {"omega": omega}
    r = solve(rec, aidopt.solve_svm, A, d, C=C, sample_weight=s, **kw)
    sw = np.ones(n) if s is None else s
    upper, lower = ref.modified_svm_reference(A, d, sw, C)
    rec["termination"] = termination_of(r)
    sol = r.solution or {}
    E = None
    if sol.get("w") is not None and sol.get("b") is not None:
        E = ref.modified_svm_value(A, d, sw, C, np.asarray(sol["w"], float), -float(sol["b"]))
    judge(rec, certified=r.certified, reported=r.objective, recomputed=E, upper=upper, lower=lower,
          lower_bound=r.lower_bound)


# --------------------------------------------------------------------------- SCM
@family("scm", plan=450, default_seeds=(0, 1))
def scm_case(rng, rec):
    import aidopt

    balanced = rng.random() < 0.2
    n_pos = int(rng.integers(20, 60)) if balanced else int(rng.integers(5, 31))
    n_neg = int(rng.integers(n_pos, 2 * n_pos)) if balanced else int(rng.integers(6 * n_pos, 260))
    m = int(rng.integers(2, 5))
    y = np.concatenate([np.ones(n_pos), -np.ones(n_neg)])
    X = rng.normal(size=(n_pos + n_neg, m)) + pick(rng, [0.5, 1.5, 3.0]) * (y[:, None] > 0)
    perm = rng.permutation(y.size)
    X, y = X[perm], y[perm]
    labels = pick(rng, ["pm1", "01", "ab"])
    ylab = {"pm1": y, "01": (y > 0).astype(int), "ab": np.where(y > 0, "b", "a")}[labels]
    kname = pick(rng, ["rbf", "rbf", "linear", "poly"])
    gamma = pick(rng, [0.1, 0.5, 2.0, "scale"])
    degree, coef0 = int(pick(rng, [2, 3])), 1.0
    C = float(pick(rng, [0.1, 1.0, 10.0]))
    opts = dict(clustering=pick(rng, ["kernel", "input"]), representative=pick(rng, ["centroid", "pseudo"]),
                shrink=pick(rng, ["eq11", "rank", "auto"]), final=pick(rng, ["last", "last", "refit"]),
                shrink_side=pick(rng, ["both", "margin"]))
    solver = pick(rng, ["clarabel", "clarabel", "libsvm"])
    aid = bool(rng.random() < 0.85)
    seed = int(rng.integers(0, 1000))
    rec["options"] = dict(n_pos=n_pos, n_neg=n_neg, m=m, labels=labels, kernel=kname, gamma=gamma,
                          degree=degree, C=C, solver=solver, aid=aid, seed=seed, **opts)
    r = solve(rec, aidopt.solve_scm, X, ylab, C=C, kernel=kname, gamma=gamma, degree=degree,
              coef0=coef0, solver=solver, aid=aid, seed=seed, **opts)
    rec["termination"] = termination_of(r)
    g = 1.0 / (m * X.var()) if gamma == "scale" else float(gamma)
    K = ref.kernel(kname, X, X, gamma=g, degree=degree, coef0=coef0)
    if kname != "linear" and r.gamma is not None and not math.isclose(float(r.gamma), g, rel_tol=1e-12):
        rec["failures"].append(f"gamma resolved to {r.gamma!r}, the documented rule gives {g!r}")
    pos_label = r.classes[1]
    yy = np.where(np.asarray(ylab) == pos_label, 1.0, -1.0)
    svm = r.svm
    k = len(svm.alpha)
    cluster_of = np.asarray(r.cluster_of)
    inside = cluster_of >= 0
    sizes = np.bincount(cluster_of[inside], minlength=k).astype(float)
    if not np.allclose(sizes, svm.weights):
        rec["failures"].append("the representatives' box weights are not the cluster sizes")
    R = np.zeros((y.size, k))
    R[np.flatnonzero(inside), cluster_of[inside]] = 1.0 / sizes[cluster_of[inside]]
    if r.pseudo_centres is None:
        P = R
    else:
        P = np.zeros((y.size, k))
        P[np.asarray(r.pseudo_centres), np.arange(k)] = 1.0
    Kpi = P.T @ K @ P
    # (6) itself: SCM's certified claim
    coef6 = svm.alpha * svm.y
    E6 = 0.5 * float(coef6 @ Kpi @ coef6) + C * float(sizes @ ref.hinge(svm.y, Kpi @ coef6 + svm.b))
    up6, lo6, _, _ = ref.weighted_kernel_svm_reference(Kpi, svm.y, sizes, C)
    judge(rec, certified=r.certified, reported=svm.certificate.primal_objective, recomputed=E6,
          upper=up6, lower=lo6, lower_bound=svm.certificate.dual_objective
          if svm.certificate.certified else None)
    if rec["verdict"] == "ref_failed":
        return "ref_failed"
    # the full-data gap SCM reports: SCM's f on every row against the lifted dual point
    full = r.full_certificate
    beta = P @ coef6
    f_all = K @ beta + svm.b
    P_full = 0.5 * float(beta @ K @ beta) + C * float(ref.hinge(yy, f_all).sum())
    a_lift = R @ svm.alpha
    D_full = float(a_lift.sum()) - 0.5 * float((a_lift * yy) @ K @ (a_lift * yy))
    upF, loF, _, _ = ref.weighted_kernel_svm_reference(K, yy, np.ones(y.size), C)
    rec["full"] = dict(P=P_full, D=D_full, reported_P=full.primal_objective, reported_D=full.dual_objective,
                       reported_gap=full.relative_gap, optimum_upper=upF, optimum_lower=loF)
    if not np.isfinite(upF):
        return "ref_failed"
    sc = max(abs(P_full), 1.0)
    if not abs(full.primal_objective - P_full) <= 1e-7 * sc:
        rec["failures"].append(f"full certificate primal {full.primal_objective!r} != recomputed {P_full!r}")
    if not abs(full.dual_objective - D_full) <= 1e-5 * sc:
        rec["failures"].append(f"full certificate dual {full.dual_objective!r} != recomputed {D_full!r}")
    if full.dual_objective > upF + 1e-7 * sc:
        rec["failures"].append(f"full certificate dual {full.dual_objective!r} above the full optimum {upF!r}")
    true_gap = (P_full - loF) / max(abs(P_full), TINY)
    if true_gap > full.relative_gap + 1e-6:
        rec["failures"].append(f"full-data gap reported {full.relative_gap:.3e} < SCM's distance to the "
                               f"full optimum {true_gap:.3e}")
    if not aid and r.certified:  # the "Whole" SVM: its certificate is the full SVM's
        if P_full > upF + 1e-6 * sc:
            rec["failures"].append(f"CBW: aid=False certified {P_full!r} above the full SVM's optimum {upF!r}")


# --------------------------------------------------------------------------- TSPLIB GEO / ATT
def _write_tsplib(path, xy, kind, fmt):
    lines = ["NAME : fuzz", "TYPE : TSP", f"DIMENSION : {len(xy)}", f"EDGE_WEIGHT_TYPE : {kind}",
             "NODE_COORD_SECTION"]
    lines += [f"{i + 1} {fmt(float(a))} {fmt(float(b))}" for i, (a, b) in enumerate(xy)]
    lines.append("EOF")
    Path(path).write_text("\n".join(lines) + "\n")


@family("tsplib", plan=1100, default_seeds=(0, 1, 2, 3))
def tsplib_case(rng, rec):
    from aidopt.data.facility import read_tsplib, tsplib_costs

    kind = pick(rng, ["GEO", "ATT"])
    n = int(rng.integers(2, 61))
    style = pick(rng, ["ddmm", "float", "int", "dup"])
    if kind == "GEO":
        lat = rng.integers(-89, 90, n) + np.sign(rng.normal(size=n)) * rng.integers(0, 60, n) / 100.0
        lon = rng.integers(-179, 180, n) + np.sign(rng.normal(size=n)) * rng.integers(0, 60, n) / 100.0
        xy = np.column_stack([lat, lon])
        if style == "float":
            xy = np.column_stack([rng.uniform(-89.99, 89.99, n), rng.uniform(-179.99, 179.99, n)])
        elif style == "int":
            xy = np.round(xy)
    else:
        xy = rng.integers(0, int(pick(rng, [100, 10_000, 1_000_000])), (n, 2)).astype(float)
        if style == "float":
            xy = rng.uniform(0, 10_000, (n, 2))
    if style == "dup" and n > 2:
        xy[rng.integers(0, n, n // 3)] = xy[0]
    fmt = pick(rng, [repr, lambda v: f"{v:.2f}", lambda v: f"{v:.6e}"])
    rec["options"] = dict(kind=kind, n=n, style=style)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fuzz.tsp"
        _write_tsplib(path, xy, kind, fmt)
        written = np.array([[float(fmt(float(a))), float(fmt(float(b)))] for a, b in xy])
        got = solve(rec, tsplib_costs, path, common=False)
        coords, weight_type = solve(rec, read_tsplib, path, common=False)
    rec["termination"] = "read"
    if not np.array_equal(coords, written) or weight_type.upper() != kind:
        rec["failures"].append(f"read_tsplib: coordinates or type differ ({weight_type})")
    want = ref.tsplib_geo(written) if kind == "GEO" else ref.tsplib_att(written)
    off = ~np.eye(n, dtype=bool)
    bad = np.argwhere((got != want) & off)
    rec["mismatches"] = int(len(bad))
    if len(bad):
        i, j = bad[0]
        rec["failures"].append(f"{kind} cost ({i},{j}) = {got[i, j]!r}, TSPLIB gives {want[i, j]!r} "
                               f"(coordinates {written[i].tolist()}, {written[j].tolist()}); "
                               f"{len(bad)} pair(s) differ")
    diag = np.diag(got)
    if not np.all(diag == 0):
        rec["failures"].append(f"nonzero diagonal {diag[diag != 0][:3]}")
    rec["certified"] = not rec["failures"]


# --------------------------------------------------------------------------- facility, MIP reference
@family("facility_mip", plan=250, default_seeds=(1,))
def facility_mip_case(rng, rec):
    import aidopt

    n, s = int(rng.integers(41, 91)), int(rng.integers(41, 61))
    # mostly geometric costs: uniform random p-medians are hard for the reference MIP as well
    kind = pick(rng, ["euclid", "uniform_int", "uniform_real", "clustered"], p=[0.4, 0.1, 0.1, 0.4])
    if kind in ("euclid", "clustered"):
        if kind == "clustered":
            centres = rng.uniform(0, 100, (int(rng.integers(3, 8)), 2))
            pts = centres[rng.integers(0, len(centres), n)] + rng.normal(scale=4, size=(n, 2))
        else:
            pts = rng.uniform(0, 100, (n, 2))
        sites = pts[rng.choice(n, size=min(s, n), replace=False)] if s <= n and rng.random() < 0.5 \
            else rng.uniform(0, 100, (s, 2))
        s = len(sites)
        D = np.round(ref.cdist(pts, sites) * pick(rng, [1.0, 10.0]))
    elif kind == "uniform_int":
        D = rng.integers(1, 1000, (n, s)).astype(float)
    else:
        D = rng.uniform(1, 1000, (n, s))
    w = np.ones(n) if rng.random() < 0.6 else rng.integers(1, 6, n).astype(float)
    problem = pick(rng, ["pmedian", "ufl", "ufl_p", "capacitated"], p=[0.4, 0.3, 0.2, 0.1])
    p = int(rng.integers(2, 11)) if problem in ("pmedian", "ufl_p", "capacitated") else None
    f = None
    if problem != "pmedian":
        f = rng.uniform(0.2, 3.0, s) * float(np.median(D)) * pick(rng, [1.0, 5.0, 20.0])
    capacity = None
    if problem == "capacitated":
        capacity = np.full(s, float(np.ceil(1.6 * w.sum() / p)))
        p = None if rng.random() < 0.5 else p
    how = pick(rng, ["benders", "radius_highs", "sites", "sites_far", "direct"])
    if capacity is not None:
        how = "capacitated_direct"
    kw = {}
    if how == "benders":
        kw = dict(aggregation="radius")
    elif how == "radius_highs":
        kw = dict(aggregation="radius", solver="highs")
    elif how in ("sites", "sites_far"):
        kw = dict(aggregation="sites", far=how == "sites_far")
    elif how == "direct":
        kw = dict(aggregation=pick(rng, ["radius", "sites"]), aid=False, solver="highs")
    else:
        kw = dict(aggregation="sites", aid=False, capacity=capacity)
    rec["options"] = dict(n=n, s=s, kind=kind, weights="ones" if np.all(w == 1) else "int", problem=problem,
                          p=p, how=how, **{k: v for k, v in kw.items() if k != "capacity"})
    r = solve(rec, aidopt.solve_facility_location, D, p=p, fixed_costs=f, demand=w, **kw)
    upper, lower, _ = ref.facility_mip(D, f, w, p, capacity=capacity)
    rec["termination"] = termination_of(r)
    sol = r.solution or {}
    E = None
    if sol.get("open") is not None and capacity is None:
        opened = np.asarray(sol["open"], int)
        assign = np.asarray(sol["assign"], int)
        E = float(w @ D[np.arange(n), assign]) + (0.0 if f is None else float(f[opened].sum()))
        if not set(assign.tolist()) <= set(opened.tolist()):
            rec["failures"].append("a customer is assigned to a closed site")
        if p is not None and len(opened) > p:
            rec["failures"].append(f"{len(opened)} sites open, p = {p}")
    elif sol.get("open") is not None:
        opened = np.asarray(sol["open"], int)
        shares = np.asarray(sol["shares"], float) if sol.get("shares") is not None else None
        if shares is not None and shares.shape == D.shape:
            E = float((w[:, None] * D * shares).sum()) + (0.0 if f is None else float(f[opened].sum()))
            load = w @ shares
            if np.any(load > capacity * (1 + 1e-6) + 1e-9):
                rec["failures"].append("capacity exceeded")
        else:
            E = r.objective
            rec["notes"].append("no shares: reported objective not recomputed")
    floor = 1e-6 * float(w @ D.min(axis=1))
    judge(rec, certified=r.certified, reported=r.objective, recomputed=E, upper=upper, lower=lower,
          floor=max(floor, TINY), lower_bound=r.lower_bound)


# --------------------------------------------------------------------------- facility: by parts
@family("facility_parts", plan=4, in_suite=False)
def facility_parts_case(rng, rec):
    """The p-median start's re-optimization by parts runs only when customers x sites exceed
    SWAP_ENTRIES (2^24): instances just above it. The customers repeat a few hundred distinct
    points, so the reference MIP is the same problem with the copies merged into demands."""
    from aidopt.decomposition.plugins.facility_benders import SWAP_ENTRIES

    import aidopt

    sites_n = int(pick(rng, [100, 128, 160]))
    customers_n = SWAP_ENTRIES // sites_n + int(rng.integers(1, 200))
    distinct = int(rng.integers(400, 700))
    pts = rng.uniform(0, 1000, (distinct, 2))
    sites = pts[rng.choice(distinct, size=sites_n, replace=False)] if rng.random() < 0.5 \
        else rng.uniform(0, 1000, (sites_n, 2))
    copy_of = np.concatenate([np.arange(distinct), rng.integers(0, distinct, customers_n - distinct)])
    rng.shuffle(copy_of)
    Dd = np.round(ref.cdist(pts, sites) / pick(rng, [1.0, 10.0]))  # ties: integral, rounded
    D = Dd[copy_of]
    p = int(rng.integers(12, 31))
    rec["options"] = dict(customers=customers_n, sites=sites_n, entries=customers_n * sites_n,
                          distinct=distinct, p=p, threshold=SWAP_ENTRIES)
    seen = []

    class Catch(logging.Handler):
        def emit(self, record):
            seen.append(record.getMessage())

    logger = logging.getLogger("aidopt.facility")
    handler, level = Catch(level=logging.INFO), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        r = solve(rec, aidopt.solve_facility_location, D, p=p, limit=600.0)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    del D
    rec["by_parts_ran"] = any("re-optimization by parts" in msg for msg in seen)
    rec["termination"] = termination_of(r)
    wd = np.bincount(copy_of, minlength=distinct).astype(float)
    upper, lower, _ = ref.facility_mip(Dd, None, wd, p, time_limit=1800.0)
    E = None
    if (r.solution or {}).get("open") is not None:
        E = ref.facility_value(Dd, None, wd, r.solution["open"])
    judge(rec, certified=r.certified, reported=r.objective, recomputed=E, upper=upper, lower=lower,
          lower_bound=r.lower_bound)


# --------------------------------------------------------------------------- the CLI
def _cli(rec, argv, subprocess_run):
    """``aidopt <argv>``: a subprocess (the installed entry point) or ``aidopt.cli.main.main``
    in this process; returns the exit code."""
    t = time.perf_counter()
    if subprocess_run:
        entry = Path(sys.executable).parent / "aidopt"  # the installed console script
        proc = subprocess.run([str(entry), *argv], capture_output=True, text=True,
                              timeout=LIMIT + 120)
        code, err = proc.returncode, proc.stderr
    else:
        from aidopt.cli.main import main

        out, errbuf = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(errbuf):
            try:
                code = main(argv)
            except SystemExit as exc:
                code = exc.code
        err = errbuf.getvalue()
    wall = time.perf_counter() - t
    rec["wall"] += wall
    if wall > LIMIT + OVER + (15 if subprocess_run else 0):  # a subprocess also imports aidopt
        rec["past_limit"] = True
        rec["failures"].append(f"the CLI returned {wall:.1f} s after a {LIMIT:g} s limit")
    rec["exit_code"] = code
    if code == 2:
        raise AidoptError(f"aidopt {' '.join(argv)} exited 2: {err.strip()[-500:]}")
    return code


@family("cli", plan=320, default_seeds=(1, 2, 3))
def cli_case(rng, rec):
    import pandas as pd

    import aidopt

    command = pick(rng, ["lad", "svm", "facility"])
    via_subprocess = bool(rng.random() < 0.2)
    common = []
    api = {}
    tol = float(pick(rng, [1e-6, 1e-6, 1e-4]))
    if tol != 1e-6:
        common += ["--tol", str(tol)]
        api["tol"] = tol
    if rng.random() < 0.3:
        common.append("--no-aid")
        api["aid"] = False
    common += ["--time-limit", str(LIMIT)]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        out = tmp / "result.json"
        if command == "lad":
            n, m = int(rng.integers(30, 150)), int(rng.integers(1, 4))
            X = rng.normal(size=(n, m))
            y = X @ rng.normal(size=m) + rng.laplace(size=n) + 3.0
            intercept = bool(rng.random() < 0.7)
            fmt = pick(rng, ["csv", "npz", "parquet"])
            solver = pick(rng, [None, "fn", "highs"])
            path = tmp / f"data.{fmt}"
            cols = [f"x{j}" for j in range(m)]
            if fmt == "npz":
                np.savez(path, X=X, y=y)
            else:
                frame = pd.DataFrame(X, columns=cols).assign(target=y)
                frame.to_csv(path, index=False) if fmt == "csv" else frame.to_parquet(path)
            argv = ["lad", "--data", str(path), "--output", str(out), "--quiet", *common]
            if not intercept:
                argv.append("--no-fit-intercept")
            if solver:
                argv += ["--solver", solver]
                api["solver"] = solver
            rec["options"] = dict(command=command, n=n, m=m, format=fmt, intercept=intercept,
                                  subprocess=via_subprocess, **{"solver": solver, **api})
            code = _cli(rec, argv, via_subprocess)
            res = json.loads(out.read_text())
            Xd = np.column_stack([X, np.ones(n)]) if intercept else X
            r = solve(rec, aidopt.solve_lad, Xd, y, **api)
            upper, _ = ref.lad_reference(Xd, y, np.ones(n))
            beta = np.asarray(res["solution"]["beta"], float)
            E = float(np.abs(y - Xd @ beta).sum())
            floor = 1e-6 * float(np.abs(y).sum())
        elif command == "svm":
            n, m = int(rng.integers(30, 150)), int(rng.integers(1, 4))
            y = both_classes(np.where(rng.random(n) < 0.5, 1.0, -1.0))
            X = rng.normal(size=(n, m)) + pick(rng, [0.5, 2.0]) * y[:, None]
            norm = pick(rng, ["l2", "l1", "linf", "none", "rbf"])
            C = float(pick(rng, [0.1, 1.0, 10.0]))
            labels = pick(rng, ["pm1", "01", "ab"])
            ylab = {"pm1": y, "01": (y > 0).astype(int), "ab": np.where(y > 0, "b", "a")}[labels]
            fmt = "csv" if labels == "ab" else pick(rng, ["csv", "npz", "libsvm"])
            path = tmp / f"data.{fmt}"
            if fmt == "npz":
                np.savez(path, X=X, y=ylab)
            elif fmt == "libsvm":
                from sklearn.datasets import dump_svmlight_file

                dump_svmlight_file(X, ylab, str(path), zero_based=False)
            else:
                pd.DataFrame(X, columns=[f"x{j}" for j in range(m)]).assign(label=ylab).to_csv(path, index=False)
            argv = ["svm", "--data", str(path), "--C", str(C), "--output", str(out), "--quiet", *common]
            kw = dict(C=C)
            gamma = None
            if norm == "rbf":
                gamma = float(pick(rng, [0.2, 1.0]))
                argv += ["--kernel", "rbf", "--gamma", str(gamma)]
                kw.update(kernel="rbf", gamma=gamma)
            else:
                argv += ["--norm", norm]
                kw["norm"] = norm
            rec["options"] = dict(command=command, n=n, m=m, format=fmt, labels=labels, norm=norm, C=C,
                                  gamma=gamma, subprocess=via_subprocess, **api)
            code = _cli(rec, argv, via_subprocess)
            res = json.loads(out.read_text())
            # the file as the CLI read it (svmlight may drop all-zero trailing columns: none here)
            r = solve(rec, aidopt.solve_svm, X, ylab, **kw, **api)
            ones = np.ones(n)
            sol = res["solution"]
            if norm == "rbf":
                K = ref.kernel("rbf", X, X, gamma=gamma)
                upper = ref.kernel_svm_reference(K, y, ones, C)[0]
                coef = np.asarray(sol["alpha"], float) * y
                E = 0.5 * float(coef @ K @ coef) + C * float(ref.hinge(y, K @ coef + sol["b"]).sum())
            elif norm == "l2":
                upper = ref.svm_l2_reference(X, y, ones, C)[0]
                E = ref.lp_svm_value(X, y, ones, C, "l2", np.asarray(sol["w"], float), float(sol["b"]))
            else:
                upper = ref.lp_svm_reference(X, y, ones, C, norm)[0]
                E = ref.lp_svm_value(X, y, ones, C, norm, np.asarray(sol["w"], float), float(sol["b"]))
            floor = 1e-6 * C * n if norm == "none" else TINY
        else:
            n, s = int(rng.integers(4, 22)), int(rng.integers(2, 8))
            source = pick(rng, ["costs", "coords", "tsplib_att", "tsplib_geo"])
            if source.startswith("tsplib"):
                s = n = min(n, 9)
            problem = pick(rng, ["pmedian", "ufl", "ufl_p"])
            p = int(rng.integers(1, min(3, s) + 1)) if problem != "ufl" else None
            argv = ["facility", "--output", str(out), "--quiet", *common]
            if source == "costs":
                D = rng.integers(0, 50, (n, s)).astype(float)
                np.savetxt(tmp / "costs.csv", D, delimiter=",")
                argv += ["--costs", str(tmp / "costs.csv")]
            elif source == "coords":
                xy = np.round(rng.uniform(0, 100, (n, 2)), 3)
                s = n
                np.savetxt(tmp / "xy.csv", xy, delimiter=",", fmt="%.3f")
                D = ref.cdist(xy, xy)
                argv += ["--coords", str(tmp / "xy.csv")]
            else:
                kind = "ATT" if source == "tsplib_att" else "GEO"
                xy = (rng.integers(0, 5000, (n, 2)).astype(float) if kind == "ATT" else
                      np.column_stack([rng.integers(-60, 60, n) + rng.integers(0, 60, n) / 100.0,
                                       rng.integers(-170, 170, n) + rng.integers(0, 60, n) / 100.0]))
                _write_tsplib(tmp / "cities.tsp", xy, kind, lambda v: f"{v:.2f}")
                D = ref.tsplib_att(xy) if kind == "ATT" else ref.tsplib_geo(xy)
                np.fill_diagonal(D, 0.0)
                argv += ["--tsplib", str(tmp / "cities.tsp")]
            if p is None and problem == "pmedian":
                p = 1
            if p is not None:
                argv += ["--p", str(p)]
            f = None
            if problem != "pmedian":
                if rng.random() < 0.5:
                    fv = float(rng.integers(1, 100))
                    f = np.full(s, fv)
                    argv += ["--fixed-costs", str(fv)]
                else:
                    f = rng.integers(1, 100, s).astype(float)
                    np.savetxt(tmp / "fixed.csv", f, delimiter=",")
                    argv += ["--fixed-costs", str(tmp / "fixed.csv")]
            aggregation = pick(rng, ["radius", "sites"])
            argv += ["--aggregation", aggregation]
            rec["options"] = dict(command=command, n=n, s=s, source=source, problem=problem, p=p,
                                  aggregation=aggregation, subprocess=via_subprocess, **api)
            code = _cli(rec, argv, via_subprocess)
            res = json.loads(out.read_text())
            r = solve(rec, aidopt.solve_facility_location, D, p=p, fixed_costs=f, aggregation=aggregation,
                      **api)
            ones = np.ones(n)
            upper = ref.facility_brute_force(D, f, ones, p)
            opened = np.asarray(res["solution"]["open"], int)
            E = ref.facility_value(D, f, ones, opened)
            floor = 1e-6 * float(D.min(axis=1).sum())
    certified = res["termination"] == "certified_optimal"
    rec["termination"] = res["termination"]
    if (code == 0) != certified:
        rec["failures"].append(f"exit code {code} with termination {res['termination']}")
    if certified and r.certified:
        sc = max(abs(r.objective), floor)
        if abs(res["objective"] - r.objective) > 2.0 * (api.get("tol", 1e-6)) * sc + 1e-9 * sc:
            rec["failures"].append(f"CLI objective {res['objective']!r} != API objective {r.objective!r}")
    rec["api_termination"] = termination_of(r)
    judge(rec, certified=certified, reported=res["objective"], recomputed=E, upper=upper,
          floor=max(floor, TINY), lower_bound=res.get("lower_bound"), tol=api.get("tol", 1e-6))


# --------------------------------------------------------------------------- time limits
TIMED = ["lad", "svm_l2", "svm_l1", "kernel_svm", "gsvm", "fsv", "lpc", "lsvm_lpc", "sor", "sor_aid",
         "scm", "facility", "facility_sites", "aggout", "s2rlsc", "s3vm"]


@family("time_limit", plan=160, default_seeds=(), in_suite=False)
def time_limit_case(rng, rec):
    """Every family on an instance larger than its limit allows: only the wall time is judged."""
    from aidopt.instances import lad_instance, s3vm_instance, svm_instance

    import aidopt

    sub = TIMED[rec["seed"] % len(TIMED)]
    limit = float(pick(rng, [0.5, 1.0, 2.0, 5.0]))
    rec["limit"] = limit
    seed = int(rng.integers(0, 10**6))
    rec["options"] = dict(sub=sub, limit=limit, seed=seed, choices=[])

    def choose(options):  # a choice of the run, recorded
        value = pick(rng, options)
        rec["options"]["choices"].append(value)
        return value

    if sub == "lad":
        X, y = lad_instance("B", n=300_000, m=30, seed=seed)
        r = solve(rec, aidopt.solve_lad, X, y, solver=choose(["fn", "highs"]))
    elif sub in ("svm_l2", "svm_l1"):
        X, y = svm_instance(n=300_000 if sub == "svm_l2" else 100_000, m=30, seed=seed)
        r = solve(rec, aidopt.solve_svm, X, y, C=1.0, norm="l2" if sub == "svm_l2" else "l1")
    elif sub == "kernel_svm":
        X, y = svm_instance(n=12_000, m=10, seed=seed)
        r = solve(rec, aidopt.solve_svm, X, y, kernel="rbf", C=10.0,
                  solver=choose(["smo", "fm", "libsvm", "clarabel"]))
    elif sub == "gsvm":
        X, y = svm_instance(n=1500, m=5, seed=seed)
        r = solve(rec, aidopt.solve_gsvm, X, y, kernel="rbf", formulation=choose(["lp_u", "lp_Ku", "qp"]),
                  nu=10.0)
    elif sub == "fsv":
        X, y = svm_instance(n=60_000, m=40, seed=seed)
        r = solve(rec, aidopt.solve_fsv, X, y, nu=0.1, aid=choose([True, False]))
    elif sub == "lpc":
        H = np.random.default_rng(seed).normal(size=(400_000, 30))
        b = H @ np.ones(30) - np.random.default_rng(seed + 1).random(400_000)
        r = solve(rec, aidopt.solve_lp_chunked, H[:50].sum(axis=0), H, b, chunks=choose([1, 8, 40]))
    elif sub == "lsvm_lpc":
        X, y = svm_instance(n=200_000, m=30, seed=seed)
        r = solve(rec, aidopt.solve_svm, X, y, norm="l1", method="lpc", chunks=8)
    elif sub == "sor":
        X, y = svm_instance(n=300_000, m=30, seed=seed)
        r = solve(rec, aidopt.solve_svm, X, y, C=100.0, method="sor")
    elif sub == "sor_aid":
        X, y = svm_instance(n=300_000, m=30, seed=seed)
        r = solve(rec, aidopt.solve_svm, X, y, C=100.0, bias="regularized",
                  solver=choose(["fm", "sor", "clarabel"]))
    elif sub == "scm":
        g = np.random.default_rng(seed)
        y = np.where(g.random(8_000) < 0.05, 1, -1)
        X = g.normal(size=(8_000, 5)) + 0.8 * (y[:, None] > 0)
        r = solve(rec, aidopt.solve_scm, X, y, solver=choose(["clarabel", "libsvm"]))
    elif sub in ("facility", "facility_sites"):
        from aidopt.data import euclidean_costs

        pts = np.random.default_rng(seed).random((1500, 2))
        kw = dict(aggregation="sites") if sub == "facility_sites" else {}
        r = solve(rec, aidopt.solve_facility_location, euclidean_costs(pts), p=int(choose([20, 60])), **kw)
    elif sub == "aggout":
        g = np.random.default_rng(seed)
        X = g.normal(size=(120, 3))
        collection = np.repeat(np.arange(12), 10)
        counts = np.bincount(collection, weights=(X[:, 0] + g.normal(size=120) > 0)).astype(int)
        r = solve(rec, aidopt.solve_aggregate_outputs, X, collection, counts, method="miqp",
                  aid=choose([True, False]), norm=choose(["l1", "l2"]))
    elif sub == "s2rlsc":
        g = np.random.default_rng(seed)
        X = g.normal(size=(80, 3))
        yl = np.zeros(80)
        yl[:6] = [1, -1, 1, -1, 1, -1]
        r = solve(rec, aidopt.solve_s2rlsc, X, yl, method="exact", solver="scip", restarts=1)
    else:
        X, y, _ = s3vm_instance(n=400, m=5, n_labeled=20, seed=seed)
        r = solve(rec, aidopt.solve_s3vm, X, y, norm=choose(["l1", "l2"]), aid=choose([True, False]))
    rec["termination"] = termination_of(r)
    rec["certified"] = bool(getattr(r, "certified", False))


# =========================================================================== earlier families
@family("lad", plan=900, default_seeds=(0,))
def lad_case(rng, rec):
    import aidopt

    n, m = int(rng.integers(30, 150)), int(rng.integers(1, 5))
    scale = float(pick(rng, [1e-6, 1e-3, 1.0, 1e3, 1e6]))
    X = np.column_stack([np.ones(n), rng.normal(size=(n, m - 1))]) * scale
    ties = bool(rng.random() < 0.4)
    if ties:
        X = np.round(X / scale, 0) * scale
    y = X @ rng.normal(size=m) + rng.laplace(size=n) * scale
    if rng.random() < 0.1:  # an interpolating fit
        y = X @ rng.normal(size=m)
    wkind, s = weights(rng, n, kinds=("none", "int", "real"), p=(0.5, 0.3, 0.2))
    aid = bool(rng.random() < 0.7)
    solver = pick(rng, ["fn", "highs", "clarabel"], p=[0.5, 0.35, 0.15])
    rec["options"] = dict(n=n, m=m, scale=scale, ties=ties, weights=wkind, aid=aid, solver=solver)
    r = solve(rec, aidopt.solve_lad, X, y, sample_weight=s, aid=aid, solver=solver)
    sw = np.ones(n) if s is None else s
    upper, _ = ref.lad_reference(X, y, sw)
    rec["termination"] = termination_of(r)
    beta = (r.solution or {}).get("beta")
    E = None if beta is None else float(sw @ np.abs(y - X @ np.asarray(beta, float)))
    judge(rec, certified=r.certified, reported=r.objective, recomputed=E, upper=upper,
          floor=max(1e-6 * float(sw @ np.abs(y)), TINY), lower_bound=r.lower_bound)


@family("svm_linear", plan=1000, default_seeds=(0, 1))
def svm_linear_case(rng, rec):
    import aidopt

    n, m = int(rng.integers(30, 200)), int(rng.integers(1, 6))
    y = both_classes(np.where(rng.random(n) < pick(rng, [0.5, 0.2]), 1.0, -1.0))
    X = rng.normal(size=(n, m)) + pick(rng, [0.3, 1.0, 3.0]) * y[:, None]
    X *= pick(rng, [1.0, 1.0, 1e-3, 1e3])
    if rng.random() < 0.2:
        X = X[rng.integers(0, max(2, n // 4), n)]
        y = both_classes(y)
    wkind, s = weights(rng, n)
    C = float(pick(rng, [0.05, 1.0, 20.0]))
    norm = pick(rng, ["l2", "l1", "linf", "none"])
    aid = bool(rng.random() < 0.7)
    solver = pick(rng, [None, "clarabel", "highs"]) if norm != "l2" else pick(rng, [None, "clarabel"])
    rec["options"] = dict(n=n, m=m, weights=wkind, C=C, norm=norm, aid=aid, solver=solver)
    kw = {} if solver is None else {"solver": solver}
    r = solve(rec, aidopt.solve_svm, X, y, C=C, norm=norm, sample_weight=s, aid=aid, **kw)
    sw = np.ones(n) if s is None else s
    upper = (ref.svm_l2_reference(X, y, sw, C) if norm == "l2" else ref.lp_svm_reference(X, y, sw, C, norm))[0]
    rec["termination"] = termination_of(r)
    sol = r.solution or {}
    E = None
    if sol.get("w") is not None:
        E = ref.lp_svm_value(X, y, sw, C, norm, np.asarray(sol["w"], float), float(sol["b"]))
    floor = max(1e-6 * C * float(sw.sum()), TINY) if norm == "none" else TINY
    judge(rec, certified=r.certified, reported=r.objective, recomputed=E, upper=upper, floor=floor,
          lower_bound=r.lower_bound)


@family("facility_small", plan=1000, default_seeds=(0, 1))
def facility_small_case(rng, rec):
    import aidopt

    n, s = int(rng.integers(3, 25)), int(rng.integers(2, 9))
    scale = float(pick(rng, [1e-9, 1e-3, 1.0, 1e3, 1e9]))
    spread = int(pick(rng, [3, 10, 100]))
    D = rng.integers(0, spread, (n, s)).astype(float) * scale
    problem = pick(rng, ["pmedian", "ufl", "ufl_p"])
    how = pick(rng, ["benders", "radius", "sites", "sites_far", "direct"])
    p = int(rng.integers(1, min(3, s) + 1)) if problem == "pmedian" else (
        int(rng.integers(1, s + 1)) if problem == "ufl_p" else None)
    f = None if problem == "pmedian" else rng.integers(0, spread * 3, s).astype(float) * scale
    kw = {"benders": dict(aggregation="radius"), "radius": dict(aggregation="radius", solver="highs"),
          "sites": dict(aggregation="sites"), "sites_far": dict(aggregation="sites", far=True),
          "direct": dict(aggregation=pick(rng, ["radius", "sites"]), aid=False, solver="highs")}[how]
    rec["options"] = dict(n=n, s=s, scale=scale, spread=spread, problem=problem, p=p, how=how)
    r = solve(rec, aidopt.solve_facility_location, D, p=p, fixed_costs=f, **kw)
    ones = np.ones(n)
    upper = ref.facility_brute_force(D, f, ones, p)
    rec["termination"] = termination_of(r)
    opened = (r.solution or {}).get("open")
    E = None if opened is None else ref.facility_value(D, f, ones, opened)
    floor = 1e-6 * float(D.min(axis=1).sum())
    judge(rec, certified=r.certified, reported=r.objective, recomputed=E, upper=upper,
          floor=max(floor, TINY), lower_bound=r.lower_bound)


@family("aggout", plan=300, default_seeds=(0,))
def aggout_case(rng, rec):
    import aidopt
    from aidopt import solvers
    from tests.aggout.test_bruteforce import brute_force

    sizes = [int(k) for k in rng.integers(1, 5, size=int(rng.integers(1, 4)))]
    while sum(sizes) > 9:
        sizes.pop()
    n = sum(sizes)
    X = rng.normal(size=(n, 2))
    truth = (X[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(int)
    collection = np.repeat(np.arange(len(sizes)), sizes)
    counts = np.bincount(collection, weights=truth).astype(int)
    C, Dw = float(pick(rng, [0.3, 1.0, 3.0])), float(pick(rng, [0.5, 1.0, 2.0]))
    norm = pick(rng, ["l1", "l2"]) if solvers.availability("scip") in ("full", "limited") else "l1"
    aid = bool(rng.random() < 0.5)
    rec["options"] = dict(n=n, collections=len(sizes), C=C, D=Dw, norm=norm, aid=aid)
    r = solve(rec, aidopt.solve_aggregate_outputs, X, collection, counts, method="miqp", C=C, D=Dw,
              norm=norm, aid=aid)
    opt = brute_force(X, collection, counts, C, Dw, norm)
    rec["termination"] = termination_of(r)
    # the objective is recomputed by the enumeration's own terms at the returned plane
    sol = r.solution or {}
    E = None
    if sol.get("w") is not None and sol.get("b") is not None:
        w, b = np.asarray(sol["w"], float), float(sol["b"])
        f = X @ w - b  # Musicant et al.'s plane w x = b (the reference's convention)
        reg = 0.5 * float(w @ w) if norm == "l2" else float(np.abs(w).sum())
        # the best labelling for this plane: enumerate (n <= 9)
        best = math.inf
        for bits in itertools.product((0, 1), repeat=n):
            dd = np.array(bits, float)
            hl = C * float(np.where(dd > 0, ref.hinge(1.0, f), ref.hinge(-1.0, f)).sum())
            dev = Dw * float(np.abs(counts - np.bincount(collection, weights=dd, minlength=counts.size)).sum())
            best = min(best, hl + dev)
        E = reg + best
    judge(rec, certified=r.certified, reported=r.objective, recomputed=E, upper=opt, floor=1.0,
          lower_bound=r.lower_bound, tol=max(1e-5, r.config.get("tol", 1e-6)), match=1e-6)


@family("s2rlsc", plan=300, default_seeds=(0,))
def s2rlsc_case(rng, rec):
    import aidopt
    from tests.fuzz.test_families import _rlsc_value

    kname = pick(rng, ["linear", "rbf"])
    lam, lam_prime = float(pick(rng, [0.01, 1.0, 100.0])), float(pick(rng, [0.1, 1.0]))
    clustering = bool(rng.random() < 0.5)
    u, l = int(rng.integers(4, 11)), 0 if clustering else int(rng.integers(2, 6))
    X = rng.normal(size=(l + u, int(rng.integers(1, 5))))
    y = np.zeros(l + u)
    y[:l] = np.where(rng.random(l) < 0.5, 1.0, -1.0)
    if l:
        y[0], y[1] = 1.0, -1.0
    sigma = float(pick(rng, [0.3, 1.0, 3.0]))
    sq = ref.cdist(X, X, "sqeuclidean")
    K = X @ X.T if kname == "linear" else np.exp(-sq / (2 * sigma**2))
    w = np.where(y != 0, 1.0 / max(l, 1), (1.0 if clustering else lam_prime) / u)
    extra = {"sigma": sigma} if kname == "rbf" else {}
    rec["options"] = dict(kernel=kname, lam=lam, lam_prime=lam_prime, clustering=clustering, u=u, l=l,
                          sigma=sigma)
    r = solve(rec, aidopt.solve_s2rlsc, X, y, method="exact", solver="scip", kernel=kname, lam=lam,
              lam_prime=lam_prime, restarts=1, eps=0.3, **extra)
    free = np.flatnonzero(y == 0)
    best = math.inf
    for bits in itertools.product((-1.0, 1.0), repeat=u):
        if r.band.k_lo <= sum(b > 0 for b in bits) <= r.band.k_hi:
            labels = y.copy()
            labels[free] = bits
            best = min(best, _rlsc_value(K, labels, w, lam))
    rec["termination"] = termination_of(r)
    E = _rlsc_value(K, r.labels, w, lam)
    judge(rec, certified=r.termination == "certified_optimal", reported=r.fitness, recomputed=E,
          upper=best, floor=1e-12, lower_bound=r.bound, match=1e-7)


@family("s3vm", plan=200, default_seeds=(0,))
def s3vm_case(rng, rec):
    from aidopt.instances import s3vm_instance

    import aidopt

    n = int(rng.integers(30, 90))
    norm = pick(rng, ["l1", "l2"])
    X, y, _ = s3vm_instance(n=n, m=2, n_labeled=int(rng.integers(4, 9)), seed=int(rng.integers(0, 10**6)),
                            separation=float(pick(rng, [1.0, 2.0, 3.0])))
    rec["options"] = dict(n=n, norm=norm)
    r = solve(rec, aidopt.solve_s3vm, X, y, norm=norm, max_iter=3)
    rec["termination"] = termination_of(r)
    rec["certified"] = bool(r.certified)
    if r.termination == "certified_optimal" or r.certified:
        rec["failures"].append(f"CBW: S3VM under AID claims {termination_of(r)} (no global certificate)")


# =========================================================================== the driver
#: seeds per family of ``run --plan full``
PLAN = {name: fam.plan for name, fam in FAMILIES.items()}


def _done(out: Path) -> set:
    done = set()
    if out.exists():
        for line in out.read_text().splitlines():
            with contextlib.suppress(json.JSONDecodeError, KeyError):
                d = json.loads(line)
                done.add((d["family"], d["seed"]))
    return done


def worker(name, seeds, out: Path):
    """Run ``seeds`` of family ``name``, appending one JSON line per run to ``out``; writes the
    run under way to ``out.current`` first (the parent's watchdog reads it)."""
    import warnings

    warnings.simplefilter("ignore")
    logging.getLogger("aidopt").setLevel(logging.ERROR)
    current = Path(str(out) + ".current")
    for seed in seeds:
        current.write_text(json.dumps({"family": name, "seed": seed, "start": time.time()}))
        rec = run_case(name, seed)
        with out.open("a") as fh:
            fh.write(json.dumps(rec) + "\n")
    current.unlink(missing_ok=True)


def drive(tasks, out: Path, chunk: int, hang: float):
    """Run ``tasks`` ((family, [seeds]) pairs) in worker processes of ``chunk`` seeds; a run
    silent for ``hang`` seconds is killed and recorded as ``hang``."""
    out.parent.mkdir(parents=True, exist_ok=True)
    current = Path(str(out) + ".current")
    for name, seeds in tasks:
        todo = [s for s in seeds if (name, s) not in _done(out)]
        while todo:
            part, todo = todo[:chunk], todo[chunk:]
            cmd = [sys.executable, "-m", "tests.fuzz.campaign", "worker", name,
                   ",".join(map(str, part)), str(out)]
            proc = subprocess.Popen(cmd, start_new_session=True)
            while proc.poll() is None:
                time.sleep(2.0)
                if current.exists():
                    with contextlib.suppress(json.JSONDecodeError, OSError):
                        cur = json.loads(current.read_text())
                        if time.time() - cur["start"] > hang:
                            os.killpg(proc.pid, signal.SIGKILL)
                            proc.wait()
                            rec = new_record(cur["family"], cur["seed"])
                            rec.update(verdict="hang", past_limit=True, wall=time.time() - cur["start"],
                                       failures=[f"no result after {hang:.0f} s: killed"])
                            with out.open("a") as fh:
                                fh.write(json.dumps(rec) + "\n")
                            current.unlink(missing_ok=True)
                            left = [s for s in part if (name, s) not in _done(out)]
                            todo = left + todo
                            break
            else:
                if proc.returncode != 0:  # a crash of the worker (not of a run): record and go on
                    cur = json.loads(current.read_text()) if current.exists() else None
                    if cur is not None:
                        rec = new_record(cur["family"], cur["seed"])
                        rec.update(verdict="error", failures=[f"the worker died (exit {proc.returncode})"])
                        with out.open("a") as fh:
                            fh.write(json.dumps(rec) + "\n")
                        current.unlink(missing_ok=True)
                    todo = [s for s in part if (name, s) not in _done(out)] + todo


def _seeds(text):
    if "-" in text:
        a, b = text.split("-")
        return list(range(int(a), int(b) + 1))
    return [int(v) for v in text.split(",")]


def summary(paths, markdown=False):
    latest = {}  # (family, seed) -> record: a later file (a re-run) replaces an earlier record
    for path in paths:
        for line in Path(path).read_text().splitlines():
            with contextlib.suppress(json.JSONDecodeError):
                rec = json.loads(line)
                latest[(rec["family"], rec["seed"])] = rec
    recs = list(latest.values())
    by = defaultdict(list)
    for r in recs:
        by[r["family"]].append(r)
    cols = ["runs", "certified", "certified_but_wrong", "wrong", "uncertified", "error", "hang",
            "ref_failed", "harness_error", "past_limit", "uncertified_mismatch"]
    rows = []
    total = Counter()
    for name in sorted(by):
        c = Counter(r["verdict"] for r in by[name])
        row = {"family": name, "runs": len(by[name]), **{k: c.get(k, 0) for k in cols[1:-2]},
               "past_limit": sum(1 for r in by[name] if r.get("past_limit")),
               "uncertified_mismatch": sum(1 for r in by[name] if r.get("uncertified_mismatch"))}
        rows.append(row)
        total.update({k: row[k] for k in cols})
    rows.append({"family": "total", **{k: total.get(k, 0) for k in cols}})
    if markdown:
        print("| family | " + " | ".join(cols) + " |")
        print("|---" * (len(cols) + 1) + "|")
        for row in rows:
            print(f"| {row['family']} | " + " | ".join(str(row[k]) for k in cols) + " |")
    else:
        print(f"{'family':16s}" + "".join(f"{k[:12]:>13s}" for k in cols))
        for row in rows:
            print(f"{row['family']:16s}" + "".join(f"{row[k]:>13d}" for k in cols))
    bad = [r for r in recs if r["verdict"] in ("certified_but_wrong", "wrong", "error", "hang", "harness_error")
           or r.get("past_limit")]
    if bad:
        print(f"\n{len(bad)} run(s) to look at:")
        for r in bad[:200]:
            print(f"  {r['family']} seed {r['seed']}: {r['verdict']}{' past_limit' if r.get('past_limit') else ''}"
                  f" {r.get('options')} {r['failures'][:2]}")
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m tests.fuzz.campaign")
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("run")
    a.add_argument("--plan", choices=["full"], default=None)
    a.add_argument("--families", default=None, help="comma-separated (default: every family)")
    a.add_argument("--seeds", default=None, help="a-b or a,b,c (default: the plan's 0 .. plan-1)")
    a.add_argument("--out", default="/tmp/fuzzlogs/campaign.jsonl")
    a.add_argument("--chunk", type=int, default=100, help="seeds per worker process")
    a.add_argument("--hang", type=float, default=1800.0, help="seconds without a result: killed")
    w = sub.add_parser("worker")
    w.add_argument("family")
    w.add_argument("seeds")
    w.add_argument("out")
    o = sub.add_parser("one")
    o.add_argument("family")
    o.add_argument("seed", type=int)
    s = sub.add_parser("summary")
    s.add_argument("paths", nargs="+")
    s.add_argument("--markdown", action="store_true")
    args = ap.parse_args(argv)
    if args.cmd == "worker":
        worker(args.family, [int(v) for v in args.seeds.split(",")], Path(args.out))
    elif args.cmd == "one":
        print(json.dumps(run_case(args.family, args.seed), indent=1))
    elif args.cmd == "summary":
        summary(args.paths, args.markdown)
    else:
        names = list(FAMILIES) if args.families is None else args.families.split(",")
        tasks = [(name, _seeds(args.seeds) if args.seeds else list(range(PLAN[name]))) for name in names]
        drive(tasks, Path(args.out), args.chunk, args.hang)


if __name__ == "__main__":
    main()
