r"""``python -m aidopt.bench.s2rlsc``: the computational experiments of Gieseke, Kramer, Airola &
Pahikkala (2012) for S²RLSC, beside the paper's numbers, plus the exactness study.

Tables (each printed as markdown; the first line names the machine and the versions):

* ``table2`` -- Table 2 (non-realistic scenario): the average test error (%) and its standard
  deviation over random partitions into l labelled, u unlabelled and t test points, for
  supervised RLSC on the labelled points, LIBSVM (scikit-learn's ``SVC``, linear kernel) on the
  labelled points, aidopt's S3VM (:func:`aidopt.solve_s3vm`, Bennett-Demiriz MIQP by AID, with a
  time limit) and S²RLSC. Linear kernel throughout. With ``grid="paper"`` (the paper's protocol)
  λ (RLSC, S²RLSC) and C (LIBSVM) run over :math:`2^{-10}, \dots, 2^{10}` and λ' over {0.1, 1},
  chosen by the test error (the non-realistic scenario), S²RLSC taking the best of 10 runs per
  grid point and the best of 50 for the final model; b_c is estimated from all training labels,
  ε = 0.1, the (μ+ν)-EA with μ = 5, ν = 25 (section 4.2.1). With ``grid="none"``: aidopt's defaults
  (λ = λ' = 1, C = 1, b_c from the labelled points, best of 10) and no tuning. The S3VM runs with
  its defaults (M_l = 5, M_u = 1, balance constraint), untuned. Sets: Gaussian2C and Gaussian4C
  (n = 500, d = 500, l = 25 / 50, u = 250 - l, t = 250) and pairs of scikit-learn's digits
  (pixels / 16, half for training, l = 10 / 20) in place of the paper's USPS and MNIST pairs
  (its MNIST numbers are shown for orientation: other data).
* ``table3`` -- Table 3 (realistic scenario): as ``table2`` but only the training set's labels
  are used: λ, λ' (S²RLSC), λ (RLSC) and C (LIBSVM) chosen from the same grids by fivefold
  cross-validation on the labelled points (each fold's held-out points join the unlabelled
  ones with their labels hidden, and are scored by their labels; best of 10 runs per grid point
  and fold; ties: the larger λ or C, then the larger λ'), b_c from the labelled points,
  ε = 0.2, the final model best of 50 runs on the whole training set. The S3VM is not run.
* ``fig8`` -- Fig. 8: the overall runtime (preprocessing included) of the (1+1)-EA, best of
  ``runs`` runs, with the naive O(n²) fitness (the stored :math:`M = \lambda DGD`, ``y'My`` per
  candidate) against the O(n) update (13), on Gaussian2C of growing n (d = 500, 10 % labelled,
  λ = λ' = 1, linear kernel); both take the same path (same seeds), so the labels agree.
* ``fig9`` -- Fig. 9: the test error against the number of Nyström landmarks r (0.01 n to 0.1 n,
  and the full kernel), λ = λ' = 1, linear kernel, (1+1)-EA best of ``runs``, b_c from all
  training labels, ε = 0.1; digit pairs in place of USPS (and Gaussian2C).
* ``fig10`` -- Fig. 10 (large scale): the runtime of the (1+1)-EA, best of 50 runs, with the
  Nyström fitness on r = 100 landmarks, λ = λ' = 1, linear kernel, ε = 0.2, b_c from the
  labelled points (1 % of the training set), training and test sets of n points each, n growing.
  The paper's MNIST (1, 7) pairs up to 5,000 + 5,000 images are not shipped by any package
  (scikit-learn's digits have ~180 images per class), so Gaussian2C (d = 500) takes their place;
  the test error is reported beside the time.
* ``ceiling`` -- beyond the paper: on the Gaussian sets, how low a linear model of the l + u
  training points goes with every label known (:func:`ceiling`), beside S²RLSC with and without
  the test points as extra unlabelled points.
* ``exact`` -- beyond the paper: how often and by how much the local searches miss the optimum,
  against the exact MIQP (:func:`aidopt.api.s2rlsc.solve_miqp`, Gurobi within its licence, else
  SCIP) on small Gaussian2C instances, for the (1+1)- and (μ+ν)-EA, one run and best of 10,
  and the (1+1)-EA warm-started by the aggregated problem.

Run one table with a tiny configuration first, e.g. ``python -m aidopt.bench.s2rlsc table2
--splits 1 --sets gaussian2c-25 --grid none --baselines rlsc libsvm``.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from aidopt.bench.lad import environment

#: Table 3 of the paper (realistic scenario): mean and std of the test error (%); the MNIST pairs
#: under the digits names, as in :data:`PAPER_TABLE2` (other data than ours)
PAPER_TABLE3 = {
    "gaussian2c-25": {"RLSC": (11.4, 2.4), "LIBSVM": (13.2, 2.8), "UniverSVM": (1.8, 0.9),
                      "S2RLSC": (3.3, 1.8)},
    "gaussian2c-50": {"RLSC": (5.3, 2.1), "LIBSVM": (6.3, 2.4), "UniverSVM": (1.8, 0.8),
                      "S2RLSC": (2.4, 1.5)},
    "gaussian4c-25": {"RLSC": (16.5, 6.8), "LIBSVM": (20.6, 11.5), "UniverSVM": (13.3, 15.2),
                      "S2RLSC": (22.4, 19.1)},
    "gaussian4c-50": {"RLSC": (6.5, 1.9), "LIBSVM": (6.9, 1.6), "UniverSVM": (2.5, 1.5),
                      "S2RLSC": (3.2, 2.2)},
    "digits-1-7-10": {"RLSC": (5.4, 3.6), "LIBSVM": (7.8, 5.2), "UniverSVM": (9.5, 7.5),
                      "S2RLSC": (9.2, 12.0)},
    "digits-1-7-20": {"RLSC": (3.9, 1.3), "LIBSVM": (4.2, 1.6), "UniverSVM": (4.3, 2.8),
                      "S2RLSC": (2.7, 1.1)},
    "digits-2-5-10": {"RLSC": (17.4, 11.5), "LIBSVM": (17.9, 12.3), "UniverSVM": (15.7, 12.5),
                      "S2RLSC": (26.0, 17.9)},
    "digits-2-5-20": {"RLSC": (9.2, 2.6), "LIBSVM": (10.2, 3.1), "UniverSVM": (6.3, 3.9),
                      "S2RLSC": (10.1, 9.3)},
    "digits-2-7-10": {"RLSC": (10.2, 5.9), "LIBSVM": (12.1, 7.9), "UniverSVM": (13.3, 14.5),
                      "S2RLSC": (17.8, 16.6)},
    "digits-2-7-20": {"RLSC": (6.6, 2.7), "LIBSVM": (7.9, 4.4), "UniverSVM": (8.0, 4.7),
                      "S2RLSC": (6.8, 3.4)},
    "digits-3-8-10": {"RLSC": (21.3, 5.7), "LIBSVM": (26.1, 11.1), "UniverSVM": (19.9, 6.5),
                      "S2RLSC": (28.6, 15.1)},
    "digits-3-8-20": {"RLSC": (18.4, 11.7), "LIBSVM": (18.8, 11.5), "UniverSVM": (16.1, 3.9),
                      "S2RLSC": (11.7, 8.2)},
}
#: Table 2 of the paper (non-realistic scenario): mean and std of the test error (%)
PAPER_TABLE2 = {
    "gaussian2c-25": {"RLSC": (10.6, 2.3), "LIBSVM": (13.0, 2.9), "UniverSVM": (1.0, 0.5),
                      "S2RLSC": (0.8, 0.5)},
    "gaussian2c-50": {"RLSC": (4.9, 1.9), "LIBSVM": (5.8, 2.2), "UniverSVM": (1.0, 0.4),
                      "S2RLSC": (0.8, 0.6)},
    "gaussian4c-25": {"RLSC": (16.1, 7.0), "LIBSVM": (17.4, 6.6), "UniverSVM": (7.6, 12.2),
                      "S2RLSC": (16.4, 22.2)},
    "gaussian4c-50": {"RLSC": (6.1, 2.1), "LIBSVM": (6.7, 1.5), "UniverSVM": (1.6, 0.8),
                      "S2RLSC": (1.0, 0.7)},
    # MNIST pairs, l = 10 / 20 of n = 1000 (other data than the digit pairs below)
    "digits-1-7-10": {"RLSC": (4.5, 3.6), "LIBSVM": (7.3, 4.6), "UniverSVM": (2.9, 0.9),
                      "S2RLSC": (2.0, 0.6)},
    "digits-1-7-20": {"RLSC": (2.7, 1.1), "LIBSVM": (3.5, 1.3), "UniverSVM": (2.6, 1.0),
                      "S2RLSC": (1.9, 0.5)},
    "digits-2-5-10": {"RLSC": (14.9, 8.9), "LIBSVM": (15.9, 8.4), "UniverSVM": (3.7, 1.1),
                      "S2RLSC": (4.7, 3.2)},
    "digits-2-5-20": {"RLSC": (7.7, 3.3), "LIBSVM": (9.3, 3.2), "UniverSVM": (3.4, 0.7),
                      "S2RLSC": (3.4, 2.1)},
    "digits-2-7-10": {"RLSC": (8.7, 5.5), "LIBSVM": (12.0, 8.0), "UniverSVM": (3.0, 0.7),
                      "S2RLSC": (3.1, 0.9)},
    "digits-2-7-20": {"RLSC": (5.6, 2.7), "LIBSVM": (6.7, 3.7), "UniverSVM": (2.9, 0.6),
                      "S2RLSC": (3.0, 1.4)},
    "digits-3-8-10": {"RLSC": (19.4, 5.6), "LIBSVM": (20.7, 5.9), "UniverSVM": (12.3, 3.8),
                      "S2RLSC": (8.3, 1.6)},
    "digits-3-8-20": {"RLSC": (13.7, 4.1), "LIBSVM": (15.2, 4.1), "UniverSVM": (8.6, 3.3),
                      "S2RLSC": (7.7, 1.8)},
}
TABLE2_SETS = ("gaussian2c-25", "gaussian2c-50", "gaussian4c-25", "gaussian4c-50",
               "digits-1-7-10", "digits-1-7-20", "digits-2-5-10", "digits-2-5-20",
               "digits-2-7-10", "digits-2-7-20", "digits-3-8-10", "digits-3-8-20")
GRID_LAM = tuple(2.0 ** e for e in range(-10, 11))
GRID_LAM_PRIME = (0.1, 1.0)
BASELINES = ("rlsc", "libsvm", "s3vm")


def _data(name: str, seed: int):
    """``(X, y, l, u, t)`` of a set name ``gaussian2c-25`` / ``gaussian4c-50`` / ``digits-3-8-10``
    (Gaussians: a fresh sample per split seed; digits: the fixed pair)."""
    from aidopt.instances.s2rlsc import digit_pair, gaussian2c, gaussian4c

    parts = name.split("-")
    if parts[0] in ("gaussian2c", "gaussian4c"):
        gen = gaussian2c if parts[0] == "gaussian2c" else gaussian4c
        X, y = gen(500, 500, seed=seed)
        l = int(parts[1])
        return X, y, l, 250 - l, 250
    if parts[0] == "digits" and len(parts) == 4:
        X, y = digit_pair(int(parts[1]), int(parts[2]))
        l = int(parts[3])
        half = X.shape[0] // 2
        return X, y, l, half - l, X.shape[0] - half
    raise ValueError(f"unknown set {name!r}: gaussian2c-L, gaussian4c-L or digits-A-B-L")


def _error(pred, truth) -> float:
    return 100.0 * float(np.mean(np.where(pred >= 0, 1.0, -1.0) != truth))


def _rlsc(K_LL, yL, K_tL, lam) -> np.ndarray:
    """Supervised RLSC (4) on the labelled points: :math:`c = (K + \\lambda l I)^{-1} y`."""
    c = np.linalg.solve(K_LL + lam * yL.size * np.eye(yL.size), yL)
    return K_tL @ c


def _s2rlsc_errors(Xtr, ytr, Xte, yte, truth, grid: str, search: str, seed: int):
    """S²RLSC on one split: the test error of the final model."""
    from aidopt.numerics.rlsc import Band, RLSCFitness, local_search

    lab = ytr != 0
    free = np.flatnonzero(~lab)
    l, u = int(lab.sum()), free.size
    K = Xtr @ Xtr.T
    Kt = Xte @ Xtr.T
    if grid == "none":
        b_c = float(np.mean(ytr[lab] > 0))
        grid_lam, grid_lp, select, final = (1.0,), (1.0,), 10, None
    else:
        b_c = float(np.mean(truth[free] > 0))
        grid_lam, grid_lp, select, final = GRID_LAM, GRID_LAM_PRIME, 10, 50
    band = Band.of(u, b_c, 0.1)
    best = (math.inf, None)
    for lp in grid_lp:
        d = np.where(lab, math.sqrt(1.0 / l), math.sqrt(lp / u))
        base = RLSCFitness.from_kernel(K, d, 1.0)
        for lam in grid_lam:
            fit = base.with_lam(lam)
            out = local_search(fit, ytr, free, band, search=search, restarts=select, seed=seed)
            err = _error(Kt @ fit.coefficients(out.y), yte)
            if err < best[0]:
                best = (err, (fit, out.y))
    if final is None:
        return best[0]
    fit, _ = best[1]
    out = local_search(fit, ytr, free, band, search=search, restarts=final, seed=seed + 1)
    return _error(Kt @ fit.coefficients(out.y), yte)


def _folds(labelled: np.ndarray, k: int, seed: int) -> list[np.ndarray]:
    """The labelled indices in ``k`` random folds (fewer when there are fewer points)."""
    perm = np.random.default_rng(seed).permutation(labelled)
    return [f for f in np.array_split(perm, min(k, perm.size)) if f.size]


def _pick(scores: dict):
    """The grid point with the lowest mean cross-validation error; ties go to the larger
    parameters (the key tuples compare as numbers: larger λ or C, then larger λ')."""
    best = min(scores.values())
    return max(key for key, v in scores.items() if v <= best + 1e-12)


def _cv_supervised(fit_predict, Xtr, ytr, params, seed: int):
    """A supervised baseline's parameter by fivefold cross-validation on the labelled points."""
    lab = np.flatnonzero(ytr != 0)
    scores = {}
    for p in params:
        errs = []
        for held in _folds(lab, 5, seed):
            keep = np.setdiff1d(lab, held)
            if np.unique(ytr[keep]).size < 2:  # a fold without both classes: skip it
                continue
            errs.append(_error(fit_predict(Xtr[keep], ytr[keep], Xtr[held], p), ytr[held]))
        scores[(p,)] = float(np.mean(errs)) if errs else math.inf
    return _pick(scores)[0]


def _s2rlsc_realistic(Xtr, ytr, Xte, yte, search: str, seed: int) -> float:
    """S²RLSC in the realistic scenario (module docstring, ``table3``): the test error."""
    from aidopt.numerics.rlsc import Band, RLSCFitness, local_search

    lab = np.flatnonzero(ytr != 0)
    K = Xtr @ Xtr.T
    bases = {}  # (fold, lam'): the fitness's decomposition, shared by every lam (with_lam)

    def train(y, key, lam, lp, restarts, run_seed):
        known = y != 0
        free = np.flatnonzero(~known)
        if (key, lp) not in bases:
            d = np.where(known, math.sqrt(1.0 / known.sum()), math.sqrt(lp / free.size))
            bases[key, lp] = RLSCFitness.from_kernel(K, d, 1.0)
        fit = bases[key, lp].with_lam(lam)
        out = local_search(fit, y, free, Band.of(free.size, float(np.mean(y[known] > 0)), 0.2),
                           search=search, restarts=restarts, seed=run_seed)
        return fit.coefficients(out.y)

    folds = _folds(lab, 5, seed)
    scores = {}
    for lp in GRID_LAM_PRIME:
        for lam in GRID_LAM:
            errs = []
            for k, held in enumerate(folds):
                y = ytr.copy()
                y[held] = 0.0
                c = train(y, k, lam, lp, 10, seed)
                errs.append(_error(K[held] @ c, ytr[held]))
            scores[(lam, lp)] = float(np.mean(errs))
    lam, lp = _pick(scores)
    c = train(ytr, "all", lam, lp, 50, seed + 1)
    return _error((Xte @ Xtr.T) @ c, yte)


def table2(sets=TABLE2_SETS, splits: int = 10, *, grid: str = "paper", search: str = "mu+nu",
           baselines=BASELINES, s3vm_time_limit: float = 60.0, s3vm_norm: str = "l2",
           seed: int = 0, output=None):
    """Table 2 (see the module docstring); returns the rows."""
    from aidopt.instances.s2rlsc import ssl_split

    if grid not in ("paper", "none", "realistic"):
        raise ValueError(f"grid must be 'paper', 'none' or 'realistic', got {grid!r}")
    realistic = grid == "realistic"
    if realistic:
        baselines = tuple(b for b in baselines if b != "s3vm")
    title = ("Table 3 (realistic scenario: fivefold CV on the labelled points)" if realistic
             else "Table 2 (non-realistic scenario)")
    head = (f"S2RLSC {title}, linear kernel, {splits} random splits, "
            f"grid={grid}, search={search}; environment: {environment()}")
    cols = ["RLSC", "LIBSVM", "S3VM (aidopt)", "S2RLSC (aidopt)"]
    lines = [head, "", "| data set | " + " | ".join(cols) + " | paper RLSC | paper LIBSVM | "
             "paper UniverSVM | paper S2RLSC | S2RLSC s/split |",
             "|---" * (len(cols) + 6) + "|"]
    print("\n".join(lines), flush=True)
    _warm_up()
    rows = []
    for name in sets:
        errs = {c: [] for c in cols}
        seconds = []
        for split in range(splits):
            X, y, l, u, t = _data(name, seed + split)
            Xtr, ytr, Xte, yte, truth = ssl_split(X, y, l, u, t, seed=seed + split)
            lab = ytr != 0
            K_LL, K_tL = Xtr[lab] @ Xtr[lab].T, Xte @ Xtr[lab].T
            lams = GRID_LAM if grid != "none" else (1.0,)
            if "rlsc" in baselines:
                if realistic:
                    lam = _cv_supervised(lambda A, b, B, p: _rlsc(A @ A.T, b, B @ A.T, p),
                                         Xtr, ytr, lams, seed + split)
                    errs["RLSC"].append(_error(_rlsc(K_LL, ytr[lab], K_tL, lam), yte))
                else:
                    errs["RLSC"].append(min(_error(_rlsc(K_LL, ytr[lab], K_tL, lam), yte)
                                            for lam in lams))
            if "libsvm" in baselines:
                from sklearn.svm import SVC

                def svc(A, b, B, C):
                    return SVC(kernel="linear", C=C).fit(A, b).decision_function(B)

                if realistic:
                    C = _cv_supervised(svc, Xtr, ytr, lams, seed + split)
                    errs["LIBSVM"].append(_error(svc(Xtr[lab], ytr[lab], Xte, C), yte))
                else:
                    errs["LIBSVM"].append(min(_error(svc(Xtr[lab], ytr[lab], Xte, C), yte)
                                              for C in lams))
            if "s3vm" in baselines:
                from aidopt.api.s3vm import solve_s3vm

                res = solve_s3vm(Xtr, ytr, norm=s3vm_norm, time_limit=s3vm_time_limit, log=False,
                                 raise_on_failure=False, seed=seed + split)
                if "w" in res.solution:
                    errs["S3VM (aidopt)"].append(_error(Xte @ res.solution["w"] + res.solution["b"],
                                                        yte))
            t0 = time.perf_counter()
            if realistic:
                errs["S2RLSC (aidopt)"].append(_s2rlsc_realistic(Xtr, ytr, Xte, yte, search,
                                                                 seed + split))
            else:
                errs["S2RLSC (aidopt)"].append(_s2rlsc_errors(Xtr, ytr, Xte, yte, truth, grid,
                                                              search, seed + split))
            seconds.append(time.perf_counter() - t0)
        paper = (PAPER_TABLE3 if realistic else PAPER_TABLE2).get(name, {})
        cell = {c: (f"{np.mean(v):.1f} ± {np.std(v):.1f}" if v else "-") for c, v in errs.items()}
        ref = [f"{paper[k][0]:.1f} ± {paper[k][1]:.1f}" if k in paper else "-"
               for k in ("RLSC", "LIBSVM", "UniverSVM", "S2RLSC")]
        X, y, l, u, t = _data(name, seed)
        line = (f"| {name} [l={l}, u={u}, t={t}] | " + " | ".join(cell[c] for c in cols) + " | "
                + " | ".join(ref) + f" | {np.mean(seconds):.1f} |")
        lines.append(line)
        rows.append({"set": name, **{c: errs[c] for c in cols}})
        print(line, flush=True)
    _append(output, lines)
    return rows


def fig8(sizes=(100, 200, 400, 800, 1600), runs: int = 10, *, d: int = 500, seed: int = 0,
         output=None):
    """Fig. 8: naive O(n²) against O(n) fitness evaluations in the (1+1)-EA, best of ``runs``."""
    from aidopt.instances.s2rlsc import gaussian2c
    from aidopt.numerics.rlsc import Band, NaiveFitness, RLSCFitness, local_search

    lines = [f"S2RLSC Fig. 8: (1+1)-EA, best of {runs} runs, Gaussian2C (d={d}, 10% labelled), "
             f"lam = lam' = 1, linear kernel; seconds include preprocessing; environment: "
             f"{environment()}", "",
             "| n | naive O(n^2): s | O(n) update: s | speed-up | evaluations | same labels |",
             "|---|---|---|---|---|---|"]
    print("\n".join(lines), flush=True)
    _warm_up()
    rows = []
    for n in sizes:
        X, y = gaussian2c(n, d, seed=seed)
        l = max(2, n // 10)
        ytr = y.copy()
        ytr[l:] = 0.0
        free = np.flatnonzero(ytr == 0)
        dvec = np.where(ytr != 0, math.sqrt(1.0 / l), math.sqrt(1.0 / free.size))
        band = Band.of(free.size, float(np.mean(y[free] > 0)), 0.1)
        times, outs = {}, {}
        for naive in (True, False):
            t0 = time.perf_counter()
            K = X @ X.T
            # the direct way: one inverse G = (DKD + lam I)^{-1}, then y'My per candidate
            fit = (NaiveFitness if naive else RLSCFitness.from_kernel)(K, dvec, 1.0)
            outs[naive] = local_search(fit, ytr, free, band, search="1+1", restarts=runs,
                                       seed=seed)
            times[naive] = time.perf_counter() - t0
        same = bool(np.array_equal(outs[True].y, outs[False].y))
        line = (f"| {n} | {times[True]:.2f} | {times[False]:.2f} | "
                f"{times[True] / times[False]:.1f} | {outs[False].evaluations} | {same} |")
        lines.append(line)
        rows.append({"n": n, "naive": times[True], "fast": times[False], "same": same})
        print(line, flush=True)
    _append(output, lines)
    return rows


def fig9(sets=("digits-2-5-10", "digits-2-7-10", "digits-3-8-10", "digits-8-0-10",
               "gaussian2c-25"), fractions=(0.01, 0.02, 0.03, 0.05, 0.07, 0.1), splits: int = 10,
         runs: int = 10, *, seed: int = 0, output=None):
    """Fig. 9: test error (%) against Nyström landmarks r = fraction x n, and the full kernel."""
    from aidopt.instances.s2rlsc import ssl_split
    from aidopt.numerics.kernels import rlsc_kernel
    from aidopt.numerics.rlsc import Band, RLSCFitness, local_search, nystrom_fitness

    kfun = rlsc_kernel("linear")
    cols = [f"r={f:g}n" for f in fractions] + ["full"]
    lines = [f"S2RLSC Fig. 9: test error (%) against Nystrom landmarks, lam = lam' = 1, linear "
             f"kernel, (1+1)-EA best of {runs}, eps = 0.1, b_c from all training labels, "
             f"{splits} splits; environment: {environment()}", "",
             "| data set | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
    print("\n".join(lines), flush=True)
    rows = []
    for name in sets:
        errs = {c: [] for c in cols}
        for split in range(splits):
            X, y, l, u, t = _data(name, seed + split)
            Xtr, ytr, Xte, yte, truth = ssl_split(X, y, l, u, t, seed=seed + split)
            n = Xtr.shape[0]
            free = np.flatnonzero(ytr == 0)
            dvec = np.where(ytr != 0, math.sqrt(1.0 / l), math.sqrt(1.0 / u))
            band = Band.of(u, float(np.mean(truth[free] > 0)), 0.1)
            rng = np.random.default_rng(seed + split)
            for f, col in zip([*fractions, None], cols, strict=True):
                if f is None:
                    fit = RLSCFitness.from_kernel(kfun(Xtr, Xtr), dvec, 1.0)
                    predict = Xte @ Xtr.T
                else:
                    r = max(1, int(round(f * n)))
                    R = np.sort(rng.choice(n, size=r, replace=False))
                    fit, B, L = nystrom_fitness(kfun, Xtr, dvec, 1.0, R)
                    predict = (Xte @ Xtr[R].T) @ B @ L.T  # f(x) = k_R(x)' B L' c
                out = local_search(fit, ytr, free, band, search="1+1", restarts=runs,
                                   seed=seed + split)
                errs[col].append(_error(predict @ fit.coefficients(out.y), yte))
        X, y, l, u, t = _data(name, seed)
        line = (f"| {name} [l={l}, u={u}] | "
                + " | ".join(f"{np.mean(errs[c]):.1f} ± {np.std(errs[c]):.1f}" for c in cols) + " |")
        lines.append(line)
        rows.append({"set": name, **errs})
        print(line, flush=True)
    _append(output, lines)
    return rows


def fig10(sizes=(500, 1000, 2000, 3000, 4000, 5000), runs: int = 50, *, r: int = 100,
          d: int = 500, seed: int = 0, output=None):
    """Fig. 10: the (1+1)-EA's runtime (best of ``runs``) with the Nyström fitness on ``r``
    landmarks against the training set's size n (test set: another n points), 1 % labelled,
    λ = λ' = 1, linear kernel, ε = 0.2, b_c from the labelled points; Gaussian2C in place of the
    paper's MNIST (1, 7) (module docstring). Time: landmarks, fitness set-up and search."""
    from aidopt.instances.s2rlsc import gaussian2c, ssl_split
    from aidopt.numerics.kernels import rlsc_kernel
    from aidopt.numerics.rlsc import Band, local_search, nystrom_fitness

    kfun = rlsc_kernel("linear")
    lines = [f"S2RLSC Fig. 10 (large scale): Gaussian2C (d = {d}), training and test sets of n "
             f"points, 1 % labelled, Nystrom r = {r}, lam = lam' = 1, linear kernel, eps = 0.2, "
             f"b_c from the labelled points, (1+1)-EA best of {runs}; environment: "
             f"{environment()}", "", "| n (training) | l | seconds | test error (%) |",
             "|---|---|---|---|"]
    print("\n".join(lines), flush=True)
    _warm_up()
    rows = []
    for n in sizes:
        X, y = gaussian2c(2 * n, d, seed=seed)
        l = max(2, round(0.01 * n))
        Xtr, ytr, Xte, yte, _ = ssl_split(X, y, l, n - l, n, seed=seed)
        t0 = time.perf_counter()
        known = ytr != 0
        free = np.flatnonzero(~known)
        dvec = np.where(known, math.sqrt(1.0 / l), math.sqrt(1.0 / free.size))
        R = np.sort(np.random.default_rng(seed).choice(n, size=min(r, n), replace=False))
        fit, B, L = nystrom_fitness(kfun, Xtr, dvec, 1.0, R)
        band = Band.of(free.size, float(np.mean(ytr[known] > 0)), 0.2)
        out = local_search(fit, ytr, free, band, search="1+1", restarts=runs, seed=seed)
        seconds = time.perf_counter() - t0
        err = _error((Xte @ Xtr[R].T) @ B @ L.T @ fit.coefficients(out.y), yte)
        line = f"| {n} | {l} | {seconds:.2f} | {err:.1f} |"
        lines.append(line)
        rows.append({"n": n, "l": l, "seconds": seconds, "error": err})
        print(line, flush=True)
    _append(output, lines)
    return rows


def _excess(F_mip: float, F_search: dict, gap: float) -> tuple[dict, dict]:
    """``({name: (F - F*) / F*}, {name: found})`` for the searches' F against
    :math:`F^* = \\min(F_{MIQP}, \\min F)`: the MIQP is optimal only within its proven relative
    ``gap``, so a search may end below it. A search found the optimum when :math:`F - F^*` is
    within that gap (at least 1e-9), relative to :math:`\\max(1, |F^*|)` as the gap is."""
    F_star = min(F_mip, *F_search.values())
    gap = gap if math.isfinite(gap) else 0.0
    within = max(gap, 1e-9) * max(1.0, abs(F_star))
    return ({nm: (F - F_star) / F_star for nm, F in F_search.items()},
            {nm: bool(F - F_star <= within) for nm, F in F_search.items()})


def exactness(us=(10, 20, 30, 40), instances: int = 10, *, l: int = 5, d: int = 500,
              solver: str | None = None, time_limit: float = 300.0, seed: int = 0, output=None):
    """How often the searches find the MIQP optimum, and how far they are when they miss."""
    from aidopt.api.s2rlsc import solve_miqp
    from aidopt.decomposition.mip import mip_gap
    from aidopt.instances.s2rlsc import gaussian2c, ssl_split
    from aidopt.numerics.rlsc import Band, RLSCFitness, aggregated_start, local_search

    methods = [("1+1", 1, False), ("1+1", 10, False), ("mu+nu", 1, False), ("mu+nu", 10, False),
               ("1+1", 1, True), ("1+1", 10, True)]
    names = [(f"({s}) one run" if r == 1 else f"({s}) best of {r}")
             + (" from the aggregated start" if a else "") for s, r, a in methods]
    lines = [f"S2RLSC exactness: Gaussian2C (d={d}), l={l}, lam = lam' = 1, eps = 0.1, b_c from the "
             f"labels of all training points; {instances} instances per u; F* the best of the "
             f"MIQP (time limit {time_limit:g} s, proven optimal) and the searches; a run finds "
             f"the optimum when F - F* is within the MIQP's proven gap (at least 1e-9); "
             f"environment: {environment()}", "",
             "| u | method | optimum found | mean excess (F - F*)/F* | max excess | mean s |",
             "|---|---|---|---|---|---|"]
    print("\n".join(lines), flush=True)
    _warm_up()
    rows = []
    for u in us:
        stats = {nm: [] for nm in names}
        found = {nm: 0 for nm in names}
        times = {nm: [] for nm in names}
        mip_times, certified = [], 0
        for k in range(instances):
            X, y = gaussian2c(2 * (l + u), d, seed=seed + 1000 * u + k)
            Xtr, ytr, _, _, truth = ssl_split(X, y, l, u, seed=seed + k)
            free = np.flatnonzero(ytr == 0)
            dvec = np.where(ytr != 0, math.sqrt(1.0 / l), math.sqrt(1.0 / u))
            fit = RLSCFitness.from_kernel(Xtr @ Xtr.T, dvec, 1.0)
            band = Band.of(u, float(np.mean(truth[free] > 0)), 0.1)
            y_mip, F_opt, out = solve_miqp(fit, ytr, free, band, solver=solver,
                                           time_limit=time_limit)
            mip_times.append(out.seconds)
            if out.status != "optimal":
                continue
            certified += 1
            F_search = {}
            for nm, (search, restarts, agg) in zip(names, methods, strict=True):
                t0 = time.perf_counter()
                starts = []
                if agg:
                    a = aggregated_start(fit, ytr, free, band, max(2, u // 5),
                                         unlabelled_weight=1.0 / u, lam=1.0, search=search,
                                         restarts=restarts, seed=seed + k)
                    starts = [a["y"]] if a["y"] is not None else []
                res = local_search(fit, ytr, free, band, search=search, restarts=restarts,
                                   seed=seed + k, starts=starts)
                times[nm].append(time.perf_counter() - t0)
                F_search[nm] = res.fitness
            excess, hit = _excess(F_opt, F_search, mip_gap(out.objective, out.bound))
            for nm in names:
                stats[nm].append(excess[nm])
                found[nm] += hit[nm]
        for nm in names:
            v = np.asarray(stats[nm])
            line = (f"| {u} | {nm} | {found[nm]}/{v.size} | "
                    f"{v.mean() if v.size else math.nan:.2e} | "
                    f"{v.max() if v.size else math.nan:.2e} | {np.mean(times[nm]):.3f} |")
            lines.append(line)
            print(line, flush=True)
        line = (f"| {u} | MIQP ({out.solver}) | {certified}/{instances} proven | - | - | "
                f"{np.mean(mip_times):.2f} (max {np.max(mip_times):.2f}) |")
        lines.append(line)
        print(line, flush=True)
        rows.append({"u": u, "stats": stats, "mip_seconds": mip_times, "certified": certified})
    _append(output, lines)
    return rows


def ceiling(sets=("gaussian2c-25", "gaussian2c-50", "gaussian4c-25", "gaussian4c-50"),
            splits: int = 10, *, seed: int = 0, output=None) -> dict:
    """How low the test error of a linear model trained on a split's l + u points can go, beside
    S²RLSC and the paper (Table 2's Gaussian sets), over ``splits`` random partitions:

    * ``mean difference``: the classifier through the midpoint of the two class means of all
      l + u training points with their true labels;
    * ``S²RLSC, true labels``: S²RLSC's own model (the weights of (7), linear kernel) at the true
      labelling of the u points, λ, λ' chosen on the test set from the paper's grid: what the
      search would give if it found every label;
    * ``S²RLSC`` and ``S²RLSC, test points unlabelled too``: the paper's grid protocol
      (``table2 --grid paper``) on the split, and on the split with the t test points added to
      the unlabelled part (a transductive reading of the protocol; tested on the same points).
    """
    from aidopt.instances.s2rlsc import ssl_split
    from aidopt.numerics.rlsc import RLSCFitness

    head = [f"Gaussian sets: how low a linear model of the l + u training points goes, {splits} "
            f"splits; environment: {environment()}", "",
            "| data set | mean difference, true labels | S2RLSC model, true labels | S2RLSC | "
            "S2RLSC, test points unlabelled too | paper S2RLSC |", "|---|---|---|---|---|---|"]
    print("\n".join(head), flush=True)
    lines, out = [], {}
    for name in sets:
        cols = {k: [] for k in ("mean", "true", "s2rlsc", "transductive")}
        for s in range(seed, seed + splits):
            X, y, l, u, t = _data(name, s)
            Xtr, ytr, Xte, yte, truth = ssl_split(X, y, l, u, t, seed=s)
            w = Xtr[truth > 0].mean(axis=0) - Xtr[truth < 0].mean(axis=0)
            mid = 0.5 * (Xtr[truth > 0].mean(axis=0) + Xtr[truth < 0].mean(axis=0))
            cols["mean"].append(_error((Xte - mid) @ w, yte))
            lab = ytr != 0
            K, Kt = Xtr @ Xtr.T, Xte @ Xtr.T
            best = math.inf
            for lp in GRID_LAM_PRIME:
                d = np.where(lab, math.sqrt(1.0 / l), math.sqrt(lp / u))
                base = RLSCFitness.from_kernel(K, d, 1.0)
                for lam in GRID_LAM:
                    best = min(best, _error(Kt @ base.with_lam(lam).coefficients(truth), yte))
            cols["true"].append(best)
            cols["s2rlsc"].append(_s2rlsc_errors(Xtr, ytr, Xte, yte, truth, "paper", "mu+nu", s))
            cols["transductive"].append(_s2rlsc_errors(
                np.vstack([Xtr, Xte]), np.concatenate([ytr, np.zeros(yte.size)]), Xte, yte,
                np.concatenate([truth, yte]), "paper", "mu+nu", s))
        paper = PAPER_TABLE2[name]["S2RLSC"]
        cells = [f"{np.mean(v):.1f} ± {np.std(v):.1f}" for v in cols.values()]
        line = f"| {name} | " + " | ".join(cells) + f" | {paper[0]:.1f} ± {paper[1]:.1f} |"
        print(line, flush=True)
        lines.append(line)
        out[name] = {k: float(np.mean(v)) for k, v in cols.items()}
    _append(output, head + lines)
    return out


def _warm_up():
    """Load the compiled numba kernels once (both fitness kinds), outside every timing."""
    from aidopt.numerics.rlsc import Band, NaiveFitness, RLSCFitness, local_search

    X = np.random.default_rng(0).normal(size=(12, 3))
    y = np.zeros(12)
    y[:2] = (-1.0, 1.0)
    d = np.full(12, 0.3)
    for fit in (NaiveFitness(X @ X.T, d, 1.0), RLSCFitness.from_kernel(X @ X.T, d, 1.0)):
        for search in ("1+1", "mu+nu"):
            local_search(fit, y, np.arange(2, 12), Band.of(10, 0.5, 0.3), search=search,
                         restarts=1)


def _append(output, lines):
    if output:
        with open(output, "a") as fh:
            fh.write("\n".join(lines) + "\n\n")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m aidopt.bench.s2rlsc", description=__doc__.split(
        "\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("table", choices=["table2", "table3", "fig8", "fig9", "fig10", "exact",
                                      "ceiling"])
    p.add_argument("--sets", nargs="+", default=None, help="table2 / fig9 sets: gaussian2c-L, "
                   "gaussian4c-L, digits-A-B-L")
    p.add_argument("--splits", type=int, default=10, help="random partitions (default 10)")
    p.add_argument("--grid", default="paper", choices=["paper", "none"],
                   help="table2: the paper's test-set grid search, or aidopt's defaults")
    p.add_argument("--search", default="mu+nu", choices=["mu+nu", "1+1"], help="table2 search")
    p.add_argument("--baselines", nargs="*", default=list(BASELINES), choices=BASELINES)
    p.add_argument("--s3vm-time-limit", type=float, default=60.0)
    p.add_argument("--s3vm-norm", default="l2", choices=["l2", "l1"])
    p.add_argument("--sizes", nargs="+", type=int, default=None,
                   help="fig8: n values (default 100 200 400 800 1600); fig10: training-set "
                        "sizes (default 500 1000 2000 3000 4000 5000); exact: u values "
                        "(default 10 20 30 40)")
    p.add_argument("--runs", type=int, default=None,
                   help="fig8 / fig9: best of this many runs (default 10); fig10: default 50")
    p.add_argument("--fractions", nargs="+", type=float, default=None, help="fig9: r / n values")
    p.add_argument("--instances", type=int, default=10, help="exact: instances per u")
    p.add_argument("--solver", default=None, help="exact: MIQP solver (default gurobi, else scip)")
    p.add_argument("--time-limit", type=float, default=300.0, help="exact: per MIQP, seconds")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--output", default=None, help="append the markdown table to this file")
    args = p.parse_args(argv)
    runs = args.runs if args.runs is not None else (50 if args.table == "fig10" else 10)
    if args.table in ("table2", "table3"):
        table2(args.sets or TABLE2_SETS, args.splits,
               grid="realistic" if args.table == "table3" else args.grid, search=args.search,
               baselines=args.baselines, s3vm_time_limit=args.s3vm_time_limit,
               s3vm_norm=args.s3vm_norm, seed=args.seed, output=args.output)
    elif args.table == "ceiling":
        ceiling(args.sets or ("gaussian2c-25", "gaussian2c-50", "gaussian4c-25", "gaussian4c-50"),
                args.splits, seed=args.seed, output=args.output)
    elif args.table == "fig8":
        fig8(args.sizes or (100, 200, 400, 800, 1600), runs, seed=args.seed,
             output=args.output)
    elif args.table == "fig10":
        fig10(args.sizes or (500, 1000, 2000, 3000, 4000, 5000), runs, seed=args.seed,
              output=args.output)
    elif args.table == "fig9":
        kw = {"fractions": args.fractions} if args.fractions else {}
        fig9(args.sets or ("digits-2-5-10", "digits-2-7-10", "digits-3-8-10", "digits-8-0-10",
                           "gaussian2c-25"), splits=args.splits, runs=runs, seed=args.seed,
             output=args.output, **kw)
    else:
        exactness(args.sizes or (10, 20, 30, 40), args.instances, solver=args.solver,
                  time_limit=args.time_limit, seed=args.seed, output=args.output)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
