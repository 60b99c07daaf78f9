"""Evidence sentences about a claim: the ones that share most of its content words.

The slot judges (numbers, polarity) compare a claim with the evidence sentence about
the same thing, not with every sentence of a page: :func:`anchor_sentences` ranks a
passage's sentences by the share of the claim's content words they hold, a sentence
counting the name its passage opens with (a pronoun read as that name).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from auditor.text.pronouns import lead_name, opens_with_other_name, resolved_sentences
from auditor.text.words import content_words


def word_coverage(claim_words: frozenset[str], text: str) -> float:
    """The share of ``claim_words`` (stemmed content words) among the content words of
    ``text``; 0 for no claim words."""
    if not claim_words:
        return 0.0
    return len(claim_words & content_words(text)) / len(claim_words)


_LOWER_WORD = re.compile(r"\b[a-z][a-z'\-]*")


def anchor_sentences(
    claim: str,
    evidence: Sequence[str],
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
    mapped to the same meaning: "km" and "kilometre")."""
    said_as = meanings or {}
    claim_words = frozenset(said_as.get(w, w) for w in content_words(claim) - ignore)
    if not claim_words:
        return []
    scored = []
    # words the claim writes in lower case are no names when a sentence opens with them
    # ("Membership is free ..." against "Library membership costs ...")
    common = frozenset(_LOWER_WORD.findall(claim))
    for text in evidence:
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
