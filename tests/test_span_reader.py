"""Error spans from the reader (issue 13, item 6): the phrase whose deletion most raises
entailment, a bounded number of reader calls per claim, the combination with the lexical
localiser, and the audit's ``localize`` step that uses it for contradicted and
not_supported claims only."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from auditor.config import AuditConfig
from auditor.errors import ConfigError
from auditor.evidence import Evidence
from auditor.spans.reader import (
    DEFAULT_RULE,
    ClaimReading,
    ReaderLocalizer,
    ReaderRule,
    candidate_phrases,
    decide,
    localize_with_reader,
    read_claim,
)
from auditor.steps import ClaimAudit, localize_audits
from auditor.types import Answer, Chunk, Claim, DocumentVersion, Hit, Label, Verdict

ANSWER = "The Kestrel Bridge opened in 1932. It was designed by Maria Lopez and carries four lanes."
EVIDENCE = ["The Kestrel Bridge opened in 1932 and spans the Avon. It carries four lanes."]
SENTENCES = [(0, 33), (34, len(ANSWER))]


class Reader:
    """Entails a hypothesis unless it still holds one of ``wrong``; counts its calls."""

    def __init__(self, *wrong: str) -> None:
        self.wrong = wrong or ("Lopez",)
        self.calls = 0

    def __call__(self, premises: Sequence[str], hypotheses: Sequence[str]) -> np.ndarray:
        assert len(premises) == len(hypotheses)
        self.calls += len(hypotheses)
        return np.array([0.1 if any(w in h for w in self.wrong) else 0.9 for h in hypotheses])


def _text(answer: str, spans: Sequence[tuple[int, int]]) -> list[str]:
    return [answer[s:e] for s, e in spans]


def test_the_phrase_whose_deletion_restores_entailment_is_the_span() -> None:
    reader = Reader()
    first = read_claim(ANSWER, [SENTENCES[0]], EVIDENCE, reader, max_calls=6)
    assert first.entailment == 0.9 and first.phrases == ()  # entailed: no deletions read
    second = read_claim(ANSWER, [SENTENCES[1]], EVIDENCE, reader, max_calls=6)
    assert second.entailment == 0.1 and second.calls <= 6
    spans = decide(ANSWER, second, ReaderRule(add="none"))
    assert len(spans) == 1 and "Maria Lopez" in ANSWER[spans[0][0] : spans[0][1]]
    assert spans[0] != SENTENCES[1]


def test_a_wrong_number_is_marked_not_the_whole_sentence() -> None:
    answer = "The Harbour Bridge opened to traffic in 1985 after four years of work."
    evidence = ["The Harbour Bridge opened to traffic in 1990 after four years of work."]
    reader = Reader("1985")
    spans = localize_with_reader(answer, [(0, len(answer))], evidence, reader, max_calls=5)
    marked = _text(answer, spans)
    assert any("1985" in m for m in marked)
    assert sum(e - s for s, e in spans) < len(answer) // 2
    assert not any("four years" in m or "Harbour" in m for m in marked)
    assert reader.calls <= 5


def test_a_wrong_name_is_marked_not_the_whole_sentence() -> None:
    answer = "The museum was founded by Anna Berg in 1901."
    evidence = ["The museum was founded in 1901 by the painter Carl Holm."]
    reader = Reader("Anna Berg")
    spans = localize_with_reader(answer, [(0, len(answer))], evidence, reader, max_calls=6)
    marked = _text(answer, spans)
    assert any("Anna Berg" in m for m in marked) and not any("1901" in m for m in marked)
    assert sum(e - s for s, e in spans) < len(answer) // 2


@pytest.mark.parametrize("budget", [0, 1, 2, 3, 5])
def test_the_reader_is_called_at_most_the_budget_per_claim(budget: int) -> None:
    answer = (
        "In 1932, the Kestrel Bridge, which was designed by Maria Lopez for the city of "
        "Avonford, opened to traffic with four lanes, two footpaths and a railway."
    )
    reader = Reader()
    reading = read_claim(answer, [(0, len(answer))], EVIDENCE * 3, reader, max_calls=budget)
    assert reader.calls == reading.calls <= budget
    if budget >= 3:  # two windows at most, then deletions up to the budget
        assert reading.windows == 1 and len(reading.phrases) == budget - 1


def test_without_evidence_or_without_a_helpful_deletion_the_lexical_spans_stay() -> None:
    def never(premises: Sequence[str], hypotheses: Sequence[str]) -> np.ndarray:
        return np.full(len(hypotheses), 0.05)

    spans = localize_with_reader(ANSWER, SENTENCES[1:], EVIDENCE, never)
    assert _text(ANSWER, spans) == ["designed by Maria Lopez"]
    reader = Reader()
    reading = read_claim(ANSWER, SENTENCES[1:], [" "], reader)
    assert reader.calls == 0 and reading.calls == 0
    assert decide(ANSWER, reading) == (SENTENCES[1],)  # no evidence: the claim itself
    claim_rule = ReaderRule(fallback="claim")
    assert localize_with_reader(ANSWER, SENTENCES[1:], EVIDENCE, never, rule=claim_rule) == (
        SENTENCES[1],
    )


def test_a_claim_the_reader_finds_entailed_keeps_the_lexical_or_claim_span() -> None:
    reading = ClaimReading(spans=(SENTENCES[1],), entailment=0.95, windows=1, lexical=((41, 64),))
    assert decide(ANSWER, reading, ReaderRule(on_entailed="lexical")) == ((41, 64),)
    assert decide(ANSWER, reading, ReaderRule(on_entailed="claim")) == (SENTENCES[1],)


def test_a_claim_nothing_in_which_is_carried_is_marked_whole_below_claim_below() -> None:
    d = ANSWER.index("designed by Maria Lopez")
    name = ANSWER.index("Maria Lopez")
    reading = ClaimReading(
        spans=(SENTENCES[1],),
        entailment=0.01,
        windows=1,
        phrases=((d, d + 23),),
        gains=(0.02,),
        lexical=((name, name + 11),),
    )
    assert decide(ANSWER, reading, ReaderRule(min_gain=0.1)) == ((name, name + 11),)
    assert decide(ANSWER, reading, ReaderRule(min_gain=0.1, claim_below=0.05)) == (SENTENCES[1],)
    assert decide(ANSWER, reading, ReaderRule(min_gain=0.01, claim_below=0.05)) == ((d, d + 23),)
    widened = decide(ANSWER, reading, ReaderRule(min_gain=0.1, fallback="phrases"))
    assert _text(ANSWER, widened) == ["by Maria Lopez"]


def test_smaller_budgets_replay_from_one_reading() -> None:
    answer = "The bridge was designed by Maria Lopez, opened in 1932 and carries four lanes."
    reader = Reader()
    full = read_claim(answer, [(0, len(answer))], EVIDENCE, reader, max_calls=12, supported_at=2)
    for budget in range(2, 12):
        fresh = read_claim(answer, [(0, len(answer))], EVIDENCE, Reader(), max_calls=budget)
        n = budget - min(full.windows, budget)  # what bench/eval_localisation.py replays
        assert fresh.windows == min(full.windows, budget)
        assert fresh.phrases == full.phrases[:n]
        assert decide(answer, fresh) == decide(answer, full, max_phrases=n)


def test_rule_and_budget_are_validated() -> None:
    with pytest.raises(ConfigError, match="add"):
        ReaderRule(add="everything")
    with pytest.raises(ConfigError, match="min_gain"):
        ReaderRule(min_gain=2.0)
    with pytest.raises(ConfigError, match="max_calls"):
        read_claim(ANSWER, SENTENCES, EVIDENCE, Reader(), max_calls=-1)
    with pytest.raises(ConfigError, match="reader_calls"):
        AuditConfig(reader_calls=0)
    with pytest.raises(ConfigError, match="localizer"):
        AuditConfig(localizer="oracle")


def test_candidate_phrases_cover_names_numbers_and_phrases() -> None:
    start, end = SENTENCES[1]
    phrases = _text(ANSWER, candidate_phrases(ANSWER, start, end))
    assert "Maria Lopez" in phrases and "by Maria Lopez" in phrases
    assert all(p != ANSWER[start:end] for p in phrases)


def test_the_component_records_weights_budget_and_rule_and_rebuilds() -> None:
    loc = ReaderLocalizer(max_calls=5, rule=ReaderRule(min_gain=0.3), weights_sha256="abc")
    comp = loc.component()
    assert comp.kind == "localizer" and comp.config["max_calls"] == 5
    again = ReaderLocalizer.from_component(comp.config)
    assert again.max_calls == 5 and again.rule == ReaderRule(min_gain=0.3)
    other = ReaderLocalizer(max_calls=6, weights_sha256="abc").component()
    assert other.digest != comp.digest
    new_weights = ReaderLocalizer(max_calls=5, rule=ReaderRule(min_gain=0.3), weights_sha256="x")
    assert new_weights.component().digest != comp.digest
    with pytest.raises(ConfigError, match="recorded localizer"):
        ReaderLocalizer.from_component({"max_calls": 5})


def test_the_component_records_the_quantisation_and_old_records_read_fp32() -> None:
    int8 = ReaderLocalizer(weights_sha256="abc", quantize=True)
    fp32 = ReaderLocalizer(weights_sha256="abc")
    assert int8.component().config["quantize"] is True
    assert fp32.component().config["quantize"] is False
    assert int8.component().digest != fp32.component().digest
    assert ReaderLocalizer.from_component(fp32.component().config).quantize is False
    assert ReaderLocalizer.from_component(int8.component().config).quantize is True
    # a run recorded by version 1 (no "quantize" field) read with the fp32 reader
    version1 = {k: v for k, v in int8.component().config.items() if k != "quantize"}
    assert ReaderLocalizer.from_component(version1).quantize is False
    with pytest.raises(ConfigError, match="quantize"):
        ReaderLocalizer.from_component({**version1, "quantize": "yes"})


def test_the_audit_localizer_reads_with_the_panel_reader(tmp_path: Path) -> None:
    from auditor.demo import sample_path
    from auditor.graph.flow import default_localizer
    from auditor.judges.panel import load_panel

    default = sample_path("panel.toml").read_text(encoding="utf-8")
    for params, quantize in (("", False), ("quantize = true\n", True)):
        panel_file = tmp_path / f"panel{len(params)}.toml"
        panel_file.write_text(default + "[judges.params]\n" + params)  # the entailment member
        localizer = default_localizer(AuditConfig(), load_panel(panel_file))
        assert localizer.quantize is quantize


def test_a_recorded_configuration_without_a_localizer_is_lexical() -> None:
    old = AuditConfig().to_dict()
    del old["localizer"], old["reader_calls"]
    assert AuditConfig.from_dict(old).localizer == "lexical"
    reader = AuditConfig(localizer="reader").to_dict()
    assert AuditConfig.from_dict(reader).localizer == "reader"
    assert AuditConfig().localizer == "lexical" and ReaderRule() == DEFAULT_RULE


# -- the audit's localize step ------------------------------------------------------------


def _audit(answer: Answer, span: tuple[int, int], label: Label, evidence: str) -> ClaimAudit:
    doc = DocumentVersion(doc_id="d", version="1", text=evidence, digest="v1")
    chunk = Chunk(
        chunk_id="c",
        doc_id="d",
        version="1",
        digest="v1",
        start=0,
        end=len(evidence),
        text=evidence,
    )
    claim = Claim(
        id=f"{answer.id}:{span[0]}",
        answer_id=answer.id,
        text=answer.answer[span[0] : span[1]],
        spans=(span,),
        factual=True,
    )
    ev = Evidence(current=(Hit(chunk=chunk, document=doc, score=0.9, rank=0),))
    verdict = Verdict(claim_id=claim.id, label=label, p_hallucinated=None, reason="")
    return ClaimAudit(claim, ev, verdict=verdict)


def test_the_localize_step_reads_only_unsupported_claims_within_the_budget() -> None:
    text = (
        "The Harbour Bridge opened to traffic in 1985. It has four lanes. "
        "It was designed by Anna Berg. Its old deck was painted red."
    )
    evidence = (
        "The Harbour Bridge opened to traffic in 1990. It has four lanes and was designed "
        "by Carl Holm. Its deck is painted green since 2001."
    )
    answer = Answer(id="a", question="", answer=text)
    s = [(0, 45), (46, 64), (65, 93), (94, len(text))]
    audits = [
        _audit(answer, s[0], Label.CONTRADICTED, evidence),
        _audit(answer, s[1], Label.SUPPORTED, evidence),
        _audit(answer, s[2], Label.NOT_SUPPORTED, evidence),
        _audit(answer, s[3], Label.STALE, evidence),
    ]
    scorer = Reader("1985", "Anna Berg")
    localizer = ReaderLocalizer(max_calls=4, scorer=scorer, weights_sha256="test")
    out = localize_audits(audits, {"a": answer}, localizer)
    spans = [a.verdict.error_spans for a in out if a.verdict is not None]
    assert spans[1] == ()  # a supported claim gets no span and no reader call
    assert _text(text, spans[0]) == ["1985"]
    assert any("Anna Berg" in m for m in _text(text, spans[2]))
    assert all(s[2][0] <= a and b <= s[2][1] for a, b in spans[2]) and spans[2] != (s[2],)
    assert _text(text, spans[3]) == ["old", "red"]  # stale: lexical only
    assert scorer.calls == localizer.calls <= 2 * 4  # two claims read, four calls each
    lexical = localize_audits(audits, {"a": answer})
    assert [a.verdict.error_spans for a in lexical if a.verdict][1] == ()
    assert scorer.calls == localizer.calls  # no reader without a localiser


def test_a_lexical_configuration_refuses_a_localiser() -> None:
    from auditor.graph.flow import AuditComponents
    from auditor.judges.panel import Panel
    from auditor.stacking.model import Stacker

    with pytest.raises(ConfigError, match="lexical"):
        AuditComponents(
            extractor=None,  # type: ignore[arg-type]
            search=None,  # type: ignore[arg-type]
            panel=Panel("p", (), ""),
            stacker=Stacker(members=(), coef=(), intercept=0.0),
            config=AuditConfig(localizer="lexical"),
            localizer=ReaderLocalizer(weights_sha256="x", scorer=Reader()),
        )


def test_the_shipped_reader_marks_a_wrong_year_within_the_budget() -> None:
    """With the real weights (whatever they are): the year is marked, not the sentence."""
    answer = Answer(
        id="a", question="", answer="The Harbour Bridge opened to traffic in 1985 after a storm."
    )
    evidence = "The Harbour Bridge opened to traffic in 1990 after four years of work."
    localizer = ReaderLocalizer(max_calls=6)
    audit = _audit(answer, (0, len(answer.answer)), Label.CONTRADICTED, evidence)
    (out,) = localize_audits([audit], {"a": answer}, localizer)
    assert out.verdict is not None
    marked = _text(answer.answer, out.verdict.error_spans)
    assert any("1985" in m for m in marked), marked
    assert sum(e - s for s, e in out.verdict.error_spans) < len(answer.answer)
    assert 1 <= localizer.calls <= 6


def test_a_second_localisation_reads_no_pair_again() -> None:
    """The span reader goes through the loaded reader's score cache."""
    from auditor.entailment.model import load_model

    answer = Answer(id="a", question="", answer="The Tamsford Bridge opened in 1985 to traffic.")
    evidence = "The Tamsford Bridge opened to traffic in 1931 after four years of work."
    audit = _audit(answer, (0, len(answer.answer)), Label.CONTRADICTED, evidence)
    model = load_model()
    localize_audits([audit], {"a": answer}, ReaderLocalizer(max_calls=6))
    read = model.forward_pairs
    again = ReaderLocalizer(max_calls=6)
    (out,) = localize_audits([audit], {"a": answer}, again)
    assert again.calls >= 1 and model.forward_pairs == read
    assert out.verdict is not None and out.verdict.error_spans


def test_the_shipped_reader_reads_a_claim_longer_than_its_window() -> None:
    """A claim past the model's length is read up to MAX_HYPOTHESIS_TOKENS, not a crash."""
    text = "The bridge, " + "which was painted red and blue, " * 60 + "opened in 1985."
    answer = Answer(id="a", question="", answer=text)
    localizer = ReaderLocalizer(max_calls=3)
    audit = _audit(answer, (0, len(text)), Label.NOT_SUPPORTED, "The bridge opened in 1990.")
    (out,) = localize_audits([audit], {"a": answer}, localizer)
    assert out.verdict is not None and out.verdict.error_spans
    assert localizer.calls <= 3


# -- the audit path: recorded with the run, reproduced by a replay --------------------------


def _reader_audit(
    tmp_path: Path, localizer: ReaderLocalizer | None
) -> tuple[str, dict[str, list[list[int]]], Any]:
    """Audit two answers through the graph into a fresh ledger with ``localizer``;
    return the run id, the error spans per claim id, and the components."""
    from auditor.extract import build_extractor
    from auditor.graph.flow import AuditComponents
    from auditor.judges.panel import load_panel
    from auditor.runner import execute_audit
    from auditor.stacking.model import Stacker
    from auditor.types import Component, Context
    from ledger import open_ledger

    toml = tmp_path / "panel.toml"
    toml.write_text(
        'name = "reader-test"\n[[judges]]\nname = "content_overlap"\n'
        '[[judges]]\nname = "numeric_consistency"\n'
    )
    panel = load_panel(toml)
    stacker = Stacker(members=panel.member_names, coef=(2.0, 4.0), intercept=-3.0, fitted_on="test")
    evidence = "The Harbour Bridge opened to traffic in 1990 after four years of work."
    answers = [
        Answer(
            id=f"a{i}",
            question="When did the Harbour Bridge open?",
            answer=text,
            contexts=(Context(id="c", text=evidence),),
        )
        for i, text in enumerate(
            (
                "The Harbour Bridge opened to traffic in 1985 after four years of work.",
                "The Harbour Bridge opened to traffic in 1990. It cost 45 million dollars.",
            )
        )
    ]
    config = AuditConfig(localizer="reader" if localizer else "lexical")
    components = AuditComponents(
        extractor=build_extractor("rules"),
        search=lambda queries, k, when: [[] for _ in queries],
        panel=panel,
        stacker=stacker,
        config=config,
        localizer=localizer,
    )
    index = Component("index", "none", "1", "0" * 64, {})
    with open_ledger(f"sqlite:///{tmp_path / 'l.db'}") as ledger:
        summary = execute_audit(answers, components, ledger, index_component=index)
        spans = {
            c.claim_id: [list(s) for s in c.error_spans]
            for c in ledger.claim_results(summary.run_id)
        }
        info = ledger.get_run(summary.run_id)
    return summary.run_id, spans, (panel, stacker, info, tmp_path / "l.db")


@pytest.mark.parametrize(
    "rule",
    [DEFAULT_RULE, ReaderRule(supported_at=1.0, min_gain=1.0, claim_below=1.0)],
    ids=["default", "whole"],
)
def test_a_replay_reproduces_the_reader_spans_from_the_recorded_rule(
    tmp_path: Path, rule: ReaderRule
) -> None:
    from auditor.bridging import replay
    from ledger import open_ledger

    localizer = ReaderLocalizer(max_calls=4, rule=rule)
    run_id, spans, (panel, stacker, info, db) = _reader_audit(tmp_path, localizer)
    recorded = info.components["localizer"]
    assert recorded["digest"] == localizer.component().digest
    assert info.config["localizer"] == "reader" and info.config["reader_calls"] == 6
    marked = [s for ss in spans.values() for s in ss]
    assert marked, "the wrong year is labelled unsupported and localised"
    assert 0 < localizer.calls <= 4 * sum(1 for ss in spans.values() if ss)
    with open_ledger(f"sqlite:///{db}") as ledger:
        replayed = replay(ledger, run_id, panel, stacker)
    assert {
        a.claim.id: [list(s) for s in a.verdict.error_spans] for a in replayed if a.verdict
    } == (spans)
    if rule.claim_below == 1.0:  # the recorded rule, not the default, decided the spans
        claims = {a.claim.id: a.claim for a in replayed}
        assert all([list(s) for s in claims[c].spans] == ss for c, ss in spans.items() if ss)
