"""Issue 18: every command on every file of the bad-input corpus (``tests/data/bad/``).

Each run ends either in a clean error (exit 2, ``error: ...`` on stderr, one line, or
one line per bad line of the file below it; no traceback) with the ledger and the index
unchanged byte for byte, or in a correct result. ``tests/data/bad/EXPECT.json`` says
which, per file and command.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from conftest import RunCli

pytestmark = pytest.mark.slow  # ingest and audit embed with MiniLM

BAD = Path(__file__).parent / "data" / "bad"
EXPECT: dict[str, dict[str, str]] = json.loads((BAD / "EXPECT.json").read_text("utf-8"))
COMMANDS = ("ingest", "claims", "search", "review-import", "audit")
CASES = [(name, command) for name in sorted(EXPECT) for command in COMMANDS]
BASE_DOCS = [
    {
        "id": "museum",
        "text": "The museum opens at nine and closes at five.",
        "published_at": "2024-01-01",
    },
    {"id": "fares", "text": "A single ticket costs 2 euros.", "published_at": "2023-01-01"},
]


def _snapshot(*roots: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for root in roots:
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for p in files:
            if p.name != ".lock":
                out[str(p.relative_to(root.parent))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """An index and a ledger holding two documents and one audit run."""
    from auditor.cli import main

    root = tmp_path_factory.mktemp("bad-base")
    docs = root / "docs.jsonl"
    docs.write_text("".join(json.dumps(d) + "\n" for d in BASE_DOCS), encoding="utf-8")
    answers = root / "answers.jsonl"
    answers.write_text(
        json.dumps({"id": "base", "question": "When?", "answer": "The museum opens at nine."})
        + "\n",
        encoding="utf-8",
    )
    for argv in (
        ["ingest", str(docs)],
        ["audit", str(answers), "--as-of", "2025-01-01", "--quiet"],
    ):
        with pytest.raises(SystemExit) as done:
            main([*argv, "--index", str(root / "ix"), "--db", str(root / "ledger.db")])
        assert done.value.code in (0, None)
    from ledger import open_ledger

    with open_ledger(root / "ledger.db", create=False) as ledger:
        run_id = ledger.list_runs()[0].run_id
    return root / "ix", root / "ledger.db", run_id


def _argv(command: str, path: Path, ix: Path, db: Path, run_id: str) -> list[str]:
    where = ["--index", str(ix), "--db", str(db)]
    return {
        "ingest": ["ingest", str(path), *where],
        "claims": ["claims", str(path)],
        "search": ["search", "--queries", str(path), "--index", str(ix)],
        "review-import": ["review", "import", str(path), "--run", run_id, "--db", str(db)],
        "audit": ["audit", str(path), *where, "--as-of", "2025-01-01", "--quiet"],
    }[command]


@pytest.mark.parametrize("name, command", CASES)
def test_every_command_on_every_bad_file(
    name: str, command: str, base: tuple[Path, Path, str], tmp_path: Path, run_cli: RunCli
) -> None:
    ix0, db0, run_id = base
    ix, db = tmp_path / "ix", tmp_path / "ledger.db"
    shutil.copytree(ix0, ix)
    shutil.copy2(db0, db)
    path = tmp_path / name
    shutil.copy2(BAD / name, path)
    before = _snapshot(ix, db)
    code, out, err = run_cli(_argv(command, path, ix, db, run_id))
    expected = EXPECT[name].get(command, EXPECT[name].get("*", "error"))
    assert "Traceback" not in err
    if expected == "ok":
        assert code == 0, err
        return
    assert code == 2, (code, out, err)
    # one error: one line; a file with several bad lines: the first line says how many,
    # each bad line follows on a line of its own, indented (auditor.jsonl.InputErrors)
    lines = err.strip().splitlines()
    assert lines[0].startswith("error: "), err
    assert all(line.startswith("  ") for line in lines[1:]), err
    if len(lines) > 1:
        assert " bad lines" in lines[0], err
    if not expected.startswith("error"):
        raise AssertionError(f"bad expectation {expected!r}")
    _, _, needle = expected.partition(":")
    assert needle in err, err
    assert _snapshot(ix, db) == before, "an error changed the ledger or the index"
