"""The text toolkit (``auditor/text/``): one public surface, documented, cheap to import,
and below the judges (it imports none)."""

from __future__ import annotations

import ast
import inspect
import subprocess
import sys
from pathlib import Path

import auditor.text as toolkit

FOLDER = Path(toolkit.__file__).parent


def _public_names(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return {n for n in names if not n.startswith("_")}


def test_the_package_exports_every_public_name_of_its_modules() -> None:
    modules = sorted(p for p in FOLDER.glob("*.py") if p.name != "__init__.py")
    public = set().union(*(_public_names(p) for p in modules))
    assert sorted(public) == sorted(toolkit.__all__)
    assert all(getattr(toolkit, name) is not None for name in toolkit.__all__)


def test_every_public_function_and_class_has_a_docstring() -> None:
    undocumented = [
        name
        for name in toolkit.__all__
        if (inspect.isfunction(obj := getattr(toolkit, name)) or inspect.isclass(obj))
        and not inspect.getdoc(obj)
    ]
    assert undocumented == []


def test_the_toolkit_imports_no_judge_and_no_label_step() -> None:
    """Only the word lists' loader of ``auditor.judges`` (which imports nothing of the
    project): the judges and the label step build on the toolkit, not the reverse."""
    for path in FOLDER.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                module = node.module
                if module == "auditor.judges":  # from auditor.judges import wordlists
                    module += "." + ".".join(alias.name for alias in node.names)
                assert not module.startswith("auditor.") or module.startswith(
                    ("auditor.text", "auditor.judges.wordlists")
                ), (path.name, module)
            elif isinstance(node, ast.Import):
                assert not any(a.name.startswith("auditor.") for a in node.names), path.name


def test_importing_the_toolkit_loads_no_model_library() -> None:
    code = "import sys, auditor.text; print(sorted({'sklearn', 'torch'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
