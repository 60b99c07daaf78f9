"""Issue 18: a full disk is a clean one-line error (exit 2) and nothing is half-written.

The real test needs a small tmpfs: ``AUDITOR_TEST_TMPFS`` names one (``.ci/run`` mounts
it), else the test mounts one itself when it runs as root, else it skips. The simulated
tests (an ``ENOSPC`` raised at the OS boundary) always run.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import RunCli


def _snapshot(*roots: Path) -> dict[str, str]:
    """sha256 of every file under ``roots`` (byte-for-byte comparison)."""
    out: dict[str, str] = {}
    for root in roots:
        paths = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for p in paths:
            out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


@pytest.fixture
def tiny_fs(tmp_path: Path) -> Iterator[Path]:
    """A folder on a small tmpfs, emptied afterwards."""
    given = os.environ.get("AUDITOR_TEST_TMPFS")
    mounted: Path | None = None
    if given:
        root = Path(given) / uuid.uuid4().hex
        root.mkdir()
    else:
        if os.geteuid() != 0:
            pytest.skip("needs AUDITOR_TEST_TMPFS or root to mount a small tmpfs")
        mounted = tmp_path / "tmpfs"
        mounted.mkdir()
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mounted)],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs: {done.stderr.strip()}")
        root = mounted
    try:
        yield root
    finally:
        for p in sorted(root.rglob("*"), reverse=True):
            p.rmdir() if p.is_dir() else p.unlink()
        if mounted is not None:
            subprocess.run(["umount", "-l", str(mounted)], check=False)


def _fill(root: Path, leave_bytes: int) -> None:
    """Fill the file system of ``root`` until about ``leave_bytes`` are free."""
    st = os.statvfs(root)
    free = st.f_bavail * st.f_frsize
    with open(root / "filler", "wb") as fh:
        fh.write(b"\0" * max(0, free - leave_bytes))


def _docs(path: Path, n: int, prefix: str) -> Path:
    path.write_text(
        "".join(
            json.dumps(
                {
                    "id": f"{prefix}{i}",
                    "published_at": "2024-01-01",
                    "text": f"Document {prefix}{i} says that line {i} has {i + 3} stations. " * 30,
                }
            )
            + "\n"
            for i in range(n)
        ),
        encoding="utf-8",
    )
    return path


def _clean_error(code: int, err: str) -> None:
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err and "no space left" in err


@pytest.mark.slow  # the CLI embeds with MiniLM
def test_ingest_on_a_full_disk_is_clean_and_changes_nothing(
    tiny_fs: Path, tmp_path: Path, run_cli: RunCli
) -> None:
    # the index on the full disk
    ix, db = tiny_fs / "ix", tmp_path / "ledger.db"
    code, _, err = run_cli(
        ["ingest", str(_docs(tmp_path / "a.jsonl", 3, "a")), "--index", str(ix), "--db", str(db)]
    )
    assert code == 0, err
    before = _snapshot(ix, db)
    _fill(tiny_fs, 8 * 1024)
    code, _, err = run_cli(
        ["ingest", str(_docs(tmp_path / "b.jsonl", 40, "b")), "--index", str(ix), "--db", str(db)]
    )
    _clean_error(code, err)
    (tiny_fs / "filler").unlink()
    assert _snapshot(ix, db) == before
    # the ledger on the full disk
    ix2, db2 = tmp_path / "ix2", tiny_fs / "ledger.db"
    code, _, err = run_cli(
        ["ingest", str(_docs(tmp_path / "a.jsonl", 3, "a")), "--index", str(ix2), "--db", str(db2)]
    )
    assert code == 0, err
    before = _snapshot(ix2, db2)
    _fill(tiny_fs, 4 * 1024)
    code, _, err = run_cli(
        [
            "ingest",
            str(_docs(tmp_path / "c.jsonl", 200, "c")),
            "--index",
            str(ix2),
            "--db",
            str(db2),
        ]
    )
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert "full" in err or "no space" in err
    (tiny_fs / "filler").unlink()
    assert _snapshot(ix2, db2) == before


def test_enospc_at_the_os_boundary_is_one_clean_line(
    tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    import auditor.retrieval as retrieval

    def full(*_a: object, **_k: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(tmp_path / "ix" / "x"))

    monkeypatch.setattr(retrieval, "load_documents", full)
    code, _, err = run_cli(
        [
            "ingest",
            str(tmp_path / "d.jsonl"),
            "--index",
            str(tmp_path / "ix"),
            "--db",
            str(tmp_path / "l.db"),
        ]
    )
    _clean_error(code, err)
    assert str(tmp_path / "ix" / "x") in err
    assert not (tmp_path / "l.db").exists()


def test_index_write_failure_leaves_the_live_generation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from test_versions_by_date import _fake_encoder

    from auditor.retrieval import ingest, make_document, store

    ix = tmp_path / "ix"
    ingest([make_document("a", "Alpha text.")], ix, encoder=_fake_encoder)
    before = _snapshot(ix)

    def full(*_a: object, **_k: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(store, "write_json", full)
    with pytest.raises(OSError):
        ingest([make_document("b", "Beta text.")], ix, encoder=_fake_encoder)
    assert _snapshot(ix) == before  # the temporary generation was removed


def test_other_os_errors_keep_their_traceback() -> None:
    from auditor.cli._common import os_error_message

    assert os_error_message(OSError(errno.ENOENT, "x")) is None  # a bug, not a full disk
    message = os_error_message(OSError(errno.ENOSPC, "x", "/data/f"))
    assert message is not None and message.startswith("/data/f: no space left on device")


def test_atomic_text_write_leaves_no_partial_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from auditor.cli import _common

    out = tmp_path / "report.md"
    out.write_text("old report\n", encoding="utf-8")
    real_write = os.write

    def short_write(fd: int, data: bytes) -> int:
        real_write(fd, data[: len(data) // 2])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(_common.os, "write", short_write)
    with pytest.raises(OSError):
        _common.write_text_atomic(out, "new report " * 1000)
    monkeypatch.undo()
    assert out.read_text(encoding="utf-8") == "old report\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.md"]
    _common.write_text_atomic(out, "new\n")
    assert out.read_text(encoding="utf-8") == "new\n"
