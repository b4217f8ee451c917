"""The contract check fails on plug-ins that break the contract (so a pass means something)."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from aidopt.decomposition import AIDProblem, Partition, RunConfig, Split, solve

from aidopt.results import Termination
from aidopt.testing.contract import (
    Call,
    HookRecorder,
    _check_calls,
    check_declaration,
    check_history,
    check_plugin,
    check_result,
    same_result,
)
from aidopt.testing.fake import FakeLocation, line_data

DATA, OTHER = line_data(80, seed=0), line_data(80, seed=1)


class Remembers(FakeLocation):
    """Keeps the last solution on the object."""

    def lift(self, model, outcome, partition, aggregated, data):
        lifted = super().lift(model, outcome, partition, aggregated, data)
        self.last = lifted.solution["beta"]
        return lifted


class WarmStartsFromLastRun(FakeLocation):
    """Carries the first data set's size into later runs (through a mutable default)."""

    seen: list = []

    def default_r0(self, size, data):
        self.seen.append(size)
        return 0.1 if len(self.seen) < 3 else 0.5


class LyingBound(FakeLocation):
    """Claims a lower bound above the optimum."""

    def lower_bound(self, outcome, partition, data, lifted=None):
        return outcome.bound + 1e3


class Incomplete(AIDProblem):
    def default_r0(self, size, data):
        return 0.1


def test_state_left_on_the_plugin_is_caught():
    with pytest.raises(AssertionError, match="left state on the plug-in.*last"):
        check_plugin(Remembers, DATA, "highs", other_data=OTHER)


def test_state_carried_between_runs_is_caught():
    WarmStartsFromLastRun.seen = []
    with pytest.raises(AssertionError, match="differs"):
        check_plugin(WarmStartsFromLastRun, DATA, "highs", other_data=OTHER)


def test_a_bound_above_the_optimum_is_caught():
    with pytest.raises(AssertionError, match="above the optimum"):
        check_plugin(LyingBound, DATA, "highs")


def test_missing_abstract_hooks_are_caught():
    with pytest.raises(AssertionError, match="abstract hook.*initial_partition"):
        check_declaration(Incomplete())
    with pytest.raises(AssertionError, match="does not subclass"):
        check_declaration(object())


def test_the_proxy_passes_for_the_plugin_and_records():
    problem = FakeLocation()
    rec = HookRecorder(problem)
    assert isinstance(rec, AIDProblem) and isinstance(rec, FakeLocation)
    assert rec.default_r0(10, DATA) == problem.r0
    assert rec.rec_read == ["default_r0"] and rec.rec_calls[0].result == problem.r0
    rec.r0  # noqa: B018 - a read of an undeclared attribute
    rec.rec_calls.insert(0, Call("configure", (None,), {}, None))
    with pytest.raises(AssertionError, match=r"undeclared plug-in attribute\(s\) \['r0'\]"):
        _check_calls(rec, DATA.n)


def test_wrong_hook_results_are_caught():
    problem = FakeLocation()
    old = Partition.from_labels(np.arange(DATA.n) % 4)
    not_a_refinement = Partition.from_labels(np.arange(DATA.n) % 6)
    for result, message in [((None, 0), "not a Split"), (Split(not_a_refinement, 2), "refine"),
                            (Split(old, 1), "add clusters")]:
        rec = HookRecorder(problem)
        rec.rec_calls[:] = [Call("configure", (None,), {}, None), Call("split", (old,), {}, result)]
        with pytest.raises(AssertionError, match=message):
            _check_calls(rec, DATA.n)
    rec = HookRecorder(problem)
    rec.rec_calls[:] = [Call("configure", (None,), {}, None), Call("lift", (), {}, {"beta": 1.0})]
    with pytest.raises(AssertionError, match="not a Lifted"):
        _check_calls(rec, DATA.n)
    rec.rec_calls[:] = [Call("build", (), {}, None), Call("configure", (None,), {}, None)]
    with pytest.raises(AssertionError, match="build was called before configure"):
        _check_calls(rec, DATA.n)


def test_inconsistent_history_and_verdicts_are_caught():
    res = solve(FakeLocation(), DATA, RunConfig(solver="highs", log=False))
    check_history(res, DATA.n)
    check_result(res, "highs")
    assert len(res.history) >= 2
    broken = copy.deepcopy(res)
    broken.history[1].E_best = broken.history[0].E_best + 1.0
    with pytest.raises(AssertionError, match="E_best"):
        check_history(broken, DATA.n)
    broken = copy.deepcopy(res)
    broken.history[1].lower_bound = broken.history[0].lower_bound - 1.0
    broken.history[1].gap = float("nan")
    with pytest.raises(AssertionError, match="bound decreased"):
        check_history(broken, DATA.n)
    broken = copy.deepcopy(res)
    broken.certificate.certified = False
    with pytest.raises(AssertionError, match="without a passed certificate"):
        check_result(broken, "highs")
    with pytest.raises(AssertionError, match="ran only"):
        check_result(res, "clarabel")
    other = solve(FakeLocation(), OTHER, RunConfig(solver="highs", log=False))
    assert same_result(res, copy.deepcopy(res)) == []
    assert same_result(res, other)
    assert res.termination is Termination.CERTIFIED_OPTIMAL


def test_the_check_accepts_the_earlier_bound_signature_with_a_deprecation_warning():
    """A plug-in whose lower_bound takes (outcome, partition, data), the contract published
    before the bound hook received the lifted state, passes check_plugin with a
    DeprecationWarning that names the class and the change (it failed the check before); a hook
    that takes fewer arguments still fails."""
    from aidopt.testing import check_declaration
    from aidopt.testing.fake import FakeLocation

    class EarlierBound(FakeLocation):
        def lower_bound(self, outcome, partition, data):
            return outcome.bound

    class TooFew(FakeLocation):
        def lower_bound(self, outcome, partition):
            return None

    with pytest.warns(DeprecationWarning, match=r"EarlierBound\.lower_bound.*Add a `lifted=None` "
                                                r"parameter") as caught:
        report = check_plugin(EarlierBound, DATA, "highs", other_data=OTHER)
    assert len([w for w in caught if w.category is DeprecationWarning]) == 1
    assert report.aid.certified and report.direct.certified
    with pytest.raises(AssertionError, match="takes fewer arguments than the contract passes"):
        check_declaration(TooFew())
    check_declaration(FakeLocation())  # the current one passes


def test_an_evaluate_that_disagrees_with_its_certificate_is_caught():
    """check_plugin compares the E that evaluate reported with the certificate's primal
    objective (here 80 % of it) and names the two hooks."""
    from tests.conformance.wrong_plugins import UnderReports

    with pytest.raises(AssertionError, match="evaluate and certify disagree"):
        check_plugin(UnderReports, DATA, "highs")
