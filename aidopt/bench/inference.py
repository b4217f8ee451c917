r"""``aidopt bench inference``: the standard errors of a regression quantile, aidopt's
``result.inference(se=...)`` against R quantreg's ``summary(rq(...), se=...)``.

Every run is its own subprocess on the same seeded instance (regenerated from the seed in the
worker), one after the other, never two at once. Both sides fit first and time only the
inference: aidopt ``solve_lad(X, y, quantile=tau)`` then ``result.inference(se)`` (the refits
included); R ``fit <- rq(y ~ X - 1, tau = tau)`` (method "br", R's default, whose vertex refits
``summary`` repeats), then ``summary(fit, se = se)``, timed inside R by ``system.time``.

Kinds:

* ``nid``: aidopt ``inference("nid")`` (Hall-Sheather bandwidth) against
  ``summary(fit, se = "nid")`` (``hs = TRUE``). Both bandwidths are reported: they must be the
  same number. The row gives max_j |se_j(aidopt) / se_j(R) - 1|, to be <= 1e-6
  (docs/quantiles.md, "Inference").
* ``boot``: aidopt ``inference("boot", B=B, seed=seed)`` (the xy-pair bootstrap, each replicate
  a certified refit started from the fit's partition) against
  ``summary(fit, se = "boot", R = B)`` (``boot.rq``'s default ``bsmethod = "xy"``; R's
  ``set.seed(seed)``). The two use different random draws, so their standard errors agree only
  within Monte Carlo error. The criterion, per coefficient: |ratio - 1| <= 3 sigma with
  :math:`\sigma = \sqrt{1/(2(B-1)) + 1/(2(B-1))}`, the relative standard deviation of the ratio
  of two independent bootstrap standard errors from B replicates each (normal errors; heavier
  tails give more). The row shows how many coefficients meet it, and every ratio (in the
  order of X's columns).

Sets (``--sets``): ``B`` (:func:`aidopt.instances.lad_instance` set B: an intercept and
U(0, 10) columns, i.i.d. t(2) errors) and ``hetero`` (the same X, coefficients
:math:`\beta_j \sim U(-1, 1)` from ``seed + 1``, and t(3) errors scaled by
:math:`1 + 0.1 (x_1 + \dots + x_5)`: heteroscedastic, as in docs/benchmarks/lad.md).

Columns: set, n, m, tau, kind, time aidopt, time R, rho = aidopt / R, the bandwidths (nid), the
agreement.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
import time

import numpy as np

from aidopt.bench.lad import R_READ, emit_table, environment, run_json, run_r

SETS = ("B", "hetero")
KINDS = ("nid", "boot")
DEFAULT_SIZE = (100_000, 20)
#: nid: the largest accepted relative difference of a standard error from R's
NID_RTOL = 1e-6

R_SUMMARY = R_READ + r"""
tau <- as.double(args[5]); se <- args[6]; R <- as.integer(args[7])
set.seed(as.integer(args[8]))
fit <- rq(y ~ X - 1, tau = tau)
h <- bandwidth.rq(tau, n, hs = TRUE)
while ((tau - h < 0) || (tau + h > 1)) h <- h / 2
t <- system.time(s <- if (se == "boot") summary(fit, se = "boot", R = R) else
                 summary(fit, se = se))[["elapsed"]]
cat(sprintf("%.6f\n", t)); cat(sprintf("%.17g\n", h)); cat(sprintf("%.17g\n", s$coefficients[, 2]))
"""


def instance(name: str, n: int, m: int, seed: int):
    """``(X, y)`` of set ``name`` (module docstring); column 0 of X is the intercept."""
    from aidopt.instances import lad_instance

    if name not in SETS:
        raise ValueError(f"unknown inference bench set {name!r}; choose from {SETS}")
    X, y = lad_instance("B", n=n, m=m, seed=seed)
    if name == "hetero":
        if m < 2:
            raise ValueError(f"the hetero set needs m >= 2 columns, got {m}")
        rng = np.random.default_rng(seed + 1)
        beta = rng.uniform(-1.0, 1.0, size=m)
        scale = 1.0 + 0.1 * X[:, 1:6].sum(axis=1)
        y = X @ beta + scale * rng.standard_t(3.0, size=n)
    return X, y


def _aidopt(X, y, tau, kind, B, seed, time_limit) -> dict:
    import aidopt

    fit = aidopt.solve_lad(X, y, quantile=tau, log=False, time_limit=time_limit)
    start = time.perf_counter()
    inference = fit.inference(kind, B=B, seed=seed)
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "fit_seconds": fit.seconds, "certified": fit.certified,
            "std_error": inference.std_error.tolist(),
            "bandwidth": inference.details.get("bandwidth"),
            "vertices": inference.details.get("vertices")}


def _quantreg(X, y, tau, kind, B, seed, time_limit) -> dict:
    values = run_r(R_SUMMARY, X, y, [repr(float(tau)), kind, B, seed], time_limit)
    if isinstance(values, dict):
        return values
    return {"seconds": values[0], "bandwidth": values[1], "std_error": values[2:]}


def worker(side: str, name: str, n: int, m: int, tau: float, kind: str, B: int, seed: int,
           time_limit: float) -> dict:
    """One side (``aidopt`` or ``quantreg``) of one kind of inference on the seeded set."""
    X, y = instance(name, n, m, seed)
    if side == "aidopt":
        return _aidopt(X, y, tau, kind, B, seed, time_limit)
    if side == "quantreg":
        return _quantreg(X, y, tau, kind, B, seed, time_limit)
    raise ValueError(f"unknown side {side!r}: aidopt or quantreg")


def boot_sigma(B: int) -> float:
    """The relative standard deviation of the ratio of two independent bootstrap standard errors
    of B replicates each (normal errors): :math:`\\sqrt{2 / (2(B - 1))}`."""
    return math.sqrt(1.0 / (2 * (B - 1)) + 1.0 / (2 * (B - 1)))


def compare(kind: str, ours: dict, theirs: dict, B: int) -> str:
    """The agreement column of a row: nid, the largest relative difference of a standard error
    (and whether it is within :data:`NID_RTOL`); boot, how many ratios aidopt / R are within
    3 :func:`boot_sigma` of 1, and the ratios."""
    a, r = np.asarray(ours["std_error"]), np.asarray(theirs["std_error"])
    if a.shape != r.shape:
        return f"different numbers of coefficients ({a.size}, {r.size})"
    ratio = a / r
    if kind == "nid":
        worst = float(np.max(np.abs(ratio - 1)))
        same_h = ours["bandwidth"] == theirs["bandwidth"] or abs(
            ours["bandwidth"] / theirs["bandwidth"] - 1) <= 1e-12
        verdict = ("meets 1e-6" if worst <= NID_RTOL else "exceeds 1e-6") if same_h else (
            "bandwidths differ")
        return f"max rel. SE diff {worst:.2e} ({verdict})"
    bound = 3 * boot_sigma(B)
    inside = int(np.count_nonzero(np.abs(ratio - 1) <= bound))
    return (f"{inside} of {ratio.size} SE ratios within |ratio - 1| <= {bound:.3f}: "
            + " ".join(f"{r:.3f}" for r in ratio))


def _run(side, name, n, m, tau, kind, B, seed, time_limit) -> dict:
    return run_json([sys.executable, "-m", "aidopt.bench.inference", side, name, str(n), str(m),
                     repr(float(tau)), kind, str(B), str(seed), str(time_limit)], time_limit)


def _row(name, n, m, tau, kind, ours, theirs, B) -> str:
    lead = f"| {name} | {n} | {m} | {tau:g} | {kind}{f' (B = {B})' if kind == 'boot' else ''} |"
    if "skipped" in ours or "skipped" in theirs:
        why = "; ".join(f"{side}: {out['skipped']}" for side, out in (("aidopt", ours),
                                                                      ("R", theirs))
                        if "skipped" in out)
        return f"{lead} {why} | | | | |"
    bandwidths = (f"{ours['bandwidth']:.10g}, {theirs['bandwidth']:.10g}" if kind == "nid"
                  else "")
    return (f"{lead} {ours['seconds']:.2f} | {theirs['seconds']:.2f} | "
            f"{ours['seconds'] / theirs['seconds']:.2f} | {bandwidths} | "
            f"{compare(kind, ours, theirs, B)} |")


def bench_inference(sizes=(DEFAULT_SIZE,), sets=SETS, kinds=KINDS, tau=0.5, B=200, seed=0,
                    repeat=1, time_limit=3600.0, output=None) -> str:
    """Each kind on each set and size, aidopt then R, ``repeat`` times; print (and append to
    ``output``) a markdown table."""
    bad = [s for s in sets if s not in SETS] + [k for k in kinds if k not in KINDS]
    if bad:
        raise ValueError(f"unknown inference bench set(s) or kind(s) {bad}; sets {SETS}, "
                         f"kinds {KINDS}")
    if not (0 < tau < 1):
        raise ValueError(f"the quantile must be in (0, 1), got {tau!r}")
    if isinstance(B, bool) or not isinstance(B, int) or B < 2:
        raise ValueError(f"B must be an integer >= 2, got {B!r}")
    lines = [f"Environment: {environment()}; R {_r_version()}", "",
             "| set | n | m | tau | kind | time aidopt (s) | time R (s) | ρ = aidopt/R | "
             "bandwidth aidopt, R | agreement |", "|" + "---|" * 10]
    print(lines[0], flush=True)
    for name in sets:
        for n, m in sizes:
            for kind in kinds:
                for _ in range(repeat):
                    ours = _run("aidopt", name, n, m, tau, kind, B, seed, time_limit)
                    theirs = _run("quantreg", name, n, m, tau, kind, B, seed, time_limit)
                    lines.append(_row(name, n, m, tau, kind, ours, theirs, B))
                    print(f"  {lines[-1]}", flush=True)
    return emit_table("\n".join(lines), output)


def _r_version() -> str:
    if shutil.which("Rscript") is None:
        return "not installed"
    proc = subprocess.run(["Rscript", "-e", 'cat(R.version.string, "quantreg",'
                           ' format(packageVersion("quantreg")))'],
                          capture_output=True, text=True, timeout=120)
    return proc.stdout.strip() or "quantreg not found"


if __name__ == "__main__":
    side, name, n, m, tau, kind, B, seed, time_limit = sys.argv[1:10]
    print(json.dumps(worker(side, name, int(n), int(m), float(tau), kind, int(B), int(seed),
                            float(time_limit))))
