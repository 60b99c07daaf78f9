"""The entailment reader's pair scores stored with a run (``reader_score``, migration 0007)
and read back by a re-judge in a new process, on SQLite and PostgreSQL."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from alembic import command
from alembic.config import Config
from sqlalchemy import create_engine, inspect, text

from auditor.entailment.model import join_pair_key, pair_key, split_pair_key
from ledger import ReaderScoreRecord, open_ledger
from ledger.schema import HEAD_REVISION, migrations_dir
from tests._ledger_runs import Item, add_run, begin_audit, build_run
from tests.conftest import PG_URL, _pg_database

W1, W2 = "a" * 64, "b" * 64


def _score(weights: str, pair: int, *, quantized: bool = False) -> ReaderScoreRecord:
    e = pair / 7  # not a short binary fraction: the floats must come back exact
    return ReaderScoreRecord(weights, quantized, f"{pair:032x}", 320, e / 3, e / 11, 1 - e / 3)


def test_pair_keys_split_and_join() -> None:
    key = pair_key("The bridge opened in 1990.", "It opened in 1990.", 320)
    digest, max_length = split_pair_key(key)
    assert len(digest) == 32 and max_length == 320
    assert join_pair_key(digest, max_length) == key
    assert pair_key("The bridge opened in 1990.", "It opened in 1990.", 256) != key
    assert pair_key("ab", "c", 320) != pair_key("a", "bc", 320)  # length-prefixed texts
    with pytest.raises(ValueError, match="32 hex digits"):
        join_pair_key("not hex", 320)


def test_scores_are_stored_with_the_answers_and_read_back_per_weights(ledger_url: str) -> None:
    items = [Item("a1", "The bridge opened in 1990.", "supported")]
    run_id, roles, results = build_run("scores", items)
    scores = [_score(W1, i) for i in range(5)] + [_score(W2, 1), _score(W1, 1, quantized=True)]
    with open_ledger(ledger_url) as ledger:
        begin_audit(ledger, run_id, roles)
        first = replace(results[0], reader_scores=[*scores, scores[0]])  # a repeat: one row
        ledger.record_answers(run_id, [first])
        ledger.record_answer(run_id, first)  # written again (a resumed batch): nothing added
        assert ledger.count("reader_score") == 7
        got = ledger.reader_scores(run_id, weights_digest=W1, quantized=False)
        assert sorted(got, key=lambda r: r.pair_digest) == scores[:5]  # floats exact
        assert ledger.reader_scores(run_id, weights_digest=W2, quantized=False) == [scores[5]]
        assert ledger.reader_scores(run_id, weights_digest=W1, quantized=True) == [scores[6]]
        assert ledger.reader_scores(run_id, weights_digest="c" * 64, quantized=False) == []
        assert ledger.reader_scores("0" * 64, weights_digest=W1, quantized=False) == []


def test_a_failed_answer_write_stores_no_scores(sqlite_url: str) -> None:
    """The scores ride in the answers' transaction: a batch that fails leaves none."""
    from ledger import LedgerError

    items = [Item("a1", "The bridge opened in 1990.", "supported")]
    run_id, roles, results = build_run("fails", items)
    with open_ledger(sqlite_url) as ledger:
        begin_audit(ledger, run_id, roles)
        broken = replace(results[0], claims=[replace(results[0].claims[0], text=None)])
        with pytest.raises(LedgerError):
            ledger.record_answers(run_id, [replace(broken, reader_scores=[_score(W1, 1)])])
        assert ledger.count("reader_score") == 0 and ledger.count("answer") == 0


def test_a_ledger_at_revision_0006_migrates_and_keeps_its_runs(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with open_ledger(path) as ledger:
        run = add_run(ledger, "old", [Item("a1", "The bridge opened in 1990.", "supported")])
    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    engine = create_engine(f"sqlite:///{path}")
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.downgrade(config, "0006")
    with engine.connect() as conn:
        assert conn.execute(text("SELECT version_num FROM alembic_version")).scalar() == "0006"
        assert not inspect(conn).has_table("reader_score")
    engine.dispose()
    with open_ledger(path) as ledger:  # upgraded on opening
        assert ledger.count("reader_score") == 0
        assert [c.label for c in ledger.claim_results(run)] == ["supported"]
        with ledger.engine.connect() as conn:
            rev = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
        assert rev == HEAD_REVISION


# ------------------------------------------------------------------ with the real reader
@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def demo_run(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, str]]:
    """The demo audited into a fresh ledger (SQLite file, then PostgreSQL database):
    its location and run id."""
    from auditor.demo import run_demo

    work = tmp_path_factory.mktemp("reader-scores")
    if request.param == "sqlite":
        url = str(work / "demo.db")
        databases: Iterator[str] | None = None
    else:
        if not PG_URL:
            pytest.skip("AUDITOR_TEST_PG_URL is not set (no PostgreSQL server)")
        databases = _pg_database()
        url = next(databases)
    with open_ledger(url) as ledger:
        run_id = run_demo(ledger, work, n_boot=50).run.run_id
    yield url, run_id
    if databases is not None:
        next(databases, None)  # drops the database


def _changed_panel(tmp_path: Path, params: str) -> Path:
    from auditor.demo import sample_path

    toml = tmp_path / "changed.toml"
    default = sample_path("panel.toml").read_text(encoding="utf-8")
    toml.write_text(default + "[judges.params]\n" + params)  # the entailment member (last)
    return toml


@pytest.mark.slow  # the demo audit and the entailment reader
def test_the_run_stores_exactly_the_pairs_its_judging_asked_for(
    demo_run: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from auditor import bridging, reader_scores
    from auditor._auditor import Auditor
    from auditor.entailment.model import load_model
    from auditor.judges.catalog import build_judge

    url, run_id = demo_run
    model = load_model()
    digest = build_judge("entailment").reader_identity[0]  # fp32 or bf16, as resolved here
    with Auditor(db=url) as a:
        stored = a.ledger.reader_scores(run_id, weights_digest=digest, quantized=False)
        assert len(stored) > 0 and a.ledger.count("reader_score") == len(stored)
        judges = list(a.panel.members)
        reader_scores.take(judges)
        reader_scores.keep(judges)
        model.clear_scores()
        before = model.forward_pairs
        # the run's own panel, every vote cast again and every pair read afresh (the
        # stored scores withheld): the same pairs asked, the same probabilities
        monkeypatch.setattr(bridging, "preload_reader_scores", lambda *_: frozenset())
        bridging.replay(a.ledger, run_id, a.panel, a.stacker, reuse_votes=False)
        asked = {(r.pair_digest, r.max_length): r for r in reader_scores.take(judges)}
    assert model.forward_pairs - before == len(stored)
    assert set(asked) == {(r.pair_digest, r.max_length) for r in stored}
    for row in stored:
        again = asked[(row.pair_digest, row.max_length)]
        assert (again.weights_digest, again.quantized) == (row.weights_digest, row.quantized)
        got = (again.entailment, again.neutral, again.contradiction)
        assert got == pytest.approx((row.entailment, row.neutral, row.contradiction), abs=1e-6)


@pytest.mark.slow  # the demo audit and the entailment reader
def test_a_changed_entailment_judge_in_a_new_process_reads_no_pair_again(
    demo_run: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Other vote thresholds, the same weights: started afresh (empty reader cache, as in
    a new process), the re-judge reads no pair, and its votes are those of a fresh read."""
    from auditor import bridging
    from auditor._auditor import Auditor
    from auditor.entailment.model import load_model
    from auditor.judges.panel import load_panel
    from auditor.steps import ClaimAudit
    from auditor.types import Vote

    url, run_id = demo_run
    model = load_model()
    changed = _changed_panel(tmp_path, "contradict_at = 0.6\n")

    with Auditor(db=url) as a:
        model.clear_scores()
        before, asked = model.forward_pairs, model.requested_pairs
        reused = bridging.replay(a.ledger, run_id, load_panel(changed), a.stacker)
        assert model.forward_pairs == before  # not one pair read again
        assert model.requested_pairs == asked  # every pair known: the reader was not asked
        model.clear_scores()
        result = a.rejudge(run_id, panel=changed, n_boot=50)  # through the public API
        assert not result.reused and result.verdicts_written > 0
        assert model.forward_pairs == before

        # a fresh read of the same pairs (the stored scores and votes withheld)
        monkeypatch.setattr(bridging, "preload_reader_scores", lambda *_: frozenset())
        model.clear_scores()
        fresh = bridging.replay(a.ledger, run_id, load_panel(changed), a.stacker, reuse_votes=False)
        assert model.forward_pairs - before > 0

    # the entailment judge's votes are those of the fresh read (its probabilities to the
    # last bits a read in another batch can differ by), and so are the verdicts
    def reader_votes(audits: list[ClaimAudit]) -> list[Vote]:
        return [v for r in audits for v in (*r.votes, *r.stale_votes) if v.judge == "entailment"]

    got, want = reader_votes(reused), reader_votes(fresh)
    assert got and all(v.error is None for v in got)
    assert [(v.value, v.raw) for v in got] == [(v.value, v.raw) for v in want]
    for a, b in zip(got, want, strict=True):
        assert a.scores == pytest.approx(b.scores, abs=1e-6)
    verdicts = [(r.verdict, f.verdict) for r, f in zip(reused, fresh, strict=True)]
    assert all(v is not None and w is not None for v, w in verdicts)
    assert [v.label for v, _ in verdicts if v] == [w.label for _, w in verdicts if w]
    assert [v.p_hallucinated for v, _ in verdicts if v] == pytest.approx(
        [w.p_hallucinated for _, w in verdicts if w], abs=1e-6
    )


@pytest.mark.slow  # the demo audit and the entailment reader
def test_a_judge_asking_new_pairs_reads_only_those_and_stores_them(
    demo_run: tuple[str, str], tmp_path: Path
) -> None:
    """Thresholds that send more claim sentences to the window pass: only the pairs the
    run did not read reach the network, and the re-judge stores them with the run."""
    from auditor._auditor import Auditor
    from auditor.entailment.model import load_model
    from auditor.judges.catalog import build_judge

    url, run_id = demo_run
    model = load_model()
    changed = _changed_panel(tmp_path, "support_at = 0.9\nreject_below = 0.3\n")
    digest = build_judge("entailment").reader_identity[0]
    with Auditor(db=url) as a:

        def n_stored() -> int:
            return len(a.ledger.reader_scores(run_id, weights_digest=digest, quantized=False))

        stored = n_stored()
        model.clear_scores()
        before = model.forward_pairs
        a.rejudge(run_id, panel=changed, n_boot=50)
        read = model.forward_pairs - before
        after = n_stored()
        assert read > 0 and after == stored + read  # the new pairs, stored once each
        model.clear_scores()
        other = _changed_panel(
            tmp_path, "support_at = 0.9\nreject_below = 0.3\ncontradict_at = 0.7\n"
        )
        a.rejudge(run_id, panel=other, n_boot=50)  # asks the same pairs: all stored now
    assert model.forward_pairs - before == read


@pytest.mark.slow  # the demo audit and the entailment reader (fp32 and int8, two weights)
def test_other_weights_or_quantisation_read_again(
    demo_run: tuple[str, str], tmp_path: Path
) -> None:
    """Scores stored for one set of weights are never used for another: the same judge
    with other weights (another sha256), or with the same weights quantised, reads every
    pair itself."""
    from safetensors.torch import load_file, save_file

    from auditor._auditor import Auditor
    from auditor.bridging import replay
    from auditor.digest import sha256_bytes
    from auditor.entailment.model import WEIGHTS_DIR, WEIGHTS_FILE, load_model
    from auditor.judges.panel import load_panel

    url, run_id = demo_run
    if "://" in url:
        pytest.skip("the weights, not the database, are under test (SQLite run suffices)")
    other = tmp_path / "weights"
    shutil.copytree(WEIGHTS_DIR, other)
    state = load_file(str(other / WEIGHTS_FILE))
    name = next(k for k in sorted(state) if k.startswith("classifier") and k.endswith("bias"))
    state[name] = state[name] + 1e-3  # a slightly other model
    save_file(state, str(other / WEIGHTS_FILE))
    (other / "SHA256").write_text(sha256_bytes((other / WEIGHTS_FILE).read_bytes()) + "\n")

    with Auditor(db=url) as a:
        load_model().clear_scores()
        for params, model in (
            (f'weights = "{other}"\ncontradict_at = 0.6\n', load_model(other)),
            ("quantize = true\ncontradict_at = 0.6\n", load_model(quantize=True)),
        ):
            before = model.forward_pairs
            audits = replay(
                a.ledger, run_id, load_panel(_changed_panel(tmp_path, params)), a.stacker
            )
            assert model.forward_pairs - before > 0, params
            assert any(v.judge == "entailment" for r in audits for v in r.votes)
