r"""``aidopt bench scm``: Support Cluster Machines against SVC baselines (Yuan, Li & Zhang 2006,
Tables 1, 3 and 4).

**Tables 3 / 4** (:func:`bench_scm`): a packaged imbalanced set (default ``sylva``, 13,086 x 212,
805 positives, the largest shipped; :func:`aidopt.instances.scm.imbalanced_set`) or the
overlapping sine set :math:`\mathcal D_2` at a chosen imbalance (``sine:NPOS:NNEG``), split into
training and validation halves (stratified, the paper's Table 2 protocol) and standardized on the
training half. Every method is fitted on the training half in its own subprocess, one after the
other; the table reports the average precision on the validation half (Table 3) and the fit time
(Table 4; data loading excluded). Methods (the paper's, where a package has them):

* ``whole``: scikit-learn ``SVC`` (LIBSVM) on all training rows;
* ``random``: the same on all positives and a random ``ratio`` (5) times as many negatives
  (the size at which the paper's Active method stops); the mean of ``repeat`` draws (the paper:
  10);
* ``weighted``: ``SVC(class_weight="balanced")``, the :math:`C^+/C^-` tuning of section 3.2;
* ``scm``: :func:`aidopt.api.scm.solve_scm` with the paper's settings (kernel k-means, centroid
  representatives, rule (11) with :math:`\gamma = 1.3`, stop at 5:1) and LIBSVM for the weighted
  SVM (6) on the representatives (``solver="libsvm"``; its certificate is reported);
* ``scm_i``: the same with k-means in input space (the paper's SCMs_I);
* ``scm_refit``: ``shrink="auto"`` and ``final="refit"`` (one more SVM on the rows left).

All use the same kernel (RBF, ``gamma="scale"``) and C, and the same kernel memory: LIBSVM's
cache is ``CACHE_MB`` (1000 MB) and SCM's Gram cache (:data:`aidopt.numerics.kernel_kmeans.CACHE_ENTRIES`) is set to
as many entries for the benchmark (its default is 256 MB). The last line says whether SCM met the
target: at least 95 % of ``whole``'s average precision in at most a fifth of its time.

**Table 1** (:func:`bench_scm_table1`): the time of ``SVC(kernel="linear", C=1)`` on the balanced
sine sets :math:`\mathcal D_1` (separable) and :math:`\mathcal D_2` (overlapping) as
:math:`n^+ + n^-` grows.

Run as ``python -m aidopt.bench.scm`` (``--help``) or ``aidopt bench scm``.
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np

from aidopt.bench.lad import _progress, _run, emit_table, environment

METHODS = ("whole", "random", "weighted", "scm", "scm_i", "scm_refit")
#: kernel cache of every method, in MB (LIBSVM's ``cache_size``; SCM's Gram cache)
CACHE_MB = 1000
#: the variants of :func:`aidopt.api.scm.solve_scm` behind the SCM methods
SCM_VARIANTS = {"scm": {}, "scm_i": {"clustering": "input"},
                "scm_refit": {"shrink": "auto", "final": "refit"}}


def load(data: str, seed: int = 0):
    """``(X_train, y_train, X_val, y_val)``: the set split in stratified halves, standardized on
    the training half; ``y`` is +1 on the minority class. ``data``: a name for
    :func:`aidopt.instances.scm.imbalanced_set` or ``sine:NPOS:NNEG``."""
    from aidopt.instances.scm import imbalanced_set, sine_set, standardize, train_validation_split

    if data.startswith("sine:"):
        _, n_pos, n_neg = data.split(":")
        X, y = sine_set("D2", int(n_pos), int(n_neg), seed=seed)
    else:
        X, y = imbalanced_set(data)
    X_train, y_train, X_val, y_val = train_validation_split(X, y, seed=seed)
    X_train, X_val = standardize(X_train, X_val)
    return X_train, y_train, X_val, y_val


def _average_precision(y, score) -> float:
    from sklearn.metrics import average_precision_score

    return float(average_precision_score(y > 0, score))


def worker(method: str, data: str, seed: int, C: float, kernel: str, repeat: int,
           ratio: float = 5.0) -> dict:
    """Fit one method on the training half; its validation average precision and fit time."""
    from sklearn.svm import SVC

    X, y, X_val, y_val = load(data, seed)
    out = {"n": int(X.shape[0]), "m": int(X.shape[1]), "positives": int((y > 0).sum())}
    svc = {"kernel": kernel, "C": C, "gamma": "scale", "cache_size": CACHE_MB}
    if method in ("whole", "weighted"):
        est = SVC(**svc, class_weight="balanced" if method == "weighted" else None)
        t0 = time.perf_counter()
        est.fit(X, y)
        out["seconds"] = time.perf_counter() - t0
        out["ap"] = _average_precision(y_val, est.decision_function(X_val))
        out["support"] = int(est.support_.size)
    elif method == "random":
        pos, neg = np.flatnonzero(y > 0), np.flatnonzero(y < 0)
        size = min(neg.size, int(np.ceil(ratio * pos.size)))
        aps, seconds = [], []
        for draw in range(repeat):
            rows = np.r_[pos, np.random.default_rng(seed + draw).choice(neg, size, replace=False)]
            t0 = time.perf_counter()
            est = SVC(**svc).fit(X[rows], y[rows])
            seconds.append(time.perf_counter() - t0)
            aps.append(_average_precision(y_val, est.decision_function(X_val)))
        out.update(seconds=float(np.mean(seconds)), ap=float(np.mean(aps)),
                   ap_std=float(np.std(aps)), draws=repeat)
    elif method in SCM_VARIANTS:
        import aidopt.numerics.kernel_kmeans
        from aidopt.api.scm import solve_scm
        from aidopt.instances.scm import sine_set

        # load numba's compiled k-means kernel before the clock starts (LIBSVM is compiled too)
        solve_scm(*sine_set("D2", 5, 40), kernel=kernel, solver="libsvm", log=False)
        default = aidopt.numerics.kernel_kmeans.CACHE_ENTRIES
        aidopt.numerics.kernel_kmeans.CACHE_ENTRIES = CACHE_MB * 2**20 // 8  # LIBSVM's kernel memory
        try:
            t0 = time.perf_counter()
            res = solve_scm(X, y, C=C, kernel=kernel, solver="libsvm", ratio=ratio, seed=seed,
                            log=False, **SCM_VARIANTS[method])
            out["seconds"] = time.perf_counter() - t0
        finally:
            aidopt.numerics.kernel_kmeans.CACHE_ENTRIES = default
        out["ap"] = _average_precision(y_val, res.decision_function(X_val))
        out.update(termination=res.termination, rounds=len(res.history),
                   kept=int(res.kept.sum()), svm_gap=res.svm.certificate.relative_gap,
                   full_gap=(None if res.full_certificate is None
                             else res.full_certificate.relative_gap),
                   steps={k: round(sum(it.seconds.get(k, 0.0) for it in res.history), 2)
                          for k in ("cluster", "represent", "solve", "certify", "predict")})
    else:
        raise ValueError(f"unknown method {method!r}; choose from {METHODS}")
    return out


def _table1_worker(which: str, n: int, seed: int) -> dict:
    from sklearn.svm import SVC

    from aidopt.instances.scm import sine_set

    X, y = sine_set(which, n_pos=n // 2, n_neg=n - n // 2, seed=seed)
    est = SVC(kernel="linear", C=1.0, cache_size=CACHE_MB)
    t0 = time.perf_counter()
    est.fit(X, y)
    seconds = time.perf_counter() - t0
    return {"seconds": seconds, "support": int(est.support_.size),
            "accuracy": float(est.score(X, y))}


def bench_scm(data: str = "sylva", C: float = 1.0, kernel: str = "rbf", seed: int = 0,
              repeat: int = 10, methods=METHODS, output=None, time_limit: float = 3600.0) -> str:
    """Tables 3 and 4 on one set: print (and append to ``output``) the markdown tables; return
    them. Each method runs in its own subprocess (``time_limit`` + 600 s at most), one after the
    other."""
    results = {}
    print(f"Environment: {environment()}", flush=True)
    for method in methods:
        results[method] = _run(method, 0, 0, data, seed, time_limit, "aidopt.bench.scm",
                               (C, kernel, repeat))
        print(_progress(method, data, results[method]), flush=True)
    first = next((r for r in results.values() if "n" in r), {})
    lines = [f"Environment: {environment()}",
             f"Data {data}: {first.get('n', '?')} training rows ({first.get('positives', '?')} "
             f"positives) x {first.get('m', '?')}, validation half of the same size; kernel "
             f"{kernel}, gamma scale, C {C:g}; seed {seed}; random: mean of {repeat} draws", ""]

    def cell(method, key, fmt):
        r = results[method]
        return r["skipped"] if "skipped" in r else format(r[key], fmt)

    head = "| data | " + " | ".join(methods) + " |"
    rule = "|---|" + "---|" * len(methods)
    lines += ["Table 3 (average precision on the validation half):", "", head, rule,
              f"| {data} | " + " | ".join(cell(m, "ap", ".4f") for m in methods) + " |", "",
              "Table 4 (fit time, seconds):", "", head, rule,
              f"| {data} | " + " | ".join(cell(m, "seconds", ".2f") for m in methods) + " |", ""]
    details = [m for m in methods if m in SCM_VARIANTS and "skipped" not in results[m]]
    if details:
        lines += ["| SCM variant | termination | rounds | rows kept | gap of (6) (LIBSVM) | "
                  "gap as a full-data SVM | steps (s) |", "|---|---|---|---|---|---|---|"]
        for m in details:
            r = results[m]
            full = "—" if r["full_gap"] is None else f"{r['full_gap']:.2e}"
            steps = " ".join(f"{k} {v:.2f}" for k, v in r["steps"].items() if v >= 0.01)
            lines.append(f"| {m} | {r['termination']} | {r['rounds']} | {r['kept']} | "
                         f"{r['svm_gap']:.2e} | {full} | {steps} |")
        lines.append("")
    whole = results.get("whole", {})
    for m in details:
        r = results[m]
        if "ap" in whole:
            ap_share, time_share = r["ap"] / whole["ap"], r["seconds"] / whole["seconds"]
            met = ap_share >= 0.95 and time_share <= 0.2
            lines.append(f"Target ({m}): {100 * ap_share:.1f} % of whole's average precision in "
                         f"{100 * time_share:.1f} % of its time: {'met' if met else 'NOT met'} "
                         "(needs >= 95 % in <= 20 %).")
    return emit_table("\n".join(lines), output)


def bench_scm_table1(sizes=None, seed: int = 0, output=None, time_limit: float = 3600.0) -> str:
    """Table 1: the time of ``SVC(kernel="linear", C=1)`` on balanced D1 and D2 of each size
    :math:`n^+ + n^-` (default the paper's 200 ... 80,000), each fit in its own subprocess."""
    from aidopt.instances.scm import TABLE1_SIZES

    sizes = list(TABLE1_SIZES if sizes is None else sizes)
    lines = [f"Environment: {environment()}", "",
             "Table 1 (SVC, linear kernel, C = 1: fit time in seconds, support vectors):", "",
             "| n+ + n- | " + " | ".join(str(n) for n in sizes) + " |",
             "|---|" + "---|" * len(sizes)]
    print(lines[0], flush=True)
    for which in ("D1", "D2"):
        cells = []
        for n in sizes:
            r = _run(f"table1-{which}", n, 0, "sine", seed, time_limit, "aidopt.bench.scm",
                     (1.0, "linear", 1))
            print(_progress(which, n, r), flush=True)
            cells.append(r["skipped"] if "skipped" in r else f"{r['seconds']:.2f} ({r['support']} SV)")
        lines.append(f"| time({which}) | " + " | ".join(cells) + " |")
    return emit_table("\n".join(lines), output)


def bench_scm_floor(data: str = "sylva", seed: int = 0, divisors=(10, 20, 50, 100),
                    repeat: int = 5, output=None) -> str:
    """The floor of one SCM round's time against ``whole``'s: the steps no SCM round can skip,
    each at its cheapest, timed in this process (best of ``repeat``): one k-means assignment of
    the negatives to ``|D-| / divisor`` random negatives and the cluster means (no Lloyd
    iteration), LIBSVM on the positives and the weighted means (6), and the decision values of
    every training row (rule (11) needs them) by one BLAS product. No certificate, no second
    round, no shrinking; the validation average precision of that one-round model beside it."""
    from sklearn.metrics import average_precision_score
    from sklearn.svm import SVC

    X, y, X_val, y_val = load(data, seed)
    t0 = time.perf_counter()
    whole = SVC(kernel="rbf", C=1.0, gamma="scale", cache_size=CACHE_MB).fit(X, y)
    whole_seconds = time.perf_counter() - t0
    ap_whole = average_precision_score(y_val > 0, whole.decision_function(X_val))
    neg, pos = np.flatnonzero(y < 0), np.flatnonzero(y > 0)
    gamma = 1.0 / (X.shape[1] * X.var())
    Xn, sq = X[neg], (X * X).sum(axis=1)
    lines = [f"Environment: {environment()}",
             f"Data {data}: {X.shape[0]} training rows ({pos.size} positives) x {X.shape[1]}; "
             f"whole (SVC, RBF, gamma scale, C 1) {whole_seconds:.3f} s, first fit in this "
             "process; seed {seed}; floor = best of {repeat}".format(seed=seed, repeat=repeat), "",
             "| k- | assignment + means (s) | SVM (6) (s) | decision values (s) | floor (s) | "
             "floor / whole | average precision / whole's |", "|---|---|---|---|---|---|---|"]
    for divisor in divisors:
        k = max(1, neg.size // int(divisor))
        best = None
        for _ in range(repeat):
            t0 = time.perf_counter()
            centres = Xn[np.random.default_rng(seed).choice(neg.size, k, replace=False)]
            label = (sq[neg][:, None] - 2 * Xn @ centres.T
                     + (centres * centres).sum(axis=1)[None, :]).argmin(axis=1)
            count = np.bincount(label, minlength=k)
            sums = np.zeros((k, X.shape[1]))
            np.add.at(sums, label, Xn)
            used = count > 0
            means = sums[used] / count[used, None]
            t1 = time.perf_counter()
            model = SVC(kernel="rbf", C=1.0, gamma=gamma).fit(
                np.vstack([X[pos], means]), np.r_[np.ones(pos.size), -np.ones(means.shape[0])],
                sample_weight=np.r_[np.ones(pos.size), count[used]])
            t2 = time.perf_counter()
            sv = model.support_vectors_
            dist = sq[:, None] - 2 * X @ sv.T + (sv * sv).sum(axis=1)[None, :]
            np.exp(-gamma * np.maximum(dist, 0.0)) @ model.dual_coef_[0] + model.intercept_[0]
            t3 = time.perf_counter()
            if best is None or t3 - t0 < best[0]:
                best = (t3 - t0, t1 - t0, t2 - t1, t3 - t2)
        ap = average_precision_score(y_val > 0, model.decision_function(X_val))
        lines.append(f"| {neg.size} / {divisor} = {k} | {best[1]:.4f} | {best[2]:.4f} | "
                     f"{best[3]:.4f} | {best[0]:.4f} | {best[0] / whole_seconds:.3f} | "
                     f"{ap / ap_whole:.4f} |")
    return emit_table("\n".join(lines), output)


def main(argv=None) -> int:
    import argparse

    p = argparse.ArgumentParser(prog="python -m aidopt.bench.scm", description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default="sylva", help="an imbalanced set name or sine:NPOS:NNEG")
    p.add_argument("--C", type=float, default=1.0)
    p.add_argument("--kernel", default="rbf", choices=["rbf", "linear", "poly"])
    p.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    p.add_argument("--repeat", type=int, default=10, help="draws of the random baseline")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--table1", nargs="*", type=int, default=None, metavar="N",
                   help="run Table 1 instead (sizes n+ + n-; none given: the paper's)")
    p.add_argument("--floor", action="store_true",
                   help="time the floor of one SCM round instead (bench_scm_floor)")
    p.add_argument("--time-limit", type=float, default=3600.0)
    p.add_argument("--output", default=None, help="append the markdown tables to this file")
    args = p.parse_args(argv)
    if args.floor:
        bench_scm_floor(args.data, args.seed, output=args.output)
    elif args.table1 is not None:
        bench_scm_table1(args.table1 or None, args.seed, args.output, args.time_limit)
    else:
        bench_scm(args.data, args.C, args.kernel, args.seed, args.repeat, args.methods,
                  args.output, args.time_limit)
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 10 and (sys.argv[1] in METHODS or sys.argv[1].startswith("table1-")):
        # a worker started by aidopt.bench.lad._run: method n m data seed time_limit C kernel repeat
        method, n, _, data, seed, _, C, kernel, repeat = sys.argv[1:]
        if method.startswith("table1-"):
            print(json.dumps(_table1_worker(method.split("-", 1)[1], int(n), int(seed))))
        else:
            print(json.dumps(worker(method, data, int(seed), float(C), kernel, int(repeat))))
    else:
        sys.exit(main())
