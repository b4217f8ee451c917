"""``solve_lad(..., write_models=DIR)``: every solved model is written as readable LP and MPS.

Each written file is read back with highspy and solved on its own; its optimum must agree with
what the run reported for that model.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from aidopt.instances import lad_instance

import aidopt

highspy = pytest.importorskip("highspy")


def _read_and_solve(path):
    """(status, objective, sense) of the model in ``path`` solved by a fresh HiGHS."""
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    status = h.readModel(str(path))
    assert status == highspy.HighsStatus.kOk, f"HiGHS could not read {path.name}: {status}"
    h.run()
    model_status = h.modelStatusToString(h.getModelStatus())
    lp = h.getLp()
    return model_status, float(h.getInfo().objective_function_value), lp.sense_, lp


def _files(directory):
    lp = sorted(directory.glob("*.lp"))
    mps = sorted(directory.glob("*.mps"))
    return lp, mps


@pytest.fixture(scope="module")
def instance():
    return lad_instance("A", n=1500, m=4, seed=3)


@pytest.fixture(scope="module")
def direct_run(instance, tmp_path_factory):
    X, y = instance
    out = tmp_path_factory.mktemp("direct")
    res = aidopt.solve_lad(X, y, aid=False, write_models=out, log=False)
    return res, out


@pytest.fixture(scope="module")
def aid_run(instance, tmp_path_factory):
    X, y = instance
    out = tmp_path_factory.mktemp("aid") / "nested" / "models"  # created on demand
    res = aidopt.solve_lad(X, y, aid=True, write_models=out, log=False)
    return res, out


# --------------------------------------------------------------------------- direct


def test_direct_writes_one_lp_and_one_mps(direct_run):
    res, out = direct_run
    assert res.certified
    lp, mps = _files(out)
    assert len(lp) == 1 and len(mps) == 1
    assert lp[0].stem == mps[0].stem
    assert lp[0].stat().st_size > 0 and mps[0].stat().st_size > 0


def test_direct_lp_has_readable_names(direct_run, instance):
    res, out = direct_run
    X, _ = instance
    text = _files(out)[0][0].read_text()
    assert "balance" in text
    assert re.search(r"\bv\(\d+\)", text)  # the dual variables v[k]
    assert re.search(r"^max", text, flags=re.MULTILINE)  # the dual form is a maximization
    # one balance row per column of X, one v per row
    assert len(set(re.findall(r"balance\((\d+)\)", text))) == X.shape[1]
    assert len(set(re.findall(r"\bv\((\d+)\)", text))) == X.shape[0]
    mps_text = _files(out)[1][0].read_text()
    assert "balance" in mps_text and "v(0)" in mps_text


@pytest.mark.parametrize("kind", ["lp", "mps"])
def test_direct_model_optimum_equals_objective(direct_run, instance, kind):
    res, out = direct_run
    X, _ = instance
    path = _files(out)[0 if kind == "lp" else 1][0]
    status, objective, sense, lp = _read_and_solve(path)
    assert status == "Optimal"
    assert sense == highspy.ObjSense.kMaximize
    assert (lp.num_row_, lp.num_col_) == (X.shape[1], X.shape[0])
    # LP duality: the maximum of the dual form is the LAD optimum
    assert objective == pytest.approx(res.objective, rel=1e-6)
    assert objective == pytest.approx(res.history[-1].F_t, rel=1e-6)


def test_direct_primal_form(instance, tmp_path):
    X, y = instance
    X, y = X[:300], y[:300]
    res = aidopt.solve_lad(X, y, aid=False, form="primal", write_models=tmp_path, log=False)
    assert res.certified
    lp, mps = _files(tmp_path)
    assert len(lp) == 1 and len(mps) == 1
    text = lp[0].read_text()
    assert "fit" in text and "beta" in text and "e_plus" in text
    assert re.search(r"^min", text, flags=re.MULTILINE)
    for path in (lp[0], mps[0]):
        status, objective, sense, model = _read_and_solve(path)
        assert status == "Optimal"
        assert sense == highspy.ObjSense.kMinimize
        assert model.num_row_ == X.shape[0]
        assert objective == pytest.approx(res.objective, rel=1e-6)


def test_no_files_without_write_models(instance, tmp_path, monkeypatch):
    X, y = instance
    monkeypatch.chdir(tmp_path)
    aidopt.solve_lad(X[:300], y[:300], aid=False, log=False)
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------- AID


def test_aid_writes_every_model(aid_run):
    res, out = aid_run
    assert res.certified
    assert res.termination == "certified_optimal"
    lp, mps = _files(out)
    assert [p.stem for p in lp] == [p.stem for p in mps]
    # at least one model per AID iteration (plus the initial sample fit)
    assert len(lp) >= len(res.history) >= 1
    # numbered in solve order
    numbers = [int(p.stem.split("_", 1)[0]) for p in lp]
    assert numbers == list(range(1, len(lp) + 1))
    assert res.config["write_models"] == str(out)


def test_aid_models_have_readable_names(aid_run):
    res, out = aid_run
    lp, _ = _files(out)
    for path in (lp[0], lp[-1]):
        text = path.read_text()
        assert "balance" in text
        assert re.search(r"\bv\(\d+\)", text)


def test_aid_last_model_optimum(aid_run):
    res, out = aid_run
    lp, mps = _files(out)
    last = res.history[-1]
    for path in (lp[-1], mps[-1]):
        status, objective, sense, model = _read_and_solve(path)
        assert status == "Optimal"
        assert sense == highspy.ObjSense.kMaximize
        # the last model is the last aggregated problem: |K_t| clusters as variables
        assert model.num_col_ == last.n_clusters
        assert objective == pytest.approx(last.F_t, rel=1e-6)
        # it is a lower bound on the LAD optimum, within the certified gap of it
        assert objective <= res.objective * (1 + 1e-9)
        assert objective == pytest.approx(res.objective, rel=max(2 * res.gap, 1e-6))


def test_aid_iteration_models_match_history(aid_run):
    """The k-th from last written model is the k-th from last aggregated problem."""
    res, out = aid_run
    lp, _ = _files(out)
    tail = lp[-len(res.history):]
    for path, rec in zip(tail, res.history, strict=True):
        status, objective, _, model = _read_and_solve(path)
        assert status == "Optimal"
        assert model.num_col_ == rec.n_clusters
        assert objective == pytest.approx(rec.F_t, rel=1e-6)


def test_aid_and_direct_agree(aid_run, direct_run):
    res_aid, _ = aid_run
    res_direct, _ = direct_run
    assert res_aid.objective == pytest.approx(res_direct.objective, rel=2e-6)


def test_write_models_into_existing_file_path_fails_cleanly(instance, tmp_path):
    X, y = instance
    blocker = tmp_path / "not_a_dir"
    blocker.write_text("x")
    with pytest.raises((OSError, ValueError)):
        aidopt.solve_lad(X[:200], y[:200], aid=False, write_models=blocker, log=False)


def test_written_model_matches_data(tmp_path):
    """The LP text holds the data: y as objective coefficients, X columns in the balance rows."""
    X = np.array([[1.0, 2.0], [1.0, -1.0], [1.0, 0.5], [1.0, 3.0], [1.0, -2.0]])
    y = np.array([0.25, -1.5, 2.0, 4.0, -3.0])
    res = aidopt.solve_lad(X, y, aid=False, write_models=tmp_path, log=False)
    lp, mps = _files(tmp_path)
    status, objective, _, model = _read_and_solve(mps[0])
    assert status == "Optimal"
    np.testing.assert_allclose(np.asarray(model.col_cost_), y)
    assert list(model.col_lower_) == [-1.0] * 5 and list(model.col_upper_) == [1.0] * 5
    assert objective == pytest.approx(res.objective, rel=1e-9)
    assert objective == pytest.approx(np.abs(y - X @ res.solution["beta"]).sum(), rel=1e-9)
