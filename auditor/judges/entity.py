"""Named-entity consistency: proper names in the claim must appear in the evidence.

A cheap, model-free entity finder: runs of capitalised words (not sentence-initial
stop words), acronyms and the normalised numbers are left to ``numeric_consistency``.
The judge fails differently from the content-word judges: it ignores common words
and only looks at names, so a swapped person, place or organisation is caught even
when every other word matches.
"""

from __future__ import annotations

import functools
import itertools
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

from auditor.judges import wordlists as wl
from auditor.judges._pronouns import (
    NAME_PATTERN,
    lead_name,
    opens_with_other_name,
    resolved_sentences,
)
from auditor.judges._text import (
    MONTH_NAMES,
    WEEKDAYS,
    content_words,
    sentences,
    stem,
    stop_words,
)
from auditor.judges.base import LocalJudge, register_judge
from auditor.judges.wordlists import NEVER, cleared_on_ablation, derived
from auditor.types import ABSTAIN, JudgePair

Result = tuple[float, dict[str, float], str]

_CAP_RUN = re.compile(
    r"\b(?:[A-Z][A-Za-z'\-]*[A-Za-z]|[A-Z]{2,})(?:\s+(?:of|de|the|van|von|"
    r"la|du|del|and|&)?\s*(?:[A-Z][A-Za-z'\-]*[A-Za-z]|[A-Z]{2,}))*"
)
_MONTHS = frozenset({*MONTH_NAMES, *WEEKDAYS, *(day + "s" for day in WEEKDAYS)})
_POSSESSIVE = re.compile(r"['\u2019]s$")


@derived
def _skip() -> frozenset[str]:
    """Lower-cased words that are no name token: stop words, months and weekdays, "i", and
    ``entity_stopwords.txt`` (titles before a name, "Professor"; words that open a sentence
    capitalised, "Roughly")."""
    return stop_words() | _MONTHS | wl.words("entity_stopwords") | {"i"}


_LOWER_SUFFIX = re.compile(r"-[a-z][a-z\-]*$")
"""The lower-case part after a name's hyphen: "-based" of "Leeds-based"."""


def _name_matches(sentence: str) -> list[re.Match[str]]:
    """The capitalised runs of a sentence that may be names: not a lone plural noun that
    opens the sentence ("Kids younger than five ...", "Visitors can ...")."""
    return [m for m in _CAP_RUN.finditer(sentence) if not _plural_opener(sentence, m)]


def _plural_opener(sentence: str, match: re.Match[str]) -> bool:
    word = match.group(0)
    return (
        not sentence[: match.start()].strip(" \"'\u201c(")
        and " " not in word
        and word[1:].islower()
        and len(word) > 3
        and word.endswith("s")
        and not word.endswith(("ss", "us", "is", "as", "os", "es", "'s", "\u2019s"))
    )


def entities(text: str) -> frozenset[str]:
    """Lower-cased name tokens of the capitalised runs in ``text``.

    A run's first word is dropped when it is a stop word (sentence-initial "The",
    "In", ...); each remaining word of the run is one token, so "Barack Obama" and
    "Obama" share "obama"; a lower-case part after a hyphen is no part of the name
    ("Leeds-based" -> "leeds").
    """
    found: set[str] = set()
    skip = _skip()
    for sentence in sentences(text):
        for match in _name_matches(sentence):
            words = [
                _POSSESSIVE.sub("", _LOWER_SUFFIX.sub("", w).lower()).strip("'-")
                for w in match.group(0).split()
            ]
            found.update(w for w in words if w and w not in skip and len(w) > 1)
    return frozenset(found)


_ACRONYM = re.compile(r"\b[A-Z]{2,6}\b")
_NOT_INITIAL = frozenset({"of", "the", "and", "for", "de", "&"})


def _initials(name: str) -> str:
    return "".join(w[0] for w in name.split() if w.lower() not in _NOT_INITIAL).lower()


def said_as_acronym(claim: str, evidence: Sequence[str]) -> frozenset[str]:
    """Name tokens of the claim that the evidence gives as an acronym or spelt out: "UK"
    against "the United Kingdom", "National Health Service" against "NHS" (a name of two
    or more words whose initials are the acronym)."""
    text = " ".join(evidence)
    acronyms = {a.lower() for a in _ACRONYM.findall(text)}
    spelt = {_initials(m.group(0)) for m in _CAP_RUN.finditer(text) if " " in m.group(0)}
    found: set[str] = set()
    for m in _CAP_RUN.finditer(claim):
        run = m.group(0)
        if _ACRONYM.fullmatch(run) and run.lower() in spelt:
            found.add(run.lower())
        elif " " in run and _initials(run) in acronyms:
            found |= entities(run)
    return frozenset(found)


@register_judge("entity_consistency")
class EntityConsistencyJudge(LocalJudge):
    """Share of the claim's name tokens found in the evidence.

    Abstains when the claim names nothing (a lone plural opening a sentence, "Kids
    younger than five ...", "Visitors can ...", is no name). Votes 0 when at least ``support_at`` of
    the names are present, 1 below ``reject_below``, abstains in between.
    ``scores["contradiction"]`` is set only when a missing name is *replaced*: an
    evidence sentence about the same thing (sharing most of the claim's other content
    words) names something else of the same kind (acronym vs. proper name) in the same
    slot (next to the same content word), or when the evidence gives a role the claim
    names a holder for (chair, head of government, coach, chief executive, team, ...) to
    someone else (:func:`role_conflicts`; a clear conflict, ``scores["conflict"]``, even
    when the claim's name occurs elsewhere in the evidence; who did something in the
    passive, "opened in 1931 by Queen Mary", is a role too; someone said to lead it now,
    "is led by Rhys Calloway", conflicts with a sentence saying that he left and whoever
    succeeded him, in whatever role), or says the claim's name was
    left for another ("moved its headquarters from Dunmore to Ashby":
    :func:`transition_conflicts`). A name that the evidence
    merely never mentions is missing support, not a refutation: when the evidence names
    the claim's subject but not one of the claim's names (none of its words, or not its
    last word), the vote is 1 with ``scores["missing_detail"]`` ("designed by Maria Lopez"
    against a text about the bridge; "sponsored by Vale Breweries" beside a "Harrow Vale"),
    and so it is for a feature the claim gives its subject that such evidence never
    mentions (:func:`absent_features`: "has a cafe"), or an unnamed maker it never
    mentions ("founded by local fishermen"). Another sport for the same club is
    a clear conflict (:func:`kind_conflicts`); a name the evidence gives as an acronym or
    spells out is present (:func:`said_as_acronym`).
    """

    name = "entity_consistency"
    version = "27"  # 26: "a sauna for guests"; 27: a line is a sentence

    def __init__(self, support_at: float = 1.0, reject_below: float = 0.75) -> None:
        super().__init__(support_at=support_at, reject_below=reject_below)
        self.support_at, self.reject_below = support_at, reject_below

    def score(self, pair: JudgePair) -> Result:
        claimed = entities(pair.claim)
        if not claimed:
            return ABSTAIN, {}, json.dumps({"reason": "no names in claim"})
        if not pair.evidence:
            return ABSTAIN, {}, json.dumps({"reason": "no evidence"})
        evidence_lower = " ".join(pair.evidence).lower()
        evidence_words = _words(evidence_lower)
        # "Adult tickets ..." against "9 pounds for adults": a capitalised first word, in
        # another form of it (a light suffix strip, not the Snowball stem: "Managing
        # Director" is not "management")
        evidence_forms = {_light_stem(w) for w in evidence_words}
        present = {e for e in claimed if e in evidence_words or _light_stem(e) in evidence_forms}
        if present != claimed:
            present |= said_as_acronym(pair.claim, pair.evidence) & claimed
        share = len(present) / len(claimed)
        missing = sorted(claimed - present)
        if share >= self.support_at:
            vote = 0.0
        elif share < self.reject_below:
            vote = 1.0
        else:
            vote = ABSTAIN
        conflicts = (
            _conflicts(pair.claim, pair.evidence, claimed, frozenset(missing))
            if vote == 1.0
            else []
        )
        renamed = _renamed(pair.claim, pair.evidence, claimed, frozenset(missing))
        if renamed:  # "the Premier Basketball League" against "the National Basketball League"
            vote = 1.0
            conflicts = sorted({*conflicts, *renamed})
        roles, confirmed, _ = _roles(pair.claim, pair.evidence)
        roles += transition_conflicts(pair.claim, pair.evidence)
        roles += kind_conflicts(pair.claim, pair.evidence)
        out = {"support": share, "contradiction": 1.0 if conflicts or roles else 0.0}
        if renamed:
            out |= {"support": 0.0, "conflict": 1.0}
        if roles:  # the evidence gives the claim's role to someone else: a clear conflict
            vote = 1.0
            out |= {"support": 0.0, "conflict": 1.0}
        elif confirmed and set(missing) <= _cue_words():
            # every role the claim gives is given to the same holder; only role words
            # ("CEO" for "chief executive") are not found as written
            vote = 0.0
            out["support"] = 1.0
        elif (
            not conflicts
            and missing
            and subject_in_evidence(pair.claim, pair.evidence)
            and any(r.tokens <= set(missing) or r.head in missing for r in _name_runs(pair.claim))
        ):
            # a name the evidence about the claim never gives (all of it, or its last word:
            # "Vale Breweries" beside a "Harrow Vale")
            vote = 1.0
            out["missing_detail"] = 1.0
        absent = [] if vote == 1.0 else absent_features(pair.claim, pair.evidence)
        if absent:  # "Marlow Street Library has a cafe": a page about it that has none
            vote = 1.0
            out |= {"support": 0.0, "missing_detail": 1.0}
        return (
            vote,
            out,
            json.dumps(
                {
                    "share": round(share, 4),
                    "missing": missing,
                    "conflicts": conflicts,
                    "role_conflicts": roles,
                    "roles_confirmed": confirmed,
                }
                | ({"absent_features": absent} if absent else {}),
                sort_keys=True,
            ),
        )


_WORD_POS = re.compile(r"[A-Za-z0-9][A-Za-z0-9'\-]*")
_ANCHOR_COVERAGE = 0.4
"""Share of the claim's other content words an evidence sentence needs to be about it."""


@dataclass(frozen=True)
class _Run:
    tokens: frozenset[str]
    kind: str
    left: str | None
    right: str | None
    head: str = ""
    """The run's last name token ("breweries" of "Vale Breweries")."""
    modifier: bool = False
    """The name qualifies the noun after it ("the MIT licence", "the Apache 2.0 licence")."""


_DETERMINER_BEFORE = re.compile(r"\b(?:the|a|an)\s+$", re.I)
_NOUN_AFTER = re.compile(r"(?:\s+v?\d[\d.]*)?\s+[a-z]")


def _name_runs(sentence: str) -> list[_Run]:
    """The capitalised runs of one sentence with their kind and neighbouring content words."""
    matches = _name_matches(sentence)
    spans = [(m.start(), m.end()) for m in matches]
    skip = _skip()
    words = [
        (w.start(), w.end(), stem(w.group(0).lower()))
        for w in _WORD_POS.finditer(sentence)
        if not any(s <= w.start() < e for s, e in spans) and w.group(0).lower() not in skip
    ]
    runs = []
    for m in matches:
        parts = [_POSSESSIVE.sub("", w).strip("'-") for w in m.group(0).split()]
        names = frozenset(w.lower() for w in parts if w and w.lower() not in skip and len(w) > 1)
        if not names:
            continue
        kept = [w for w in parts if w.lower() in names]
        kind = "acronym" if all(w.isupper() for w in kept) else "name"
        left = next((t for s, e, t in reversed(words) if e <= m.start()), None)
        # "the Apache 2.0 licence": a version number does not part a name from its noun
        right = next((t for s, e, t in words if s >= m.end() and not t[0].isdigit()), None)
        modifier = bool(_DETERMINER_BEFORE.search(sentence, 0, m.start())) and bool(
            _NOUN_AFTER.match(sentence, m.end())
        )
        runs.append(_Run(names, kind, left, right, kept[-1].lower(), modifier))
    return runs


def _conflicts(
    claim: str, evidence: Sequence[str], claimed: frozenset[str], missing: frozenset[str]
) -> list[str]:
    """Evidence names that take the place of a missing claim name (see the judge's doc)."""
    lost = [r for r in _name_runs(claim) if r.tokens & missing]
    if not lost:
        return []
    about = content_words(claim) - {stem(m) for m in missing} - missing
    if len(about) < 2:  # one shared word ("Kids ... get in free", "Membership is free")
        return []
    found: list[str] = []
    for sentence in _sentences_about(about, evidence):
        for run in _name_runs(sentence):
            if run.tokens & claimed:
                continue
            if any(
                (run.kind == r.kind and run.left is not None and run.left == r.left)
                or (
                    run.right is not None
                    and run.right == r.right
                    # a name or an acronym qualifying the same noun ("the MIT licence"
                    # against "the Apache 2.0 licence")
                    and (run.kind == r.kind or (run.modifier and r.modifier))
                )
                for r in lost
            ):
                found.append(" ".join(sorted(run.tokens)))
    return sorted(set(found))


def _sentences_about(about: frozenset[str], evidence: Sequence[str]) -> Iterator[str]:
    """Evidence sentences holding at least :data:`_ANCHOR_COVERAGE` of the ``about``
    words, a sentence counting its passage's lead name unless it opens with another name
    ("The project is licensed ..." in Pinewood's page)."""
    if not about:
        return
    for text in evidence:
        lead = lead_name(text)
        lead_words = content_words(lead) if lead else frozenset()
        for sentence in sentences(text):
            words = content_words(sentence)
            if lead and not opens_with_other_name(sentence, lead):
                words |= lead_words
            if len(about & words) / len(about) >= _ANCHOR_COVERAGE:
                yield sentence


def _renamed(
    claim: str, evidence: Sequence[str], claimed: frozenset[str], missing: frozenset[str]
) -> list[str]:
    """Evidence names that are a claim name with its own words in place of the claim's
    missing ones, ending in the same word, in a sentence about the claim ("the Premier
    Basketball League" against "plays in the National Basketball League"; "Tom Whitaker"
    against "coached by Lena Whitaker"). A name the evidence shortens or lengthens
    ("Rivercats", "Grace Darling II") is no other name, and the claim's subject must be
    the evidence's ("Harrow Rovers are a rugby club" against a page about Kelder Rovers
    says nothing of Harrow Rovers)."""
    subject = claim_subject(claim)
    lost = [
        r
        for r in _name_runs(claim)
        if r.tokens != subject
        and r.tokens & missing
        and r.head not in missing
        and len(r.tokens) >= 2
    ]
    if not lost or not subject_in_evidence(claim, evidence):
        return []
    # the sentence must be about the claim in words other than the name's own
    about = content_words(claim) - {stem(t) for r in lost for t in r.tokens}
    found: list[str] = []
    for sentence in _sentences_about(about, evidence):
        found += [
            " ".join(sorted(run.tokens))
            for run in _name_runs(sentence)
            for r in lost
            if run.head == r.head
            and run.tokens - r.tokens
            and not run.tokens & missing
            and not (run.tokens - r.tokens) & claimed
        ]
    return sorted(set(found))


# --- who holds a role ------------------------------------------------------------------

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
def _cue_words() -> frozenset[str]:
    """Single words of the role cues ("ceo", "prime", "minister", ...)."""
    return frozenset(w for cues in _role_cues().values() for c in cues for w in c.split())


@derived
def _verb_cues() -> frozenset[str]:
    """Cues that are verbs: the name after them is what the role is about ("Elena Sousa
    coaches Harrow Vale Rovers"), the holder stands before (``role_verbs.txt``)."""
    return wl.words("role_verbs")


@derived
def _no_object() -> re.Pattern[str]:
    """What after a verb cue is no organisation it leads: "It runs 23 routes", "The ferry
    runs every hour", "runs a fleet of 140 buses", "leads from the front"
    (``no_object_words.txt``)."""
    return re.compile(r"\s+(?:\d|" + wl.one_of("no_object_words") + r"\b)", re.IGNORECASE)


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


@derived
def _predecessor() -> re.Pattern[str]:
    """A predecessor ("succeeding Dr Alan Pryce"): neither the holder of the sentence's role
    nor what the role is about (``succession_phrases.txt``)."""
    return re.compile(
        r"\b"
        + wl.one_of("succession_phrases", "predecessor")
        + rf"(?!\s+by\b)\s+(?:the\s+)?({_NAME})"
    )


@derived
def _left() -> re.Pattern[str]:
    """Who left a role: "Martin Oakes retired in 2024 and was succeeded as chief executive
    by Leila Haddad" (a predecessor, as with "succeeding")."""
    return re.compile(
        rf"({_NAME})(?:,[^,]{{1,40}},)?\s+(?:has\s+|had\s+)?"
        + wl.one_of("succession_phrases", "left")
        + r"\b"
    )


@derived
def _left_verb() -> re.Pattern[str]:
    """The words :func:`_left` needs: a cheap test before its name-first search."""
    return re.compile(r"\b" + wl.one_of("succession_phrases", "left") + r"\b")


_RELATIVE = re.compile(r",\s+(?:who|which)\s+[^,]*,\s*$")


@derived
def _agent_class() -> dict[str, str]:
    """Stems of passive verbs that name the same role ("run by", "operated by", "owned by",
    "bought by"), each with its role's stem (``agent_classes.txt``)."""
    return {stem(w): stem(role) for w, role in wl.pairs("agent_classes")}


def _participle(section: str) -> str:
    """A passive verb: an "-ed" form or one of ``agent_verbs.txt``'s section."""
    return "|".join([r"[a-z]+ed", *wl.entries("agent_verbs", section)])


@derived
def _agent() -> re.Pattern[str]:
    """A passive agent: "opened in 1931 by Queen Mary", "designed by the architect Lena
    Fischer". Who did it is a role of its own (``by:open``), unless the verb is a role cue."""
    return re.compile(rf"\b({_participle('named')}){_BY}({_NAME})")


@derived
def _sold_to() -> re.Pattern[str]:
    """A sale: the buyer is who owns it now ("sold the airport to Eastway Holdings")."""
    return re.compile(
        r"\b" + wl.one_of("sale_verbs") + r"\b(?:\s+(?:the|its|their|his|her)(?:\s+[a-z]+){1,2})?"
        rf"\s+to\s+(?:the\s+)?({_NAME})"
    )


@derived
def _agent_described() -> re.Pattern[str]:
    """A passive agent described rather than named, in two or three words: "maintained by
    the county council", "run by the local health board"."""
    return re.compile(
        rf"\b({_participle('described')})\s+by\s+the\s+((?:[a-z]+\s+){{1,2}}[a-z]+)"
        r"(?=\s*(?:[,.;:)]|$)|\s+(?:and|since|until|in|from|for|on|at)\b)"
    )


_AFFILIATION = re.compile(rf"({_NAME})\s+(?:of|from)\s+the\s+({_NAME})")
"""A holder and the party or group named right after it ("Dev Malhotra of the Labour
group")."""


@derived
def _team() -> re.Pattern[str]:
    """A player and the team he plays for ("Sam Reed joined the Falcons": ``team_verbs.txt``)."""
    return re.compile(
        rf"({_NAME})(?:,[^,]{{1,40}},)?\s+"
        + wl.one_of("team_verbs", "member")
        + rf"\s+(?:the\s+)?({_NAME})"
    )


_CO_HOLDER = re.compile(rf"(?:\s*,\s*|\s+and\s+|\s*&\s*)({_NAME})")


@derived
def _link() -> str:
    """What links a holder before a role cue to it ("Anna Berg, the chair", "X became
    president": ``role_link_phrases.txt``)."""
    return (
        r"(?:\s*,\s*|\s+"
        + wl.one_of("role_link_phrases")
        + r"\s+)(?:the\s+)?(?:\w+(?:['\u2019]s)?\s+)?"
    )


@derived
def _qualifiers() -> frozenset[str]:
    """Words up to three before a role cue that make it another role ("deputy chair", "the
    youth team is coached by": ``role_qualifiers.txt``)."""
    return wl.words("role_qualifiers")


@dataclass(frozen=True)
class RoleFact:
    """``holder`` holds ``role`` (a role family, or ``team`` with ``holder`` the team and
    ``about`` the player) in one sentence; name tokens are lower-cased. ``topic`` holds the
    sentence's other content words (stemmed; what the role is about when it names nothing:
    "the board of trustees"), ``pairs`` the adjacent pairs among them ("financ",
    "committe")."""

    role: str
    holder: frozenset[str]
    about: tuple[frozenset[str], ...]
    """The sentence's other names, one token set per name."""
    topic: frozenset[str] = frozenset()
    pairs: frozenset[tuple[str, str]] = frozenset()
    verb: str = ""
    """The passive verb of a ``by:`` role, stemmed ("run" of "run by")."""
    left: tuple[frozenset[str], ...] = ()
    """Names the sentence says left a role ("Rhys Calloway stepped down and was succeeded
    as chief executive by Ines Varga"), one token set per name."""


def _tokens(name: str) -> frozenset[str]:
    skip = _skip()
    words = (re.sub(r"'s$", "", w.lower()).strip("'-") for w in name.split())
    return frozenset(w for w in words if w not in skip and len(w) > 1)


def role_facts(sentence: str) -> list[RoleFact]:
    """Who holds which role in ``sentence``: "Prime Minister Mira Kovac", "Anna Berg, the
    chair", "chaired by Anna Berg", "the coach of the Rovers is Tom Bale", "Lena Fisk leads",
    and team membership ("Sam Reed joined the Falcons"). Everything else named in the
    sentence is what the role is ``about`` (the council, the country, the club)."""
    return list(_sentence_roles(sentence))


@cleared_on_ablation
@functools.lru_cache(maxsize=16_384)
def _sentence_roles(sentence: str) -> tuple[RoleFact, ...]:
    """:func:`role_facts`, kept per sentence: an evidence document is read for every
    claim judged against it."""
    names = [(m.start(), m.end(), _tokens(m.group(0))) for m in re.finditer(_NAME, sentence)]
    names = [(s, e, t) for s, e, t in names if t]
    cues = list(_cue().finditer(sentence))
    family_of, verb_cues, qualifiers = _family(), _verb_cues(), _qualifiers()
    topic, pairs = _topic(sentence, [(s, e) for s, e, _ in names] + [c.span() for c in cues])
    predecessors = {m.start(1) for m in _predecessor().finditer(sentence)}
    if _left_verb().search(sentence):
        predecessors |= {m.start(1) for m in _left().finditer(sentence)}
    left = tuple(t for s, _, t in names if s in predecessors)
    names = [(s, e, t) for s, e, t in names if s not in predecessors]
    facts: list[RoleFact] = []
    for cue in cues:
        family = family_of[cue.group(1).lower()]
        cs, ce = cue.span()
        if cue.group(1).lower() in verb_cues and _no_object().match(sentence, ce):
            continue
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
        if (
            m
            and cue.group(1).lower() not in verb_cues
            and not re.match(r"\s+(?:of|for|at)\b", after)
            # "the Premier Hockey League", "the President Hotel": a name, not a title
            and not (cue.group(1)[0].isupper() and _tokens(m.group(1)) & _named_things())
        ):
            holder = _tokens(m.group(1))
        if holder is None:  # "the prime minister of Freedonia is Jonas Alder", "the
            # leader of the council is Priya Sandhu"
            m = re.match(
                rf"(?:\s+(?:of|for|at)\s+(?:the\s+)?(?:{_NAME}(?:'s)?|[a-z]+)(?:\s+[a-z]+){{0,2}}?)?"
                rf"\s+(?:is|was|"
                rf"has been|remains)\s+(?:now\s+)?(?:the\s+)?({_NAME})",
                after,
            )
            if m:
                holder = _tokens(m.group(1))
        if holder is None:  # "Anna Berg, the chair", "Lena Fisk leads", "X became president"
            # "Anna Berg, who succeeded Peter Holm, chairs": the relative clause left out
            before = _RELATIVE.sub(" ", sentence[:cs])
            m = re.search(rf"({_NAME}){_link()}$|({_NAME})\s+$", before)
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
                holder = _tokens(m.group(1) or m.group(2))
        if not holder:
            continue
        if m is not None and m.string is after:  # "founded by Larry Page and Sergey Brin"
            holder = _with_co_holders(sentence, m.end() + ce, holder)
        facts.append(RoleFact(family, holder, (), topic, pairs))
    agents = [(m.group(1), _tokens(m.group(2)), m.end()) for m in _agent().finditer(sentence)]
    # the buyer owns it now: "the council sold the airport to Eastway Holdings"
    agents += [("owned", _tokens(m.group(1)), m.end()) for m in _sold_to().finditer(sentence)]
    agents += [
        (m.group(1), words, m.end())
        for m in _agent_described().finditer(sentence)
        if len(words := frozenset(w for w in m.group(2).split() if w not in _skip())) >= 2
    ]
    for verb, holder, end in agents:
        if verb.lower() in family_of or not holder:
            continue
        holder = _with_co_holders(sentence, end, holder)
        verb_stem = stem(verb.lower())
        role = _agent_class().get(verb_stem, verb_stem)
        # the verb is the role, not what it is about ("run by" and "operated by" alike)
        about_words = topic - {verb_stem}
        about_pairs = frozenset(p for p in pairs if verb_stem not in p)
        facts.append(RoleFact(f"by:{role}", holder, (), about_words, about_pairs, verb_stem))
    # what a role is about: the sentence's names that hold none of its roles ("The manager
    # is Sean Brody, and the captain is Luis Ortega" names nothing the roles are about)
    holders = [f.holder for f in facts]
    # a holder's party or group ("Prime Minister Elena Vasquez of the Green Alliance") is
    # whose the holder is, not what the role is about
    affiliated = {
        t
        for m in _AFFILIATION.finditer(sentence)
        if _tokens(m.group(1)) in holders and (t := _tokens(m.group(2)))
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
    for m in _team().finditer(sentence):
        player, team = _tokens(m.group(1)), _tokens(m.group(2))
        if player and team and not player & team:
            facts.append(RoleFact("team", team, (player,), topic, pairs))
    return tuple(replace(f, left=left) for f in facts) if left else tuple(facts)


@derived
def _joined_from_pattern() -> re.Pattern[str]:
    """A player who came from another team ("Goalkeeper Jan Hruby joined from the Brno
    Comets in 2023"), in a page about the team he joined."""
    return re.compile(
        rf"({_NAME})(?:,[^,]{{1,40}},)?\s+(?:has\s+)?"
        + wl.one_of("team_verbs", "joined from")
        + rf"(?:\s+in\s+\d{{4}})?\s+from\s+(?:the\s+)?({_NAME})"
    )


@cleared_on_ablation
@functools.lru_cache(maxsize=4096)
def _joined_from(text: str) -> tuple[RoleFact, ...]:
    """Team facts of a page about a team whose sentences say a player joined it from
    another: the player's team is the page's ("The Ostrava Falcons are ... Jan Hruby joined
    from the Brno Comets" puts Jan Hruby in the Falcons, not the Comets)."""
    lead = lead_name(text)
    team = _tokens(lead) if lead else frozenset()
    if not team:
        return ()
    facts = []
    for sentence in sentences(text):
        for m in _joined_from_pattern().finditer(sentence):
            player, former = _tokens(m.group(1)), _tokens(m.group(2))
            if player and not player & team and not former & team:
                facts.append(RoleFact("team", team, (player,)))
    return tuple(facts)


def _with_co_holders(sentence: str, pos: int, holder: frozenset[str]) -> frozenset[str]:
    """``holder`` with the names listed right after it at ``pos`` (", B", " and C")."""
    while (co := _CO_HOLDER.match(sentence, pos)) is not None:
        holder |= _tokens(co.group(1))
        pos = co.end()
    return holder


def _topic(
    sentence: str, skip: list[tuple[int, int]]
) -> tuple[frozenset[str], frozenset[tuple[str, str]]]:
    """Stemmed content words of ``sentence`` outside the ``skip`` spans (names, role cues),
    and the pairs of them that stand next to each other."""
    words = [
        (stem(w.group(0).lower()) if not any(s <= w.start() < e for s, e in skip) else None)
        for w in _WORD_POS.finditer(sentence)
    ]
    skipped, generic = _skip_stems(), _generic()
    kept = [
        None if w is None or w in skipped or w in generic or w[0].isdigit() else w for w in words
    ]
    pairs = frozenset(
        (a, b) for a, b in itertools.pairwise(kept) if a is not None and b is not None
    )
    return frozenset(w for w in kept if w is not None), pairs


@derived
def _generic() -> frozenset[str]:
    """Stems of the words that say nothing of what a role is about (``topic_stopwords.txt``)."""
    return frozenset(stem(w) for w in wl.entries("topic_stopwords"))


@derived
def _skip_stems() -> frozenset[str]:
    """What :func:`_skip` holds, as the stems :func:`_topic` compares."""
    skip = _skip()
    return skip | {stem(w) for w in skip}


_TOPIC_COVERAGE = 0.5
"""Share of a claim's role topic an evidence sentence must hold when the claim names
nothing the role is about ("the library board of trustees")."""


def _name_sets(text: str) -> tuple[frozenset[str], ...]:
    """One token set per name in ``text``."""
    return tuple(t for m in re.finditer(_NAME, text) if (t := _tokens(m.group(0))))


def _share_a_name(a: tuple[frozenset[str], ...], b: tuple[frozenset[str], ...]) -> bool:
    """Whether one name of ``a`` is all in ``b`` or the reverse ("Dunmore Rovers" and
    "Rovers" do; "Dunmore Rovers" and "Harrow Vale Rovers" do not)."""
    in_a, in_b = frozenset().union(*a), frozenset().union(*b)
    return any(n <= in_b for n in a) or any(n <= in_a for n in b)


def _same_subject(
    claim: RoleFact, stated: RoleFact, passage_names: tuple[frozenset[str], ...]
) -> bool:
    """Whether an evidence role fact is about what the claim's role is about: a name they
    share (a sentence that names nothing else takes its passage's names: "The head coach is
    Elena Sousa" in a page about the Rovers), or, when the claim names nothing, most of its
    topic words without a modifier of its replaced ("audit committee" is not "finance
    committee")."""
    if claim.about:
        return _share_a_name(
            claim.about, stated.about or tuple(n for n in passage_names if n - stated.holder)
        )
    if not claim.topic:
        return False
    topic = stated.topic
    if not stated.about and topic <= _generic_topic():
        # "The headteacher is Joanna Kemp", "The service is operated by Riverlink Boats":
        # about what the passage names
        topic = topic | {stem(w) for n in passage_names for w in n}
    shared = claim.topic & topic
    if len(shared) / len(claim.topic) < _TOPIC_COVERAGE:
        return False
    return not any(
        modifier not in shared and head in shared and (m, head) in stated.pairs
        for modifier, head in claim.pairs
        for m in topic - claim.topic
    )


@derived
def _kind_words() -> frozenset[str]:
    """Words that say what kind of thing a name is: two holders sharing only these are two
    holders ("River Skell" and "River Tarrow"; ``kind_words.txt``)."""
    return wl.words("kind_words")


@derived
def _named_things() -> frozenset[str]:
    """Words that make a capitalised role word part of a name ("Premier League"):
    ``kind_words.txt`` and ``named_thing_words.txt``."""
    return _kind_words() | wl.words("named_thing_words")


def _same_holder(a: frozenset[str], b: frozenset[str]) -> bool:
    """One holder's name inside the other's, or a shared word that is not a kind word,
    unless both say what kind they are and the kinds differ ("Eastport City Council" and
    "Eastport Athletic Club"), or each has a word of its own that is no kind word ("Lena
    Whitaker" and "Tom Whitaker", "Harrow Vale Rovers" and "Dunmore Rovers")."""
    if a <= b or b <= a:
        return True
    kinds = _kind_words()
    kinds_a, kinds_b = a & kinds, b & kinds
    if kinds_a and kinds_b and not kinds_a & kinds_b:
        return False
    if (a - b) - kinds and (b - a) - kinds:
        return False
    return bool((a & b) - kinds)


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
    ] + [(f, _name_sets(text)) for text in evidence for f in _joined_from(text)]
    found: list[str] = []
    confirmed = 0
    spoken = False
    past = _past_claim().search(claim) is not None
    leads_now = _leads_now().search(claim) is not None and not past
    leading, generic = _leading(), _generic_topic()
    for fact in claimed:
        unnamed = not fact.about and fact.topic <= generic
        same = _same_role(fact, stated, unnamed)
        if not same and fact.role == "by:oper" and fact.verb == "run":
            # "The hospital is run by Dr Helen Marsh" against a page that names no
            # operator but a chief executive: who runs it leads it
            fact = replace(fact, role="leader")
            same = _same_role(fact, stated, unnamed)
        if (
            fact.role == "leader"
            and same
            and not any(_same_holder(f.holder, fact.holder) for f in same)
        ):
            # "Karen Doyle leads Ashby Borough Council" against "The leader of the council
            # is Dev Malhotra" (her role there, chief executive, does not make her leader)
            found += [f"{fact.role}: {' '.join(sorted(f.holder))}" for f in same]
            spoken = True
            continue
        if fact.role == "leader" and any(
            f.role in leading
            and _same_holder(f.holder, fact.holder)
            # "leads the government" against "The government is led by Prime Minister ..."
            and (_same_subject(fact, f, names) or unnamed or fact.topic & f.topic)
            for f, names in stated
        ):
            confirmed += 1  # "Daniel Okafor leads the company" against "Its chief executive is"
            spoken = True
            continue
        if fact.role == "leader" and not same and not past and not _WAS.search(claim):
            # "Marco Ruiz runs the hospital" against "Its chief executive is Dr Owen Falk":
            # a role that leads it, given to someone else now
            same = [
                f
                for f, names in stated
                if f.role in leading
                and _same_subject(fact, f, names)
                # what it leads, in the claim's words ("the government" is not the state)
                and fact.topic <= f.topic | {stem(w) for n in names for w in n}
            ]
        if fact.role == "leader" and leads_now:
            # "is led by Rhys Calloway" against "Rhys Calloway stepped down and was
            # succeeded as chief executive by Ines Varga": whatever role he led it in
            same += [
                f
                for f, names in stated
                if f.role != fact.role
                and any(_same_holder(gone, fact.holder) for gone in f.left)
                and _same_subject(fact, f, names)
            ]
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


@derived
def _leading() -> frozenset[str]:
    """Roles that lead what they are about: any of them confirms "X leads it"
    (``leading_roles.txt``)."""
    return wl.words("leading_roles")


@derived
def _generic_topic() -> frozenset[str]:
    """What a claim may call the thing its passage is about without naming it (stems of
    ``generic_subjects.txt``)."""
    return frozenset(stem(w) for w in wl.entries("generic_subjects"))


@derived
def _leads_now() -> re.Pattern[str]:
    """A claim that someone leads something now (the generic ``leader`` role)."""
    return re.compile(r"\b" + wl.one_of("leads_now") + r"\b", re.IGNORECASE)


@derived
def _transition() -> re.Pattern[str]:
    """A change "from X to Y" (``transition_verbs.txt``)."""
    return re.compile(
        r"\b" + wl.one_of("transition_verbs") + r"\w*\b[^.;]{0,40}?\bfrom\s+"
        rf"(?:the\s+)?({_NAME})\s+to\s+(?:(?:the|a|an|its|their)\s+)?(?:[a-z]+\s+){{0,3}}?"
        rf"(?:(?:at|in|on)\s+)?({_NAME})"
    )


_WAS = re.compile(r"\b(?:was|were|had been)\b", re.I)


@derived
def _past_claim() -> re.Pattern[str]:
    """Words that place a claim in the past (``role_past_words.txt``)."""
    return re.compile(r"\b" + wl.one_of("role_past_words") + r"\b", re.I)


def transition_conflicts(claim: str, evidence: Sequence[str]) -> list[str]:
    """Names the claim gives that the evidence says were left for another ("moved its
    headquarters from Dunmore to Ashby" against "Quillon is headquartered in Dunmore"): an
    evidence sentence with a change verb (moved, relocated, changed, switched, renamed,
    transferred) "from X to Y" in a passage naming the claim's subject, sharing a content
    word with the claim outside its names, where the claim names X and not Y. A claim
    that places itself in the past ("until", "formerly", "originally") is not in conflict."""
    if _past_claim().search(claim):
        return []
    names = entities(claim)
    subject = claim_subject(claim)
    words = content_words(claim) - names
    found = []
    for text in evidence:
        if not subject or not subject <= _words(text.lower()):
            continue
        for sentence in resolved_sentences(text):
            if not words & content_words(sentence):
                continue
            for m in _transition().finditer(sentence):
                old, new = _tokens(m.group(1)), _tokens(m.group(2))
                if old and new and old <= names and not new & names:
                    found.append(f"moved: {' '.join(sorted(old))} -> {' '.join(sorted(new))}")
    return sorted(set(found))


@derived
def _sports() -> dict[str, str]:
    """Each name of a sport with the sport ("soccer": "football"; ``sports.txt``)."""
    return wl.mapping("sports", "sports")


@derived
def _kinds() -> dict[str, str]:
    """What has a sport, each with the kind it is compared as ("side": "team")."""
    return wl.mapping("sports", "kinds")


@derived
def _kind() -> re.Pattern[str]:
    """A subject said to be a club, team, league, ... of a sport."""
    sports, kinds = _sports(), _kinds()
    if not sports or not kinds:
        return NEVER
    return re.compile(
        rf"({_NAME})\s+(?:is|are|was|were|remains?)\s+(?:a|an|the)\s+(?:[a-z\-]+\s+){{0,2}}?"
        rf"((?i:{'|'.join(sorted(map(re.escape, sports), key=len, reverse=True))}))\s+"
        "(" + "|".join(map(re.escape, kinds)) + r")s?\b"
    )


def _head(match: re.Match[str]) -> str:
    return _kinds()[match.group(3).lower()]


def kind_conflicts(claim: str, evidence: Sequence[str]) -> list[str]:
    """Evidence that says the claim's subject is another kind of the same thing: "Kelder
    Rovers are a rugby club" against "Kelder Rovers are a football club" (the sport of a
    club, team or side alike, league, player or ground; "soccer" is football, "ice hockey" and
    "hockey" one sport, "rugby union" and "rugby league" both rugby)."""
    found = []
    sports, kind = _sports(), _kind()
    for m in kind.finditer(claim):
        subject, sport, head = _tokens(m.group(1)), sports[m.group(2).lower()], _head(m)
        for text in evidence:
            for stated in kind.finditer(" ".join(resolved_sentences(text))):
                other = sports[stated.group(2).lower()]
                if (
                    _head(stated) == head
                    and other != sport
                    and _share_a_name((subject,), (_tokens(stated.group(1)),))
                ):
                    found.append(f"kind: {sport} vs {other}")
    return sorted(set(found))


@derived
def _feature() -> re.Pattern[str]:
    """A feature that ends its clause, perhaps with whom or where it is for: "has a cafe",
    "offers two restaurants and ...", "also has a sauna for guests" (``feature_verbs.txt``)."""
    return re.compile(
        r"\b" + wl.one_of("feature_verbs") + r"\s+"
        r"(?:a|an|its own|their own|several|many|two|three|four|five)\s+"
        r"((?:[a-z][a-z\-]*\s+){0,2}?[a-z][a-z\-]*)(?=\s*(?:[,.;:!?]|$)|\s+(?:and|or|but)\b"
        r"|\s+(?:for|on)\s+(?:[a-z]+\s+){0,2}?[a-z]+\s*(?:[,.;:!?]|$))"
    )


@derived
def _unnamed_agent() -> re.Pattern[str]:
    """Who did it, unnamed, ending its clause: "founded by local fishermen" (a named agent
    is the name check's; ``maker_verbs.txt``)."""
    return re.compile(
        r"\b" + wl.one_of("maker_verbs") + r"\s+by\s+(?:the\s+|a\s+|an\s+)?"
        r"((?:[a-z][a-z\-]*\s+){0,2}?[a-z][a-z\-]*)(?=\s*(?:[,.;:!?]|$)|\s+(?:and|or|but|in)\b)"
    )


def absent_features(claim: str, evidence: Sequence[str]) -> list[str]:
    """What a claim says its subject has ("has a cafe", "offers two restaurants",
    "includes a gift shop") or who made it, unnamed ("founded by local fishermen",
    "built by the army"), when evidence naming the subject never mentions it: a
    phrase of one to three words without a stop word that ends its clause, whose last
    word no evidence text holds, singular or plural. A phrase that goes on ("has a
    student body that is ...", "has a population of 240,000": a measure, the number
    judge's slot) is left alone. Needs the claim's subject in the evidence."""
    if not subject_in_evidence(claim, evidence):
        return []
    stated = {stem(w) for text in evidence for w in _words(text.lower())}
    found = []
    stops = stop_words()
    for pattern in (_feature(), _unnamed_agent()):
        for m in pattern.finditer(claim):
            words = m.group(1).split()
            if not any(w in stops for w in words) and stem(words[-1]) not in stated:
                found.append(" ".join(words))
    return found


_COMMON_SUBJECT = re.compile(
    r"\s*(?:The|This|That|Its|Their)\s+((?:[a-z][a-z'\u2019\-]*\s+){0,2}?[a-z][a-z'\u2019\-]*)"
    r"\s+(?:is|was|are|were|has|have|had|will|can|[a-z]+ed|[a-z]+s)\b"
)
"""A subject in lower-case words before the verb: "The stadium was designed by ..."."""


@derived
def _about_a_text() -> frozenset[str]:
    """Subjects that speak of a text ("The passage describes ..."): its names say what it
    is about (``text_nouns.txt``)."""
    return wl.words("text_nouns")


def claim_subject(text: str) -> frozenset[str]:
    """Name tokens of the first named thing in ``text`` (its subject, as a rule): "The
    Kestrel Bridge was designed by ..." -> {"kestrel", "bridge"}, or the words of a subject
    in lower case that opens it ("The stadium was designed by Archibald Leitch" ->
    {"stadium"}, "The zoo's penguin pool ..." -> {"zoo", "penguin", "pool"}); empty when it
    names nothing."""
    for sentence in sentences(text):
        common = _COMMON_SUBJECT.match(sentence)
        if common:
            words = frozenset(
                _POSSESSIVE.sub("", w) for w in common.group(1).split() if w not in stop_words()
            )
            if words and not words & _about_a_text():
                return words
        runs = _name_runs(sentence)
        if runs:
            return runs[0].tokens
    return frozenset()


def subject_in_evidence(claim: str, evidence: Sequence[str]) -> bool:
    """True when every token of the claim's subject (:func:`claim_subject`) occurs in one
    evidence text."""
    subject = claim_subject(claim)
    if not subject:
        return False
    return any(subject <= _words(text.lower()) for text in evidence)


def _light_stem(word: str) -> str:
    """A name word without one plural or tense suffix ("adults" -> "adult", "gathering"
    -> "gather", "ferries" -> "ferry"): names are matched more strictly than other words."""
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _words(text: str) -> set[str]:
    """Lower-case word tokens, a possessive "'s" dropped ("freedonia's" -> "freedonia"),
    and the parts of a hyphenated word ("leeds-based" -> "leeds", "based")."""
    words = {_POSSESSIVE.sub("", w) for w in re.findall(r"[a-z0-9'\u2019\-]+", text)}
    return words | {p for w in words if "-" in w for p in w.split("-") if p}
