"""``aidopt bench s3vm``: AID1 / AID5 on the Chapelle et al. SSL benchmark (Park & Klabjan Table 8).

Protocol (the paper's section 4.3): linear kernel, the official splits of each set (12), l = 10 and
l = 100 labeled rows, M_l = 5, M_u = 1, r0 = 0.01, the balance cost for USPS and BCI and the
balance constraint for the others. AIDk stops after k iterations (``max_iter=k``) and its (w, b)
labels the unlabeled rows by sign; the accuracy is measured on the unlabeled rows against their
true labels. Each split runs AID1 and AID5 as separate solves (same seed, so AID5's first iteration
is AID1); the time is the ``solve_s3vm`` call. Columns: mean accuracy (%) and standard deviation
over the splits, mean and largest time per split, the paper's AID1 accuracy and the difference.

``class_ratio="known"`` (``--class-ratio known``) gives the balance constraint the data set's
share of positive unlabeled rows (``positive_fraction``) instead of the labeled rows' mean label
(the paper's equation); the balance-cost sets are unchanged. A reading, not the paper's protocol:
it uses the unlabeled rows' class ratio, which a user may know but the 10 labels do not tell.
"""

from __future__ import annotations

import json
import time

import numpy as np

from aidopt.bench.lad import environment

#: Park & Klabjan (2016) Table 8, AID1 accuracy (%) on the unlabeled rows, per set and l
PAPER_AID1 = {
    10: {"digit1": 83.4, "usps": 80.4, "bci": 51.2, "g241c": 74.3, "g241d": 49.9, "text": 63.0},
    100: {"digit1": 90.4, "usps": 87.1, "bci": 69.1, "g241c": 76.0, "g241d": 53.6, "text": 75.8},
}
BALANCE_COST_SETS = ("usps", "bci")
CLASS_RATIOS = ("labeled", "known")
DEFAULT_SETS = ("digit1", "usps", "bci", "g241c", "g241d", "text")


def run_split(name: str, split: int, labels: int, iterations: int, *, Ml=5.0, Mu=1.0, r0=0.01,
              solver=None, time_limit=None, seed=None, class_ratio="labeled") -> dict:
    """One AIDk solve on one split: accuracy on the unlabeled rows, time, termination.
    ``class_ratio``: the balance constraint's right-hand side from the labeled rows (the
    paper's) or from the unlabeled rows' known class ratio (module docstring)."""
    from aidopt.api.s3vm import solve_s3vm
    from aidopt.instances import ssl_benchmark

    if class_ratio not in CLASS_RATIOS:
        raise ValueError(f"class_ratio must be one of {CLASS_RATIOS}, got {class_ratio!r}")
    X, y, truth = ssl_benchmark(name, split, labels)
    balance = "cost" if name in BALANCE_COST_SETS else "constraint"
    unlabeled = y == 0
    positive_fraction = None
    if class_ratio == "known" and balance == "constraint":
        positive_fraction = float(np.mean(truth[unlabeled] > 0))
    t0 = time.perf_counter()
    result = solve_s3vm(X, y, Ml=Ml, Mu=Mu, r0=r0, balance=balance, solver=solver,
                        positive_fraction=positive_fraction,
                        max_iter=iterations, time_limit=time_limit, log=False,
                        seed=split if seed is None else seed, raise_on_failure=False)
    seconds = time.perf_counter() - t0
    accuracy = float("nan")
    if "transduction" in result.solution:
        accuracy = 100.0 * float(np.mean(result.solution["transduction"][unlabeled] == truth[unlabeled]))
    return {"set": name, "split": split, "labels": labels, "iterations": iterations,
            "accuracy": accuracy, "seconds": seconds, "objective": result.objective,
            "class_ratio": class_ratio, "positive_fraction": positive_fraction,
            "termination": result.termination.value, "clusters": result.history[-1].n_clusters
            if result.history else 0, "message": result.message}


def bench_s3vm(sets=DEFAULT_SETS, labels=(10, 100), splits=range(12), iterations=(1, 5), *,
               Ml=5.0, Mu=1.0, r0=0.01, solver=None, time_limit=None, output=None, raw=None,
               class_ratio="labeled"):
    """Run the protocol; print (and append to ``output``) a markdown table, rows to ``raw``."""
    lines = [f"Environment: {environment()}, solver {solver or 'default (gurobi, scip fallback)'}",
             f"Protocol: M_l={Ml:g}, M_u={Mu:g}, r0={r0:g}, splits {list(splits)}, time limit per "
             f"solve {time_limit} s, balance constraint's class ratio: {class_ratio}", "",
             "| set | l | AIDk | accuracy % (sd) | paper AID1 % | diff (pp) | mean s / split | max s | "
             "clusters (mean) | terminations |", "|" + "---|" * 10]
    print("\n".join(lines), flush=True)
    records = []
    for name in sets:
        for l in labels:
            for k in iterations:
                rows = [run_split(name, s, l, k, Ml=Ml, Mu=Mu, r0=r0, solver=solver,
                                  time_limit=time_limit, class_ratio=class_ratio) for s in splits]
                records.extend(rows)
                acc = np.array([r["accuracy"] for r in rows])
                secs = np.array([r["seconds"] for r in rows])
                paper = PAPER_AID1.get(l, {}).get(name)
                diff = "" if paper is None or k != 1 else f"{np.nanmean(acc) - paper:+.1f}"
                terms = {}
                for r in rows:
                    terms[r["termination"]] = terms.get(r["termination"], 0) + 1
                line = (f"| {name} | {l} | AID{k} | {np.nanmean(acc):.1f} ({np.nanstd(acc):.1f}) | "
                        f"{paper if paper is not None and k == 1 else ''} | {diff} | "
                        f"{secs.mean():.2f} | {secs.max():.2f} | "
                        f"{np.mean([r['clusters'] for r in rows]):.0f} | "
                        + ", ".join(f"{t} {c}" for t, c in sorted(terms.items())) + " |")
                lines.append(line)
                print(line, flush=True)
    if output:
        with open(output, "a") as fh:
            fh.write("\n".join(lines) + "\n\n")
    if raw:
        with open(raw, "w") as fh:
            json.dump(records, fh, indent=1, default=str)
    return records
