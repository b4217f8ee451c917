"""`pip install .` gives the same import paths as the editable install (mapped package dirs),
compiled modules included."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODULES = ["aidopt.models.lad", "aidopt.decomposition.aid", "aidopt.decomposition.plugins.lad",
           "aidopt.instances", "aidopt.solvers", "aidopt.cli",
           "aidopt.numerics._smo_pairs", "aidopt.numerics._dcd_pass",
           "aidopt.decomposition.plugins._kernel_loops"]  # the last three compiled
#: the builds compile the Cython modules unoptimized and without debug info (a build from the
#: sdist: 5 s of CPU instead of 15 s here): the tests check what the wheel holds and that it
#: imports, not how fast the compiled code runs
BUILD_ENV = {**os.environ, "CFLAGS": (os.environ.get("CFLAGS", "") + " -O0 -g0").strip()}
#: both builds write aidopt.egg-info in the source tree: under pytest-xdist they share a worker
same_worker = pytest.mark.xdist_group("source_tree_builds")


@pytest.mark.slow
@same_worker
def test_wheel_has_the_mapped_packages_and_imports_from_them(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(tmp_path / "dist"), str(ROOT)],
        capture_output=True, text=True, env=BUILD_ENV,
    )
    if proc.returncode != 0 and "No module named" in proc.stderr:
        pytest.skip(f"cannot build a wheel here: {proc.stderr.strip()[-200:]}")
    assert proc.returncode == 0, proc.stderr
    wheel = next((tmp_path / "dist").glob("aidopt-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for path in ["aidopt/models/lad.py", "aidopt/decomposition/aid.py", "aidopt/decomposition/run.py",
                 "aidopt/solvers/__init__.py", "aidopt/solvers/highs.py",
                 "aidopt/instances/__init__.py", "aidopt/instances/data/dermatology.csv"]:
        assert path in names, path
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target",
                    str(target), str(wheel)], check=True)
    code = ("import importlib, aidopt; "
            f"[importlib.import_module(m) for m in {MODULES!r}]; "
            "from aidopt.instances import dermatology; X, y = dermatology(); "
            "print(aidopt.__file__, X.shape)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"}, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert str(target) in out.stdout and "(358, 33)" in out.stdout


def test_editable_install_imports_the_same_modules():
    import importlib

    for name in MODULES:
        module = importlib.import_module(name)
        assert Path(module.__file__).resolve().is_relative_to(ROOT)


@pytest.mark.slow
@same_worker
def test_a_wheel_builds_from_the_sdist_with_the_compiled_modules(tmp_path):
    """The sdist carries the Cython sources (not the generated C) and builds a wheel with both
    compiled modules: setup.py cythonizes the .pyx files, so an sdist without them cannot be
    installed."""
    proc = subprocess.run(
        [sys.executable, "-m", "build", "--sdist", "--no-isolation", "-o", str(tmp_path / "sdist"),
         str(ROOT)], capture_output=True, text=True, cwd=tmp_path,
    )
    if proc.returncode != 0 and "No module named" in proc.stderr:
        pytest.skip(f"cannot build an sdist here: {proc.stderr.strip()[-200:]}")
    assert proc.returncode == 0, proc.stderr
    from aidopt._version import __version__

    sdist = next((tmp_path / "sdist").glob("aidopt-*.tar.gz"))
    assert sdist.name == f"aidopt-{__version__}.tar.gz"  # pyproject.toml reads aidopt/_version.py
    with tarfile.open(sdist) as tar:
        names = {name.split("/", 1)[1] for name in tar.getnames() if "/" in name}
    assert {"aidopt/numerics/_smo_pairs.pyx", "aidopt/numerics/_dcd_pass.pyx",
            "decomposition/plugins/_kernel_loops.pyx", "setup.py", "CHANGELOG.md"} <= names
    assert not {"aidopt/numerics/_smo_pairs.c", "aidopt/numerics/_dcd_pass.c",
                "decomposition/plugins/_kernel_loops.c"} & names
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(tmp_path / "dist"), str(sdist)], capture_output=True, text=True, env=BUILD_ENV,
    )
    assert proc.returncode == 0, proc.stderr
    wheel = next((tmp_path / "dist").glob("aidopt-*.whl"))
    built = zipfile.ZipFile(wheel).namelist()
    for stem in ("aidopt/numerics/_smo_pairs.", "aidopt/numerics/_dcd_pass.",
                 "aidopt/decomposition/plugins/_kernel_loops."):
        assert any(n.startswith(stem) and n.endswith((".so", ".pyd")) for n in built), stem
