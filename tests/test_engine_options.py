"""``--engine``, ``--workers`` and ``--ray-address`` are checked before anything runs, and
a missing Ray says how to install it (no Ray cluster needed here)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from auditor.demo import sample_path
from auditor.engine import Engine
from auditor.errors import ConfigError


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--engine", "spark"], "engine: expected one of local, ray, got 'spark'"),
        (["--workers", "2"], "(--workers, --ray-address) need the ray engine (--engine ray)"),
        (["--ray-address", "auto"], "need the ray engine (--engine ray)"),
        (["--engine", "ray", "--workers", "0"], "workers: expected an integer >= 1, got 0"),
    ],
)
@pytest.mark.parametrize("command", ["audit", "ingest"])
def test_engine_options_are_checked(
    run_cli: Any, tmp_path: Path, command: str, argv: Sequence[str], message: str
) -> None:
    source = sample_path("answers.jsonl" if command == "audit" else "corpus.jsonl")
    db = tmp_path / "ledger.db"
    code, out, err = run_cli([command, str(source), "--db", str(db), *argv])
    assert code == 2 and out == ""
    assert message in err and "Traceback" not in err
    assert not db.exists()  # refused before anything was written


@pytest.mark.parametrize("command", ["audit", "ingest"])
def test_a_missing_ray_says_how_to_install_it(
    run_cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    source = sample_path("answers.jsonl" if command == "audit" else "corpus.jsonl")
    db = tmp_path / "ledger.db"
    code, out, err = run_cli([command, str(source), "--db", str(db), "--engine", "ray"])
    assert code == 2 and out == ""
    assert "pip install 'rag-auditor[ray]'" in err and "Traceback" not in err
    assert not db.exists()


def test_engine_values() -> None:
    assert Engine.of(None) == Engine() == Engine.of("local")
    assert Engine.of("ray").kind == "ray"
    with pytest.raises(ConfigError, match="max_restarts: expected an integer >= 0"):
        Engine("ray", max_restarts=-1)
    with pytest.raises(ConfigError, match="expected 'local', 'ray' or an Engine"):
        Engine.of(2)  # type: ignore[arg-type]
