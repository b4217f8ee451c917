"""Every family fuzzed against an independent reference (hypothesis, derandomized).

Few examples per property in the default suite; ``AIDOPT_FUZZ_EXAMPLES`` sets more for a
campaign. Each property checks: nothing is certified that differs from the reference optimum,
no reported lower bound lies above it, and every run with a time limit returns within
``time_limit + 10`` s. The references never use aidopt's models:

* facility location: brute force over the open sets (p-median, UFL, and UFL with at most p
  open; AID over radii or sites, and branch-and-Benders-cut), costs at scales
  1e-9 ... 1e9 and with ties (small integer ranges);
* LP chunking: SciPy's ``linprog`` (HiGHS behind SciPy's own interface), bounded, unbounded and
  infeasible LPs, ``c`` and ``b`` at several scales;
* GSVM (1.12) on repeated one-feature points with a sigmoid kernel (condition numbers up to 1e14):
  the LP in ``f = Kw`` with no K in it (``tests/gsvm/test_ill_conditioned.py``);
* aggregate outputs: enumeration of every labelling (``tests/aggout/test_bruteforce.py``), the
  1-norm MILP with HiGHS and, where SCIP is installed, the 2-norm MIQP;
* the modified SVM (1.35) by SOR and by ``fm`` (the default) inside AID: Clarabel's native API on
  the primal
  (``tests/sor/_ref.py``);
* S2RLSC's exact method: every labelling in the balance band, valued in closed form with a kernel
  computed in the test.
"""

from __future__ import annotations

import itertools
import os
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

import aidopt
from aidopt import solvers
from tests.aggout.test_bruteforce import brute_force
from tests.gsvm.test_ill_conditioned import instance as gsvm_instance
from tests.gsvm.test_ill_conditioned import kern as gsvm_kernel
from tests.gsvm.test_ill_conditioned import reference as gsvm_reference
from tests.sor._ref import primal_135

EXAMPLES = int(os.environ.get("AIDOPT_FUZZ_EXAMPLES", "5"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])
LIMIT = 60.0  # every run's time limit; the wall time must stay within LIMIT + 10 s
SCALES = [1e-9, 1e-3, 1.0, 1e3, 1e9]


def timed(fn, *args, **kwargs):
    t = time.perf_counter()
    out = fn(*args, time_limit=LIMIT, log=False, raise_on_failure=False, **kwargs)
    wall = time.perf_counter() - t
    assert wall <= LIMIT + 10, f"{wall:.1f} s past a {LIMIT} s limit"
    return out


def check(result, optimum, rel=1e-6, floor=1e-300):
    """Nothing certified away from the optimum; no bound above it (``floor``: the scale below
    which a difference is rounding, for problems in natural units whose optimum can be 0)."""
    scale = max(abs(optimum), floor)
    assert result.lower_bound <= optimum + 1e-9 * scale, (result.lower_bound, optimum)
    if result.termination == "certified_optimal":
        assert abs(result.objective - optimum) <= rel * scale, (result.objective, optimum)


# --------------------------------------------------------------------------- facility
@SETTINGS
@given(seed=st.integers(0, 10**6), scale=st.sampled_from(SCALES), ufl=st.booleans(),
       spread=st.sampled_from([3, 10, 100]),
       aggregation=st.sampled_from(["radius", "sites", "benders"]), far=st.booleans())
def test_facility_against_brute_force(seed, scale, ufl, spread, aggregation, far):
    """``aggregation="benders"``: the radius plug-in with ``solver="benders"`` (its default);
    ``"radius"``: the same plug-in's outer AID loop with HiGHS."""
    extra = {"solver": "benders" if aggregation == "benders" else "highs"}
    aggregation = "radius" if aggregation == "benders" else aggregation
    rng = np.random.default_rng(seed)
    n, s = int(rng.integers(3, 25)), int(rng.integers(2, 9))
    D = rng.integers(0, spread, (n, s)).astype(float) * scale
    if ufl:
        f = rng.integers(0, spread * 3, s).astype(float) * scale
        # half of them with at most p open as well (the p-median with opening costs)
        p = int(rng.integers(1, s + 1)) if seed % 2 else None
        best = min(D[:, list(S)].min(1).sum() + f[list(S)].sum()
                   for k in range(1, (p or s) + 1) for S in itertools.combinations(range(s), k))
        r = timed(aidopt.solve_facility_location, D, p=p, fixed_costs=f, aggregation=aggregation,
                  far=far and aggregation == "sites", **extra)
    else:
        p = int(rng.integers(1, min(3, s) + 1))
        best = min(D[:, list(S)].min(1).sum() for S in itertools.combinations(range(s), p))
        r = timed(aidopt.solve_facility_location, D, p=p, aggregation=aggregation,
                  far=far and aggregation == "sites", **extra)
    check(r, best)


# --------------------------------------------------------------------------- LP chunking
@SETTINGS
@given(seed=st.integers(0, 10**6), sc=st.sampled_from(SCALES), sb=st.sampled_from(SCALES),
       kind=st.sampled_from(["bounded", "unbounded", "infeasible"]), chunks=st.sampled_from([2, 8, 40]))
def test_lp_chunking_against_linprog(seed, sc, sb, kind, chunks):
    rng = np.random.default_rng(seed)
    m, n = int(rng.integers(10, 120)), int(rng.integers(2, 8))
    H = rng.normal(size=(m, n))
    b = H @ rng.normal(size=n) - rng.uniform(0, 1, m)
    c = H.T @ rng.uniform(0, 1, m)
    if kind == "unbounded":
        c = -c  # the rows' cone holds -c's opposite direction: x -> x - t c' is feasible
    elif kind == "infeasible":
        H = np.vstack([H, H[:1], -H[:1]])
        b = np.concatenate([b, [1.0 + abs(b[0])], [abs(b[0]) + 1.0]])  # h x >= a and -h x >= a
    # the reference solves the unscaled LP (its own absolute tolerances would fail at 1e-9 as
    # aidopt's did); min (sc c)'x s.t. Hx >= sb b has the optimum sc sb OPT, x = sb x*
    ref = linprog(c, A_ub=-H, b_ub=-b, bounds=[(None, None)] * n, method="highs")
    r = timed(aidopt.solve_lp_chunked, c * sc, H, b * sb, chunks=min(chunks, m))
    if ref.status == 0:
        check(r, float(ref.fun) * sc * sb)
    elif ref.status in (2, 3):  # infeasible, unbounded
        assert r.termination != "certified_optimal", (ref.message, r.message)


# --------------------------------------------------------------------------- GSVM (1.12)
@SETTINGS
@given(seed=st.integers(0, 10**6))
def test_gsvm_112_against_the_kernel_free_lp(seed):
    A, d, nu = gsvm_instance(seed, sizes=(4, 12), scales=(1, 0.5, 2, 3, 5))
    if len(set(d)) < 2:
        return
    opt, full_rank = gsvm_reference(A, d, nu)
    if not full_rank:
        return  # the reference assumes the distinct kernel matrix has full numerical rank
    r = timed(aidopt.solve_gsvm, A, d, kernel=gsvm_kernel, formulation="lp_Ku", nu=nu)
    check(r, opt, rel=1e-5)


# --------------------------------------------------------------------------- aggregate outputs
def _aggout_instance(seed):
    rng = np.random.default_rng(seed)
    sizes = [int(k) for k in rng.integers(1, 5, size=int(rng.integers(1, 4)))]
    while sum(sizes) > 9:
        sizes.pop()
    n = sum(sizes)
    X = rng.normal(size=(n, 2))
    truth = (X[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(int)
    collection = np.repeat(np.arange(len(sizes)), sizes)
    counts = np.bincount(collection, weights=truth).astype(int)
    return X, collection, counts


@SETTINGS
@given(seed=st.integers(0, 10**6), C=st.sampled_from([0.3, 1.0, 3.0]), D=st.sampled_from([0.5, 1.0, 2.0]),
       norm=st.sampled_from(["l1", "l2"]), aid=st.booleans())
def test_aggregate_outputs_against_enumeration(seed, C, D, norm, aid):
    if norm == "l2" and solvers.availability("scip") not in ("full", "limited"):
        return
    X, collection, counts = _aggout_instance(seed)
    opt = brute_force(X, collection, counts, C, D, norm)
    r = timed(aidopt.solve_aggregate_outputs, X, collection, counts, method="miqp", C=C, D=D,
              norm=norm, aid=aid)
    check(r, opt, rel=1e-5, floor=1.0)  # C, D in natural units: the certificate's own floor


# --------------------------------------------------------------------------- modified SVM by SOR
@SETTINGS
@given(seed=st.integers(0, 10**6), nu=st.sampled_from([0.01, 1.0, 100.0, 1000.0]),
       duplicate=st.booleans(), solver=st.sampled_from(["sor", "fm"]))
def test_modified_svm_by_sor_against_clarabel(seed, nu, duplicate, solver):
    rng = np.random.default_rng(seed)
    m, n = int(rng.integers(20, 150)), int(rng.integers(1, 6))
    A = rng.normal(size=(m, n))
    if duplicate:  # repeated rows: the singular systems SOR's polishing met
        A = A[rng.integers(0, max(2, m // 5), m)]
    d = np.where(A[:, 0] + rng.normal(size=m) > 0, 1.0, -1.0)
    d[0], d[1] = 1.0, -1.0
    _, _, opt = primal_135(A, d, nu)
    r = timed(aidopt.solve_svm, A, d, C=nu, bias="regularized", solver=solver)
    check(r, opt, rel=1e-5)


# --------------------------------------------------------------------------- S2RLSC exact
def _rlsc_value(K, y, w, lam):
    """The regularized least-squares fit of labels ``y`` with point weights ``w`` (the squares of
    D in (7) / (10)), minimized over f = K a in closed form: min_a (y - Ka)' W (y - Ka) +
    lam a'Ka = lam y' (W K + lam I)^{-1} W y (stationarity gives W (y - Ka) = lam a)."""
    W = np.diag(w)
    return float(lam * y @ np.linalg.solve(W @ K + lam * np.eye(len(y)), W @ y))


@SETTINGS
@given(seed=st.integers(0, 10**6), kernel=st.sampled_from(["linear", "rbf"]),
       lam=st.sampled_from([0.01, 1.0, 100.0]), lam_prime=st.sampled_from([0.1, 1.0]),
       clustering=st.booleans())
def test_s2rlsc_exact_against_enumeration(seed, kernel, lam, lam_prime, clustering):
    """method="exact" (local search, then the labelling MIQP) against every labelling of the
    free points within the balance band, each valued by the closed form above with a kernel
    computed here (linear (17): X X'; rbf (18) with sigma given)."""
    if solvers.availability("scip") not in ("full", "limited"):
        return
    rng = np.random.default_rng(seed)
    u, l = int(rng.integers(4, 11)), 0 if clustering else int(rng.integers(2, 6))
    X = rng.normal(size=(l + u, int(rng.integers(1, 5))))
    y = np.zeros(l + u)
    y[:l] = np.where(rng.random(l) < 0.5, 1.0, -1.0)
    if l:
        y[0], y[1] = 1.0, -1.0
    sigma = float(rng.choice([0.3, 1.0, 3.0]))
    sq = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    K = X @ X.T if kernel == "linear" else np.exp(-sq / (2 * sigma**2))
    w = np.where(y != 0, 1.0 / max(l, 1), (1.0 if clustering else lam_prime) / u)
    extra = {"sigma": sigma} if kernel == "rbf" else {}
    r = timed(aidopt.solve_s2rlsc, X, y, method="exact", solver="scip", kernel=kernel, lam=lam,
              lam_prime=lam_prime, restarts=1, eps=0.3, **extra)
    free = np.flatnonzero(y == 0)
    best = np.inf
    for bits in itertools.product((-1.0, 1.0), repeat=u):
        if r.band.k_lo <= sum(b > 0 for b in bits) <= r.band.k_hi:
            labels = y.copy()
            labels[free] = bits
            best = min(best, _rlsc_value(K, labels, w, lam))
    scale = max(best, 1e-12)
    assert r.fitness == pytest.approx(_rlsc_value(K, r.labels, w, lam), rel=1e-7, abs=1e-12)
    assert r.fitness >= best - 1e-7 * scale  # no labelling better than every labelling
    assert r.bound <= best + 1e-7 * scale, (r.bound, best)
    if r.termination == "certified_optimal":
        assert r.fitness <= best + 1e-6 * scale, (r.fitness, best)
