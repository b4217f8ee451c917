"""``python -m aidopt.bench.backends``: QP backends on the aggregated SVM duals that AID meets.

Runs AID once (linear 2-norm SVM or rbf kernel SVM, ``solver="fm"``) and keeps the aggregated
problem of its last iteration: centroids or the mean kernel, labels, bounds :math:`u = C W`.
That one QP, :math:`\\min \\tfrac12\\alpha'Q\\alpha - e'\\alpha` s.t. :math:`y'\\alpha = 0`,
:math:`0 \\le \\alpha \\le u`, is then solved by each backend, one after the other in this
process:

* ``fm``: :func:`aidopt.numerics.fm.ferris_munson` (linear: (m+1) x (m+1) normal equations) or
  :func:`aidopt.numerics.fm.ferris_munson_kernel` (kernel: K x K Cholesky);
* ``smo``: :func:`aidopt.numerics.smo.smo` on the dense Q from alpha = 0 (no warm start: AID starts it
  from the previous iteration's alpha), to a relative gap of 1e-9;
* ``clarabel``: the Pyomo model AID would otherwise build (:mod:`aidopt.models.svm` /
  :mod:`aidopt.models.kernel_svm`), read into Clarabel (build time counted);
* ``libsvm``: scikit-learn's ``SVC`` on the weighted centroids (``kernel="linear"``) or on the
  mean kernel (``kernel="precomputed"``) with ``sample_weight = W`` (the paper's choice),
  ``tol=1e-6``;
* ``piqp``, ``proxsuite``: their dense QP interfaces on the dual (when installed:
  ``pip install piqp proxsuite``; not aidopt dependencies).

Each answer's ``alpha`` is clipped to the box and balanced (:func:`aidopt.numerics.fm.balanced`); the
table reports time, the dual value of that ``alpha`` (a lower bound on the aggregated optimum) and
its relative distance to the best dual value found, ``(D_best - D) / |D_best|``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from aidopt.numerics.fm import balanced, ferris_munson, ferris_munson_kernel

BACKENDS = ("fm", "smo", "clarabel", "libsvm", "piqp", "proxsuite")


def capture(kind: str, n: int, m: int, seed: int = 0, C: float = 0.1, separation: float = 0.674):
    """AID's last aggregated problem: ``(Q or None, X or None, y, u)``."""
    import aidopt
    from aidopt.decomposition.plugins.kernel_svm import KernelSVMProblem
    from aidopt.decomposition.plugins.svm import SVMProblem
    from aidopt.instances import svm_instance

    X, y = svm_instance(n, m, seed=seed, separation=separation)
    cls = KernelSVMProblem if kind == "rbf" else SVMProblem
    seen = []
    real = cls.solve_native

    def keep(self, method, aggregated, *args, **kwargs):
        seen.append(aggregated)
        return real(self, method, aggregated, *args, **kwargs)

    cls.solve_native = keep
    try:
        if kind == "rbf":
            aidopt.solve_svm(X, y, C=C, kernel="rbf", solver="fm", log=False)
        else:
            aidopt.solve_svm(X, y, C=C, solver="fm", log=False)
    finally:
        cls.solve_native = real
    agg = seen[-1]
    if kind == "rbf":
        return agg.Kbar * np.outer(agg.y, agg.y), None, agg.y, C * agg.w, agg
    return None, agg.X, agg.y, C * agg.w, agg


def dual_value(Q, X, y, u, alpha) -> float:
    """The dual objective of ``alpha`` after clipping to the box and balancing."""
    a = balanced(np.clip(alpha, 0.0, u), y)
    quad = float(a @ (Q @ a)) if Q is not None else float(np.sum(((a * y) @ X) ** 2))
    return float(a.sum()) - 0.5 * quad


def solve(backend, Q, X, y, u, agg, C):
    """``(seconds, alpha)`` of one backend on the captured QP, or ``(None, reason)``."""
    t0 = time.perf_counter()
    if backend == "fm":
        res = ferris_munson_kernel(Q, y, u) if Q is not None else ferris_munson(X, y, u)
        return time.perf_counter() - t0, res.alpha
    if backend == "smo":
        from aidopt.numerics.smo import smo

        P = Q if Q is not None else (y[:, None] * X) @ (y[:, None] * X).T
        res = smo(P, y, u, tol=1e-9)
        return time.perf_counter() - t0, res.alpha
    if backend == "clarabel":
        from aidopt import solvers
        from aidopt.models import kernel_svm, svm
        from aidopt.solvers.clarabel import TIGHT_GAP

        if Q is not None:
            model = kernel_svm.create_instance(agg.Kbar, y, agg.w, C)
        else:
            model = svm.create_instance(X, y, agg.w, C, form="dual")
        outcome = solvers.solve_model(model, "clarabel", need_duals=True,
                                      options=dict(TIGHT_GAP))
        alpha = svm.solution_from(model, outcome.duals)[2]
        return time.perf_counter() - t0, alpha
    if backend == "libsvm":
        from sklearn.svm import SVC

        est = SVC(kernel="precomputed" if Q is not None else "linear", C=C, tol=1e-6,
                  cache_size=2000)
        est.fit(agg.Kbar if Q is not None else X, y, sample_weight=agg.w)
        alpha = np.zeros(y.size)
        alpha[est.support_] = np.abs(est.dual_coef_.ravel())
        return time.perf_counter() - t0, alpha
    P = Q if Q is not None else (y[:, None] * X) @ (y[:, None] * X).T
    K = y.size
    if backend == "piqp":
        try:
            import piqp
        except ImportError:
            return None, "not installed"
        s = piqp.DenseSolver()
        s.settings.verbose = False
        s.setup(P, -np.ones(K), y[None, :], np.zeros(1), None, None, None, np.zeros(K), u)
        s.solve()
        return time.perf_counter() - t0, np.asarray(s.result.x)
    if backend == "proxsuite":
        try:
            import proxsuite
        except ImportError:
            return None, "not installed"
        qp = proxsuite.proxqp.dense.QP(K, 1, 0, True)
        qp.settings.eps_abs = 1e-9
        qp.init(P, -np.ones(K), y[None, :], np.zeros(1), None, None, None, np.zeros(K), u)
        qp.solve()
        return time.perf_counter() - t0, np.asarray(qp.results.x)
    raise ValueError(f"unknown backend {backend!r}")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kind", choices=["linear", "rbf"], default="linear")
    p.add_argument("--n", type=int, default=100_000)
    p.add_argument("--m", type=int, default=50)
    p.add_argument("--C", type=float, default=0.1)
    p.add_argument("--separation", type=float, default=0.674)
    p.add_argument("--backends", nargs="+", default=list(BACKENDS), choices=BACKENDS)
    a = p.parse_args(argv)
    Q, X, y, u, agg = capture(a.kind, a.n, a.m, C=a.C, separation=a.separation)
    print(f"{a.kind} SVM, n = {a.n}, m = {a.m}, C = {a.C}, separation {a.separation}: AID's last "
          f"aggregated dual QP has K = {y.size} columns")
    rows = []
    for backend in a.backends:
        seconds, alpha = solve(backend, Q, X, y, u, agg, a.C)
        rows.append((backend, seconds, alpha if seconds is not None else None, alpha))
    values = {b: dual_value(Q, X, y, u, al) for b, s, al, _ in rows if al is not None}
    best = max(values.values())
    print("| backend | time (s) | dual value D | (D_best - D) / abs(D_best) |")
    print("|---|---|---|---|")
    for backend, seconds, alpha, reason in rows:
        if alpha is None:
            print(f"| {backend} | {reason} | | |")
            continue
        D = values[backend]
        print(f"| {backend} | {seconds:.3f} | {D:.10g} | {(best - D) / abs(best):.1e} |", flush=True)


if __name__ == "__main__":
    main()
