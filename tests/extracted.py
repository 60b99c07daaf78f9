"""What the rule extractor makes of one answer, for the extraction tests."""

from __future__ import annotations

from auditor.extract.rules import RuleExtractor
from auditor.types import Answer, Claim


def claims_of(rules: RuleExtractor, text: str) -> list[Claim]:
    """Every claim of ``text`` as a one-answer input."""
    return rules.extract(Answer(id="a", question="", answer=text))


def factual_texts(rules: RuleExtractor, text: str) -> list[str]:
    """The texts of the factual claims of ``text``, sorted."""
    return sorted(c.text for c in claims_of(rules, text) if c.factual)
