"""The ``negation_polarity`` judge: a polarity conflict (a negation, an antonym, another
weekday, season or month) with the evidence sentence about the same thing."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from auditor.judges import wordlists as wl
from auditor.judges.base import LocalJudge
from auditor.judges.wordlists import derived
from auditor.text import (
    DETERMINERS,
    MONTH_NAMES,
    WEEKDAYS,
    anchor_sentences,
    antonym_forms,
    antonym_pairs,
    antonyms,
    clause_about,
    content_words,
    negation_count,
    negations,
    own_subject_not,
    stem,
    stop_words,
    tokens,
)
from auditor.types import ABSTAIN, JudgePair

Result = tuple[float, dict[str, float], str]


def _raw(**fields: object) -> str:
    return json.dumps(fields, sort_keys=True, default=sorted)


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
    pairs, forms = antonym_pairs(), antonym_forms()
    return {
        w
        for w in claim
        if w in pairs
        and w not in stated
        and any(forms[o] & stated for o in pairs[w])
        # "from the day before ... after 4pm": a claim saying both says neither's opposite
        and not any(forms[o] & claim for o in pairs[w])
    }


class NegationPolarityJudge(LocalJudge):
    """Polarity conflict (negation or antonym) with the evidence sentence about the same thing.

    Abstains unless some evidence sentence shares most of the claim's content words. A
    flip is an odd number of negations on one side, an antonym, another weekday, season
    or month of the same thing, or an antonym in the clause that names the claim's day,
    season or month ("open on Sundays" against "open on Saturdays; it is closed on
    Sundays"); when the best sentence does not decide it, another weekday, season or
    month in the next sentence about the claim, if none names the claim's ("held each
    July" against "It was first held in 1979. It takes place every August"); or, in two
    clauses joined by a semicolon, the opposite of a claim word in the clause naming the
    claim's subject while the other clause says it of a subject of its own ("Cyclists
    have to pay the toll" against "Cars pay a toll of 2 euros; cyclists cross free of
    charge"); in parts joined by "and" that say it of different things with the same
    preposition, only the part about the claim's thing counts ("Adults pay £9" is no flip
    against "£9 for adults and free for children under 16"). A flip in a sentence holding
    every other content word of the claim ("closed to the public" against "open to the
    public on Friday evenings") is a clear conflict (``scores["conflict"]``).
    """

    name = "negation_polarity"
    # 26: a line is a sentence; 27: 12 word-list groups that changed no held-out vote
    # and no authored dev label removed (every day, except, only, synonyms, ratings,
    # "ended", "drops support for", ...): votes identical to their ablation
    version = "27"
    # the digest names the class where it was first published (local.py): moving it
    # changed no digest, no run id and no stored vote
    class_path = "auditor.judges.local.NegationPolarityJudge"

    def __init__(self, anchor_coverage: float = 0.6) -> None:
        super().__init__(anchor_coverage=anchor_coverage)
        self.anchor_coverage = anchor_coverage

    def score(self, pair: JudgePair) -> Result:
        claim_stems = {stem(t) for t in tokens(pair.claim)}
        claim_words = content_words(pair.claim)
        anchors = anchor_sentences(pair.claim, pair.evidence, self.anchor_coverage)
        slot: frozenset[str] = frozenset()
        if not anchors:
            # "Public tours are offered on Sundays" against "Public tours run on Saturdays":
            # the claim's weekday, season or month is the slot in question, not a word the
            # sentence about the claim must share
            slot = frozenset(w for kind, _ in _KINDS for w in claim_words & kind)
            anchors = (
                anchor_sentences(pair.claim, pair.evidence, self.anchor_coverage, ignore=slot)
                if slot
                else []
            )
        opposite = False
        if not anchors and not slot and claim_stems & _opposite_slots().keys():
            # "The pitch is artificial" against "The pitch is natural grass": the opposite
            # word stands where the claim's would
            anchors = anchor_sentences(
                pair.claim, pair.evidence, self.anchor_coverage, meanings=_opposite_slots()
            )
            opposite = bool(anchors)
        if not anchors:
            return ABSTAIN, {}, _raw(reason="no evidence sentence about the claim")
        coverage, sentence = anchors[0]
        sent_stems = {stem(t) for t in tokens(sentence)}
        kind_flip = _another_of_a_kind(claim_stems, sent_stems, sentence, pair.claim)
        if slot and not kind_flip:
            return ABSTAIN, {}, _raw(reason="no evidence sentence about the claim")
        clause = clause_about(claim_words, sentence, self.anchor_coverage)
        clause_stems = {stem(t) for t in tokens(clause)}
        in_clause = _clause_opposed(claim_stems, sentence) | _contrasted(pair.claim, sentence)
        antonym = sorted(_opposed(claim_stems, clause_stems) | in_clause | kind_flip)
        flipped = negation_count(pair.claim) % 2 != negation_count(clause) % 2
        opposed_in_anchor = len(_opposed(claim_stems, sent_stems)) if opposite else 0
        if opposite and not opposed_in_anchor:
            return ABSTAIN, {}, _raw(reason="no evidence sentence about the claim")
        if (flipped + len(antonym)) % 2:  # a negation and an antonym together cancel
            n = max(len(claim_words - slot), 1) + len(slot)
            # every claim word said (an antonym swapped for its pair): a clear conflict; a
            # weekday, season or month swapped may leave one word said otherwise ("offered"
            # for "run", "held" for "takes place")
            # (the coverage counts the words said otherwise already, and the opposites
            # when only they anchored the sentence)
            covered = round(coverage * (n - len(slot))) + len(antonym) - opposed_in_anchor
            clear = covered >= n - (1 if kind_flip else 0)
            if in_clause and not clear:
                # "open on Sundays" against "open on Saturdays; closed on Sundays": the
                # clause that holds the claim's day says the opposite, and the words the
                # sentence leaves to a pronoun ("It is ...") are in its passage
                passage = {stem(t) for text in pair.evidence for t in tokens(text)}
                clear = claim_words <= passage | set(antonym)
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
        return 0.0, {"support": coverage, "contradiction": 0.0}, _raw(sentence=sentence)


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


def _another_of_a_kind(
    claim: set[str], stated: set[str], sentence: str, claim_text: str = ""
) -> set[str]:
    """The claim's one weekday, season or month when the sentence names others of its
    kind and not it ("meets on Tuesdays" against "meets on Wednesdays", "every autumn"
    against "each spring", "every April" against "every September"), or ranges it falls
    outside ("open on Mondays" against "open Tuesday to Saturday"); a range that holds it
    ("Monday to Friday" for Tuesdays) decides nothing. A claim's range against the
    sentence's one range of its kind is another range when they cover other names ("open
    Tuesday to Saturday" against "open Monday to Saturday": :func:`_other_range`)."""
    found: set[str] = set()
    for kind, span in _KINDS:
        mine, theirs = claim & kind, stated & kind
        if len(mine) > 1 or span.search(claim_text):
            found |= _other_range(kind, span, claim_text, sentence, theirs)
            continue
        if len(mine) != 1 or not theirs or mine & theirs:
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
            opener = next((t for t in tokens(clauses[other]) if t not in DETERMINERS), "")
            if not opener or opener in own_subject_not():
                return set()
            return {w for w in _opposed(claim_stems, stated[own]) if w in stated[other]}
    return set()


@derived
def _opposite_slots() -> dict[str, str]:
    """Every form of an antonym mapped to one key per group of words opposed to each other
    ("north", "south", "southern", "northern" share one)."""
    group: dict[str, str] = {}
    for a, b in antonyms():
        key_a, key_b = group.get(stem(a), stem(a)), group.get(stem(b), stem(b))
        for w, key in list(group.items()):  # merge b's group into a's
            if key == key_b:
                group[w] = key_a
        group[stem(a)] = group[stem(b)] = key_a
    forms = antonym_forms()
    return {form: key for w, key in group.items() for form in forms[w]}
