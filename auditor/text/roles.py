"""Who holds which role: "Prime Minister Mira Kovac", "chaired by Anna Berg", "opened in
1931 by Queen Mary".

:func:`role_facts` reads the roles one sentence gives (:class:`RoleFact`: the role, its
holder, what it is about); :func:`role_conflicts`, :func:`roles_confirmed` and
:func:`role_stated` compare the roles a claim gives with those of its evidence. The
``entity_consistency`` judge reads the conflicts and confirmations, the label step's
relevance rule whether the evidence states the claim's role at all. The role words,
the words that make a cue another role and the verbs of a sale are word lists in
``auditor/judges/wordlists/`` (``role_words.txt``, ``role_qualifiers.txt``,
``sale_verbs.txt``).
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from auditor.judges import wordlists as wl
from auditor.judges.wordlists import NEVER, cleared_on_ablation, derived
from auditor.text.names import (
    NAME_PATTERN,
    WORD_PATTERN,
    name_tokens,
    non_name_words,
    share_a_name,
)
from auditor.text.pronouns import resolved_sentences
from auditor.text.sentences import sentences
from auditor.text.words import stem

_NAME = NAME_PATTERN


@derived
def _role_cues() -> dict[str, tuple[str, ...]]:
    """Each role with the words that give it (``role_words.txt``)."""
    return {role: wl.entries("role_words", role) for role in wl.sections("role_words")}


@derived
def _cue() -> re.Pattern[str]:
    """A role cue, the longest first."""
    cues = [c for cs in _role_cues().values() for c in cs]
    if not cues:
        return NEVER
    ordered = sorted((re.escape(c) for c in cues), key=len, reverse=True)
    return re.compile(r"\b(" + "|".join(ordered) + r")\b", re.IGNORECASE)


@derived
def role_cue_words() -> frozenset[str]:
    """Single words of the role cues ("ceo", "prime", "minister", ...)."""
    return frozenset(w for cues in _role_cues().values() for c in cues for w in c.split())


@derived
def _family() -> dict[str, str]:
    """Each cue's role."""
    return {c: family for family, cs in _role_cues().items() for c in cs}


@derived
def _participles() -> frozenset[str]:
    """Cues that are participles: after "is"/"was" the name before them is what the role is
    about ("The gallery was founded in 1889"), not who holds it."""
    return frozenset(c for c in _family() if c.endswith("ed") or c == "led")


_BE = re.compile(r"\s+(?:is|was|are|were|has been|had been|have been)\b")
_BY = (
    r"(?:\s+(?:in|on|at|during)\s+(?:(?!\b(?:and|but|or)\b)[^,.;:]){1,25}?)?"
    r"\s+by\s+(?:(?:the\s+|an?\s+)?(?:[a-z]+\s+){0,2}[a-z]+,\s+)?"
    r"(?:the\s+|an?\s+)?(?:[a-z]+\s+){0,2}?"
)
"""What may stand between a role word and its holder: "by", after a date and a
description ("founded in 2002 by the musician Ruth Calloway"), also one set off by a
comma ("owned by a private company, Northgate Aviation Ltd.")."""
_HOLDER_AFTER = re.compile(rf"(?:{_BY}|\s*:\s*|\s+)({_NAME})")
"""The holder after a role cue: "Prime Minister Mira Kovac", "chaired by Anna Berg",
"founded in 2002 by the musician Ruth Calloway", "coach: Tom Bale"."""
_COMPOUND = re.compile(r"\s+(?!(?:of|is|was|has|since|at|for|and|by|the)\b)([a-z]+)\b")
"""The noun after "head" that makes another role of it ("head keeper", not "head of")."""


_RELATIVE = re.compile(r",\s+(?:who|which)\s+[^,]*,\s*$")


_AGENT = re.compile(rf"\b([a-z]+ed){_BY}({_NAME})")
"""A passive agent: "opened in 1931 by Queen Mary", "designed by the architect Lena
Fischer". Who did it is a role of its own (``by:open``), unless the verb is a role cue."""


@derived
def _sold_to() -> re.Pattern[str]:
    """A sale: the buyer is who owns it now ("sold the airport to Eastway Holdings")."""
    return re.compile(
        r"\b" + wl.one_of("sale_verbs") + r"\b(?:\s+(?:the|its|their|his|her)(?:\s+[a-z]+){1,2})?"
        rf"\s+to\s+(?:the\s+)?({_NAME})"
    )


_AGENT_DESCRIBED = re.compile(
    r"\b([a-z]+ed)\s+by\s+the\s+((?:[a-z]+\s+){1,2}[a-z]+)"
    r"(?=\s*(?:[,.;:)]|$)|\s+(?:and|since|until|in|from|for|on|at)\b)"
)
"""A passive agent described rather than named, in two or three words: "maintained by
the county council"."""


_AFFILIATION = re.compile(rf"({_NAME})\s+(?:of|from)\s+the\s+({_NAME})")
"""A holder and the party or group named right after it ("Dev Malhotra of the Labour
group")."""


_CO_HOLDER = re.compile(rf"(?:\s*,\s*|\s+and\s+|\s*&\s*)({_NAME})")


_LINK = r"\s*,\s*(?:the\s+)?(?:\w+(?:['\u2019]s)?\s+)?"
"""What links a holder before a role cue to it ("Anna Berg, the chair")."""


@derived
def _qualifiers() -> frozenset[str]:
    """Words up to three before a role cue that make it another role ("deputy chair", "the
    youth team is coached by": ``role_qualifiers.txt``)."""
    return wl.words("role_qualifiers")


@dataclass(frozen=True)
class RoleFact:
    """``holder`` holds ``role`` (a role family, or ``by:<verb stem>`` for who did
    something in the passive) in one sentence; name tokens are lower-cased. ``topic`` holds the
    sentence's other content words (stemmed; what the role is about when it names nothing:
    "the board of trustees"), ``pairs`` the adjacent pairs among them ("financ",
    "committe")."""

    role: str
    holder: frozenset[str]
    about: tuple[frozenset[str], ...]
    """The sentence's other names, one token set per name."""
    topic: frozenset[str] = frozenset()
    pairs: frozenset[tuple[str, str]] = frozenset()


def role_facts(sentence: str) -> list[RoleFact]:
    """Who holds which role in ``sentence``: "Prime Minister Mira Kovac", "Anna Berg, the
    chair", "chaired by Anna Berg", "the coach of the Rovers is Tom Bale", "Lena Fisk leads",
    and who did something in the passive ("opened in 1931 by Queen Mary") or bought it
    ("sold the airport to Eastway Holdings"). Everything else named in the sentence is
    what the role is ``about`` (the council, the country, the club)."""
    return list(_sentence_roles(sentence))


@cleared_on_ablation
@functools.lru_cache(maxsize=16_384)
def _sentence_roles(sentence: str) -> tuple[RoleFact, ...]:
    """:func:`role_facts`, kept per sentence: an evidence document is read for every
    claim judged against it."""
    names = [(m.start(), m.end(), name_tokens(m.group(0))) for m in re.finditer(_NAME, sentence)]
    names = [(s, e, t) for s, e, t in names if t]
    cues = list(_cue().finditer(sentence))
    family_of, qualifiers = _family(), _qualifiers()
    topic, pairs = _topic(sentence, [(s, e) for s, e, _ in names] + [c.span() for c in cues])
    facts: list[RoleFact] = []
    for cue in cues:
        family = family_of[cue.group(1).lower()]
        cs, ce = cue.span()
        qualifier = next(
            (w for w in re.findall(r"[a-z]+", sentence[:cs].lower())[-3:] if w in qualifiers),
            None,
        )
        if qualifier:  # "deputy chair", "the youth team is coached by": another role
            family = f"{family}:{qualifier}"
        compound = _COMPOUND.match(sentence, ce) if cue.group(1).lower() == "head" else None
        if compound:  # "head keeper", "head chef": a role of its own
            family, ce = f"head {compound.group(1).lower()}", compound.end()
        after = sentence[ce:]
        holder: frozenset[str] | None = None
        # "Prime Minister Mira Kovac", "chaired by Anna Berg", "led by ...", "coach: X"
        m = _HOLDER_AFTER.match(after)
        if m and not re.match(r"\s+(?:of|for|at)\b", after):
            holder = name_tokens(m.group(1))
        if holder is None:  # "the prime minister of Freedonia is Jonas Alder", "the
            # leader of the council is Priya Sandhu"
            m = re.match(
                rf"(?:\s+(?:of|for|at)\s+(?:the\s+)?(?:{_NAME}(?:'s)?|[a-z]+)(?:\s+[a-z]+){{0,2}}?)?"
                rf"\s+(?:is|was|"
                rf"has been|remains)\s+(?:now\s+)?(?:the\s+)?({_NAME})",
                after,
            )
            if m:
                holder = name_tokens(m.group(1))
        if holder is None:  # "Anna Berg, the chair", "Lena Fisk leads"
            # "Anna Berg, who succeeded Peter Holm, chairs": the relative clause left out
            before = _RELATIVE.sub(" ", sentence[:cs])
            m = re.search(rf"({_NAME}){_LINK}$|({_NAME})\s+$", before)
            passive = (
                m is not None
                and m.group(1) is not None
                and cue.group(1).lower() in _participles()
                and _BE.search(before, m.end(1)) is not None
            )
            if (
                m
                and not passive  # "The Kestrel Art Gallery was founded in 1889": what, not who
                and not (m.group(1) or m.group(2)).endswith("'s")
                and not re.search(r"\b(?:of|the)\s*$", before[: m.start()] + " ")
            ):
                holder = name_tokens(m.group(1) or m.group(2))
        if not holder:
            continue
        if m is not None and m.string is after:  # "founded by Larry Page and Sergey Brin"
            holder = _with_co_holders(sentence, m.end() + ce, holder)
        facts.append(RoleFact(family, holder, (), topic, pairs))
    agents = [(m.group(1), name_tokens(m.group(2)), m.end()) for m in _AGENT.finditer(sentence)]
    # the buyer owns it now: "the council sold the airport to Eastway Holdings"
    agents += [("owned", name_tokens(m.group(1)), m.end()) for m in _sold_to().finditer(sentence)]
    agents += [
        (m.group(1), words, m.end())
        for m in _AGENT_DESCRIBED.finditer(sentence)
        if len(words := frozenset(w for w in m.group(2).split() if w not in non_name_words())) >= 2
    ]
    for verb, holder, end in agents:
        if verb.lower() in family_of or not holder:
            continue
        holder = _with_co_holders(sentence, end, holder)
        verb_stem = stem(verb.lower())
        # the verb is the role, not what it is about
        about_words = topic - {verb_stem}
        about_pairs = frozenset(p for p in pairs if verb_stem not in p)
        facts.append(RoleFact(f"by:{verb_stem}", holder, (), about_words, about_pairs))
    # what a role is about: the sentence's names that hold none of its roles ("The manager
    # is Sean Brody, and the captain is Luis Ortega" names nothing the roles are about)
    holders = [f.holder for f in facts]
    # a holder's party or group ("Prime Minister Elena Vasquez of the Green Alliance") is
    # whose the holder is, not what the role is about
    affiliated = {
        t
        for m in _AFFILIATION.finditer(sentence)
        if name_tokens(m.group(1)) in holders and (t := name_tokens(m.group(2)))
    }
    facts = [
        replace(
            f,
            about=tuple(
                t - f.holder
                for _, _, t in names
                if t - f.holder
                and t not in affiliated
                and not any(t & h for h in holders if h != f.holder)
            ),
        )
        for f in facts
    ]
    return tuple(facts)


def _with_co_holders(sentence: str, pos: int, holder: frozenset[str]) -> frozenset[str]:
    """``holder`` with the names listed right after it at ``pos`` (", B", " and C")."""
    while (co := _CO_HOLDER.match(sentence, pos)) is not None:
        holder |= name_tokens(co.group(1))
        pos = co.end()
    return holder


def _topic(
    sentence: str, skip: list[tuple[int, int]]
) -> tuple[frozenset[str], frozenset[tuple[str, str]]]:
    """Stemmed content words of ``sentence`` outside the ``skip`` spans (names, role cues),
    and the pairs of them that stand next to each other."""
    words = [
        (stem(w.group(0).lower()) if not any(s <= w.start() < e for s, e in skip) else None)
        for w in WORD_PATTERN.finditer(sentence)
    ]
    skipped = _skip_stems()
    kept = [None if w is None or w in skipped or w[0].isdigit() else w for w in words]
    pairs = frozenset(
        (a, b) for a, b in itertools.pairwise(kept) if a is not None and b is not None
    )
    return frozenset(w for w in kept if w is not None), pairs


@derived
def _skip_stems() -> frozenset[str]:
    """What :func:`~auditor.text.names.non_name_words` holds, as the stems :func:`_topic`
    compares."""
    skip = non_name_words()
    return skip | {stem(w) for w in skip}


_TOPIC_COVERAGE = 0.5
"""Share of a claim's role topic an evidence sentence must hold when the claim names
nothing the role is about ("the library board of trustees")."""


def _name_sets(text: str) -> tuple[frozenset[str], ...]:
    """One token set per name in ``text``."""
    return tuple(t for m in re.finditer(_NAME, text) if (t := name_tokens(m.group(0))))


def _same_subject(
    claim: RoleFact, stated: RoleFact, passage_names: tuple[frozenset[str], ...]
) -> bool:
    """Whether an evidence role fact is about what the claim's role is about: a name they
    share (a sentence that names nothing else takes its passage's names: "The head coach is
    Elena Sousa" in a page about the Rovers), or, when the claim names nothing, most of its
    topic words without a modifier of its replaced ("audit committee" is not "finance
    committee")."""
    if claim.about:
        return share_a_name(
            claim.about, stated.about or tuple(n for n in passage_names if n - stated.holder)
        )
    if not claim.topic:
        return False
    topic = stated.topic
    if not stated.about and not topic:
        # "The headteacher is Joanna Kemp": about what the passage names
        topic = topic | {stem(w) for n in passage_names for w in n}
    shared = claim.topic & topic
    if len(shared) / len(claim.topic) < _TOPIC_COVERAGE:
        return False
    return not any(
        modifier not in shared and head in shared and (m, head) in stated.pairs
        for modifier, head in claim.pairs
        for m in topic - claim.topic
    )


def _same_holder(a: frozenset[str], b: frozenset[str]) -> bool:
    """One holder's name inside the other's ("Kovac" and "Mira Kovac"); two names that
    each have a word of their own are two holders ("Lena Whitaker" and "Tom Whitaker")."""
    return a <= b or b <= a


def role_conflicts(claim: str, evidence: Sequence[str]) -> list[str]:
    """Evidence that gives a role the claim names a holder for to someone else.

    A conflict needs an evidence sentence with the same role about the same thing (it
    names something the claim's role is about: the council, the country, the player) whose
    holder
    shares no name with the claim's holder (all co-holders count: "founded by A and B"),
    and no evidence sentence giving the role to
    the claim's holder (so "Anna Berg, who succeeded Peter Holm, chairs the council"
    contradicts "Peter Holm chairs the council", and a sentence that also names Peter
    Holm as chair does not)."""
    return _roles(claim, evidence)[0]


def roles_confirmed(claim: str, evidence: Sequence[str]) -> bool:
    """True when the claim names a holder for a role and, for every such role, the
    evidence gives the same role about the same thing to that holder ("Hannah Cole is the
    CEO of Brightwell Foods" against "Its chief executive is Hannah Cole")."""
    return _roles(claim, evidence)[1]


def role_stated(claim: str, evidence: Sequence[str]) -> bool:
    """True when the evidence gives a role the claim names a holder for, about the same
    thing, to anyone (the claim's holder or another): the evidence speaks to the claim
    ("The school's head is David Lowe" against "The headteacher is Joanna Kemp" in the
    school's page), however little else the two share."""
    return _roles(claim, evidence)[2]


def _roles(claim: str, evidence: Sequence[str]) -> tuple[list[str], bool, bool]:
    """(:func:`role_conflicts`, :func:`roles_confirmed`, :func:`role_stated`), read once per
    claim and evidence: the judge and the labelling step's relevance test both ask."""
    found, confirmed, spoken = _roles_of(claim, tuple(evidence))
    return list(found), confirmed, spoken


@cleared_on_ablation
@functools.lru_cache(maxsize=4096)
def _roles_of(claim: str, evidence: tuple[str, ...]) -> tuple[tuple[str, ...], bool, bool]:
    claimed = [f for s in sentences(claim) for f in role_facts(s)]
    if not claimed:
        return (), False, False
    stated = [
        (f, names)
        for text in evidence
        for names in (_name_sets(text),)
        for s in resolved_sentences(text)
        for f in role_facts(s)
    ]
    found: list[str] = []
    confirmed = 0
    spoken = False
    for fact in claimed:
        unnamed = not fact.about and not fact.topic
        same = _same_role(fact, stated, unnamed)
        spoken = spoken or bool(same)
        if any(_same_holder(f.holder, fact.holder) for f in same):
            confirmed += 1
            continue
        found += [f"{fact.role}: {' '.join(sorted(f.holder))}" for f in same]
    return tuple(sorted(set(found))), confirmed == len(claimed), spoken


def _same_role(
    fact: RoleFact, stated: list[tuple[RoleFact, tuple[frozenset[str], ...]]], unnamed: bool
) -> list[RoleFact]:
    """The stated facts of the claim fact's role about the same thing ("Ruth Adeyemi is the
    chief executive", "... leads the company": about what the passage naming the claim's
    holder is about)."""
    return [
        f
        for f, names in stated
        if f.role == fact.role
        and (
            _same_subject(fact, f, names)
            or (unnamed and any(_same_holder(n, fact.holder) for n in names))
        )
    ]
