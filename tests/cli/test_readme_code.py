"""Every Python block of the README runs, as one session (later blocks use earlier names), with
the data sizes scaled down: the same calls, smaller ``n``."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: (pattern, replacement): only sizes change, never a call
SMALLER = [(r"n=200_000", "n=1_000"), (r"n=100_000", "n=1_000")]  # 1,000: every solve still certified


def readme_blocks() -> list[str]:
    text = (ROOT / "README.md").read_text()
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_the_readme_has_python_blocks():
    blocks = readme_blocks()
    assert len(blocks) >= 5
    assert any("solve_lad" in b for b in blocks) and any("solve_svm" in b for b in blocks)


@pytest.mark.slow
def test_every_readme_block_runs(tmp_path):
    code = "\n".join(readme_blocks())
    for pattern, repl in SMALLER:
        code = re.sub(pattern, repl, code)
    script = "import matplotlib\nmatplotlib.use('Agg')\n" + code
    path = tmp_path / "readme_session.py"
    path.write_text(textwrap.dedent(script))
    proc = subprocess.run([sys.executable, str(path)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (tmp_path / "lad.json").exists() and (tmp_path / "lad.png").exists()
    assert any((tmp_path / "models").glob("*.lp"))
