"""Issue 18: a document's versions are ordered by their dates, never by ingest order."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from auditor.errors import InputError
from auditor.retrieval import EvidenceIndex, ingest, load_documents, make_document


def _fake_encoder(texts: list[str]) -> np.ndarray:
    """Deterministic unit vectors (these tests never rank by cosine)."""
    out = np.zeros((len(texts), 384), dtype=np.float32)
    for i, t in enumerate(texts):
        seed = int.from_bytes(hashlib.sha256(t.encode()).digest()[:4], "little")
        v = np.random.default_rng(seed).standard_normal(384).astype(np.float32)
        out[i] = v / np.linalg.norm(v)
    return out


def _ingest(docs, ix, **kw):  # type: ignore[no-untyped-def]
    return ingest(docs, ix, encoder=_fake_encoder, **kw)


def _day(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


OLD = make_document("fares", "A single ticket costs 2.40 euros.", published_at="2022-01-05")
NEW = make_document("fares", "A single ticket costs 2.90 euros.", published_at="2025-01-06")
MID = make_document("fares", "A single ticket costs 2.60 euros.", published_at="2023-07-01")


def _state(ix: Path) -> dict[str, tuple[bool, datetime | None]]:
    return {v.text[-10:]: (v.superseded, v.valid_to) for v in EvidenceIndex.open(ix).versions()}


def test_newer_first_in_one_input_keeps_the_newer_current(tmp_path: Path) -> None:
    result = _ingest([NEW, OLD], tmp_path / "ix")
    assert [v.text for v in result.superseded_versions] == [OLD.text]  # counted
    state = _state(tmp_path / "ix")
    assert state[NEW.text[-10:]] == (False, None)
    assert state[OLD.text[-10:]] == (True, _day("2025-01-06"))
    # and the as-of view agrees: at 2025-06 the 2.90 version is current
    idx = EvidenceIndex.open(tmp_path / "ix")
    hits = idx.search(["single ticket euros"], k=5, mode="lexical", as_of=_day("2025-06-01"))[0]
    assert {h.document.text: h.superseded for h in hits} == {NEW.text: False, OLD.text: True}


def test_older_version_ingested_later_is_inserted_into_the_history(tmp_path: Path) -> None:
    ix = tmp_path / "ix"
    _ingest([OLD], ix)
    _ingest([NEW], ix)
    result = _ingest([MID], ix)  # older than the current one, newer than the first
    assert [v.version for v in result.added_versions] == ["v3"]
    assert [v.text for v in result.superseded_versions] == [MID.text]
    assert [v.text for v in result.retimed_versions] == [OLD.text]  # valid_to followed
    state = _state(ix)
    assert state[NEW.text[-10:]] == (False, None)
    assert state[MID.text[-10:]] == (True, _day("2025-01-06"))
    assert state[OLD.text[-10:]] == (True, _day("2023-07-01"))
    versions = [v.text for v in EvidenceIndex.open(ix).versions()]
    assert versions == [OLD.text, MID.text, NEW.text]  # stored in date order
    # an older version ingested after the newest: the newest stays current
    ix2 = tmp_path / "ix2"
    _ingest([NEW], ix2)
    result = _ingest([OLD], ix2)
    assert [v.text for v in result.superseded_versions] == [OLD.text]
    assert _state(ix2)[NEW.text[-10:]] == (False, None)


def test_chunks_follow_their_versions_when_the_history_is_reordered(tmp_path: Path) -> None:
    ix = tmp_path / "ix"
    _ingest([NEW, make_document("other", "Trains run every ten minutes.")], ix)
    _ingest([OLD], ix)
    idx = EvidenceIndex.open(ix)
    for chunk in idx.chunks():
        doc = next(
            v for v in idx.versions() if (v.doc_id, v.version) == (chunk.doc_id, chunk.version)
        )
        assert chunk.text == doc.text[chunk.start : chunk.end] and chunk.digest == doc.digest


def test_explicit_valid_to_is_kept_when_a_version_is_inserted(tmp_path: Path) -> None:
    ix = tmp_path / "ix"
    first = make_document(
        "fares",
        "A single ticket costs 2.40 euros.",
        published_at="2022-01-05",
        valid_to="2022-12-31",
    )
    _ingest([first, NEW], ix)
    _ingest([MID], ix)
    assert _state(ix)[first.text[-10:]] == (True, _day("2022-12-31"))


def test_undated_version_of_a_dated_document_needs_an_order(tmp_path: Path) -> None:
    ix = tmp_path / "ix"
    undated = make_document("fares", "Ticket prices are on the website.")
    with pytest.raises(InputError, match=r"undated.*--undated-order"):
        _ingest([OLD, undated], ix)
    assert not (ix / "CURRENT").exists()  # nothing written
    _ingest([OLD], ix)
    with pytest.raises(InputError, match="undated"):
        _ingest([undated], ix)
    result = _ingest([undated], ix, undated_order="newest")
    assert [v.text for v in result.superseded_versions] == [OLD.text]
    ix2 = tmp_path / "ix2"
    _ingest([OLD], ix2)
    result = _ingest([undated], ix2, undated_order="oldest")
    assert [v.text for v in result.superseded_versions] == [undated.text]
    assert _state(ix2)[OLD.text[-10:]] == (False, None)
    # documents with no dates at all keep their ingest order (nothing else to go by)
    ix3 = tmp_path / "ix3"
    _ingest([make_document("u", "First words.")], ix3)
    result = _ingest([make_document("u", "Second words.")], ix3)
    assert [v.text for v in result.superseded_versions] == ["First words."]


def test_same_date_different_text_is_refused(tmp_path: Path) -> None:
    twin = make_document("fares", "A single ticket costs 9.99 euros.", published_at="2022-01-05")
    with pytest.raises(InputError, match="same date"):
        _ingest([OLD, twin], tmp_path / "ix")


@pytest.mark.slow  # the CLI embeds with MiniLM
def test_cli_summary_counts_superseded_in_one_file(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    docs = tmp_path / "d.jsonl"
    docs.write_text(
        "".join(
            json.dumps(r) + "\n"
            for r in [
                {"id": "fares", "text": NEW.text, "published_at": "2025-01-06"},
                {"id": "fares", "text": OLD.text, "published_at": "2022-01-05"},
            ]
        ),
        encoding="utf-8",
    )
    code, out, err = run_cli(
        ["ingest", str(docs), "--index", str(tmp_path / "ix"), "--db", str(tmp_path / "l.db")]
    )
    assert code == 0, err
    assert "2 versions added, 1 superseded" in out


# ---------------------------------------------------------------- file ids
def _tree(tmp_path: Path) -> Path:
    coll = tmp_path / "coll"
    for team, text in (
        ("teamA", "Team A meets on Mondays."),
        ("teamB", "Team B meets on Fridays."),
    ):
        (coll / team).mkdir(parents=True)
        (coll / team / "notes.md").write_text(text, encoding="utf-8")
    return coll


def test_same_name_in_two_folders_is_an_error_not_a_new_version(tmp_path: Path) -> None:
    coll, ix = _tree(tmp_path), tmp_path / "ix"
    _ingest(load_documents([coll / "teamA"]), ix)
    with pytest.raises(InputError, match="already belongs to another file"):
        _ingest(load_documents([coll / "teamB"]), ix)
    assert {v.doc_id for v in EvidenceIndex.open(ix).versions()} == {"notes.md"}
    # in one call as well
    with pytest.raises(InputError, match="also the id of"):
        load_documents([coll / "teamA", coll / "teamB"])
    # a declared root or a prefix makes the ids unique
    docs = load_documents([coll / "teamA", coll / "teamB"], root=coll)
    assert [d.doc_id for d in docs] == ["teamA/notes.md", "teamB/notes.md"]
    docs = load_documents([coll / "teamB"], id_prefix="teamB/")
    assert [d.doc_id for d in docs] == ["teamB/notes.md"]


def test_same_file_through_two_roots_is_not_stored_twice(tmp_path: Path) -> None:
    coll, ix = _tree(tmp_path), tmp_path / "ix"
    _ingest(load_documents([coll]), ix)  # ids teamA/notes.md, teamB/notes.md
    with pytest.raises(InputError, match=r"already stored as document 'teamA/notes\.md'"):
        _ingest(load_documents([coll / "teamA"]), ix)
    with pytest.raises(InputError, match="same file is given twice"):
        load_documents([coll, coll / "teamA"])
    # the same root again: unchanged; an edit: a new version of the same id
    assert len(_ingest(load_documents([coll]), ix).unchanged) == 2
    (coll / "teamA" / "notes.md").write_text("Team A meets on Tuesdays.", encoding="utf-8")
    result = _ingest(load_documents([coll / "teamA"], root=coll), ix)
    assert [(v.doc_id, v.version) for v in result.added_versions] == [("teamA/notes.md", "v2")]


def test_file_outside_the_root_is_an_error(tmp_path: Path) -> None:
    coll = _tree(tmp_path)
    with pytest.raises(InputError, match="not under the root"):
        load_documents([coll / "teamA"], root=coll / "teamB")


# ---------------------------------------------------------------- front matter
def test_front_matter_sets_fields_and_is_removed_from_the_text(tmp_path: Path) -> None:
    page = tmp_path / "fares.md"
    page.write_text(
        "\ufeff---\ntitle: Fares\npublished_at: 2025-01-06\nversion: 2025\n---\n"
        "# Fares\n\nA single ticket costs 2.90 euros.\n",
        encoding="utf-8",
    )
    (doc,) = load_documents([page])
    assert doc.text == "# Fares\n\nA single ticket costs 2.90 euros.\n"
    assert (doc.title, doc.version) == ("Fares", "2025")
    assert doc.published_at == _day("2025-01-06")
    assert "---" not in doc.text and "title:" not in doc.text


def test_front_matter_unknown_key_names_the_closest(tmp_path: Path) -> None:
    page = tmp_path / "p.md"
    page.write_text("---\npublised_at: 2025-01-06\n---\nText.\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"publised_at.*did you mean 'published_at'"):
        load_documents([page])
    page.write_text("---\n[not, a, mapping]\n---\nText.\n", encoding="utf-8")
    with pytest.raises(InputError, match="mapping"):
        load_documents([page])
    page.write_text("---\ntitle: [unclosed\n---\nText.\n", encoding="utf-8")
    with pytest.raises(InputError, match="YAML"):
        load_documents([page])
    # a thematic break later in the text is not front matter
    page.write_text("Intro.\n\n---\n\ntitle: kept\n", encoding="utf-8")
    assert load_documents([page])[0].text == "Intro.\n\n---\n\ntitle: kept\n"
