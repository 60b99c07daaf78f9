"""AVeriTeC dev (Schlichtkrull et al., 2023): real-world fact-checked claims (hypothesis)
with question-answer evidence gathered from the web (premise).

Labels: Supported -> entailment, Refuted -> contradiction, Not Enough Evidence -> neutral;
"Conflicting Evidence/Cherrypicking" claims are skipped (no single class fits).

Premise: each question followed by its answers, as text - "Question? Answer." - with a
boolean answer's explanation after its Yes/No ("Question? No. Explanation."). Answers
marked Unanswerable or reading "No answer could be found..." are left out (as is that
phrase where it ends an answer), and so is a question left with no answer. The
annotators' justification is not used (it restates the verdict).

Split: hash of the fact-checking article URL (several claims come from one article and
share evidence), the claim where there is none; 5% eval.

Length: 500 claims; 38 Conflicting/Cherrypicking skipped; of the other 462, 58 dropped
because the QA premise has more than 220 words (37 Refuted, 16 Supported, 5 Not Enough
Evidence); 404 kept.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from auditor.entailment.data import CONTRADICTION, ENTAILMENT, NEUTRAL, NLIPair
from auditor.entailment.more._common import clean, fits, make_pair, unknown_label

SOURCE = "averitec_dev"
LABEL_MAPPING: dict[str, str] = {
    "Supported": "entailment",
    "Refuted": "contradiction",
    "Not Enough Evidence": "neutral",
    "Conflicting Evidence/Cherrypicking": "skipped",
    "split": "hash of the fact-checking article URL (else the claim), 5% eval",
}

_LABELS = {"Supported": ENTAILMENT, "Refuted": CONTRADICTION, "Not Enough Evidence": NEUTRAL}
_SKIP = {"Conflicting Evidence/Cherrypicking"}
_NO_ANSWER = "no answer could be found"
_NO_ANSWER_TAIL = re.compile(r"\s*No answer could be found\.?$")
_END = (".", "?", "!", '"', "\u201d")


def _sentence(text: str) -> str:
    return text if text.endswith(_END) else text + "."


def _qa_text(questions: list[dict]) -> str:
    parts = []
    for item in questions:
        answers = []
        for answer in item.get("answers") or []:
            if answer.get("answer_type") == "Unanswerable":
                continue
            text = _NO_ANSWER_TAIL.sub("", clean(answer.get("answer")))
            if not text or text.lower().startswith(_NO_ANSWER):
                continue
            answers.append(_sentence(text))
            explanation = clean(answer.get("boolean_explanation"))
            if explanation:
                answers.append(_sentence(explanation))
        question = clean(item.get("question"))
        if not answers:
            continue
        if question:
            parts.append(question if question.endswith("?") else question + "?")
        parts.extend(answers)
    return " ".join(parts)


def _record_lines(text: str) -> list[int]:
    """1-based line of each top-level record of a JSON list, for error messages."""
    decoder = json.JSONDecoder()
    lines: list[int] = []
    pos = text.index("[") + 1
    while True:
        match = re.compile(r"\s*,?\s*").match(text, pos)
        pos = match.end() if match else pos
        if pos >= len(text) or text[pos] == "]":
            return lines
        lines.append(text.count("\n", 0, pos) + 1)
        _, pos = decoder.raw_decode(text, pos)


def load(root: Path) -> list[NLIPair]:
    """AVeriTeC dev claims vs their QA evidence as text, three-way (conflicting skipped);
    fact-checking articles hash-split 5% eval; premises over 220 words dropped."""
    path = root / SOURCE / "dev.json"
    text = path.read_text(encoding="utf-8")
    records = json.loads(text)
    pairs = []
    for i, record in enumerate(records):
        value = clean(record.get("label"))
        if value in _SKIP:
            continue
        if value not in _LABELS:
            lines = text.split("\n")
            start = _record_lines(text)[i]
            line = next(
                (n for n in range(start, len(lines) + 1) if '"label"' in lines[n - 1]), start
            )
            raise unknown_label(value, path, line, "label")
        premise = _qa_text(record.get("questions") or [])
        hypothesis = clean(record.get("claim"))
        if fits(premise, hypothesis):
            key = clean(record.get("fact_checking_article")) or hypothesis
            pairs.append(make_pair(premise, hypothesis, _LABELS[value], SOURCE, key))
    return pairs
