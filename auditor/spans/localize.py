"""Localise the error of an unsupported claim to the minimal answer characters.

docs/spans.md: for a claim labelled ``contradicted``, ``not_supported`` or ``stale``,
mark the characters of the answer that carry the error, not the whole sentence,
when they can be found. The heuristic is lexical and model-free (regex tokens,
light normalisation), so it is fast and deterministic:

1. tokenise the claim's answer spans into numbers and words;
2. a number (``"3,200"`` equals ``"3200"``, ``"3.0"`` equals ``"3"``, ``"three"`` equals
   ``"3"``) is *unaligned* unless some evidence states the same value in the same slot
   (:func:`auditor.text.quantities`: "eight branches" is not aligned with "up 8
   percent", "50 tanks" not with "50 metres"); a capitalised word (entity-like) or a
   content word (not a stopword, at least three letters) is *unaligned* when no evidence
   text contains it after the same normalisation (lower case, a light suffix stemmer);
3. the unaligned tokens are the error; neighbours separated only by spaces,
   hyphens, apostrophes or at most two stopwords are joined into one span;
4. when nothing is unaligned (or there is no evidence at all), fall back to the
   claim spans.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

from auditor.spans._canonical import SpanValidationError, canonicalize
from auditor.spans.unicode import nfc, nfc_map, snap_to_graphemes
from auditor.text import Quantity, quantities, same_amount
from auditor.types import Span

_TOKEN = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d_]+(?:['’][^\W\d_]+)*")
_JOINABLE_GAP = re.compile(r"[\s\-–'’]*")

_STOPWORD_TEXT = """
a about above after again against all also am an and any are as at be because been before
being below between both but by can could did do does doing down during each few for from
further had has have having he her here hers herself him himself his how i if in into is it
its itself just me more most my myself no nor not now of off on once only or other our ours
ourselves out over own same she should so some such than that the their theirs them
themselves then there these they this those through to too under until up very was we were
what when where which while who whom why will with would you your yours yourself yourselves
said says may might must shall upon within without among amongst via per yet however also
which whose it's he's she's there's that's one's
"""
STOPWORDS: frozenset[str] = frozenset(_STOPWORD_TEXT.split())

_NUMBER_WORDS = {
    "zero": "0",
    "one": "1",
    "two": "2",
    "three": "3",
    "four": "4",
    "five": "5",
    "six": "6",
    "seven": "7",
    "eight": "8",
    "nine": "9",
    "ten": "10",
    "eleven": "11",
    "twelve": "12",
    "thirteen": "13",
    "fourteen": "14",
    "fifteen": "15",
    "sixteen": "16",
    "seventeen": "17",
    "eighteen": "18",
    "nineteen": "19",
    "twenty": "20",
    "thirty": "30",
    "forty": "40",
    "fifty": "50",
    "sixty": "60",
    "seventy": "70",
    "eighty": "80",
    "ninety": "90",
    "hundred": "100",
    "first": "1st",
    "second": "2nd",
    "third": "3rd",
}


def _norm_number(tok: str) -> str:
    t = tok.replace(",", "")
    if t.count(".") > 1:  # 1.200.000 style thousands separators
        t = t.replace(".", "")
    if "." in t:
        t = t.rstrip("0").rstrip(".")
    t = t.lstrip("0") or "0"
    return t


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    w = word.lower().replace("’", "'")
    if w.endswith("'s"):
        w = w[:-2]
    if w in _NUMBER_WORDS:
        return _NUMBER_WORDS[w]
    for suffix, repl, min_len in (
        ("ies", "y", 5),
        ("sses", "ss", 5),
        ("es", "", 5),
        ("ing", "", 6),
        ("ed", "", 5),
        ("ly", "", 5),
    ):
        if w.endswith(suffix) and len(w) >= min_len:
            return w[: len(w) - len(suffix)] + repl
    if w.endswith("s") and not w.endswith("ss") and len(w) >= 4:
        return w[:-1]
    return w


def _norm(tok: str) -> str:
    return _norm_number(tok) if tok[0].isdigit() else _stem(tok)


def evidence_vocabulary(evidence_texts: Iterable[str]) -> frozenset[str]:
    """Normalised tokens of the evidence texts (numbers and stemmed words)."""
    vocab: set[str] = set()
    for text in evidence_texts:
        for m in _TOKEN.finditer(text):
            vocab.add(_norm(m.group()))
    return frozenset(vocab)


def _is_candidate(tok: str) -> bool:
    if tok[0].isdigit():
        return True
    low = tok.lower()
    if low in STOPWORDS:
        return False
    if low in _NUMBER_WORDS:
        return True
    return tok[0].isupper() or len(tok) >= 3


def _join(text: str, start: int, end: int, tokens: list[tuple[int, int, str]]) -> bool:
    """Whether a gap ``text[start:end]`` between two marked tokens may be bridged."""
    gap_tokens = [t for s, e, t in tokens if s >= start and e <= end]
    if len(gap_tokens) > 2 or any(t.lower() not in STOPWORDS for t in gap_tokens):
        return False
    rest = _TOKEN.sub("", text[start:end])
    return _JOINABLE_GAP.fullmatch(rest) is not None


def _unaligned(
    start: int,
    token: str,
    slots: Sequence[Quantity],
    stated: Sequence[Quantity],
    vocab: frozenset[str],
) -> bool:
    """A number in a slot is aligned only with the same value in the same slot; any other
    token by its normalised form."""
    for q in slots:
        if q.start <= start < q.end and (token[0].isdigit() or token.lower() in _NUMBER_WORDS):
            return not any(same_amount(q, e) for e in stated)
    return _norm(token) not in vocab


def localize_error(
    answer_text: str, claim_spans: Sequence[Span], evidence_texts: Sequence[str]
) -> tuple[Span, ...]:
    """Minimal half-open answer spans, inside ``claim_spans``, that carry the error.

    Returns the claim's numbers, capitalised words and content words that no
    evidence text aligns with (joined into phrases), or the canonical claim spans
    when nothing specific is found or no evidence is given.

    >>> answer = "The bridge opened in 1932 and cost 3,200 dollars."
    >>> evidence = ["Opened in 1931, the bridge cost 3200 dollars."]
    >>> localize_error(answer, [(0, len(answer))], evidence)
    ((21, 25),)
    """
    if not isinstance(answer_text, str):
        raise SpanValidationError(
            f"expected str, got {type(answer_text).__name__}", field="answer_text"
        )
    if isinstance(evidence_texts, str) or not all(isinstance(t, str) for t in evidence_texts):
        raise SpanValidationError("expected a sequence of strings", field="evidence_texts")
    claim = canonicalize(list(claim_spans), text_length=len(answer_text), name="claim_spans")
    if not claim or not any(t.strip() for t in evidence_texts):
        return claim
    mapped = nfc_map(answer_text)  # match on NFC text, answer offsets as given, whole graphemes
    if not mapped.identity:
        inner = localize_error(
            mapped.text, [mapped.to_normalized(s, e) for s, e in claim], evidence_texts
        )
        return snap_to_graphemes(answer_text, [mapped.to_original(s, e) for s, e in inner])
    vocab = evidence_vocabulary(nfc(t) for t in evidence_texts)
    stated = [q for text in evidence_texts for q in quantities(nfc(text))]
    out: list[Span] = []
    for cs, ce in claim:
        tokens = [(m.start(), m.end(), m.group()) for m in _TOKEN.finditer(answer_text, cs, ce)]
        slots = [
            Quantity(q.value, q.unit, q.start + cs, q.end + cs)
            for q in quantities(answer_text[cs:ce])
        ]
        marked = [
            (s, e)
            for s, e, t in tokens
            if _is_candidate(t) and _unaligned(s, t, slots, stated, vocab)
        ]
        for s, e in marked:
            if (
                out
                and out[-1][1] <= s
                and out[-1][0] >= cs
                and _join(answer_text, out[-1][1], s, tokens)
            ):
                out[-1] = (out[-1][0], e)
            else:
                out.append((s, e))
    if not out:
        return claim
    return snap_to_graphemes(answer_text, canonicalize(out))
