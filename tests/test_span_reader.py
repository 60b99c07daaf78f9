"""Error spans from the reader (issue 13, item 6), with a scripted reader: the phrase
whose deletion most raises entailment, a bounded number of reader calls, entailed
sentences left unmarked, and the combination with the lexical localiser."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from auditor.spans.reader import candidate_phrases, localize_with_reader, reader_spans

ANSWER = "The Kestrel Bridge opened in 1932. It was designed by Maria Lopez and carries four lanes."
EVIDENCE = ["The Kestrel Bridge opened in 1932 and spans the Avon. It carries four lanes."]
SENTENCES = [(0, 33), (34, len(ANSWER))]


class Reader:
    """Entails a hypothesis unless it still names the invented designer."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, premises: Sequence[str], hypotheses: Sequence[str]) -> np.ndarray:
        assert len(premises) == len(hypotheses)
        self.calls += len(hypotheses)
        return np.array([0.1 if "Lopez" in h else 0.9 for h in hypotheses])


def test_the_phrase_whose_deletion_restores_entailment_is_the_span() -> None:
    reader = Reader()
    found = reader_spans(ANSWER, SENTENCES, EVIDENCE, scorer=reader, max_calls=6)
    (first, whole1, phrase1), (second, whole2, phrase2) = found
    assert second == SENTENCES[1]
    assert first == SENTENCES[0] and whole1 == 0.9 and phrase1 is None  # entailed
    assert whole2 == 0.1 and phrase2 is not None
    assert "Maria Lopez" in ANSWER[phrase2[0] : phrase2[1]]
    assert reader.calls <= 2 * 6  # bounded per sentence


def test_combined_spans_skip_entailed_sentences() -> None:
    spans = localize_with_reader(ANSWER, SENTENCES, EVIDENCE, scorer=Reader())
    marked = [ANSWER[s:e] for s, e in spans]
    assert marked and all(s >= SENTENCES[1][0] for s, _ in spans)
    assert any("Lopez" in m for m in marked)
    assert not any("1932" in m for m in marked)


def test_without_a_helpful_deletion_the_lexical_spans_stay() -> None:
    def never(premises: Sequence[str], hypotheses: Sequence[str]) -> np.ndarray:
        return np.full(len(hypotheses), 0.05)

    spans = localize_with_reader(ANSWER, SENTENCES[1:], EVIDENCE, scorer=never)
    assert [ANSWER[s:e] for s, e in spans] == ["designed by Maria Lopez"]
    # no evidence: the reader is not asked
    assert reader_spans(ANSWER, SENTENCES, [" "], scorer=never) == [
        (SENTENCES[0], 0.0, None),
        (SENTENCES[1], 0.0, None),
    ]


def test_candidate_phrases_cover_names_numbers_and_phrases() -> None:
    start, end = SENTENCES[1]
    phrases = [ANSWER[s:e] for s, e in candidate_phrases(ANSWER, start, end)]
    assert "Maria Lopez" in phrases and "by Maria Lopez" in phrases
    assert all(p != ANSWER[start:end] for p in phrases)
