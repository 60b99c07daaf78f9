"""No import cycle among the project's modules, counting imports inside functions and
under ``TYPE_CHECKING`` (a package's ``__init__`` re-exporting its own modules is not a
cycle)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("auditor", "ledger")


def _module_name(path: Path) -> tuple[str, bool]:
    parts = path.relative_to(ROOT).with_suffix("").parts
    package = path.name == "__init__.py"
    return ".".join(parts[:-1] if package else parts), package


def import_graph() -> dict[str, set[str]]:
    """Module -> the project modules it imports (anywhere in its body)."""
    imports: dict[str, set[str]] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            name, is_package = _module_name(path)
            found: set[str] = set()
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom):
                    module = node.module or ""
                    if node.level:
                        base = name.split(".")
                        base = base[: len(base) - node.level + (1 if is_package else 0)]
                        module = ".".join([*base, *([module] if module else [])])
                    found.add(module)
                    found.update(f"{module}.{alias.name}" for alias in node.names)
                elif isinstance(node, ast.Import):
                    found.update(alias.name for alias in node.names)
            imports[name] = found
    return {
        m: {d for d in deps if d in imports and d != m and not m.startswith(d + ".")}
        for m, deps in imports.items()
    }


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_checker_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycle() -> None:
    graph = import_graph()
    assert len(graph) > 100  # the walk found the project
    assert cycles(graph) == []
