"""``import aidopt`` and ``aidopt --help`` load no solver, Pyomo, numba, scikit-learn or dask (the
public names are imported on first use), and what exists does not depend on import order."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("pyomo", "numba", "sklearn", "dask", "highspy", "clarabel", "scipy", "pandas", "gurobipy",
         "pyscipopt", "networkx")


def _loaded(code: str) -> list[str]:
    probe = (f"{code}\nimport sys, json\n"
             f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_aidopt_loads_nothing_heavy():
    assert _loaded("import aidopt") == []


def test_cli_help_loads_nothing_heavy():
    code = ("import contextlib, io\nfrom aidopt.cli.main import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    try:\n        main(['--help'])\n    except SystemExit:\n        pass")
    assert _loaded(code) == []


def test_the_probe_sees_a_heavy_import():
    assert "pyomo" in _loaded("import aidopt\naidopt.solve_lad")


@pytest.mark.parametrize("name", ["solve_lad", "SVMClassifier", "solve", "solve_direct",
                                  "AIDResult", "SolverError", "RankWarning"])
def test_public_names_resolve(name):
    import aidopt

    assert getattr(aidopt, name) is not None and name in dir(aidopt)


def test_an_unknown_name_is_an_attribute_error():
    import aidopt

    with pytest.raises(AttributeError, match="no attribute 'solve_nothing'"):
        aidopt.solve_nothing  # noqa: B018


def test_native_methods_do_not_depend_on_import_order():
    """Every method of aidopt's own is known before any plug-in module is imported."""
    code = ("from aidopt.decomposition.run import BUILTIN_METHODS\n"
            "import sys\nassert 'aidopt.decomposition.plugins.kernel_svm' not in sys.modules\n"
            "print(sorted(BUILTIN_METHODS))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["['benders',", "'dcd',", "'fm',", "'fn',", "'libsvm',", "'smo',", "'sor']"]
