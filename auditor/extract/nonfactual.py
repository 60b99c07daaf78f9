"""Detection of sentences that state nothing checkable.

:func:`classify_text` works on the sentence text alone (regular expressions);
:func:`classify_sentence` adds what needs a parse (imperatives). Both return the
non-factual kind (``question``, ``opinion``, ``greeting``, ``refusal``,
``instruction``, ``hedge``, ``meta``) or ``None`` for a sentence that may state
a fact. They err on the side of ``None``: a factual sentence wrongly marked
non-factual would never be checked.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

    from spacy.tokens import Span as SpacySpan
    from spacy.tokens import Token

_FLAGS = re.IGNORECASE

_GREETING = re.compile(
    r"^(?:(?:hi|hello|hey|greetings|dear\b.*|good (?:morning|afternoon|evening|day))\b[^.!?]{0,40}"
    r"|(?:many )?thanks\b(?! to).*|thank you\b.*|you(?:'re| are) (?:very )?welcome\b.*"
    r"|(?:i )?(?:hope|trust) (?:this|that|it|you)\b.*"
    r"|(?:please )?(?:let me know|feel free|don't hesitate|do not hesitate)\b.*"
    r"|(?:if|should) you (?:have|need|want|would like) (?:any |more |further |other |"
    r"additional |anything |something )*(?:questions?|help|information|details|assistance|"
    r"clarification|else)\b.*"
    r"|(?:i'm |i am |we're |we are )?(?:always |more than )?(?:happy|glad|pleased) "
    r"(?:to help|i could help|to assist|i was able to help|we could help)\b.*"
    r"|(?:i'm|i am|we're|we are) (?:always )?here to help\b.*"
    r"|(?:good luck|best of luck|all the best|take care|stay safe|no problem|sure thing|"
    r"no worries|happy (?:\w+ing|travels|holidays))"
    r"(?:,? (?:with|on|in|for) (?:your|the|all) [^.!?]{0,30}|,? [a-z]+)?"
    r"|enjoy(?: your \w+(?: \w+)?| it| the \w+)?"
    r"|let me (?:explain|elaborate|break (?:it|this|that) down|clarify)"
    r"(?: (?:this|that|it|how|why|what|further|more))?"
    r"|(?:what an? )?(?:great|good|excellent|"
    r"fantastic|interesting|wonderful|thoughtful) (?:question|choice|point|idea|pick)"
    r"|(?:have|enjoy) a (?:nice|great|good|wonderful) \w+.*|(?:best|kind) regards\b.*|cheers\b.*"
    r"|(?:sure|certainly|of course|absolutely|okay|ok)[.!,]?"
    r"|(?:sure|certainly|of course|absolutely)[,!]? "
    r"(?:here|i can|i'd be happy|i would be happy)\b.*"
    r"|(?:i'd|i would|i'm|i am) (?:be )?(?:happy|glad) to help\b.*"
    r"|what a (?:great|good|wonderful|interesting) \w+.*)$",
    _FLAGS,
)

_SOURCES = r"(?:documents?|sources?|context|passages?|search results)"
_GIVEN = (
    r"(?: provided| given| available(?: to me)?| i (?:have|had)(?: access to)?"
    r"| i (?:was|have been) (?:given|provided)| you (?:gave|provided|shared|sent)(?: me)?)?"
)
"""How an answer names its own sources: "the documents", "the sources I was given"."""

_REFUSAL = re.compile(
    r"^(?:unfortunately,? )?(?:as an? (?:ai|(?:large |an ai |ai )?language model)\b.*"
    r"|(?:i'm|i am) (?:sorry|afraid|just an ai|not able|unable|an ai)\b.*"
    r"|i apologi[sz]e\b.*|sorry,? (?:but )?i\b.*"
    r"|i (?:can ?not|can't|won't|am unable to|am not able to|do not know|don't know)\b.*"
    r"|i (?:do not|don't) have (?:access|the ability|the capability|enough information|"
    r"information|personal|real-time|any information|the information|current)\b.*"
    r"|(?:there is|i have) no (?:information|data|record) (?:available )?"
    r"(?:in the (?:provided |given )?" + _SOURCES + r" )?(?:on|about)\b.*"
    r"|i (?:could not|couldn't|was unable to|was not able to|did not|didn't|cannot|can't) "
    r"find (?:any |the |much |more |specific |further |relevant )*(?:information|details?|data|"
    r"anything|mention|evidence|records?|sources?|(?:an?|any) answers?|the answer (?:to|in|about))"
    r"\b.*"
    r"|i (?:could not|couldn't|was unable to|was not able to|did not|didn't|cannot|can't) "
    r"find\b.{1,60}?\b(?:in|from) (?:the |my |these )?(?:provided |given |available )?"
    + _SOURCES
    + r"\b.*"
    r"|(?:the |my |these )?(?:provided |given |available )?"
    + _SOURCES
    + _GIVEN
    + r" (?:do not|don't|does not|doesn't|did not|didn't) "
    r"(?:mention|say|state|contain|provide|include|cover|specify|address)\b.*"
    r"|(?:none|neither) of the (?:provided |given )?"
    + _SOURCES
    + _GIVEN
    + r" (?:mentions?|says?|states?|contains?|provides?|includes?|covers?|specif(?:y|ies)"
    r"|address(?:es)?)\b.*"
    r"|it (?:is|'s|would be) (?:not appropriate|inappropriate) for me\b.*)$",
    _FLAGS,
)

_OPINION = re.compile(
    r"^(?:i (?:think|believe|feel|guess|suppose|love|like|prefer|recommend|suggest|would "
    r"(?:say|suggest|recommend|argue))\b.*"
    r"|i'd (?:say|suggest|recommend|argue)\b.*|in my (?:opinion|view|experience)\b.*"
    r"|personally\b.*|my (?:favou?rite|personal)\b.*"
    r"|(?:honestly|frankly|truthfully|to be honest|in all honesty)\b.*"
    r"|.*\b(?:the )?(?:best|worst|greatest|finest|most \w+|least \w+) \w+(?: \w+)? ever\b.*"
    r"|(?:i'm|i am|we're|we are) (?:so |very |really )?(?:glad|happy|excited|grateful|proud|"
    r"thrilled)\b.*"
    r"|.*\b(?:is|are|'re|'s) (?:so |very |really |truly )?(?:lucky|fortunate|blessed) to "
    r"(?:have|live|be|call)\b.*"
    r"|.*\b(?:is|are|makes?|make) (?:such )?(?:a |an )?(?:really |truly |very )?(?:wonderful|great|"
    r"fantastic|lovely|perfect|ideal|brilliant|marvellous|delightful) (?:\w+ )?(?:hobby|pastime|"
    r"day out|activity|treat|experience)\b.*"
    r"|.*\b(?:is|are|'s|'re) (?:such )?(?:a |an )?(?:really |truly |very )?(?:wonderful|"
    r"fantastic|lovely|brilliant|marvellous|delightful) way to\b.*"
    r"|(?:this|that|it|these|those)(?: is| was|'s| are| were) (?:a |an )?(?:really |very |truly |"
    r"quite |such an? )?(?:great|good|excellent|wonderful|fantastic|interesting|amazing|"
    r"awesome|fascinating|tricky|tough|lovely|beautiful|cool|fun)"
    r"(?: (?:question|topic|idea|point|one|thing|choice))?[.!]?)$",
    _FLAGS,
)

_INSTRUCTION = re.compile(
    r"^(?:please\b.*|make sure\b.*|be sure\b.*|(?:do not|don't) forget\b.*|remember to\b.*"
    r"|let's\b.*|you (?:may want to|might want to|can try|could try)\b.*)$",
    _FLAGS,
)

_HEDGE = re.compile(
    r"^(?:(?:it|that|this|the answer) (?:really |all )?(?:depends|varies|can vary|may vary)"
    r"(?: (?:on|with) (?:many|several|various|a number of|a variety of|different|the|your) "
    r"(?:factors|things|circumstances|variables|situation|context|person|individual))?"
    r"|it(?:'s| is) (?:hard|difficult|impossible|not possible) to (?:say|tell|know|predict)"
    r"(?: for (?:sure|certain))?"
    r"|there (?:is|'s) no (?:definitive|simple|single|easy|one|clear|straightforward)"
    r"(?: or \w+)? answer(?: to (?:this|that|your) question)?"
    r"|(?:results|opinions|answers) (?:may|can|will) vary"
    r"|(?:this|that|it) is (?:purely |just |only |merely )?(?:speculative|speculation|a guess)"
    r"|(?:more|further) research is (?:needed|required)\b.*"
    r"|(?:it|this) is (?:a )?(?:complex|complicated|debated|controversial) "
    r"(?:question|topic|issue|matter)"
    r"|(?:i'm|i am) not (?:entirely |completely |totally |quite |100% )?(?:sure|certain)\b.*)"
    r"[.!]?$",
    _FLAGS,
)

_META = re.compile(
    r"^(?:(?:here|below)(?: is| are|'s|\u2019s)\b[^.!]*[:.!]?|.{0,60}:|(?:for example|for instance|"
    r"in summary|in conclusion|to summarize|to sum up|note|example|summary)[.:!]?"
    r"|(?:yes|no|yeah|yep|nope|correct|right|indeed|exactly)[.!]?)$",
    _FLAGS,
)

_ANNOUNCES = re.compile(
    r"^(?:(?:here|below)(?: is| are|'s|\u2019s)\b[^.!:]*|(?:in )?summary|note|(?:short )?answer"
    r"|overview|key (?:facts|points)|tl;? ?dr|in short|in brief|to summari[sz]e|to sum up"
    r"|(?:to|in) answer(?: to)? (?:your|the|this) question"
    r"|based on (?:the |my )?(?:provided |given |available )?(?:documents?|sources?|context"
    r"|information|search results)[^.!:]*)$",
    re.IGNORECASE,
)


def announces(text: str) -> bool:
    """Whether ``text``, the words before a colon, only announces what follows it ("Here
    is a summary of the key facts", "Note", "To answer your question"): a non-factual
    lead-in, apart from the claim after the colon. Anything else before a colon ("The
    bridge has two features") belongs to the claim."""
    return _ANNOUNCES.match(text.strip()) is not None


_OPENERS = re.compile(
    r"^(?:(?:so|well|but|and|however|again|also|sadly|regrettably|oh|ah|hmm|yes|no|"
    r"okay|ok)\b\s*[,!.]?\s+)+",
    _FLAGS,
)

_LETTER = re.compile(r"[^\W\d_]")

# Adverbs that may open an imperative without changing it: "Then add the eggs."
_IMPERATIVE_OPENERS = frozenset(
    {
        "first",
        "then",
        "next",
        "finally",
        "also",
        "now",
        "simply",
        "just",
        "always",
        "never",
        "lastly",
        "second",
        "third",
        "afterwards",
        "alternatively",
        "additionally",
    }
)


def _normalise(text: str) -> str:
    text = text.strip().replace("\u2019", "'").replace("\u2018", "'")
    text = re.sub(r"\s+", " ", text)
    # Leading list markers and markdown emphasis do not change what a sentence says.
    text = re.sub(r"^(?:[-*\u2022+>#]+|\d{1,3}[.)])\s*", "", text)
    text = _OPENERS.sub("", text.strip("*_ \"'"))
    return text


def classify_text(text: str) -> str | None:
    """The non-factual kind of a sentence from its text alone, or ``None``.

    A sentence without a letter (emoji, numbering, rules) is ``meta``; one ending
    with a question mark is a ``question``; greetings, refusals, opinions,
    instructions, empty hedges and lead-ins ("Here are some examples:") are
    recognised by anchored patterns that must cover the whole sentence. Remarks joined
    by a spaced dash ("Great question - I hope this helps!") are non-factual when every
    one of them is (the first one's kind).
    """
    if not isinstance(text, str):
        raise TypeError(f"text: expected str, got {type(text).__name__}")
    norm = _normalise(text)
    if not _LETTER.search(norm):
        return "meta"
    if norm.endswith("?"):
        return "question"
    norm = norm.rstrip(".!… ") or norm
    for kind, pattern in (
        ("refusal", _REFUSAL),
        ("greeting", _GREETING),
        ("hedge", _HEDGE),
        ("opinion", _OPINION),
        ("instruction", _INSTRUCTION),
    ):
        if pattern.match(norm):
            return kind
    if _META.match(norm) and not re.search(r"\d", norm):
        return "meta"
    parts = _DASH.split(text)
    if len(parts) > 1:  # "Great question - I hope this helps!": every part non-factual
        kinds = [classify_text(p) for p in parts if p.strip()]
        if kinds and all(kinds):
            return kinds[0]
    return None


_DASH = re.compile(r"\s+[-\u2013\u2014]\s+")
"""A dash between spaces, joining two remarks in one sentence."""


def is_imperative(sent: SpacySpan) -> bool:
    """True for a sentence whose main verb is a bare base form without a subject
    ("Open the document.", "Then press Ctrl+S.")."""
    root = sent.root
    if root.tag_ != "VB" or root.dep_ != "ROOT":
        return False
    if any(
        c.dep_ in {"nsubj", "nsubjpass", "expl", "csubj", "aux", "auxpass"} for c in root.children
    ):
        return False
    # The verb must open the sentence (after openers, punctuation, list markers).
    for token in sent:
        if token.i == root.i:
            return True
        if token.is_punct or token.is_space or token.like_num:
            continue
        if token.lower_ in _IMPERATIVE_OPENERS or token.lower_ == "please":
            continue
        return False
    return False


_ADVISORY_MODALS = frozenset({"should", "ought", "could", "might"})
"""Modal verbs that advise rather than state a rule ("must", "may" and "can" state one)."""
_SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass", "expl", "csubj", "csubjpass"})
_ADJECTIVE_TAGS = frozenset({"JJ", "JJR", "JJS"})
_INDEFINITE_ARTICLES = frozenset({"a", "an"})


def anchored(tokens: Iterable[Token]) -> bool:
    """Whether words carry something a document can confirm: a number or a name."""
    return any(t.tag_ == "CD" or t.pos_ in {"NUM", "PROPN"} for t in tokens)


def about_the_answer(sent: SpacySpan) -> str | None:
    """``hedge`` or ``meta`` for a sentence in which the answer speaks about itself to the
    reader: a clause has the first person singular as its subject, another addresses the
    reader (its subject is "you", or it is an imperative), and no clause has any other
    subject ("I may not have the latest details, so please check the website": one
    hedge, not a claim and an instruction); ``hedge`` when the speaker's clause is modal
    or negated. ``None`` otherwise ("I found that the bridge opened in 1994" has a
    third-person clause, which states a fact; "I could not find the car in the car park"
    tells the reader nothing about the answer)."""
    subjects = [t for t in sent if t.dep_ in _SUBJECT_DEPS]
    speaker = [t for t in subjects if t.lower_ == "i"]
    if not speaker or any(t.lower_ not in {"i", "you"} for t in subjects):
        return None
    imperative = any(
        t.tag_ == "VB"
        and t.pos_ == "VERB"
        and not any(c.dep_ in _SUBJECT_DEPS or c.tag_ in {"MD", "TO"} for c in t.children)
        and t.dep_ in {"ROOT", "conj", "parataxis"}
        for t in sent
    )
    if not imperative and not any(t.lower_ == "you" for t in subjects):
        return None
    verb = speaker[0].head
    modal = any(c.tag_ == "MD" or c.dep_ == "neg" for c in verb.children)
    return "hedge" if modal else "meta"


def advice(sent: SpacySpan) -> bool:
    """A sentence advising the reader with nothing a document could confirm: its main
    verb has the reader as subject and an advisory modal, and no number or name
    ("You should consult a doctor"; not "You should report it within 30 days", an
    obligation the documents can state)."""
    root = sent.root
    subject = next((c for c in root.children if c.dep_ in _SUBJECT_DEPS), None)
    return (
        subject is not None
        and subject.lower_ == "you"
        and any(c.tag_ == "MD" and c.lower_ in _ADVISORY_MODALS for c in root.children)
        and not anchored(sent)
    )


def evaluative(head: Token) -> bool:
    """Whether a clause only evaluates: a copula whose predicate is an adjective under a
    degree adverb ("is very good"), or a relative clause commenting on what its sentence
    said with an indefinite noun under an adjective (", which is a great perk"; a main
    clause "Gold is a noble metal" classifies), with no number, name, compound,
    prepositional phrase or clause that would give it checkable content ("is a 12-seat
    venue", "is a good option for small groups")."""
    if head.pos_ != "AUX" or any(
        c.dep_ in {"prep", "advcl", "xcomp", "ccomp", "npadvmod"} for c in head.children
    ):
        return False
    predicate = next((c for c in head.children if c.dep_ in {"attr", "acomp"}), None)
    if predicate is None:
        return False
    words = list(predicate.subtree)
    if anchored(words) or any(
        t.dep_ in {"prep", "compound", "relcl", "acl", "advcl", "conj", "punct"} for t in words
    ):
        return False
    if predicate.dep_ == "acomp":
        return predicate.tag_ in _ADJECTIVE_TAGS and any(
            c.dep_ == "advmod" and c.tag_ == "RB" for c in predicate.children
        )
    return (
        head.dep_ == "relcl"
        and predicate.dep_ == "attr"
        and any(c.dep_ == "det" and c.lower_ in _INDEFINITE_ARTICLES for c in predicate.children)
        and any(c.dep_ == "amod" and c.tag_ in _ADJECTIVE_TAGS for c in predicate.children)
    )


def classify_sentence(sent: SpacySpan) -> str | None:
    """The non-factual kind of a parsed sentence, or ``None`` (see :func:`classify_text`):
    also an imperative, the answer speaking about itself (:func:`about_the_answer`) and
    advice (:func:`advice`). A clause that only evaluates (:func:`evaluative`) is told
    clause by clause by the extractor, since a sentence may hold a fact beside it."""
    kind = classify_text(sent.text)
    if kind is not None:
        return kind
    if is_imperative(sent):
        return "instruction"
    kind = about_the_answer(sent)
    if kind is not None:
        return kind
    if advice(sent):
        return "instruction"
    return None
