"""Static checks of the driver and the run framework: no problem names, no probing of plug-ins,
only declared hooks; and the contract check's list of abstract hooks matches the base class."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest
from aidopt.decomposition import AIDProblem, aid, run, sla

from aidopt.testing.contract import ABSTRACT_HOOKS, declared_names

DRIVER = [Path(aid.__file__), Path(run.__file__), Path(sla.__file__)]
PROBLEM_NAMES = ("lad", "svm", "s3vm", "kernel", "prop5", "facility", "aggout", "slaag",
                 "cluster_condition", "fsv")


@pytest.mark.parametrize("path", DRIVER, ids=lambda p: p.name)
def test_no_problem_name_in_the_driver(path):
    text = path.read_text().lower()
    found = {name: text.count(name) for name in PROBLEM_NAMES if name in text}
    assert not found, f"{path.name} names problems: {found}"


@pytest.mark.parametrize("path", DRIVER, ids=lambda p: p.name)
def test_no_probing_of_the_plugin(path):
    hits = re.findall(r"\b(?:getattr|hasattr)\(\s*(?:self\.)?problem\b", path.read_text())
    assert not hits, f"{path.name} probes the plug-in: {hits}"


def test_driver_uses_only_declared_names():
    used = set(re.findall(r"\bproblem\.(\w+)", Path(aid.__file__).read_text()))
    assert used, "the pattern found no hook call: the check is broken"
    assert used <= declared_names(), f"undeclared: {sorted(used - declared_names())}"


def test_abstract_hooks_are_the_ones_without_a_default():
    hooks = [n for n, v in vars(AIDProblem).items() if inspect.isfunction(v) and not n.startswith("_")]
    abstract = {n for n in hooks if "raise NotImplementedError" in inspect.getsource(getattr(AIDProblem, n))}
    assert abstract == set(ABSTRACT_HOOKS)
    # and the class docstring lists the same ones
    doc = AIDProblem.__doc__
    assert all(f":meth:`{n}`" in doc for n in ABSTRACT_HOOKS)


# --------------------------------------------------------------------------- documented names exist
REF = re.compile(r":(?:meth|func|class|attr|mod):`~?([\w.]+)`")
KNOWN_BROKEN: dict = {}  # (module, reference) -> why it does not resolve yet


def _resolve(module, name: str) -> bool:
    import importlib

    parts = name.lstrip(".").split(".")
    roots = [module, *[v for v in vars(module).values() if inspect.isclass(v)]]
    for start in range(len(parts)):  # absolute (aidopt.results.AIDResult) or relative (.protocol.X)
        for base in ("", "aidopt.decomposition."):
            try:
                obj = importlib.import_module(base + ".".join(parts[:start + 1]))
            except ImportError:
                continue
            if _walk(obj, parts[start + 1:]):
                return True
    return any(_walk(root, parts) for root in roots)


def _walk(obj, parts) -> bool:
    for part in parts:
        if not hasattr(obj, part):
            return False
        obj = getattr(obj, part)
    return True


def _references():
    from aidopt.decomposition import protocol

    out = []
    for module in (aid, run, protocol):
        name = Path(module.__file__).name
        for ref in sorted(set(REF.findall(inspect.getsource(module)))):
            reason = KNOWN_BROKEN.get((name, ref))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            out.append(pytest.param(module, ref, marks=marks, id=f"{name}:{ref}"))
    return out


def test_the_resolver_rejects_missing_names():
    assert _resolve(run, "Run.solve") and _resolve(aid, ".protocol.AIDProblem")
    assert not _resolve(run, "Run.no_such_method") and not _resolve(aid, "no_such_function")


@pytest.mark.parametrize(("module", "ref"), _references())
def test_documented_names_exist(module, ref):
    assert _resolve(module, ref), f"{Path(module.__file__).name} documents {ref}, which does not exist"
