"""The README starts with the two commands, and .ci/run runs the second one."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _readme_commands():
    text = (ROOT / "README.md").read_text()
    block = text.split("```bash\n", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip()]


def test_readme_starts_with_two_commands():
    commands = _readme_commands()
    assert commands == ["pip install . && aidopt demo", 'pip install -e ".[dev]" && python -m pytest -q']
    head = (ROOT / "README.md").read_text().split("```bash", 1)[0]
    assert head.strip() == "# aidopt"


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert _readme_commands()[1] in [line.strip() for line in ci]


def test_the_tour_says_scip_is_much_slower_beside_its_call():
    """The five-minute tour's solver="scip" took minutes where the default takes seconds: the
    README says so beside the call (in words, no measured number)."""
    import re

    from aidopt.api.lad import DEFAULT_SOLVER

    tour = (ROOT / "README.md").read_text().split("## Five-minute tour", 1)[1].split("\n## ", 1)[0]
    lines = tour.splitlines()
    at = next(i for i, line in enumerate(lines) if 'solve_lad(X, y, solver="scip")' in line)
    comment = " ".join(" ".join(line.split("#", 1)[1].split()) for line in lines[at:at + 2]
                       if "#" in line)
    assert "much slower" in comment and f"default {DEFAULT_SOLVER}" in comment, comment
    assert not re.search(r"\d+(\.\d+)? ?s\b", comment)
