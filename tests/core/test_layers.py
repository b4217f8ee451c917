"""The package's layers and their import direction, checked statically on the source tree.

Every module belongs to one layer (by its dotted name); a module may import only from the layers
listed for its own (:data:`ALLOWED`). Every ``import`` counts, a function-local one included: an
import hidden in a function is still an arrow. There is no import cycle among the package's
modules either. docs/design.md shows the same map.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: source folder -> the package it is installed as (pyproject.toml's package-dir)
SOURCES = {"aidopt": "aidopt", "decomposition": "aidopt.decomposition", "models": "aidopt.models",
           "instances": "aidopt.instances"}

#: layer -> dotted prefixes of its modules (the longest matching prefix decides)
LAYERS = {
    "top": ("aidopt",),  # the package itself: lazy names of the face, nothing imported at once
    "foundation": ("aidopt._lazy", "aidopt._version", "aidopt.log", "aidopt.results"),
    "solvers": ("aidopt.solvers",),
    "data": ("aidopt.data",),
    "numerics": ("aidopt.numerics",),
    "models": ("aidopt.models",),
    "engine": ("aidopt.decomposition",),
    "instances": ("aidopt.instances",),
    "testing": ("aidopt.testing",),
    "face": ("aidopt.api",),
    "cli": ("aidopt.cli",),
    "bench": ("aidopt.bench",),
}
_BOTTOM = {"foundation", "solvers", "data"}
#: what each layer may import (its own layer always)
ALLOWED = {
    "top": {"foundation", "face"},
    "foundation": set(),
    "solvers": {"foundation"},
    "data": {"foundation"},
    "numerics": {"foundation", "solvers", "data"},
    "models": {"foundation", "numerics"},  # numerics: the old names of the kernel evaluators
    "engine": _BOTTOM | {"numerics", "models"},
    "instances": _BOTTOM | {"numerics"},
    "testing": _BOTTOM | {"numerics", "models", "engine"},
    "face": _BOTTOM | {"numerics", "models", "engine"},
    "cli": _BOTTOM | {"numerics", "engine", "instances", "face", "top", "bench"},
    "bench": _BOTTOM | {"numerics", "models", "engine", "instances", "face", "top"},
}


def modules(root: Path = ROOT) -> dict[str, Path]:
    """Every module of the package under ``root``: dotted name -> file."""
    out = {}
    for folder, package in SOURCES.items():
        for path in (root / folder).rglob("*.py"):
            parts = path.relative_to(root / folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join((package, *parts))] = path
        for path in (root / folder).rglob("*.pyx"):
            parts = path.relative_to(root / folder).with_suffix("").parts
            out[".".join((package, *parts))] = path
    return out


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The package's modules that ``name`` imports (every import statement, at any depth)."""
    if path.suffix == ".pyx":
        return set()
    tree = ast.parse(path.read_text())
    is_package = path.name == "__init__.py"
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")
                base = base[: len(base) - node.level + (1 if is_package else 0)]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            targets = [f"{module}.{alias.name}" if f"{module}.{alias.name}" in known else module
                       for alias in node.names]
        else:
            continue
        out.update(t for t in targets if t in known and t != name)
    return out


def layer(name: str) -> str:
    best, found = -1, None
    for key, prefixes in LAYERS.items():
        for prefix in prefixes:
            if (name == prefix or name.startswith(prefix + ".")) and len(prefix) > best:
                best, found = len(prefix), key
    if found == "top" and name != "aidopt":
        return "unassigned"  # a new top-level module must be placed in a layer deliberately
    return found or "unassigned"


def graph(root: Path = ROOT) -> dict[str, set[str]]:
    mods = modules(root)
    return {name: imports(name, path, set(mods)) for name, path in mods.items()}


def violations(root: Path = ROOT) -> list[str]:
    """Every import against the layer rules, and every module in no layer."""
    out = []
    for name, targets in sorted(graph(root).items()):
        own = layer(name)
        if own == "unassigned":
            out.append(f"{name} is in no layer")
            continue
        for target in sorted(targets):
            other = layer(target)
            if other != own and other not in ALLOWED[own]:
                out.append(f"{name} ({own}) imports {target} ({other})")
    return out


def cycles(root: Path = ROOT) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    g = graph(root)
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in g[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def test_every_module_is_in_a_layer_and_imports_only_below_it():
    found = violations()
    assert not found, "imports against the layers:\n" + "\n".join(found)


def test_no_import_cycle():
    found = cycles()
    assert not found, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_the_checker_sees_imports(tmp_path):
    """The checks can fail: an engine module importing the face, a cycle, a module in no layer."""
    for folder in SOURCES:
        (tmp_path / folder).mkdir()
    (tmp_path / "aidopt" / "__init__.py").write_text("")
    (tmp_path / "aidopt" / "api").mkdir()
    (tmp_path / "aidopt" / "api" / "__init__.py").write_text("")
    (tmp_path / "aidopt" / "api" / "lad.py").write_text("from aidopt.decomposition import run\n")
    (tmp_path / "aidopt" / "stray.py").write_text("")
    (tmp_path / "decomposition" / "__init__.py").write_text("")
    (tmp_path / "decomposition" / "run.py").write_text(
        "def f():\n    from aidopt.api.lad import x\n")  # function-local: still an arrow
    found = violations(tmp_path)
    assert "aidopt.decomposition.run (engine) imports aidopt.api.lad (face)" in found
    assert "aidopt.stray is in no layer" in found
    assert cycles(tmp_path) == [["aidopt.api.lad", "aidopt.decomposition.run"]]


@pytest.mark.parametrize("name", ["aidopt.models.lad", "aidopt.numerics.fm", "aidopt.solvers.highs"])
def test_lower_layers_never_reach_the_engine_or_above(name):
    g = graph()
    seen, todo = set(), [name]
    while todo:  # everything the module reaches, transitively
        for target in g[todo.pop()]:
            if target not in seen:
                seen.add(target)
                todo.append(target)
    above = sorted(t for t in seen if layer(t) in ("engine", "face", "cli", "bench", "testing"))
    assert not above, f"{name} reaches {above}"
