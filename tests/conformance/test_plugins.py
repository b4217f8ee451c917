"""Every plug-in passes the contract check (:func:`aidopt.testing.contract.check_plugin`)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from aidopt.decomposition import AggregateOutputProblem, LADProblem, ModifiedSVMProblem, S3VMProblem, SVMProblem
from aidopt.decomposition.plugins.crammer_singer import CrammerSingerProblem
from aidopt.decomposition.plugins.facility import FacilityProblem
from aidopt.decomposition.plugins.facility_radius import FacilityRadiusProblem
from aidopt.decomposition.plugins.kernel_svm import KernelSVMProblem
from aidopt.instances import lad_instance, s3vm_instance, svm_instance

from aidopt import solvers
from aidopt.data.validate import as_classification_data, as_regression_data, as_semisupervised_data
from aidopt.results import Termination
from aidopt.testing.contract import check_plugin
from aidopt.testing.fake import FakeLocation, line_data
from tests.conformance.example import load_example


def _needs(name):
    avail = solvers.availability(name)
    return pytest.mark.skipif(avail not in ("full", "limited"),
                              reason=f"{name} not installed ({avail}): pip install 'aidopt[{name}]'")


def lad_data(seed):
    return as_regression_data(*lad_instance("A", n=150, m=3, seed=seed))


def svm_data(seed, n=150):
    return as_classification_data(*svm_instance(n, 3, seed))


def multiclass_data(seed, n=150, k=3):
    """k overlapping Gaussian classes for the Crammer-Singer SVM."""
    from aidopt.data.validate import as_multiclass_data

    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    X = rng.normal(size=(n, 3))
    X[np.arange(n), y % 3] += 1.5
    return as_multiclass_data(X, y)


def s3vm_data(seed):
    X, y, _ = s3vm_instance(n=40, m=2, n_labeled=6, seed=seed, separation=3.0)
    return as_semisupervised_data(X, y)


def aggout_data(seed, n=48):
    from aidopt.instances.aggout import make_collections

    from aidopt.data.validate import as_aggregate_data

    X, _, truth = s3vm_instance(n=n, m=2, n_labeled=2, seed=seed, separation=3.0)
    y = (truth > 0).astype(int)
    collections = make_collections(y, 6, 40, seed)
    return as_aggregate_data(X, collections, np.bincount(collections, weights=y))


def facility_data(seed, kind="p-median"):
    from tests.facility._helpers import data_of, small_instance

    return data_of(small_instance(seed=40 + seed, kind=kind, p=3, n=30, s=15))


def example_data(seed):
    return load_example().random_customers(300, 2, seed)


# factory, data(seed), solver, convex, config, the certificate method of the AID run
CASES = [
    pytest.param(LADProblem, lad_data, "highs", True, {}, "solver_duals", id="lad-highs"),
    pytest.param(LADProblem, lad_data, "fn", True, {}, "solver_duals", id="lad-fn"),
    pytest.param(LADProblem, lad_data, "scip", True, {}, "dual_lp", id="lad-scip-no-duals",
                 marks=_needs("scip")),
    pytest.param(lambda: SVMProblem(C=0.5, norm="l2"), svm_data, "clarabel", True, {}, "solver_duals",
                 id="svm-l2-clarabel"),
    pytest.param(lambda: SVMProblem(C=0.5, norm="l2"), svm_data, "fm", True, {}, "solver_duals",
                 id="svm-l2-fm"),
    pytest.param(lambda: SVMProblem(C=0.5, norm="l2"), svm_data, "dcd", True, {}, "solver_duals",
                 id="svm-l2-dcd"),
    pytest.param(lambda: SVMProblem(C=0.5, norm="l1"), svm_data, "highs", True, {}, "solver_duals",
                 id="svm-l1-highs"),
    pytest.param(lambda: SVMProblem(C=0.5, norm="linf"), svm_data, "highs", True, {}, "solver_duals",
                 id="svm-linf-highs"),
    pytest.param(lambda: SVMProblem(C=0.5, norm="none"), svm_data, "highs", True, {}, "solver_duals",
                 id="svm-none-highs"),
    pytest.param(lambda: ModifiedSVMProblem(C=0.5), svm_data, "sor", True, {}, "solver_duals",
                 id="svm-l2-regularized-bias-sor"),
    pytest.param(lambda: ModifiedSVMProblem(C=0.5), svm_data, "clarabel", True, {}, "solver_duals",
                 id="svm-l2-regularized-bias-clarabel"),
    pytest.param(lambda: ModifiedSVMProblem(C=0.5), svm_data, "fm", True, {}, "solver_duals",
                 id="svm-l2-regularized-bias-fm"),
    pytest.param(lambda: CrammerSingerProblem(C=0.5, norm="l2"), multiclass_data, "clarabel", True,
                 {}, "solver_duals", id="crammer-singer-l2-clarabel"),
    pytest.param(lambda: CrammerSingerProblem(C=0.5, norm="l1"), multiclass_data, "highs", True,
                 {}, "solver_duals", id="crammer-singer-l1-highs"),
    pytest.param(lambda: KernelSVMProblem(C=1.0, kernel="rbf"), lambda s: svm_data(s, 100), "clarabel",
                 True, {"r0": 0.05}, "solver_duals", id="kernel-rbf-clarabel"),
    pytest.param(lambda: S3VMProblem(norm="l1"), s3vm_data, "highs", False, {"r0": 0.1}, "prop5",
                 id="s3vm-l1-highs"),
    pytest.param(lambda: S3VMProblem(norm="l2"), s3vm_data, "scip", False, {"r0": 0.1}, "prop5",
                 id="s3vm-l2-scip", marks=_needs("scip")),
    pytest.param(lambda: S3VMProblem(norm="l2"), s3vm_data, "gurobi", False, {"r0": 0.1}, "prop5",
                 id="s3vm-l2-gurobi", marks=_needs("gurobi")),
    pytest.param(lambda: AggregateOutputProblem(C=1.0, D=10.0, norm="l1"), aggout_data, "highs",
                 False, {}, "cluster_condition", id="aggout-l1-highs"),
    pytest.param(lambda: AggregateOutputProblem(C=1.0, D=10.0, norm="l2"),
                 lambda s: aggout_data(s, 24), "scip",
                 False, {}, "cluster_condition", id="aggout-l2-scip", marks=_needs("scip")),
    pytest.param(lambda: FacilityProblem(), facility_data, "highs", True, {"r0": 0.25}, "mip_bound",
                 id="facility-sites-highs"),
    pytest.param(lambda: FacilityRadiusProblem(lp_rounds=0), facility_data, "highs", True, {},
                 "mip_bound", id="facility-radius-highs"),
    pytest.param(lambda: FacilityRadiusProblem(lp_rounds=0), lambda s: facility_data(s, "ufl"),
                 "scip", True, {}, "mip_bound", id="facility-radius-ufl-scip", marks=_needs("scip")),
    pytest.param(FakeLocation, lambda s: line_data(120, s), "highs", True, {}, "solver_duals",
                 id="fake-location-highs"),
    pytest.param(lambda: load_example().L1LocationProblem(), example_data, "highs", True, {},
                 "solver_duals", id="example-l1-location-highs"),
]


@pytest.mark.parametrize(("factory", "make_data", "solver", "convex", "config", "method"), CASES)
def test_plugin_conforms(factory, make_data, solver, convex, config, method):
    report = check_plugin(factory, make_data(0), solver, other_data=make_data(1), convex=convex,
                          config=config)
    aid, direct = report.aid, report.direct
    assert len(aid.history) >= 2, aid.summary()  # the data exercise at least one split
    assert aid.certificate is not None and aid.certificate.method == method
    if convex:
        assert aid.termination is Termination.CERTIFIED_OPTIMAL
        assert direct.certificate.method == method
    else:  # MIPs: a cluster condition under AID, the MIP solver's own bound for the direct solve
        assert aid.termination in (Termination.PROP5_OPTIMAL, Termination.PROP5_NOT_BEST,
                                   Termination.CLUSTER_OPTIMAL)
        assert not aid.certified and aid.lower_bound == -math.inf
        assert direct.termination is Termination.CERTIFIED_OPTIMAL
        assert direct.certificate.method == "mip_bound"


def test_benders_plugin_conforms():
    """The branch and cut on the contract: its partition is the trivial one, so AID and the
    direct solve are the same single iterate (the separation inside the tree replaces the
    outer loop); everything else the suite checks holds as for the other plug-ins."""
    from aidopt.decomposition.plugins.facility_benders import FacilityBendersProblem

    for make_data in (facility_data, lambda s: facility_data(s, "ufl")):
        report = check_plugin(FacilityBendersProblem, make_data(0), "benders",
                              other_data=make_data(1), convex=True, config={})
        for run in (report.aid, report.direct):
            assert run.termination is Termination.CERTIFIED_OPTIMAL, run.summary()
            assert run.certificate.method == "mip_bound"
            assert len(run.history) == 1
        assert report.aid.objective == pytest.approx(report.direct.objective)
