"""The text toolkit: how the judges, the label step, the evidence index and the reports
read text. Every function is pure (a text in, words, numbers or names out) and cheap.

Modules, from the ground up:

- :mod:`auditor.text.sentences`: the sentence split;
- :mod:`auditor.text.words`: tokens, stems, stop words, negation cues, content words;
- :mod:`auditor.text.quantities`: numbers in their slots, amounts of money;
- :mod:`auditor.text.periods`: a claim's own time scope;
- :mod:`auditor.text.names`: capitalised runs read as names, their tokens;
- :mod:`auditor.text.pronouns`: a pronoun read as the name its passage opens with;
- :mod:`auditor.text.subjects`: what a claim is about, and whether the evidence names it;
- :mod:`auditor.text.roles`: who holds which role;
- :mod:`auditor.text.anchors`: the evidence sentences about a claim;
- :mod:`auditor.text.antonyms`: words opposed to each other;
- :mod:`auditor.text.clauses`: the clause of a sentence about a claim.

The phrase rules they read (number words, unit spellings, role words, ...) are the word
lists of ``auditor/judges/wordlists/`` (:mod:`auditor.judges.wordlists`, which imports
nothing else of the project). Import the public names from here (``from auditor.text
import sentences, quantities``). Importing the package is cheap: scikit-learn's stop
words load on the first call of :func:`stop_words`, every table built from a word list
on its first use.
"""

from __future__ import annotations

from auditor.text.anchors import (
    anchor_sentences,
    word_coverage,
)
from auditor.text.antonyms import (
    antonym_forms,
    antonym_pairs,
    antonyms,
    word_forms,
)
from auditor.text.clauses import (
    CONTRAST_CLAUSES,
    DETERMINERS,
    clause_about,
    own_subject_not,
)
from auditor.text.names import (
    CAPITALISED_RUN,
    NAME_PATTERN,
    WORD_PATTERN,
    NameRun,
    entities,
    name_runs,
    name_tokens,
    non_name_words,
    share_a_name,
    surface_words,
    without_possessive,
)
from auditor.text.periods import (
    stated_period,
    strip_period,
)
from auditor.text.pronouns import (
    lead_name,
    opens_with_other_name,
    resolved_sentences,
)
from auditor.text.quantities import (
    CLOCK_UNITS,
    DURATION_UNITS,
    Quantity,
    canonical_amounts,
    currency_signs,
    numbers,
    quantities,
    same_amount,
    same_noun,
    same_slot,
    unit_stems,
    word_number,
)
from auditor.text.roles import (
    RoleFact,
    role_conflicts,
    role_cue_words,
    role_facts,
    role_stated,
    roles_confirmed,
)
from auditor.text.sentences import (
    sentence_spans,
    sentences,
)
from auditor.text.subjects import (
    claim_subject,
    subject_in_evidence,
)
from auditor.text.words import (
    MONTH_NAMES,
    WEEKDAYS,
    content_words,
    negation_count,
    negations,
    stem,
    stop_words,
    tokens,
)

__all__ = [
    "CAPITALISED_RUN",
    "CLOCK_UNITS",
    "CONTRAST_CLAUSES",
    "DETERMINERS",
    "DURATION_UNITS",
    "MONTH_NAMES",
    "NAME_PATTERN",
    "WEEKDAYS",
    "WORD_PATTERN",
    "NameRun",
    "Quantity",
    "RoleFact",
    "anchor_sentences",
    "antonym_forms",
    "antonym_pairs",
    "antonyms",
    "canonical_amounts",
    "claim_subject",
    "clause_about",
    "content_words",
    "currency_signs",
    "entities",
    "lead_name",
    "name_runs",
    "name_tokens",
    "negation_count",
    "negations",
    "non_name_words",
    "numbers",
    "opens_with_other_name",
    "own_subject_not",
    "quantities",
    "resolved_sentences",
    "role_conflicts",
    "role_cue_words",
    "role_facts",
    "role_stated",
    "roles_confirmed",
    "same_amount",
    "same_noun",
    "same_slot",
    "sentence_spans",
    "sentences",
    "share_a_name",
    "stated_period",
    "stem",
    "stop_words",
    "strip_period",
    "subject_in_evidence",
    "surface_words",
    "tokens",
    "unit_stems",
    "without_possessive",
    "word_coverage",
    "word_forms",
    "word_number",
]
