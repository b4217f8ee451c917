"""``aidopt bench gsvm``: Mangasarian's Fig. 1.2 — the checkerboard separated with the indefinite
sixth-degree polynomial kernel ((A/lam - rho)(A/lam - rho)' - mu)^d, nu = 10,000, lam = 100,
rho = 1, d = 6, mu = 0.5 — by the three GSVM formulations, beside scikit-learn's SVC given the same
(indefinite) kernel matrix (``kernel="precomputed"``, C = nu).

Training: ``checkerboard(n, seed)``; test: every integer point of [0, 200)^2 (40,000 points), so
the test accuracy is the share of the board classified correctly.
"""

from __future__ import annotations

import time

import numpy as np

from aidopt.bench.lad import environment

FIG_1_2 = {"d": 6, "lam": 100.0, "rho": 1.0, "mu": 0.5}
NU = 10_000.0


def _grid():
    g = np.arange(200, dtype=float)
    X = np.array(np.meshgrid(g, g)).reshape(2, -1).T
    y = np.where(((X[:, 0] // 50) + (X[:, 1] // 50)) % 2 == 0, 1.0, -1.0)
    return X, y


def bench_gsvm(n: int = 1000, seed: int = 0, *, tol: float = 1e-6, output=None, plot=None):
    """Run the three formulations and SVC; print (and append to ``output``) a markdown table;
    ``plot``: a PNG with the four decision surfaces."""
    from aidopt.api.gsvm import solve_gsvm
    from aidopt.instances import checkerboard
    from aidopt.numerics.kernels import kernel_function, kernel_matrix

    X, y = checkerboard(n, seed)
    Xg, yg = _grid()
    kfun = kernel_function("shifted_poly", **FIG_1_2)
    rows, surfaces = [], {}
    for formulation in ("lp_u", "lp_Ku", "qp"):
        t0 = time.perf_counter()
        # (1.12) on this rank-28 kernel: the default (ku_form="auto") solves the LP on the SVD
        # factor (bench_gsvm_ku: on K itself HiGHS's simplex ran past 300 s at n = 1000)
        res = solve_gsvm(X, y, kernel="shifted_poly", kernel_params=FIG_1_2, nu=NU,
                         formulation=formulation, tol=tol, log=False, raise_on_failure=False)
        seconds = time.perf_counter() - t0
        if "w" not in res.solution:
            rows.append((formulation, float("nan"), float("nan"), 0, seconds, res.termination.value))
            continue
        f = kernel_matrix(kfun, Xg, X) @ res.solution["w"] - res.solution["gamma"]
        surfaces[formulation] = f
        u = res.solution["u"]
        support = int((np.abs(u) > 1e-8 * max(float(np.abs(u).max()), 1e-300)).sum())
        name = formulation + (" (SVD factor)" if formulation == "lp_Ku" else "")
        rows.append((name, 100 * float(np.mean(np.sign(res.solution["decision"]) == y)),
                     100 * float(np.mean(np.where(f >= 0, 1.0, -1.0) == yg)), support, seconds,
                     f"{res.termination.value} (gap {res.gap:.1e})"))
    try:
        from sklearn.svm import SVC

        t0 = time.perf_counter()
        K = kernel_matrix(kfun, X, X)
        svc = SVC(kernel="precomputed", C=NU).fit(K, y)
        seconds = time.perf_counter() - t0
        f = svc.decision_function(kernel_matrix(kfun, Xg, X))
        surfaces["sklearn SVC"] = f
        rows.append(("sklearn SVC (precomputed)", 100 * svc.score(K, y),
                     100 * float(np.mean(np.where(f >= 0, 1.0, -1.0) == yg)),
                     int(svc.support_.size), seconds, "LIBSVM on an indefinite kernel"))
    except ImportError:
        pass
    lines = [f"GSVM checkerboard (Fig. 1.2): n={n}, seed={seed}, nu={NU:g}, kernel "
             f"((A/{FIG_1_2['lam']:g} - {FIG_1_2['rho']:g})(.)' - {FIG_1_2['mu']:g})^"
             f"{FIG_1_2['d']}, tol {tol:g}; test = the 40,000 grid points; environment: "
             f"{environment()}", "",
             "| method | train acc % | test acc % | support vectors | seconds | termination |",
             "|---|---|---|---|---|---|"]
    lines += [f"| {r[0]} | {r[1]:.2f} | {r[2]:.2f} | {r[3]} | {r[4]:.2f} | {r[5]} |" for r in rows]
    print("\n".join(lines), flush=True)
    if output:
        with open(output, "a") as fh:
            fh.write("\n".join(lines) + "\n\n")
    if plot and surfaces:
        _plot(X, y, surfaces, plot)
    return rows


def _plot(X, y, surfaces, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(surfaces), figsize=(4 * len(surfaces), 4), squeeze=False)
    for ax, (name, f) in zip(axes[0], surfaces.items(), strict=True):
        ax.imshow((f >= 0).reshape(200, 200), origin="lower", extent=(0, 200, 0, 200),
                  cmap="coolwarm", alpha=0.35)
        ax.scatter(X[y > 0, 0], X[y > 0, 1], s=3, c="tab:red")
        ax.scatter(X[y < 0, 0], X[y < 0, 1], s=3, c="tab:blue")
        ax.set_title(name)
        ax.set_xticks([0, 50, 100, 150, 200])
        ax.set_yticks([0, 50, 100, 150, 200])
    fig.suptitle("checkerboard, indefinite degree-6 polynomial kernel (Fig. 1.2)")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def bench_gsvm_lp(sizes=(1000, 2000, 5000), seed: int = 0, *, gamma: float = 1e-3,
                  nu: float = 10.0, time_limit: float = 600.0, output=None):
    """The GSVM LPs (1.11) and (1.12) with a PSD kernel (RBF) at several m: HiGHS's interior
    point (no crossover) against its simplex, time and support vectors, beside scikit-learn's SVC
    with the same kernel (C = nu). Accuracy on the 40,000 board points."""
    from aidopt.api.gsvm import solve_gsvm
    from aidopt.instances import checkerboard
    from aidopt.numerics.kernels import kernel_function, kernel_matrix

    Xg, yg = _grid()
    kfun = kernel_function("rbf", gamma=gamma)
    lines = [f"GSVM LPs, RBF kernel gamma={gamma:g}, nu={nu:g}, checkerboard, time limit "
             f"{time_limit:g} s per solve; environment: {environment()}", "",
             "| m | method | seconds | support vectors | test acc % | termination |",
             "|---|---|---|---|---|---|"]
    print("\n".join(lines), flush=True)
    for m in sizes:
        X, y = checkerboard(m, seed)
        runs = [(f, form, algo) for f, form in (("lp_u", None), ("lp_Ku", "kernel"))
                for algo in ("ipm", "simplex")] + [("lp_Ku", "svd", "simplex")]
        for formulation, form, algo in runs:
            options = ({"solver": "ipm", "run_crossover": "off"} if algo == "ipm"
                       else {"solver": "simplex"})
            t0 = time.perf_counter()
            res = solve_gsvm(X, y, kernel="rbf", kernel_params={"gamma": gamma}, nu=nu,
                             formulation=formulation, solver_options=options,
                             time_limit=time_limit, log=False, raise_on_failure=False,
                             **({"ku_form": form} if form else {}))
            seconds = time.perf_counter() - t0
            if "w" in res.solution:
                u = res.solution["u"]
                support = int((np.abs(u) > 1e-8 * max(float(np.abs(u).max()), 1e-300)).sum())
                f = kernel_matrix(kfun, Xg, X) @ res.solution["w"] - res.solution["gamma"]
                acc = 100 * float(np.mean(np.where(f >= 0, 1.0, -1.0) == yg))
            else:
                support, acc = 0, float("nan")
            name = formulation + (" on the SVD factor" if form == "svd" else "")
            line = (f"| {m} | {name} HiGHS {algo} | {seconds:.2f} | {support} | {acc:.2f} | "
                    f"{res.termination.value} (gap {res.gap:.1e}) |")
            lines.append(line)
            print(line, flush=True)
        try:
            from sklearn.svm import SVC

            t0 = time.perf_counter()
            svc = SVC(kernel="rbf", gamma=gamma, C=nu).fit(X, y)
            seconds = time.perf_counter() - t0
            acc = 100 * svc.score(Xg, yg)
            line = f"| {m} | sklearn SVC (rbf) | {seconds:.2f} | {svc.support_.size} | {acc:.2f} | - |"
            lines.append(line)
            print(line, flush=True)
        except ImportError:
            pass
    if output:
        with open(output, "a") as fh:
            fh.write("\n".join(lines) + "\n\n")
    return lines


def _ku_run(m: int, seed: int, form: str, algo, time_limit: float) -> tuple:
    """One (1.12) solve of :func:`bench_gsvm_ku` (run in a fresh process): seconds, peak RSS (MB),
    objective, termination, support vectors, test accuracy %."""
    import resource

    from aidopt.api.gsvm import solve_gsvm
    from aidopt.instances import checkerboard
    from aidopt.numerics.kernels import kernel_function, kernel_matrix

    X, y = checkerboard(m, seed)
    options = ({} if algo is None else {"solver_options": (
        {"solver": "ipm", "run_crossover": "off"} if algo == "ipm" else {"solver": "simplex"})})
    t0 = time.perf_counter()
    res = solve_gsvm(X, y, kernel="shifted_poly", kernel_params=FIG_1_2, nu=NU,
                     formulation="lp_Ku", ku_form=form, time_limit=time_limit, log=False,
                     raise_on_failure=False, **options)
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    support, acc = 0, float("nan")
    if "w" in res.solution:
        u = res.solution["u"]
        support = int((np.abs(u) > 1e-8 * max(float(np.abs(u).max()), 1e-300)).sum())
        Xg, yg = _grid()
        f = (kernel_matrix(kernel_function("shifted_poly", **FIG_1_2), Xg, X) @ res.solution["w"]
             - res.solution["gamma"])
        acc = 100 * float(np.mean(np.where(f >= 0, 1.0, -1.0) == yg))
    return (seconds, peak, res.objective, f"{res.termination.value} (gap {res.gap:.1e})",
            support, acc)


def bench_gsvm_ku(sizes=(1000, 5000), seed: int = 0, *, kernel_max: int = 2000,
                  time_limit: float = 600.0, output=None):
    """(1.12) on Fig. 1.2's checkerboard and kernel at several m: the LP on the SVD factor of K
    (``ku_form="svd"``, the default for this rank-28 kernel) against the LP on K itself with
    HiGHS's simplex and interior point (only for m <= ``kernel_max``: three dense m x m blocks).
    Each solve runs in its own process; seconds include the kernel matrix, the SVD and the
    certificate, peak memory is that process's ``ru_maxrss``."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    lines = [f"GSVM (1.12), checkerboard, kernel of Fig. 1.2, nu={NU:g}, time limit "
             f"{time_limit:g} s per solve; environment: {environment()}", "",
             "| m | form | seconds | peak RSS (MB) | objective | termination | support vectors "
             "| test acc % |", "|---|---|---|---|---|---|---|---|"]
    print("\n".join(lines), flush=True)
    context = multiprocessing.get_context("spawn")
    for m in sizes:
        runs = [("svd", None)] + ([("kernel", "simplex"), ("kernel", "ipm")]
                                  if m <= kernel_max else [])
        for form, algo in runs:
            with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
                seconds, peak, objective, termination, support, acc = pool.submit(
                    _ku_run, m, seed, form, algo, time_limit).result()
            name = "SVD factor (HiGHS default)" if form == "svd" else f"K itself (HiGHS {algo})"
            line = (f"| {m} | {name} | {seconds:.2f} | {peak:.0f} | {objective:.10g} | "
                    f"{termination} | {support} | {acc:.2f} |")
            lines.append(line)
            print(line, flush=True)
    if output:
        with open(output, "a") as fh:
            fh.write("\n".join(lines) + "\n\n")
    return lines
