"""The version: one definition (``aidopt/_version.py``), printed by ``aidopt --version``, read by
pyproject.toml, and the top release of CHANGELOG.md."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import aidopt
from aidopt._version import __version__
from aidopt.cli.main import main

ROOT = Path(__file__).resolve().parents[2]


def test_aidopt_version_prints_the_package_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out == f"aidopt {__version__}\n"
    proc = subprocess.run([sys.executable, "-m", "aidopt.cli.main", "--version"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"aidopt {__version__}\n"


def test_the_version_has_one_definition():
    """pyproject.toml holds no version of its own: it reads aidopt/_version.py."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "aidopt._version.__version__"}
    assert aidopt.__version__ is __version__
    assert re.fullmatch(r"\d+\.\d+\.\d+", __version__)


def test_the_changelog_starts_with_this_release_and_ships_in_the_sdist():
    text = (ROOT / "CHANGELOG.md").read_text()
    releases = re.findall(r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})$", text, flags=re.M)
    assert releases and releases[0][0] == __version__, releases
    top = text.split("\n## [", 2)[1]  # the top release's section
    assert [line for line in top.splitlines() if line.startswith("### ")] == [
        "### Added", "### Changed", "### Deprecated", "### Fixed"]
    assert "include CHANGELOG.md" in (ROOT / "MANIFEST.in").read_text().splitlines()
