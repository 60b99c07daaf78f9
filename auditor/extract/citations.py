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
