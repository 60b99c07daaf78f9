"""Citation markers and attributions: the sources a claim cites, never part of what it states.

Two mechanisms, one before and one after parsing:

- :func:`mask_citations` blanks bracketed reference markers ("[1]", "[2, 3]", "[doc 4]")
  and author-year citations in parentheses ("(Fang et al., 2003)") one-for-one with
  spaces before the answer is parsed, so that offsets still hold, no marker reaches a
  claim's text, and a marker after the sentence's full stop ("... in 1990. [1].") is no
  sentence of its own; each marker is kept with its position and its references;
- :func:`attribution` finds, in a parsed sentence, the words that attribute it to a
  source: a prepositional phrase headed by an attributing preposition ("According to
  the API docs, ...", "..., per the manual") or a reporting main clause in the present
  tense whose subject is a thing ("The docs say that ..."), whose complement clause is
  then what the sentence states.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.tokens import Span as SpacySpan
    from spacy.tokens import Token

_REF = r"(?:[A-Za-z]{1,10}\s?)?\d{1,3}"
_MARKER = re.compile(r"\[\s*(" + _REF + r"(?:\s*[,;\u2013-]\s*" + _REF + r")*)\s*\]")
_RUN = re.compile(r"(?:[ \t]*" + _MARKER.pattern + r")+")
_AUTHOR = r"[A-Z][\w'\u2019-]+"
_CITED_WORK = (
    _AUTHOR + r"(?:\s+et\s+al\.?|\s*(?:&|and)\s*" + _AUTHOR + r")?,?\s+(?:1[5-9]|20)\d\d[a-z]?"
)
_AUTHOR_YEAR = re.compile(r"[ \t]*\(\s*(" + _CITED_WORK + r"(?:\s*;\s*" + _CITED_WORK + r")*)\s*\)")
"""An author-year citation in parentheses ("(Eisenberg & Kauzmann, 1969)", "(Fang et
al., 2003; Lee 2019)"): the academic form of a reference marker."""
_ATTRIBUTING_PREPOSITIONS = frozenset({"according", "per"})
"""The prepositions that attribute a statement to a source (closed class)."""
_REPORTING_VERBS = frozenset(
    {"say", "state", "note", "report", "mention", "indicate", "explain", "confirm", "show"}
    | {"specify", "list", "describe"}
)
"""Verbs of saying (closed class) whose present tense reports what a source states."""


@dataclass(frozen=True)
class Citation:
    """A citation marker blanked out of the answer: ``[start, end)`` and its references."""

    start: int
    end: int
    refs: tuple[str, ...]


def mask_citations(text: str) -> tuple[str, tuple[Citation, ...]]:
    """``text`` with every run of citation markers replaced by spaces (same length), and
    the markers. A run after a sentence's final punctuation takes a full stop that
    follows it along ("opened in 1990. [1]." leaves "opened in 1990.")."""
    found: list[Citation] = []
    chars = list(text)
    for cited in _AUTHOR_YEAR.finditer(text):
        refs = tuple(ref.strip() for ref in cited.group(1).split(";"))
        found.append(Citation(cited.start(), cited.end(), refs))
        chars[cited.start() : cited.end()] = " " * (cited.end() - cited.start())
    for run in _RUN.finditer(text):
        end = run.end()
        before = text[: run.start()].rstrip()
        if before.endswith((".", "!", "?")) and text.startswith(".", end):
            end += 1
        refs = tuple(
            ref.strip()
            for marker in _MARKER.finditer(text, run.start(), run.end())
            for ref in re.split(r"[,;]", marker.group(1))
        )
        found.append(Citation(run.start(), end, refs))
        chars[run.start() : end] = " " * (end - run.start())
    return "".join(chars), tuple(sorted(found, key=lambda c: c.start))


_LOCATOR = r"(?:https?://\S+|www\.\S+|doi:\s*\S+|\b10\.\d{4,9}/\S+|\bISBN[\s:]*[\dX-]{10,})"
_BARE_LOCATOR = re.compile(r"[<(]?" + _LOCATOR + r"[>)]?[.;,]?", re.IGNORECASE)
_LABEL = re.compile(r"(?:\*\*)?[^\W\d_][^\W\d]*(?:\s[^\W\d][^\W\d]*){0,2}:(?:\*\*)?\s+")
"""A short label before the line's content ("Source: ", "Further reading: ")."""
_REFERENCE_OPENING = re.compile(
    # authors: "Smith, J.", "van Dyke, A. B.", "Smith J, Lee K." (Vancouver), "J. Smith,"
    r"(?:[A-Z][\w'\u2019-]+(?:\s[A-Z][\w'\u2019-]+)?,\s(?:[A-Z]\.\s?-?){1,3}"
    r"|[A-Z][\w'\u2019-]+\s[A-Z]{1,3}[,.]\s|(?:[A-Z]\.\s?){1,3}[A-Z][\w'\u2019-]+,"
    # a title in quotes or italics, or the locator itself
    r"|[\"\u201c][^\"\u201d]{3,}[\"\u201d]|\*[^*\s][^*]*\*|_[^_\s][^_]*_|" + _LOCATOR + r")"
)
"""What a reference opens with: its authors, its title set off, or where to find it."""
_REFERENCE_CUES = (
    # authors
    re.compile(
        r"^(?:[A-Z][\w'\u2019-]+(?:\s[A-Z][\w'\u2019-]+)?,\s(?:[A-Z]\.\s?-?){1,3}"
        r"|[A-Z][\w'\u2019-]+\s[A-Z]{1,3}[,.]\s|(?:[A-Z]\.\s?){1,3}[A-Z][\w'\u2019-]+,)"
        r"|\bet al\b"
    ),
    # the year as an element of its own: "(2020)", "Marsh, T. 2011.", "2020;12(3)", "n.d."
    re.compile(r"\((?:1[5-9]|20)\d\d[a-z]?\)|(?:^|[.,]\s)(?:1[5-9]|20)\d\d[a-z]?[.;]|\bn\.d\."),
    # where to find it
    re.compile(_LOCATOR, re.IGNORECASE),
    # volume(issue), pages
    re.compile(r"\b\d+\s?\(\d+\)|\bpp?\.\s?\d|[,:]\s?\d+\s?[-\u2013]\s?\d+\.?\s*$"),
    # a title in quotes or italics
    re.compile(r"[\"\u201c][^\"\u201d]{3,}[\"\u201d]|\*[^*\s][^*]*\*|_[^_\s][^_]*_"),
)
"""The elements of a bibliographic reference, one pattern each."""


@dataclass(frozen=True)
class ReferenceShape:
    """How much a line looks like a bibliographic reference (:func:`reference_shape`)."""

    labelled: bool
    """It opens with a short label before a colon ("Source: ...")."""
    locator: bool
    """Past the label it is only a URL, DOI or ISBN."""
    leads: bool
    """Past the label it opens with authors, a title set off, or a locator."""
    cues: int
    """How many kinds of reference element it has: authors, a year standing alone, a
    locator, volume or pages, a title set off."""


def reference_shape(line: str) -> ReferenceShape:
    """The reference elements of one line of an answer (citation markers and list marks
    already taken off): "Smith, J. (2020). Deep learning for cats. Journal of X, 12(3),
    45-67." has authors, a year, volume and pages; "Source: https://example.com/page" is a
    label and a locator."""
    text = line.strip()
    label = _LABEL.match(text)
    rest = text[label.end() :] if label else text
    return ReferenceShape(
        labelled=label is not None,
        locator=_BARE_LOCATOR.fullmatch(rest.strip()) is not None,
        leads=_REFERENCE_OPENING.match(rest) is not None,
        cues=sum(1 for cue in _REFERENCE_CUES if cue.search(rest)),
    )


@dataclass(frozen=True)
class Attribution:
    """The tokens of a sentence that attribute it to a source, the sources they name, and
    the clause that states what the source says when a reporting clause was dropped."""

    tokens: frozenset[int]
    sources: tuple[str, ...]
    stated: Token | None = None


def attribution(sent: SpacySpan) -> Attribution:
    """The attribution of a parsed sentence (empty when it has none)."""
    tokens: set[int] = set()
    sources: list[str] = []
    root = sent.root
    for token in sent:
        if token.lower_ not in _ATTRIBUTING_PREPOSITIONS or token.dep_ != "prep":
            continue
        if token.head.i != root.i:
            continue
        objects = [t for t in token.subtree if t.dep_ == "pobj"]
        if not objects:
            continue
        source = objects[0]
        tokens |= _with_punct(token)
        sources.append(_text(source))
    stated = _reported(root)
    if stated is not None:
        subject = next(c for c in root.children if c.dep_ == "nsubj")
        sources.append(_text(subject))
        keep = {t.i for t in stated.subtree}
        tokens |= {t.i for t in sent if t.i not in keep and not t.is_punct}
        tokens |= {c.i for c in stated.children if c.dep_ == "mark"}
    return Attribution(frozenset(tokens), tuple(sources), stated)


def _reported(root: Token) -> Token | None:
    """The complement clause of a present-tense reporting clause with a non-pronoun
    thing as its subject ("The docs say that X": X), else ``None``."""
    if root.tag_ not in {"VBZ", "VBP"} or root.lower_.removesuffix("s") not in _REPORTING_VERBS:
        return None
    subject = next((c for c in root.children if c.dep_ == "nsubj"), None)
    if subject is None or subject.pos_ != "NOUN":
        return None
    if any(c.dep_ in {"aux", "neg", "dobj"} for c in root.children):
        return None
    clause = next((c for c in root.children if c.dep_ == "ccomp"), None)
    if clause is None or not any(c.dep_ in {"nsubj", "nsubjpass", "expl"} for c in clause.children):
        return None
    return clause


def _with_punct(token: Token) -> set[int]:
    """A phrase's tokens with the comma before or after it."""
    out = {t.i for t in token.subtree}
    doc = token.doc
    lo, hi = min(out), max(out)
    if hi + 1 < len(doc) and doc[hi + 1].text == ",":
        out.add(hi + 1)
    elif lo > 0 and doc[lo - 1].text == ",":
        out.add(lo - 1)
    return out


def _text(token: Token) -> str:
    """A noun phrase's words as written, without a trailing comma."""
    words = [t for t in token.subtree if not (t.is_punct and t.i == token.right_edge.i)]
    return "".join(t.text_with_ws for t in words).strip()
