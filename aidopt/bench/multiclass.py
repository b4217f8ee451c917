r"""``aidopt bench multiclass``: k-class linear SVMs, aidopt's one-vs-rest ``SVMClassifier``
against LIBLINEAR (scikit-learn's ``LinearSVC``), in the layout of docs/multiclass.md "Measured".

Every method runs in its own subprocess on the same seeded data (regenerated, split and
standardized in the worker), one after the other, never two at once. A worker reports the wall
time of ``fit`` only (data and imports excluded), the test and training accuracy, whether every
subproblem is certified (aidopt) or LIBLINEAR's convergence status (its iterations against
``max_iter`` and scikit-learn's ``ConvergenceWarning``). A process that does not answer within
its time limit is stopped and its row says so.

Sets (both split 70/30 by ``train_test_split(test_size=0.3, random_state=0)`` and standardized
with the training part's means and deviations, as docs/multiclass.md):

* ``digits``: scikit-learn's ``load_digits`` (1,797 x 64, 10 classes); ``--sizes`` does not apply.
* ``covertype``: the seeded covertype-like set
  (:func:`aidopt.instances.covertype.covertype_like`, 54 features, 7 classes); a size is the
  number of *training* rows n, generated as the smallest number of rows whose 70 % split has n
  training rows (50,000 -> 71,429 rows, as measured in docs/multiclass.md).

Methods (all with C = ``C``, default 1, both libraries' default):

* ``aidopt``: ``SVMClassifier()``: one-vs-rest, each subproblem a certified AID fit.
* ``aidopt-direct``: ``SVMClassifier(aid=False)``, each subproblem one direct solve.
* ``aidopt-jobs2``: ``SVMClassifier(n_jobs=2)``, two subproblems at a time.
* ``liblinear-hinge``: ``LinearSVC(loss="hinge")``, its default ``max_iter=1000``.
* ``liblinear-hinge-long``: ``LinearSVC(loss="hinge", max_iter=LONG_MAX_ITER[set])``.
* ``liblinear-squared``: ``LinearSVC()`` (squared hinge: another loss).
* ``aidopt-cs``: ``SVMClassifier(multi_class="crammer_singer")``: the joint Crammer–Singer model
  of all classes, one certified problem (AID or the direct solve by the data's shape).
* ``liblinear-cs``: ``LinearSVC(multi_class="crammer_singer", fit_intercept=False)``: the same
  problem by LIBLINEAR's ``-s 4`` (default tolerance and ``max_iter``). Its row also reports
  the relative difference of LIBLINEAR's objective from ``aidopt-cs``'s certified optimum
  (when that row ran before it), the same problem evaluated on the training rows.

LIBLINEAR regularizes the offset, so its problem is close to aidopt's, not equal; the table
compares accuracy and time. Columns: set, n (training rows), m, k, method, fit time, test
accuracy, Γ (its test accuracy minus ``aidopt``'s, points), certified (aidopt) or LIBLINEAR's
status, ρ = time / ``aidopt``'s time.
"""

from __future__ import annotations

import json
import math
import sys
import time
import warnings

import numpy as np

from aidopt.bench.lad import emit_table, environment, run_json

SETS = ("digits", "covertype")
METHODS = ("aidopt", "aidopt-direct", "aidopt-jobs2", "liblinear-hinge", "liblinear-hinge-long",
           "liblinear-squared", "aidopt-cs", "liblinear-cs")
#: ``max_iter`` of ``liblinear-hinge-long`` per set (the values of docs/multiclass.md)
LONG_MAX_ITER = {"digits": 100_000, "covertype": 10_000}
#: the training rows of the default covertype-like size (the issue's 5 * 10^5 x 54)
DEFAULT_COVERTYPE_ROWS = 500_000
#: seconds a worker may spend beyond its time limit on imports and data (then it is stopped)
GRACE = 120.0
TEST_SIZE = 0.3


def total_rows(n_train: int) -> int:
    """The smallest number of rows N whose split ``train_test_split(test_size=0.3)`` leaves
    ``n_train`` training rows (scikit-learn puts ceil(0.3 N) rows in the test part)."""
    if isinstance(n_train, bool) or not isinstance(n_train, int | np.integer) or n_train < 2:
        raise ValueError(f"the training rows must be an integer >= 2, got {n_train!r}")
    N = int(n_train / (1 - TEST_SIZE))
    while N - math.ceil(TEST_SIZE * N) < n_train:
        N += 1
    return N


def data(name: str, n_train: int | None = None, seed: int = 0):
    """``(X_train, X_test, y_train, y_test)`` of set ``name`` (module docstring), standardized
    on the training part; ``n_train`` (covertype) training rows, generated with ``seed``."""
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    if name == "digits":
        from sklearn.datasets import load_digits

        X, y = load_digits(return_X_y=True)
    elif name == "covertype":
        from aidopt.instances.covertype import covertype_like

        X, y = covertype_like(total_rows(n_train or DEFAULT_COVERTYPE_ROWS), seed=seed)
    else:
        raise ValueError(f"unknown multiclass set {name!r}; choose from {SETS}")
    Xa, Xb, ya, yb = train_test_split(X, y, test_size=TEST_SIZE, random_state=0)
    del X  # the split holds copies; standardize them in place (no third copy at 5e5 x 54)
    scaler = StandardScaler(copy=False).fit(Xa)
    return scaler.transform(Xa), scaler.transform(Xb), ya, yb


def estimator(method: str, name: str, C: float, time_limit: float, seed: int = 0):
    """The unfitted estimator of ``method`` (module docstring); LIBLINEAR's row order is
    ``random_state=seed``."""
    if method.startswith("aidopt"):
        from aidopt import SVMClassifier

        options = {"aidopt": {}, "aidopt-direct": {"aid": False}, "aidopt-jobs2": {"n_jobs": 2},
                   "aidopt-cs": {"multi_class": "crammer_singer"}}
        if method not in options:
            raise ValueError(f"unknown multiclass bench method {method!r}; choose from {METHODS}")
        return SVMClassifier(C=C, time_limit=time_limit, **options[method])
    from sklearn.svm import LinearSVC

    if method == "liblinear-squared":
        return LinearSVC(C=C, random_state=seed)
    if method == "liblinear-cs":
        return LinearSVC(multi_class="crammer_singer", fit_intercept=False, C=C, random_state=seed)
    if method == "liblinear-hinge":
        return LinearSVC(loss="hinge", C=C, random_state=seed)
    if method == "liblinear-hinge-long":
        return LinearSVC(loss="hinge", C=C, max_iter=LONG_MAX_ITER[name], random_state=seed)
    raise ValueError(f"unknown multiclass bench method {method!r}; choose from {METHODS}")


def worker(name: str, n_train: int | None, method: str, seed: int, time_limit: float,
           C: float = 1.0) -> dict:
    """Fit ``method`` on set ``name``; return its fit time, accuracies and certificate or
    convergence status."""
    from sklearn.exceptions import ConvergenceWarning

    Xa, Xb, ya, yb = data(name, n_train, seed)
    clf = estimator(method, name, C, time_limit, seed)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.perf_counter()
        clf.fit(Xa, ya)
        seconds = time.perf_counter() - start
    out = {"set": name, "method": method, "n": int(Xa.shape[0]), "m": int(Xa.shape[1]),
           "k": int(len(np.unique(ya))), "seconds": seconds,
           "test_accuracy": float(clf.score(Xb, yb)), "train_accuracy": float(clf.score(Xa, ya))}
    if method.startswith("aidopt"):
        out["certified"] = bool(clf.certified_)
        out["subproblems"] = len(clf.results_)
        out["certified_subproblems"] = sum(bool(r.certified) for r in clf.results_)
        out["terminations"] = sorted({r.termination.value for r in clf.results_})
    else:
        out["n_iter"] = int(np.max(clf.n_iter_))
        out["max_iter"] = int(clf.max_iter)
        out["converged"] = bool(out["n_iter"] < clf.max_iter and not any(
            issubclass(w.category, ConvergenceWarning) for w in caught))
    if method.endswith("-cs"):  # the Crammer-Singer objective of the fit, on the training rows
        out["objective"] = cs_objective(clf.coef_, Xa, np.searchsorted(clf.classes_, ya), C)
    return out


def cs_objective(w, X, y, C: float) -> float:
    """The Crammer–Singer (2-norm) objective of the class weights ``w`` (k, m) on rows X with
    class indices y (:func:`aidopt.decomposition.plugins.crammer_singer.piece_values`)."""
    from aidopt.decomposition.plugins.crammer_singer import piece_values

    w = np.asarray(w, dtype=float)
    values, _ = piece_values(X, y, w)
    return 0.5 * float(np.sum(w * w)) + C * float(values.max(axis=1).sum())


def _run(name, n_train, method, seed, time_limit, C) -> dict:
    cmd = [sys.executable, "-m", "aidopt.bench.multiclass", name, str(n_train or 0), method,
           str(seed), str(time_limit), str(C)]
    out = run_json(cmd, time_limit, grace=GRACE)
    if "skipped" in out and out["skipped"].startswith("no answer"):
        out["skipped"] = f"time limit ({time_limit:g} s, stopped)"
    return out


def status(out: dict) -> str:
    """The certificate (aidopt) or LIBLINEAR's convergence status of a worker's answer."""
    if out["method"] == "aidopt-cs":
        return "certified (one joint problem)" if out["certified"] else "not certified"
    if "certified" in out:
        done, total = out["certified_subproblems"], out["subproblems"]
        return f"all {total} certified" if done == total else f"{done} of {total} certified"
    text = (("converged" + (" (another loss)" if out["method"] == "liblinear-squared" else ""))
            if out["converged"] else f"iteration limit ({out['max_iter']:,})")
    if "objective_above_cs" in out:
        text += f"; objective {out['objective_above_cs']:+.1e} relative to aidopt-cs"
    return text


def _row(out: dict, reference: dict | None, name: str, method: str) -> str:
    if "skipped" in out:
        return f"| {name} | | | | {method} | {out['skipped']} | | | | |"
    gamma = rho = ""
    if reference is not None and "skipped" not in reference:
        gamma = f"{100 * (out['test_accuracy'] - reference['test_accuracy']):+.2f}"
        rho = f"{out['seconds'] / reference['seconds']:.2f}"
    return (f"| {name} | {out['n']:,} | {out['m']} | {out['k']} | {method} | {out['seconds']:.2f} | "
            f"{100 * out['test_accuracy']:.2f} % | {gamma} | {status(out)} | {rho} |")


def bench_multiclass(sets=SETS, sizes=(DEFAULT_COVERTYPE_ROWS,), methods=METHODS, repeat=1,
                     seed=0, C=1.0, time_limit=3600.0, output=None) -> str:
    """Run every method on each set (covertype at each of ``sizes`` training rows), ``repeat``
    rounds with the methods alternating; print (and append to ``output``) a markdown table.

    ``aidopt`` (``SVMClassifier()``) runs first in each round, and has its row, whether
    ``methods`` names it or not: Γ and ρ are against it.
    """
    bad = [m for m in methods if m not in METHODS]
    if bad or not methods:
        raise ValueError(f"unknown multiclass bench method(s) {bad}; choose from {METHODS}")
    bad = [s for s in sets if s not in SETS]
    if bad:
        raise ValueError(f"unknown multiclass set(s) {bad}; choose from {SETS}")
    for n in sizes:
        total_rows(n)  # refuse a bad size before any run
    order = ["aidopt"] + [m for m in methods if m != "aidopt"]
    lines = [f"Environment: {environment()}; C {C:g}; time limit {time_limit:g} s per fit", "",
             "| set | n (train) | m | k | method | fit time (s) | test accuracy | Γ (points) | "
             "certified / LIBLINEAR status | ρ = time / aidopt |", "|" + "---|" * 10]
    print(lines[0], flush=True)
    cases = [(name, n) for name in sets for n in ((None,) if name == "digits" else sizes)]
    for name, n in cases:
        for _ in range(repeat):
            reference = joint = None
            for method in order:
                out = _run(name, n, method, seed, time_limit, C)
                if method == "aidopt":
                    reference = out
                if method == "aidopt-cs" and "skipped" not in out:
                    joint = out
                if method == "liblinear-cs" and joint is not None and "skipped" not in out:
                    out["objective_above_cs"] = (out["objective"] - joint["objective"]) / abs(
                        joint["objective"])
                lines.append(_row(out, reference, name, method))
                print(f"  {name} {n or ''} {method}: " + (
                    out["skipped"] if "skipped" in out else
                    f"{out['seconds']:.2f} s, {status(out)}"), flush=True)
    return emit_table("\n".join(lines), output)


if __name__ == "__main__":
    name, n, method, seed, time_limit, C = sys.argv[1:7]
    print(json.dumps(worker(name, int(n) or None, method, int(seed), float(time_limit), float(C))))
