"""``examples/l1_location.py`` runs, and ``docs/plugins.md`` is in sync with it: every excerpt is
verbatim in the example, every ``run`` block executes, the printed iteration table is what the
example prints."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conformance.example import EXAMPLE, load_example

DOC = Path(__file__).resolve().parents[2] / "docs" / "plugins.md"
BLOCK = re.compile(r"<!-- (excerpt: (?P<path>\S+)|run|output) -->\n```[a-z]*\n(?P<body>.*?)```", re.S)


def blocks(kind: str) -> list[str]:
    found = [m for m in BLOCK.finditer(DOC.read_text()) if m.group(1).startswith(kind)]
    assert found, f"no {kind} block in {DOC.name}"
    return [m.group("body") for m in found]


def test_example_main_solves_and_certifies():
    aid, direct = load_example().main(n=600, seed=2, log=False)
    assert aid.termination == "certified_optimal" and direct.termination == "certified_optimal"
    assert aid.objective == pytest.approx(direct.objective, rel=1e-6)
    assert aid.aid and not direct.aid and len(aid.history) >= 2
    assert aid.solution["x"].shape == (2,)


@pytest.mark.parametrize("index", range(len(blocks("excerpt"))))
def test_doc_excerpts_are_verbatim_in_the_example(index):
    body = blocks("excerpt")[index]
    assert body in EXAMPLE.read_text(), f"docs/plugins.md excerpt {index} is not in the example:\n{body}"


def test_doc_run_blocks_execute(monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(EXAMPLE.parent))
    namespace: dict = {}
    for body in blocks("run"):
        exec(compile(body, str(DOC), "exec"), namespace)  # noqa: S102 - the documentation's code
    assert namespace["result"].certified and namespace["report"].aid.certified
    assert capsys.readouterr().out.count("\n") >= 2


def test_doc_output_is_what_the_example_prints(capsys):
    from aidopt.decomposition import RunConfig, solve
    from aidopt.decomposition.aid import HEADER

    module = load_example()
    shown = blocks("output")[0].splitlines()
    assert shown[0] == HEADER
    solve(module.L1LocationProblem(), module.random_customers(2000, 2, 0),
          RunConfig(solver="highs", tol=1e-6, seed=0, log=True))
    printed = capsys.readouterr().out.splitlines()
    printed = printed[printed.index(HEADER):]

    def stable(line: str) -> str:  # the clock and the solver version vary
        if re.match(r"\s+\d+\s", line):
            return line.rsplit(None, 1)[0]
        if line.startswith("time "):
            return "time"
        return re.sub(r"solver=(\w+) \S+", r"solver=\1", line)

    assert [stable(x) for x in printed[:len(shown)]] == [stable(x) for x in shown]


def test_doc_hook_table_matches_the_protocol():
    """Every hook in the guide's table exists on AIDProblem with the parameters shown."""
    import inspect

    from aidopt.decomposition import AIDProblem

    rows = [line for line in DOC.read_text().splitlines() if line.startswith("| `")]
    shown = re.findall(r"`(\w+)\(([^)`]*)\)`", "\n".join(row.split("|")[1] for row in rows))
    assert len(shown) >= 20
    declared = {n for n, v in vars(AIDProblem).items() if inspect.isfunction(v) and not n.startswith("_")}
    assert {name for name, _ in shown} == declared, "the table and AIDProblem list different hooks"
    for name, args in shown:
        params = [p for p in inspect.signature(getattr(AIDProblem, name)).parameters if p != "self"]
        written = [a.strip().lstrip("*").split("=")[0] for a in args.split(",")]
        assert [a for a in written if a] == params, f"{name}: the guide shows ({args}), the code {params}"


def test_the_guide_runs_as_a_user_runs_it(tmp_path):
    """The example and every ``run`` block of docs/plugins.md, in a fresh interpreter started in
    a folder outside the source tree that holds only a copy of the example: what it imports
    comes from the installed package and its public names."""
    import shutil
    import subprocess
    import sys

    shutil.copy(EXAMPLE, tmp_path / EXAMPLE.name)
    code = "\n".join(blocks("run"))
    env = {k: v for k, v in __import__("os").environ.items() if k != "PYTHONPATH"}
    for argv in ([sys.executable, "-c", code], [sys.executable, EXAMPLE.name]):
        out = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, env=env,
                             timeout=300)
        assert out.returncode == 0, out.stderr[-2000:]
    assert "certified_optimal" in out.stdout
    probe = subprocess.run([sys.executable, "-c", "import aidopt; print(aidopt.__file__)"],
                           cwd=tmp_path, capture_output=True, text=True, env=env, check=True)
    assert str(tmp_path) not in probe.stdout


def test_the_example_imports_only_public_names():
    import ast

    tree = ast.parse(EXAMPLE.read_text())
    modules = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    modules |= {a.name for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names}
    ours = {m for m in modules if m and m.startswith("aidopt")}
    assert ours <= {"aidopt", "aidopt.decomposition", "aidopt.solvers", "aidopt.testing"}, ours
