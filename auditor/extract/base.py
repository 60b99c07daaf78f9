"""The extractor interface, claim ids and input cleaning shared by every extractor.

An extractor turns answers into claims: each :class:`~auditor.types.Claim` keeps its
text (possibly decontextualised), the half-open character span(s) of the answer
it came from, and whether it is factual. Non-factual sentences are claims with
``factual=False`` and a ``kind``; nothing is dropped.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from auditor.digest import content_digest
from auditor.errors import InputError
from auditor.types import Answer, Claim, Component, Span

KINDS: tuple[str, ...] = (
    "claim",
    "question",
    "opinion",
    "greeting",
    "refusal",
    "instruction",
    "hedge",
    "meta",
)
"""Claim kinds: ``claim`` is factual, every other kind is not."""

# C0/C1 control characters except tab and newline, plus lone surrogates: each is
# replaced one-for-one so that character offsets into the original answer hold.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """``text`` with control characters (``\\r`` included) and lone surrogates replaced
    one-for-one by a space or U+FFFD: same length, so offsets into ``text`` still hold."""
    return _CONTROL.sub(lambda m: "\ufffd" if "\ud800" <= m.group() <= "\udfff" else " ", text)


def claim_id(answer_id: str, spans: Sequence[Span], text: str) -> str:
    """Stable claim id: sha256 of the canonical JSON of answer id, spans and text."""
    return content_digest({"answer_id": answer_id, "spans": [list(s) for s in spans], "text": text})


def make_claim(
    answer_id: str,
    text: str,
    spans: Sequence[Span],
    *,
    factual: bool,
    kind: str,
    topic: str | None = None,
    cited_sources: Sequence[str] = (),
    subject_unresolved: bool = False,
) -> Claim:
    """Build a :class:`Claim` with its stable id (spans sorted, as tuples); the id does not
    depend on the cited sources or the unresolved flag."""
    ordered = tuple(sorted((int(s), int(e)) for s, e in spans))
    return Claim(
        id=claim_id(answer_id, ordered, text),
        answer_id=answer_id,
        text=text,
        spans=ordered,
        factual=factual,
        kind=kind,
        topic=topic,
        cited_sources=tuple(cited_sources),
        subject_unresolved=subject_unresolved,
    )


def check_answers(answers: Sequence[Answer]) -> None:
    """Validate the ``answers`` parameter: a sequence of :class:`Answer` with string
    ids and texts; raise :class:`InputError` naming the bad item and field."""
    if isinstance(answers, (str, bytes)) or not isinstance(answers, Sequence):
        raise InputError(f"answers: expected a sequence of Answer, got {type(answers).__name__}")
    for i, answer in enumerate(answers):
        if not isinstance(answer, Answer):
            raise InputError(f"answers[{i}]: expected Answer, got {type(answer).__name__}")
        for name in ("id", "answer"):
            value = getattr(answer, name)
            if not isinstance(value, str):
                raise InputError(
                    f"answers[{i}]: expected str, got {type(value).__name__}", field=name
                )
        if _SURROGATE.search(answer.id):
            raise InputError(f"answers[{i}]: id is not valid Unicode (lone surrogate)", field="id")


@dataclass(frozen=True)
class Extraction:
    """The claims of one answer with the component that actually produced them.

    ``fallback`` names why an extractor fell back to another one (``None`` when it
    did not); ``extractor`` is then the fallback's component. ``raw`` keeps the raw
    model output of an LLM extractor, ``usage`` its token accounting and attempts.
    """

    answer_id: str
    claims: tuple[Claim, ...]
    extractor: Component
    fallback: str | None = None
    raw: str = ""
    usage: Mapping[str, int] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    """Anything else worth keeping (e.g. sentences an LLM left out and how they were covered)."""


class Extractor(ABC):
    """Base class of every extractor: a name, a version, a digest and a batch method."""

    name: str = "extractor"
    version: str = "1"

    def config(self) -> dict[str, Any]:
        """The parameters that define this extractor's behaviour (go into the digest)."""
        return {}

    @property
    def digest(self) -> str:
        """Content digest over the class, name, version and configuration."""
        return content_digest(
            {
                "class": type(self).__qualname__,
                "name": self.name,
                "version": self.version,
                "config": self.config(),
            }
        )

    @property
    def component(self) -> Component:
        """This extractor as a versioned component (``kind="extractor"``) for the ledger."""
        return Component(
            kind="extractor",
            name=self.name,
            version=self.version,
            digest=self.digest,
            config=self.config(),
        )

    @abstractmethod
    def extract_detailed(self, answers: Sequence[Answer]) -> list[Extraction]:
        """One :class:`Extraction` per answer, in order (claims, producer, fallback)."""

    def extract_many(self, answers: Sequence[Answer]) -> list[list[Claim]]:
        """Claims of each answer, in order of their first character."""
        return [list(e.claims) for e in self.extract_detailed(answers)]

    def extract(self, answer: Answer) -> list[Claim]:
        """Claims of one answer."""
        return self.extract_many([answer])[0]
