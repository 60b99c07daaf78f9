"""Built-in local judges: cheap, offline, and failing in different ways.

Each returns a vote (0 supported, 1 unsupported, 0.5 abstain), named scores and
a raw JSON string saying why. ``scores["contradiction"]`` (0..1) is the signal
the labelling step uses to tell ``contradicted`` from ``not_supported``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np

from auditor.errors import ConfigError
from auditor.judges import wordlists as wl
from auditor.judges._pronouns import lead_name, opens_with_other_name, resolved_sentences
from auditor.judges._text import (
    CLOCK_UNITS,
    DURATION_UNITS,
    MONTH_NAMES,
    WEEKDAYS,
    Quantity,
    content_words,
    currency_signs,
    negation_count,
    negations,
    quantities,
    same_amount,
    same_noun,
    sentences,
    stem,
    stop_words,
    tokens,
    unit_stems,
)
from auditor.judges.base import LocalJudge, register_judge
from auditor.judges.wordlists import NEVER, derived
from auditor.labels import strip_period
from auditor.types import ABSTAIN, JudgePair

Result = tuple[float, dict[str, float], str]


def _raw(**fields: object) -> str:
    return json.dumps(fields, sort_keys=True, default=sorted)


def _coverage(claim_words: frozenset[str], text: str) -> float:
    if not claim_words:
        return 0.0
    return len(claim_words & content_words(text)) / len(claim_words)


_LOWER_WORD = re.compile(r"\b[a-z][a-z'\-]*")


def _anchor_sentences(
    pair: JudgePair,
    min_coverage: float,
    ignore: frozenset[str] = frozenset(),
    meanings: Mapping[str, str] | None = None,
) -> list[tuple[float, str]]:
    """Evidence sentences sorted by content-word coverage of the claim (best first; of two
    alike, the one holding more of those words itself, then the one with fewer other
    words), a sentence-initial pronoun read as the name its passage starts with ("It is
    closed on Sundays" in a page about the library). A sentence is about what its passage
    opens with unless it opens with another name, so the passage's lead name counts
    towards its coverage ("Visiting hours are from 10am to 8pm" in a page that opens with
    "Harrow Vale Hospice"); a sentence opening with a word the claim writes in lower case
    ("Membership is free ...") is about it too. Claim words in ``ignore`` do not count;
    with ``meanings``, a word counts when the sentence says it in other words (a stem
    mapped to the same meaning: "welcome" and "permitted")."""
    said_as = meanings or {}
    claim_words = frozenset(said_as.get(w, w) for w in content_words(pair.claim) - ignore)
    if not claim_words:
        return []
    scored = []
    # words the claim writes in lower case are no names when a sentence opens with them
    # ("Membership is free ..." against "Library membership costs ...")
    common = frozenset(_LOWER_WORD.findall(pair.claim))
    for text in pair.evidence:
        lead = lead_name(text)
        lead_words = content_words(lead) if lead else frozenset()
        for s in resolved_sentences(text):
            own = content_words(s)
            if said_as:
                own = frozenset(said_as.get(w, w) for w in own)
            about_lead = lead is not None and (
                not opens_with_other_name(s, lead) or s.split(" ", 1)[0].lower() in common
            )
            words = own | lead_words if about_lead else own
            coverage = len(claim_words & words) / len(claim_words)
            scored.append((-coverage, -len(claim_words & own), len(own - claim_words), s))
    return [(-c, s) for c, _, _, s in sorted(scored, key=lambda i: i[:3]) if -c >= min_coverage]


def _band(
    value: float, support_at: float, reject_below: float, higher_is_support: bool = True
) -> float:
    if not higher_is_support:
        value = -value
        support_at, reject_below = -support_at, -reject_below
    if value >= support_at:
        return 0.0
    if value < reject_below:
        return 1.0
    return ABSTAIN


@register_judge("content_overlap")
class ContentOverlapJudge(LocalJudge):
    """Share of the claim's content words found in the best evidence passage."""

    name = "content_overlap"
    version = "2"  # 2: Snowball stems

    def __init__(self, support_at: float = 0.75, reject_below: float = 0.45) -> None:
        super().__init__(support_at=support_at, reject_below=reject_below)
        self.support_at, self.reject_below = support_at, reject_below

    def score(self, pair: JudgePair) -> Result:
        words = content_words(pair.claim)
        if not pair.evidence or not words:
            return ABSTAIN, {}, _raw(reason="no evidence" if words else "no content words")
        per_passage = [(_coverage(words, text), text) for text in pair.evidence]
        best, text = max(per_passage, key=lambda item: item[0])
        missing = sorted(words - content_words(text))
        vote = _band(best, self.support_at, self.reject_below)
        return vote, {"support": best}, _raw(coverage=round(best, 4), missing=missing)


@register_judge("embedding_similarity")
class EmbeddingSimilarityJudge(LocalJudge):
    """Cosine similarity (MiniLM) between the claim and its best evidence sentence.

    Only the ``candidates`` evidence sentences sharing the most content words with the
    claim are encoded (0: all of them): on a long document the rest are unlikely to be
    its best match, and encoding every sentence of every article is what made
    calibration on long documents encoder-bound.
    """

    name = "embedding_similarity"
    version = "4"  # 3: Snowball stems; 4: a line is a sentence

    def __init__(
        self, support_at: float = 0.72, reject_below: float = 0.5, candidates: int = 16
    ) -> None:
        if candidates < 0:
            raise ConfigError(f"embedding_similarity: candidates must be >= 0, got {candidates}")
        super().__init__(
            support_at=support_at,
            reject_below=reject_below,
            candidates=candidates,
            model="sentence-transformers/all-MiniLM-L6-v2",
        )
        self.support_at, self.reject_below = support_at, reject_below
        self.candidates = candidates

    def _candidates(self, pair: JudgePair) -> list[str]:
        group = [s for text in pair.evidence for s in sentences(text)]
        if not self.candidates or len(group) <= self.candidates:
            return group
        words = content_words(pair.claim)
        order = sorted(range(len(group)), key=lambda i: -_coverage(words, group[i]))
        return [group[i] for i in sorted(order[: self.candidates])]

    def score_batch(self, pairs: Sequence[JudgePair]) -> list[Result]:
        from auditor.embedding import encode

        evidence = [self._candidates(pair) for pair in pairs]
        flat = [s for group in evidence for s in group]
        claim_vecs = encode([pair.claim for pair in pairs])
        # encode each distinct sentence once (pairs often share their evidence)
        unique, inverse = np.unique(np.array(flat, dtype=object), return_inverse=True)
        sent_vecs = encode(list(unique))[inverse] if flat else encode([])
        owner = np.repeat(np.arange(len(pairs)), [len(group) for group in evidence])
        sims = np.einsum("ij,ij->i", sent_vecs, claim_vecs[owner]) if flat else np.zeros(0)
        best = np.full(len(pairs), -1.0)
        np.maximum.at(best, owner, sims)
        results: list[Result] = []
        for i, group in enumerate(evidence):
            if not group:
                results.append((ABSTAIN, {}, _raw(reason="no evidence")))
                continue
            value = float(best[i])
            results.append(
                (
                    _band(value, self.support_at, self.reject_below),
                    {"support": value},
                    _raw(max_cosine=round(value, 4)),
                )
            )
        return results


@register_judge("numeric_consistency")
class NumericConsistencyJudge(LocalJudge):
    """Numbers, dates and quantities of the claim against the evidence, slot by slot.

    A number counts only in its slot (:func:`auditor.judges._text.quantities`): "operates
    eight branches" is supported by "8 branches" in an evidence sentence about the claim
    (sharing ``anchor_coverage`` of its content words), never by "up 8 percent" or
    "8 metres". A number is *contradicted* when such a sentence states a different value in
    the same slot (same unit or noun: "a one-hour session" against "a two-hour session";
    two bare years) and no evidence sentence states the claimed one; that is a clear
    conflict (``scores["conflict"]``) which the labelling step weighs before support. A
    number whose slot no evidence fills is missing support (``scores["missing_detail"]``
    when some sentence is about the claim), not a refutation. A rank ("finished second")
    is contradicted when a sentence about the claim gives another rank in the same slot
    (the same word before or after it: "finished fourth") and none gives the claimed one
    (:func:`ordinals`; ranks are never missing support). Abstains when the claim holds no
    number and no rank in conflict.
    """

    name = "numeric_consistency"
    version = "22"  # 21: "4,300 emergency food parcels"; 22: a line is a sentence

    def __init__(self, anchor_coverage: float = 0.4) -> None:
        super().__init__(anchor_coverage=anchor_coverage)
        self.anchor_coverage = anchor_coverage

    def score(self, pair: JudgePair) -> Result:
        # the years of a claim's own time scope ("From 2004 to 2005, ...") say when, not
        # what: the labelling step checks them against the versions' validity
        claim_text = strip_period(pair.claim)
        claimed = quantities(claim_text)
        ranks = ordinals(pair.claim)
        if not claimed and not ranks:
            return ABSTAIN, {}, _raw(reason="no numbers in claim")
        if not pair.evidence:
            return ABSTAIN, {}, _raw(reason="no evidence")
        # "2,400 employees" against "employs about 2,100 staff": one unit, one word; the
        # words that write a number or a time ("four in the afternoon") are not what the
        # sentence about the claim must share
        anchors = [
            s
            for _, s in _anchor_sentences(
                pair,
                self.anchor_coverage,
                ignore=_number_words(claim_text, claimed),
                meanings=unit_stems(),
            )
        ]
        rank_conflicts = _rank_conflicts(ranks, anchors[:3], pair.evidence)
        if rank_conflicts:
            return (
                1.0,
                {"support": 0.0, "contradiction": 1.0, "conflict": 1.0},
                _raw(conflicts=rank_conflicts),
            )
        if not claimed:
            return ABSTAIN, {}, _raw(reason="no numbers in claim")
        anchor_q = [quantities(s) for s in anchors]
        every_q = [q for text in pair.evidence for q in quantities(text)]
        matched, conflicts, missing = [], [], []
        anchored = True
        for q in claimed:
            shown = _show(q)
            in_anchor = any(same_amount(q, e) for qs in anchor_q for e in qs)
            # outside the sentences about the claim, only the very same unit counts
            elsewhere = q.unit is not None and any(
                e.unit is not None and same_amount(q, e) for e in every_q
            )
            free = _said_free(pair, claim_text) if q.unit in currency_signs() else {}
            stating = [
                s
                for s, qs in zip(anchors, anchor_q, strict=True)
                if any(same_amount(q, e) for e in qs)
            ]
            if stating and all(
                s in free and not any(same_amount(q, e) for e in quantities(free[s]))
                for s in stating
            ):
                # "Entry to the gallery costs 12 pounds" against "Entry is free, but special
                # exhibitions cost 12 pounds": the amount is another clause's
                conflicts.append(f"{shown} vs free")
                continue
            if in_anchor or (not anchors and elsewhere):
                matched.append(shown)
                anchored = anchored and in_anchor
                continue
            event = _event_words(claim_text, q) if q.unit == "year" else frozenset()
            rivals = [
                _show(e)
                for sentence, qs in zip(anchors[:3], anchor_q[:3], strict=False)
                for e in qs
                if not same_amount(q, e)
                and _conflicting(q, e)
                and (not event or event & _event_words(sentence, e))
            ]
            if not rivals and q.unit == "interval":
                # how often a service runs, stated once in the passage ("Ferries depart
                # every two hours" against "... boats leave every hour from 7am")
                intervals = {
                    e.value
                    for text in _passages_about(pair, claim_text, q)
                    for e in quantities(text)
                    if e.unit == "interval"
                }
                if len(intervals) == 1 and not intervals & {q.value}:
                    rivals = [f"{next(iter(intervals)):g} interval"]
            if rivals and not elsewhere:
                conflicts.append(f"{shown} vs {', '.join(sorted(set(rivals)))}")
            elif free and not elsewhere:
                conflicts.append(f"{shown} vs free")
            else:
                missing.append(shown)
        if conflicts:
            return (
                1.0,
                {"support": 0.0, "contradiction": 1.0, "conflict": 1.0},
                _raw(matched=matched, conflicts=conflicts, missing=missing),
            )
        if missing:
            return (
                1.0,
                {"support": 0.0, "contradiction": 0.0, "missing_detail": 1.0 if anchors else 0.0},
                _raw(matched=matched, missing=missing),
            )
        scores = {"support": 1.0, "contradiction": 0.0}
        if anchored and all(q.unit is not None and q.unit != "year" for q in claimed):
            # every number of the claim stated in its slot by a sentence about the claim,
            # each counting something ("four dentists", not a bare "is 6" or a year)
            scores["match"] = 1.0
        return 0.0, scores, _raw(matched=matched)


def _amount_stems(claim: str, amounts: Sequence[Quantity]) -> frozenset[str]:
    """The stems of the words that state ``amounts`` in ``claim`` ("20", "pound")."""
    return frozenset(stem(t) for q in amounts for t in tokens(claim[q.start : q.end]))


def _passages_about(pair: JudgePair, claim: str, q: Quantity) -> list[str]:
    """Evidence passages holding at least half of the claim's content words outside its
    quantity ``q`` ("ferri", "depart" of "Ferries depart every two hours")."""
    words = content_words(claim) - _amount_stems(claim, [q])
    if not words:
        return []
    return [t for t in pair.evidence if 2 * len(words & content_words(t)) >= len(words)]


@derived
def _free() -> re.Pattern[str]:
    """Something said to cost nothing ("Membership is free for residents", "children enter
    free", "free of charge"), not "free to choose" or "free from" (``free_phrases.txt``)."""
    return re.compile(r"\b" + wl.one_of("free_phrases"), re.I)


def _number_words(text: str, found: Sequence[Quantity]) -> frozenset[str]:
    """Content words (stems) that write the quantities' numbers or times of day in words
    ("forty-five" of "forty-five pounds", "afternoon" of "four in the afternoon"), not
    their unit."""
    words: set[str] = set()
    for q in found:
        span = text[q.start : q.end]
        if q.unit not in CLOCK_UNITS and q.unit not in (None, "age"):
            span = span.rsplit(maxsplit=1)[0] if len(span.split()) > 1 else ""
        words |= {w for w in content_words(span) if w.isalpha()}
    return frozenset(words)


@derived
def _price_words() -> frozenset[str]:
    """Stems of the words that state a price: what it is the price of decides which clause
    is about it (``price_words.txt``)."""
    return frozenset(stem(w) for w in wl.entries("price_words"))


def _said_free(pair: JudgePair, claim: str) -> dict[str, str]:
    """The sentences whose clause about a price claim, read without its amount and price
    words, says it is free ("Library membership costs 20 pounds a year" against
    "Membership is free for residents of Fenwick"), each with that clause."""
    amounts = _amount_stems(claim, quantities(claim))
    price = _price_words()
    claim_words = content_words(claim) - amounts - price
    clauses = {
        sentence: _clause_about(claim_words, sentence, 0.5)
        for _, sentence in _anchor_sentences(pair, 0.5, ignore=amounts | price)[:3]
    }
    free = _free()
    return {s: clause for s, clause in clauses.items() if free.search(clause)}


@derived
def _ordinal_words() -> dict[str, int]:
    """Each rank in words with its value (``ordinal_words.txt``)."""
    return {w: int(v) for w, v in wl.pairs("ordinal_words")}


@derived
def _ordinal() -> re.Pattern[str]:
    """A rank: in words ("fourth") or in digits ("3rd"), not before a comma."""
    in_words = "|".join(map(re.escape, _ordinal_words())) or "(?!)"
    return re.compile(r"\b(?:(" + in_words + r")|(\d{1,3})(?:st|nd|rd|th))\b(?!\s*,)", re.I)


_WORD_RE = re.compile(r"[A-Za-z0-9]+")
Rank = tuple[int, str | None, str | None]
"""A rank's value and the content words before and after it (stemmed)."""


def ordinals(sentence: str) -> list[Rank]:
    """The ranks in ``sentence`` ("finished fourth", "the 3rd largest") with their slot:
    the nearest content word before and after (stemmed). "Second" after a number (a unit
    of time) and a leading "First," (an enumeration) are no ranks."""
    out = []
    stops, values = stop_words(), _ordinal_words()
    for m in _ordinal().finditer(sentence):
        before = _WORD_RE.findall(sentence[: m.start()])
        if before and before[-1][0].isdigit():
            continue
        value = values[m.group(1).lower()] if m.group(1) else int(m.group(2))
        left = next((stem(w.lower()) for w in reversed(before) if w.lower() not in stops), None)
        after = _WORD_RE.findall(sentence[m.end() :])
        right = next((stem(w.lower()) for w in after if w.lower() not in stops), None)
        out.append((value, left, right))
    return out


def _same_rank_slot(a: Rank, b: Rank) -> bool:
    """The same word before or after both ranks."""
    return (a[1] is not None and a[1] == b[1]) or (a[2] is not None and a[2] == b[2])


def _rank_conflicts(ranks: list[Rank], anchors: list[str], evidence: Sequence[str]) -> list[str]:
    """Ranks of the claim that an evidence sentence about it gives another value in the
    same slot (the same word before or after: "finished second" against "finished
    fourth"), when no evidence sentence gives the claimed one there."""
    if not ranks:
        return []
    stated = [r for text in evidence for s in sentences(text) for r in ordinals(s)]
    about = [r for s in anchors for r in ordinals(s)]
    found = []
    for rank in ranks:
        if any(r[0] == rank[0] and _same_rank_slot(rank, r) for r in stated):
            continue
        rivals = {r[0] for r in about if _same_rank_slot(rank, r)}
        if rivals - {rank[0]}:
            found.append(f"rank {rank[0]} vs {', '.join(map(str, sorted(rivals - {rank[0]})))}")
    return found


_CLAUSE_END = re.compile(r"[,;:()]|\band\b|\bbut\b|\bwhile\b|\bwho\b|\bwhich\b")


def _event_words(sentence: str, q: Quantity, before: int = 2, after: int = 2) -> frozenset[str]:
    """What a year dates: the nearest ``before`` lower-case content words before it and
    ``after`` after it in its clause, stemmed ("was founded by Petra Lind in 2009" ->
    {"found"}; names, months and numbers are skipped). Two years conflict only when their
    clauses share one: "founded in 2009" is not contradicted by "stepped down as chair in
    March 2025"."""

    stops, events = stop_words(), _event_class()

    def kept(text: str) -> list[str]:
        return [w for w in _WORD_RE.findall(text) if w.islower() and w not in stops]

    left = kept(_CLAUSE_END.split(sentence[: q.start])[-1])[-before:]
    right = kept(_CLAUSE_END.split(sentence[q.end :])[0])[:after]
    return frozenset(events.get(stem(w), stem(w)) for w in left + right)


@derived
def _event_class() -> dict[str, str]:
    """Stems that date the same event ("founded in 1965" against "established in 1972"),
    each with the event (``event_classes.txt``)."""
    return {stem(w): event for w, event in wl.pairs("event_classes")}


def _show(q: Quantity) -> str:
    value = f"{q.value:.0f}" if q.unit == "year" else f"{q.value:,.6f}".rstrip("0").rstrip(".")
    return value + (f" {q.unit}" if q.unit else "")


def _conflicting(claim: Quantity, other: Quantity) -> bool:
    """Two values in the same slot: the same unit, named on both sides (a bare number
    beside a bare number is too weak to call a conflict, except two bare years), or two
    durations (hours against minutes)."""
    durations = {claim.unit, other.unit} <= set(DURATION_UNITS)
    return claim.unit is not None and (same_noun(claim, other) or durations)


def _antonyms() -> tuple[tuple[str, str], ...]:
    """Pairs of words opposed to each other (``antonyms.txt``)."""
    return wl.pairs("antonyms", "opposites")


def _forms(word: str) -> set[str]:
    """Stems of a word's inflected forms ("close", "closed", "closes", "closing")."""
    base = word[:-1] if word.endswith("e") else word
    return {stem(w) for w in (word, word + "s", word + "es", base + "ed", base + "ing")}


@derived
def _antonym_pairs() -> dict[str, set[str]]:
    """Each form of a word -> the stems of the words opposed to it."""
    pairs: dict[str, set[str]] = {}
    for a, b in _antonyms():
        for word, other in ((a, b), (b, a)):
            for form in _forms(word):
                pairs.setdefault(form, set()).add(stem(other))
    return pairs


@derived
def _antonym_forms() -> dict[str, set[str]]:
    """Each word of an antonym pair (stemmed) -> the stems of its forms."""
    return {stem(w): _forms(w) for pair in _antonyms() for w in pair}


@derived
def _said_together() -> tuple[tuple[str, str], ...]:
    """(a, b) stems: b beside a is no opposite of anything ("free of charge" says "free",
    not "charge")."""
    return tuple((stem(a), stem(b)) for a, b in wl.pairs("antonyms", "said together"))


def _opposed(claim: set[str], stated: set[str]) -> set[str]:
    """Claim stems whose opposite the sentence states while not stating them ("charge"
    beside "free" is "free of charge", no charge), unless the claim states an opposite
    of them too ("loaves from the day before ... after 4pm")."""
    for word, beside in _said_together():
        claim = claim - {beside} if word in claim else claim
        stated = stated - {beside} if word in stated else stated
    pairs, forms = _antonym_pairs(), _antonym_forms()
    return {
        w
        for w in claim
        if w in pairs
        and w not in stated
        and any(forms[o] & stated for o in pairs[w])
        # "from the day before ... after 4pm": a claim saying both says neither's opposite
        and not any(forms[o] & claim for o in pairs[w])
    }


@register_judge("negation_polarity")
class NegationPolarityJudge(LocalJudge):
    """Polarity conflict (negation or antonym) with the evidence sentence about the same thing.

    Abstains unless some evidence sentence shares most of the claim's content words. A
    flip is an odd number of negations on one side, an antonym, another weekday, season
    or month of the same thing, the one the sentence makes the exception ("every day
    except Monday"), or an antonym in the clause that names the claim's day, season or
    month ("open on Sundays" against "open on Saturdays; it is closed on Sundays"), or
    another grade of a rating ("rated outstanding" against "rated good"); when the best
    sentence does not decide it, another weekday, season or month in the next sentence
    about the claim, if none names the claim's ("held each July" against "It was first
    held in 1979. It takes place every August"); or, in two clauses joined by a
    semicolon, the opposite of a claim word in the clause naming the claim's subject
    while the other clause says it of a subject of its own ("Cyclists have to pay the
    toll" against "Cars pay a toll of 2 euros; cyclists cross free of charge"); in parts
    joined by "and" that say it of different things with the same preposition, only the
    part about the claim's thing counts ("Adults pay £9" is no flip against "£9 for adults
    and free for children under 16"). A flip
    in a sentence holding every other content word of the claim, some perhaps in other
    words ("closed to the public" against "open to the public on Friday evenings",
    "allowed" against "not permitted") is a clear conflict (``scores["conflict"]``), and
    so is a sentence saying that what a present-tense claim is about has ended ("has a
    reptile house" against "The reptile house was closed in 2023": :func:`ended`).
    """

    name = "negation_polarity"
    version = (
        "26"  # 24: parallel parts, cost; 25: before/after, takes place; 26: a line is a sentence
    )

    def __init__(self, anchor_coverage: float = 0.6) -> None:
        super().__init__(anchor_coverage=anchor_coverage)
        self.anchor_coverage = anchor_coverage

    def score(self, pair: JudgePair) -> Result:
        # "takes place" is one verb: its "place" is no word a sentence about it must say
        pair = replace(pair, claim=_one_verb().sub(_first_group, pair.claim))
        synonyms = _synonyms()
        claim_stems = {stem(t) for t in tokens(pair.claim)}
        claim_words = content_words(pair.claim)
        anchors = _anchor_sentences(pair, self.anchor_coverage, meanings=synonyms)
        slot: frozenset[str] = frozenset()
        if not anchors:
            # "Public tours are offered on Sundays" against "Public tours run on Saturdays":
            # the claim's weekday, season or month is the slot in question, not a word the
            # sentence about the claim must share
            slot = frozenset(w for kind, _ in _KINDS for w in claim_words & kind)
            anchors = (
                _anchor_sentences(pair, self.anchor_coverage, ignore=slot, meanings=synonyms)
                if slot
                else []
            )
        opposite = False
        if not anchors and not slot and claim_stems & _opposite_slots().keys():
            # "The pitch is artificial" against "The pitch is natural grass": the opposite
            # word stands where the claim's would
            anchors = _anchor_sentences(pair, self.anchor_coverage, meanings=_said_or_opposed())
            opposite = bool(anchors)
        if not anchors:
            return ABSTAIN, {}, _raw(reason="no evidence sentence about the claim")
        coverage, sentence = anchors[0]
        sent_stems = {stem(t) for t in tokens(sentence)}
        kind_flip = _another_of_a_kind(claim_stems, sent_stems, sentence, pair.claim)
        # "closed on Tuesdays" against "open daily from 9am to 6pm": every day is said
        every_day = bool(slot & _WEEKDAY_STEMS) and bool(_every_day().search(sentence))
        if slot and not kind_flip and not every_day:
            return ABSTAIN, {}, _raw(reason="no evidence sentence about the claim")
        clause = _clause_about(claim_words, sentence, self.anchor_coverage)
        clause_stems = {stem(t) for t in tokens(clause)}
        in_clause = _clause_opposed(claim_stems, sentence) | _contrasted(pair.claim, sentence)
        antonym = sorted(
            _opposed(claim_stems, clause_stems)
            | in_clause
            | kind_flip
            | _excepted(claim_stems, sentence)
            | _rated_otherwise(pair.claim, sentence)
        )
        flipped = _polarity(pair.claim, claim_words) != _polarity(clause, claim_words)
        if flipped and _only_as_exception(claim_stems, pair.claim, clause):
            flipped = False  # "depends only on Pillow": "no dependencies apart from Pillow"
        opposed_in_anchor = len(_opposed(claim_stems, sent_stems)) if opposite else 0
        if opposite and not opposed_in_anchor:
            return ABSTAIN, {}, _raw(reason="no evidence sentence about the claim")
        if (flipped + len(antonym)) % 2:  # "closed on Mondays" against "except Monday": even
            # words the sentence says in other words ("allowed" for "permitted")
            meanings = {synonyms.get(w, w) for w in sent_stems}
            said = {w for w in claim_words - sent_stems if synonyms.get(w, w) in meanings}
            n = max(len(claim_words - slot), 1) + len(slot)
            # every claim word said (an antonym swapped for its pair): a clear conflict; a
            # weekday, season or month swapped may leave one word said otherwise ("offered"
            # for "run", "held" for "takes place")
            # (the coverage counts the words said otherwise already, and the opposites
            # when only they anchored the sentence)
            covered = round(coverage * (n - len(slot))) + len(antonym) - opposed_in_anchor
            covered += len(slot) if every_day else 0
            clear = covered >= n - (1 if kind_flip else 0)
            if in_clause and not clear:
                # "open on Sundays" against "open on Saturdays; closed on Sundays": the
                # clause that holds the claim's day says the opposite, and the words the
                # sentence leaves to a pronoun ("It is ...") are in its passage
                passage = {stem(t) for text in pair.evidence for t in tokens(text)}
                clear = claim_words <= passage | said | set(antonym)
            return (
                1.0,
                {"support": 0.0, "contradiction": 1.0} | ({"conflict": 1.0} if clear else {}),
                _raw(negation_flip=flipped, antonyms=antonym, sentence=sentence),
            )
        elsewhere = _time_named_otherwise(claim_stems, [s for _, s in anchors])
        if elsewhere:
            other, said_otherwise = elsewhere
            return (
                1.0,
                {"support": 0.0, "contradiction": 1.0},
                _raw(negation_flip=False, antonyms=sorted(other), sentence=said_otherwise),
            )
        gone = ended(pair.claim, [s for c, s in anchors if c >= 1.0])
        if gone:
            return (
                1.0,
                {"support": 0.0, "contradiction": 1.0, "conflict": 1.0},
                _raw(ended=gone),
            )
        return 0.0, {"support": coverage, "contradiction": 0.0}, _raw(sentence=sentence)


@derived
def _one_verb() -> re.Pattern[str]:
    """Phrases read as their verb ("takes place": ``one_verb_phrases.txt``)."""
    return re.compile(r"\b" + wl.one_of("one_verb_phrases") + r"\b", re.I)


def _first_group(m: re.Match[str]) -> str:
    return next((g for g in m.groups() if g), m.group(0))


_WEEKDAYS = frozenset(WEEKDAYS)
_SEASONS = frozenset({"spring", "summer", "autumn", "winter"})
_MONTHS = frozenset(MONTH_NAMES) - {"may"}
"""Months that are no other word ("may" is left out)."""


def _range_of(kind: frozenset[str]) -> re.Pattern[str]:
    names = "|".join(sorted(kind))
    if kind == _MONTHS:
        names += "|(?-i:May)"  # "from May to September"; never "may" the verb
    return re.compile(
        rf"\b(?:{names})s?\s*(?:to|-|\u2013|through|until|till)\s"
        rf"|\bbetween\s+(?:{names})s?\s+and\b",
        re.IGNORECASE,
    )


_KINDS = tuple(
    (frozenset(stem(w) for w in kind), _range_of(kind)) for kind in (_WEEKDAYS, _SEASONS, _MONTHS)
)
_ORDERS = {
    kind: tuple(stem(w) for w in order)
    for kind, order in zip(
        (k for k, _ in _KINDS),
        (WEEKDAYS, ("spring", "summer", "autumn", "winter"), MONTH_NAMES),
        strict=True,
    )
}
"""Each kind's names in their order round the week or year."""
_RANGE_ENDS = re.compile(
    r"\b([a-z]+?)s?\s*(?:to|-|\u2013|through|until|till)\s*([a-z]+?)s?\b"
    r"|\bbetween\s+([a-z]+?)s?\s+and\s+([a-z]+?)s?\b",
    re.IGNORECASE,
)


def _range_cover(kind: frozenset[str], sentence: str) -> set[str] | None:
    """The names a sentence's ranges of one kind cover ("Tuesday to Saturday" -> Tuesday
    ... Saturday, "from November to February" round the year's end); ``None`` when one
    of its ranges cannot be read."""
    order = _ORDERS[kind]
    covered: set[str] = set()
    for m in _RANGE_ENDS.finditer(sentence):
        words = [w for w in m.groups() if w]
        ends = [stem(w.lower()) for w in words]
        readable = (
            e in kind or (w == "May" and "may" in order) for e, w in zip(ends, words, strict=True)
        )
        if not all(readable):
            continue
        first, last = (order.index(e) for e in ends)
        covered.update(
            order[(first + i) % len(order)] for i in range((last - first) % len(order) + 1)
        )
    return covered or None


_WEEKDAY_STEMS = _KINDS[0][0]
"""Each kind as the stems claims and sentences are compared in, with its range pattern."""


@derived
def _every_day() -> re.Pattern[str]:
    """A sentence that speaks of every day of the week (and makes no exception right after;
    ``every_day_phrases.txt``)."""
    return re.compile(r"\b" + wl.one_of("every_day_phrases") + r"\b(?!\s+(?:except|but)\b)", re.I)


@derived
def _the_others() -> re.Pattern[str]:
    """The sentence speaks of every other day, month or season too ("closed on Mondays and
    open ... on other days"): naming one decides nothing about the rest
    (``other_days_phrases.txt``)."""
    return re.compile(wl.one_of("other_days_phrases"), re.I)


def _another_of_a_kind(
    claim: set[str], stated: set[str], sentence: str, claim_text: str = ""
) -> set[str]:
    """The claim's one weekday, season or month when the sentence names others of its
    kind and not it ("meets on Tuesdays" against "meets on Wednesdays", "every autumn"
    against "each spring", "every April" against "every September"), or ranges it falls
    outside ("open on Mondays" against "open Tuesday to Saturday"); a range that holds it
    ("Monday to Friday" for Tuesdays), an exception ("every day except Monday") or the
    others of the kind ("on other days") decides nothing. A claim's range against the
    sentence's one range of its kind is another range when they cover other names ("open
    Tuesday to Saturday" against "open Monday to Saturday": :func:`_other_range`)."""
    found: set[str] = set()
    others = _the_others()
    theirs_all = stated - _excepted(stated, sentence)  # "every day except Monday"
    for kind, span in _KINDS:
        mine, theirs = claim & kind, theirs_all & kind
        if (len(mine) > 1 or span.search(claim_text)) and not others.search(sentence):
            found |= _other_range(kind, span, claim_text, sentence, theirs)
            continue
        if len(mine) != 1 or not theirs or mine & theirs or others.search(sentence):
            continue
        if span.search(sentence):
            # "open on Mondays" against "open from Tuesday to Saturday": outside the range
            covered = _range_cover(kind, sentence)
            if covered is None or mine & covered:
                continue
        found |= mine
    return found


def _other_range(
    kind: frozenset[str], span: re.Pattern[str], claim: str, sentence: str, theirs: set[str]
) -> set[str]:
    """The names one range of the claim covers and the sentence's one range of the same
    kind does not, or the other way round (empty unless each states exactly one range of
    the kind and the sentence names no day of it outside its range); for a claim listing
    weekdays (:data:`_DAY_LIST`) against a sentence naming weekdays, neither with a range,
    the listed days the sentence leaves out ("on Monday, Wednesday and Thursday" against
    "on Monday, Tuesday and Thursday")."""
    claim_ranges, ranges = len(span.findall(claim)), len(span.findall(sentence))
    if claim_ranges == 0 and ranges == 0:
        listed = _DAY_LIST.search(claim) if kind == _WEEKDAY_STEMS else None
        if listed is None or not theirs:
            return set()
        return _one_flip({stem(t) for t in tokens(listed.group(0))} & kind - theirs)
    if claim_ranges != 1 or ranges != 1:
        return set()
    mine, stated = _range_cover(kind, claim), _range_cover(kind, sentence)
    if mine is None or stated is None or not theirs <= stated:
        return set()
    return _one_flip(mine ^ stated)


def _one_flip(names: set[str]) -> set[str]:
    """One of the names another range or list differs by: it is one flip, whatever the
    number of days it differs by (flips count by parity)."""
    return {min(names)} if names else set()


_DAY = r"(?:" + "|".join(WEEKDAYS) + r")s?"
_DAY_LIST = re.compile(rf"\b{_DAY}(?:\s*,\s*{_DAY})*\s*,?\s+(?:and|or)\s+{_DAY}\b", re.I)
"""Weekdays in one list ("Monday, Wednesday and Thursday", "Tuesdays and Fridays")."""


def _time_named_otherwise(claim: set[str], anchors: Sequence[str]) -> tuple[set[str], str] | None:
    """When the best sentence about the claim (``anchors[0]``) does not decide it, the
    claim's weekday, season or month with the first other sentence about the claim that
    names others of that kind and not it, provided no sentence about the claim names it
    ("is held each July" against "It was first held in 1979. It takes place every
    August")."""
    if not any(claim & kind for kind, _ in _KINDS):
        return None
    stems = [{stem(t) for t in tokens(s)} for s in anchors]
    if any(claim & kind & stated for stated in stems for kind, _ in _KINDS):
        return None
    for sentence, stated in zip(anchors[1:], stems[1:], strict=True):
        other = _another_of_a_kind(claim, stated, sentence)
        if other:
            return other, sentence
    return None


_CLAUSE_PARTS = re.compile(r";|\b(?:but|while|whereas)\b|\s+and\s+", re.I)
"""Where a sentence's clauses, and the parts of a clause joined by "and", meet."""


def _clause_opposed(claim: set[str], sentence: str) -> set[str]:
    """Claim stems whose opposite the clause naming the claim's weekday, season or month
    states ("opens on Sundays" against "open on Saturdays; it is closed on Sundays", "is
    closed on Mondays and open from 10am to 5pm on other days"), where the sentence as a
    whole states both; a clause's parts joined by "and" are read apart."""
    slots = {w for kind, _ in _KINDS for w in claim & kind}
    found: set[str] = set()
    if not slots:
        return found
    for part in _CLAUSE_PARTS.split(sentence):  # "closed on Mondays and open ... other days"
        stated = {stem(t) for t in tokens(part)}
        if slots & stated:
            found |= _opposed(claim, stated)
    return found


_DETERMINERS = frozenset({"the", "a", "an", "all", "most", "many", "some", "other"})


@derived
def _own_subject_not() -> frozenset[str]:
    """Words that, opening a clause after its determiners, name no subject of its own: stop
    words and pronouns."""
    return stop_words() | {"it", "they", "he", "she", "this", "these", "those"}


def _contrasted(claim: str, sentence: str) -> set[str]:
    """Claim stems whose opposite the one clause of a two-clause contrast naming the
    claim's subject (its first content word) states, while the other clause opens with a
    subject of its own and states them ("Cyclists have to pay the toll" against "Cars pay
    a toll of 2 euros; cyclists cross free of charge"). Only clauses joined by a
    semicolon count: each has its own subject ("Prices fell in 2019, but rose in 2020"
    shares one)."""
    clauses = [c for c in sentence.split(";") if c.strip()]
    stops, negated = stop_words(), negations()
    words = [t for t in tokens(claim) if t not in stops and t not in negated]
    if len(clauses) != 2 or not words:
        return set()
    subject = stem(words[0])
    claim_stems = {stem(w) for w in words}
    stated = [{stem(t) for t in tokens(c)} for c in clauses]
    for own, other in ((0, 1), (1, 0)):
        if subject in stated[own] and subject not in stated[other]:
            opener = next((t for t in tokens(clauses[other]) if t not in _DETERMINERS), "")
            if not opener or opener in _own_subject_not():
                return set()
            return {w for w in _opposed(claim_stems, stated[own]) if w in stated[other]}
    return set()


@derived
def _rated() -> re.Pattern[str]:
    """A rating with its grade in group 1 ("rated it outstanding": ``rating_words.txt``)."""
    grades = wl.entries("rating_words", "grades")
    if not grades:
        return NEVER
    return re.compile(
        r"\b" + wl.one_of("rating_words", "verbs") + r"\s+(?:it\s+|them\s+|as\s+)*"
        r"(?:[\w'\-]+\s+){0,4}?(?:as\s+)?(?:an?\s+)?"
        r"[\"'\u201c]?(" + "|".join(grades) + r")\b",
        re.I,
    )


def _rated_otherwise(claim: str, sentence: str) -> set[str]:
    """The claim's rating when the sentence gives the same kind of rating another grade
    ("rated it outstanding" against "the school was rated good")."""
    rated = _rated()
    mine = {m.group(1).lower() for m in rated.finditer(claim)}
    theirs = {m.group(1).lower() for m in rated.finditer(sentence)}
    if len(mine) != 1 or not theirs or mine & theirs:
        return set()
    return {stem(next(iter(mine)).split()[0])}


@derived
def _none_but() -> re.Pattern[str]:
    """ "None but X" with X in group 1 ("no runtime dependencies apart from Pillow":
    ``only_exceptions.txt``)."""
    return re.compile(
        r"\b"
        + wl.one_of("only_exceptions", "none")
        + r"\b[^.;]*?\b"
        + wl.one_of("only_exceptions", "but")
        + r"\s+(?:the\s+|an?\s+)?(\w+)",
        re.I,
    )


@derived
def _only() -> re.Pattern[str]:
    return re.compile(r"\b" + wl.one_of("only_exceptions", "only") + r"\b", re.I)


def _only_as_exception(claim_stems: set[str], claim: str, sentence: str) -> bool:
    """True when the sentence says "none but X" of an X the claim says "only" of ("It has no
    runtime dependencies apart from Pillow" against "depends only on Pillow"): a negation
    that states the claim's restriction, not its opposite."""
    if not _only().search(claim):
        return False
    return any(stem(m.group(1).lower()) in claim_stems for m in _none_but().finditer(sentence))


@derived
def _except() -> re.Pattern[str]:
    """What the sentence makes the exception, in group 1 ("except Monday":
    ``exception_words.txt``)."""
    return re.compile(r"\b" + wl.one_of("exception_words") + r"\s+(?:on\s+|in\s+)?(\w+)", re.I)


def _excepted(claim: set[str], sentence: str) -> set[str]:
    """The claim's weekday, season or month that the sentence makes the exception ("open
    on Mondays" against "open every day except Monday")."""
    named = {stem(m.group(1).lower()) for m in _except().finditer(sentence)}
    return {w for w in claim & named if any(w in kind for kind, _ in _KINDS)}


@derived
def _synonyms() -> dict[str, str]:
    """Stems a polarity conflict may be stated with in other words ("not permitted" against
    "allowed"), each with its meaning (``synonyms.txt``)."""
    return {
        stem(w): meaning
        for meaning in wl.sections("synonyms")
        for w in wl.entries("synonyms", meaning)
    }


@derived
def _opposite_slots() -> dict[str, str]:
    """Every form of an antonym mapped to one key per group of words opposed to each other
    ("north", "south", "southern", "northern" share one)."""
    group: dict[str, str] = {}
    for a, b in _antonyms():
        key_a, key_b = group.get(stem(a), stem(a)), group.get(stem(b), stem(b))
        for w, key in list(group.items()):  # merge b's group into a's
            if key == key_b:
                group[w] = key_a
        group[stem(a)] = group[stem(b)] = key_a
    forms = _antonym_forms()
    return {form: key for w, key in group.items() for form in forms[w]}


@derived
def _said_or_opposed() -> dict[str, str]:
    """Stems mapped to one key for a word, its synonyms and its opposite: the sentence about
    a claim may hold the opposite of one of its words."""
    synonyms, slots = _synonyms(), _opposite_slots()
    return {
        w: slots.get(synonyms.get(w, w), synonyms.get(w, w)) for w in synonyms.keys() | slots.keys()
    }


@derived
def _ended() -> re.Pattern[str]:
    """A passive saying something has ended for good ("was closed in 2023"; not "closed for
    repairs": ``ended_verbs.txt``)."""
    return re.compile(
        r"\b(?:was|were|has been|have been|had been)\s+(?:"
        + wl.one_of("ended_verbs", "adverbs")
        + r"\s+)?"
        + wl.one_of("ended_verbs", "passive")
        + r"\b(?!\s+(?:for|to|on|until|between|during|from)\b)",
        re.IGNORECASE,
    )


@derived
def _present() -> re.Pattern[str]:
    return re.compile(r"\b" + wl.one_of("ended_tense_words", "present") + r"\b", re.I)


@derived
def _past_verb() -> re.Pattern[str]:
    past = "|".join([r"[a-z]{2,}ed", *wl.entries("ended_tense_words", "past verbs")])
    return re.compile(r"\b(?:" + past + r")\b")


@derived
def _past() -> re.Pattern[str]:
    return re.compile(r"\b" + wl.one_of("ended_tense_words", "past") + r"\b", re.IGNORECASE)


_YEAR = re.compile(r"\b(?:1[5-9]\d\d|20\d\d)\b")


@derived
def _ended_active() -> re.Pattern[str]:
    """An active verb saying something has ended, with a year or nothing after it ("Flights
    to Belfast ended in 2024": ``ended_verbs.txt``)."""
    return re.compile(
        r"\b" + wl.one_of("ended_verbs", "active") + r"\b"
        r"(?=\s+in\s+(?:[A-Z][a-z]+\s+)?\d{4}|\s*(?:[.;,]|$))"
    )


_CONTRAST_CLAUSES = re.compile(r";|\bbut\b|\bwhile\b|\bwhereas\b")
"""Where the clauses of a contrast meet ("...; ...", "... but ...", "... while ...")."""


@derived
def _ceased_support() -> re.Pattern[str]:
    """Support withdrawn ("drops support for Python 3.8"): the negation of supporting it
    (``ceased_support.txt``)."""
    return re.compile(
        r"\b" + wl.one_of("ceased_support") + r"\s+(?:its\s+|their\s+)?support\s+for\s+"
        r"(?P<what>[^,;]+?)(?=\s+(?:and|but|while)\b|[,;]|\.(?:\s|$)|$)",
        re.I,
    )


def _polarity(text: str, claim_words: frozenset[str]) -> int:
    """The parity of the text's negation cues, support withdrawn from what the claim is
    about counting as one ("drops support for Python 3.8" negates "supports Python 3.8",
    not "supports Python 3.10")."""
    ceased = sum(
        content_words(m.group("what")) <= claim_words for m in _ceased_support().finditer(text)
    )
    return (negation_count(text) + ceased) % 2


def _clause_about(claim_words: frozenset[str], sentence: str, min_coverage: float) -> str:
    """The clause of a contrast ("...; ...", "... but ...", "... while ...") holding the
    most of the claim's content words, when it holds at least ``min_coverage`` of those
    the sentence holds; else the whole sentence; then the part of that clause between
    its "and"s that says it of the claim's thing (:func:`_parallel_part`), or that holds
    the most of the claim's words when every other part opens with a subject of its own
    (:func:`_own_subject`) and says none of them. Polarity
    belongs to a clause: "Tuition is free for students from the region, while
    international students pay 9,000 euros" says of the region's students that they pay
    nothing, and "Admission is £9 for adults and free
    for children under 16" says nothing free of adults."""
    clause = _part_about(claim_words, sentence, _CONTRAST_CLAUSES, min_coverage)
    part = _parallel_part(claim_words, clause)
    if part != clause:
        return part
    parts = [p for p in _AND_PARTS.split(clause) if p.strip()]
    best = _part_about(claim_words, clause, _AND_PARTS, min_coverage)
    others = [p for p in parts if p != best]
    if (
        best != clause
        and all(_own_subject(p, claim_words) for p in others)
        and not any(claim_words & content_words(p) for p in others)
    ):
        return best  # "£12 for a foot passenger, and children under five travel free"
    return clause


def _own_subject(part: str, claim_words: frozenset[str]) -> bool:
    """Whether a part of a clause opens with a subject of its own: a content word the
    claim does not say, nor its opposite ("children under five travel free" beside "a
    ticket for a foot passenger costs £12"; not "cost £15" after "tours run on Saturday")."""
    opener = next((t for t in tokens(part) if t not in _DETERMINERS), "")
    if not opener or opener in _own_subject_not() or not opener[0].isalpha():
        return False
    word = stem(opener)
    opposed, forms = _antonym_pairs().get(word, set()), _antonym_forms()
    return word not in claim_words and not any(forms[o] & claim_words for o in opposed)


_AND_PARTS = re.compile(r",?\s+and\s+")
_COMPLEMENT = re.compile(r"\b(for|to|on|in|at)\s+(?:the\s+|all\s+)?([A-Za-z][\w\-]*)")


def _parallel_part(claim_words: frozenset[str], clause: str) -> str:
    """The part of ``clause`` between its "and"s that says it of what the claim is about,
    when the parts say it of different things with the same preposition ("£9 for adults
    and free for children under 16": the claim's "adults" picks the first part; "allowed
    in the garden and not in the cafe"); else ``clause``. Parts that share their subject
    and complement ("tours run on Saturdays and cost £15") stay one."""
    parts = [p for p in _AND_PARTS.split(clause) if p.strip()]
    if len(parts) < 2:
        return clause
    objects = [
        {(m.group(1).lower(), stem(m.group(2).lower())) for m in _COMPLEMENT.finditer(p)}
        for p in parts
    ]
    for i, own in enumerate(objects):
        for prep, obj in own:
            if obj not in claim_words:
                continue
            others = [o for j, other in enumerate(objects) if j != i for p, o in other if p == prep]
            if others and all(o != obj and o not in claim_words for o in others):
                return parts[i]
    return clause


def _part_about(
    claim_words: frozenset[str], text: str, joints: re.Pattern[str], min_coverage: float
) -> str:
    """The part of ``text`` between ``joints`` holding the most of the claim's content
    words, when it holds at least ``min_coverage`` of those the text holds; else ``text``."""
    parts = [p for p in joints.split(text) if p.strip()]
    said = claim_words & content_words(text)  # not the passage's lead name, if borrowed
    if len(parts) < 2 or not said:
        return text
    best = max(parts, key=lambda p: len(said & content_words(p)))
    if len(said & content_words(best)) / len(said) < min_coverage:
        return text
    return best


def ended(claim: str, sentences_about: Sequence[str]) -> list[str]:
    """Sentences about every content word of a present-tense claim with a clause saying
    that what the claim is about has ended for good: its subject (the words before the
    verb) shares at least half its content words with the claim, and the verb is closed,
    shut down, demolished, abolished, dissolved, disbanded, discontinued or scrapped in
    the passive ("The reptile house was closed in 2023"; not "closed for repairs" or "on
    Sundays"), or ended, ceased, stopped, folded, closed, shut down with a year or
    nothing after it ("Flights to Belfast ended in 2024"). A claim in the past tense is
    not in conflict (a past marker, a year, or a past verb with no present one)."""
    if _past().search(claim) or _YEAR.search(claim):
        return []
    if not _present().search(claim) and _past_verb().search(claim):
        return []
    words = content_words(claim)
    found = []
    for sentence in sentences_about:
        for clause in _CONTRAST_CLAUSES.split(sentence):
            m = _ended().search(clause) or _ended_active().search(clause)
            if m is None:
                continue
            subject = {w for w in content_words(clause[: m.start()]) if not w[0].isdigit()}
            if subject and len(subject & words) >= max(1.0, len(subject) / 2):
                found.append(sentence)
                break
    return found
