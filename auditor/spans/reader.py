"""Error spans from the reader: the phrase whose deletion most raises entailment.

The lexical localiser (:func:`auditor.spans.localize.localize_error`) marks the words no
evidence contains; the reader (the entailment cross-encoder, through
:meth:`auditor.entailment.model.EntailmentModel.predict`, or any ``scorer`` with the same
shape) says which part of the claim the evidence does not carry. For one claim (its answer
spans, joined by a space, are the hypothesis) :func:`read_claim` asks the reader, at most
``max_calls`` times in all:

1. how well the evidence windows that share the most content words with the claim entail
   it (one call per window, at most ``max_windows``); when the best reaches
   ``supported_at`` the reader finds the claim entailed and reads no further;
2. how well the best window entails the claim with one candidate phrase deleted
   (:func:`candidate_phrases`: the stretches between commas, conjunctions, relative
   pronouns and prepositions, two adjacent stretches, the numbers and capitalised names),
   those holding lexically unaligned words first, then longest first.

:func:`decide` turns that reading into spans with a :class:`ReaderRule`: the phrase whose
deletion raises entailment most, by at least ``min_gain`` (the shortest of those within
``slack`` of the best), plus (``add``) the lexical localiser's numbers and names inside
the claim (what the claim states that no evidence states in that slot); with no such
phrase (``fallback``) the lexical spans, the phrases holding them or the whole claim
(always the whole claim when the reader's entailment is below ``claim_below``); for a
claim the reader finds entailed (``on_entailed``, the panel having found it
unsupported) as ``fallback``. The defaults were chosen on the dev half of FaithBench,
WiCE and Mu-SHROOM val (``bench/eval_localisation.py``; docs/spans.md gives the
figures).

Everything here is deterministic for a given scorer: each claim's calls are batched
within the claim only, so a claim's spans do not depend on which other claims were
localised with it, and a replay of a run reproduces them (the reader's weights are a
component of the run: :meth:`ReaderLocalizer.component`).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from auditor.digest import content_digest
from auditor.entailment.model import QUANTIZE_BY_DEFAULT
from auditor.errors import ConfigError
from auditor.precision import DEFAULT_PRECISION, PRECISIONS, check_precision
from auditor.spans._canonical import canonicalize
from auditor.spans.localize import localize_error
from auditor.text import content_words
from auditor.types import Component, Span

Scorer = Callable[[Sequence[str], Sequence[str]], np.ndarray]
"""``scorer(premises, hypotheses) -> P(entailment)`` per pair."""

DEFAULT_MAX_CALLS = 6
"""Reader calls per claim at most (windows and deletions together)."""

_BOUNDARY = re.compile(
    r",(?!\d)|[;:()]|\s(?:and|but|or|which|who|whom|whose|that|while|whereas|because|after|before|"
    r"in|on|at|for|with|by|from|to|of|as|during|since|under|over|about|into|than)\s",
    re.IGNORECASE,
)
_NAME_OR_NUMBER = re.compile(
    r"\d+(?:[.,]\d+)*|(?<![.!?]\s)(?<!^)\b[A-Z][\w'\-]*(?:\s+[A-Z][\w'\-]*)*"
)
FALLBACKS = ("lexical", "phrases", "claim")
ON_ENTAILED = ("lexical", "phrases", "claim")
ADDS = ("none", "names_numbers", "lexical", "phrases")


@dataclass(frozen=True)
class ReaderRule:
    """How a reading becomes spans (module docstring); validated on construction."""

    supported_at: float = 0.5
    """The reader finds the claim entailed at this P(entailment) of its best window."""
    min_gain: float = 0.3
    """A deletion must raise entailment by this much for its phrase to be the error."""
    slack: float = 0.0
    """Of the phrases whose deletion raises entailment within ``slack`` of the best (and by
    ``min_gain`` at least), the shortest is the error: deleting more words never helps
    less, so the best gain alone favours long phrases."""
    add: str = "names_numbers"
    """Lexical spans added to the reader's phrase: ``none``, ``names_numbers`` (those
    holding a digit or a capital), ``lexical`` (all) or ``phrases`` (all, each widened to
    the phrases it touches, as the ``phrases`` fallback)."""
    fallback: str = "lexical"
    """No deletion helps enough: the ``lexical`` spans, the ``phrases`` holding them (each
    lexical span widened to the phrases between boundaries it touches) or the whole
    ``claim``."""
    on_entailed: str = "lexical"
    """The reader finds the claim entailed (the panel did not): as ``fallback``."""
    claim_below: float = 0.0
    """No deletion helps enough and the best window's P(entailment) is below this: the
    whole claim is the error (nothing in it is carried by the evidence), whatever
    ``fallback`` says (0: never)."""

    def __post_init__(self) -> None:
        if not 0.0 <= self.supported_at <= 1.0:
            raise ConfigError(
                f"reader rule: supported_at must be in [0, 1], got {self.supported_at}"
            )
        if not 0.0 <= self.min_gain <= 1.0:
            raise ConfigError(f"reader rule: min_gain must be in [0, 1], got {self.min_gain}")
        if not 0.0 <= self.claim_below <= 1.0:
            raise ConfigError(f"reader rule: claim_below must be in [0, 1], got {self.claim_below}")
        if not 0.0 <= self.slack <= 1.0:
            raise ConfigError(f"reader rule: slack must be in [0, 1], got {self.slack}")
        for name, value, allowed in (
            ("add", self.add, ADDS),
            ("fallback", self.fallback, FALLBACKS),
            ("on_entailed", self.on_entailed, ON_ENTAILED),
        ):
            if value not in allowed:
                raise ConfigError(f"reader rule: {name} must be one of {allowed}, got {value!r}")


DEFAULT_RULE = ReaderRule()


@dataclass(frozen=True)
class ClaimReading:
    """What the reader said about one claim: the inputs :func:`decide` needs."""

    spans: tuple[Span, ...]
    """The claim's canonical answer spans."""
    entailment: float
    """P(entailment) of the whole claim under its best window (0 without evidence)."""
    windows: int
    """Reader calls spent on the whole claim (one per window)."""
    phrases: tuple[Span, ...] = ()
    """Candidate phrases read, in reading order."""
    gains: tuple[float, ...] = ()
    """Rise of P(entailment) when each phrase is deleted."""
    lexical: tuple[Span, ...] = field(default=())
    """The lexical localiser's spans for the claim."""

    @property
    def calls(self) -> int:
        """Reader calls this reading made."""
        return self.windows + len(self.phrases)


MAX_HYPOTHESIS_TOKENS = 192
"""A claim is read up to this many tokens (the rest of the pair is the evidence window;
a longer hypothesis would leave the tokenizer nothing to truncate)."""


def entailment_scorer(
    weights_dir: str | Path | None = None,
    batch_size: int = 32,
    *,
    quantize: bool = False,
    precision: str = DEFAULT_PRECISION,
) -> Scorer:
    """P(entailment) from the cross-encoder in ``weights_dir`` (default: the shipped one),
    int8 with ``quantize`` (:func:`~auditor.entailment.model.quantize_dynamic`), else in
    ``precision`` (:mod:`auditor.precision`);
    a hypothesis longer than :data:`MAX_HYPOTHESIS_TOKENS` tokens is read up to there.
    Pairs go through the loaded reader's score cache, so a (window, claim) pair the
    entailment judge already read in this process, or a second localisation of the same
    claim, runs no forward pass."""
    from auditor.entailment.model import load_model

    model = load_model(weights_dir, quantize=quantize, precision=precision)
    column = model.labels.index("entailment")

    def fit(hypothesis: str) -> str:
        offsets = model.tokenizer(
            hypothesis, add_special_tokens=False, return_offsets_mapping=True
        )["offset_mapping"]
        if len(offsets) <= MAX_HYPOTHESIS_TOKENS:
            return hypothesis
        return hypothesis[: offsets[MAX_HYPOTHESIS_TOKENS - 1][1]]

    def score(premises: Sequence[str], hypotheses: Sequence[str]) -> np.ndarray:
        fitted = [fit(h) for h in hypotheses]
        return model.predict_cached(premises, fitted, batch_size=batch_size)[:, column]

    return score


def _windows(evidence: Sequence[str], claim: str, limit: int) -> list[str]:
    from auditor.entailment.model import evidence_windows

    words = content_words(claim)
    windows = list(dict.fromkeys(w for text in evidence for w in evidence_windows(text)))
    windows.sort(key=lambda w: -len(words & content_words(w)))  # stable: ties in text order
    return windows[:limit]


def segments(text: str, start: int, end: int) -> list[Span]:
    """The stretches of ``text[start:end]`` between phrase boundaries (commas, semicolons,
    brackets, conjunctions, relative pronouns, prepositions), trimmed of punctuation and
    space, in text order (absolute offsets)."""
    cuts = [start] + [m.start() + start for m in _BOUNDARY.finditer(text[start:end])] + [end]
    out: list[Span] = []
    for a, b in itertools.pairwise(cuts):
        seg = text[a:b]
        lead = len(seg) - len(seg.lstrip(" ,;:()"))
        trail = len(seg.rstrip(" .!?,;:()"))
        if trail - lead >= 2:
            out.append((a + lead, a + trail))
    return out


def candidate_phrases(text: str, start: int, end: int) -> list[Span]:
    """Phrases of ``text[start:end]`` (absolute offsets): the stretches between phrase
    boundaries (:func:`segments`), two adjacent stretches, and the numbers and
    capitalised names inside, longest first."""
    pieces = segments(text, start, end)
    out: set[Span] = set(pieces) if len(pieces) > 1 else set()  # one stretch: the claim
    pieces = sorted(out)
    for (a, _), (_, b) in itertools.pairwise(pieces):  # two adjacent phrases
        if b - a < end - start - 2:
            out.add((a, b))
    for m in _NAME_OR_NUMBER.finditer(text[start:end]):
        out.add((m.start() + start, m.end() + start))
    return sorted(out, key=lambda s: (-(s[1] - s[0]), s[0]))


def _tidy(text: str) -> str:
    return re.sub(r"\s+([,.;:!?])", r"\1", re.sub(r"\s{2,}", " ", text)).strip()


def _claim_text(answer_text: str, spans: Sequence[Span], cut: Span | None = None) -> str:
    """The claim as the reader reads it: its spans joined by a space, ``cut`` deleted."""
    parts = []
    for s, e in spans:
        if cut is not None and s <= cut[0] and cut[1] <= e:
            parts.append(answer_text[s : cut[0]] + " " + answer_text[cut[1] : e])
        else:
            parts.append(answer_text[s:e])
    return _tidy(" ".join(parts))


def read_claim(
    answer_text: str,
    claim_spans: Sequence[Span],
    evidence_texts: Sequence[str],
    scorer: Scorer,
    *,
    max_calls: int = DEFAULT_MAX_CALLS,
    max_windows: int = 2,
    supported_at: float = DEFAULT_RULE.supported_at,
) -> ClaimReading:
    """Ask the reader about one claim, at most ``max_calls`` calls (module docstring).

    No evidence text, or ``max_calls`` 0: no call, entailment 0. A claim whose best
    window reaches ``supported_at`` gets no deletion calls (pass a value above 1 to read
    the deletions anyway, as the evaluation does to try several rules on one reading).
    """
    if max_calls < 0 or max_windows < 1:
        raise ConfigError(
            f"reader: need max_calls >= 0 and max_windows >= 1, got {max_calls}, {max_windows}"
        )
    claim = canonicalize(list(claim_spans), text_length=len(answer_text), name="claim_spans")
    evidence = [t for t in evidence_texts if t.strip()]
    lexical = localize_error(answer_text, claim, evidence) if claim else ()
    if not claim or not evidence or max_calls == 0:
        return ClaimReading(claim, 0.0, 0, lexical=lexical)
    hypothesis = _claim_text(answer_text, claim)
    windows = _windows(evidence, hypothesis, min(max_windows, max_calls))
    if not windows:
        return ClaimReading(claim, 0.0, 0, lexical=lexical)
    base = np.asarray(scorer(windows, [hypothesis] * len(windows)), dtype=np.float64)
    best = int(np.argmax(base))
    whole = float(base[best])
    budget = max_calls - len(windows)
    if whole >= supported_at or budget <= 0:
        return ClaimReading(claim, whole, len(windows), lexical=lexical)
    marked = [s for s in lexical if s not in claim]
    phrases = sorted(
        {p for s, e in claim for p in candidate_phrases(answer_text, s, e)},
        key=lambda p: (
            not any(s < p[1] and p[0] < e for s, e in marked),
            -(p[1] - p[0]),
            p[0],
        ),
    )[:budget]
    if not phrases:
        return ClaimReading(claim, whole, len(windows), lexical=lexical)
    hyps = [_claim_text(answer_text, claim, p) for p in phrases]
    scores = np.asarray(scorer([windows[best]] * len(hyps), hyps), dtype=np.float64)
    return ClaimReading(
        claim,
        whole,
        len(windows),
        tuple(phrases),
        tuple(float(g) for g in scores - whole),
        lexical,
    )


def decide(
    answer_text: str,
    reading: ClaimReading,
    rule: ReaderRule = DEFAULT_RULE,
    *,
    max_phrases: int | None = None,
) -> tuple[Span, ...]:
    """The error spans of one claim from its reading and ``rule`` (module docstring).

    ``max_phrases`` considers only the first phrases read (what a smaller call budget
    would have read); None: all of them."""
    claim, lexical = reading.spans, reading.lexical
    if not claim:
        return ()
    if reading.windows and reading.entailment >= rule.supported_at:
        return _without_reader(answer_text, reading, rule.on_entailed)
    n = len(reading.phrases) if max_phrases is None else max(max_phrases, 0)
    gains = reading.gains[:n]
    if not gains or max(gains) < rule.min_gain:
        if reading.windows and reading.entailment < rule.claim_below:
            return claim
        return _without_reader(answer_text, reading, rule.fallback)
    floor = max(rule.min_gain, max(gains) - rule.slack)
    near = [p for p, g in zip(reading.phrases, gains, strict=False) if g >= floor]
    phrase = min(near, key=lambda p: p[1] - p[0])  # the shortest; ties: reading order
    extra = [s for s in lexical if s not in claim]
    if rule.add == "phrases":
        extra = [s for s in _without_reader(answer_text, reading, "phrases") if s not in claim]
    elif rule.add == "names_numbers":
        extra = [s for s in extra if _name_or_number(answer_text[s[0] : s[1]])]
    elif rule.add == "none":
        extra = []
    return canonicalize([phrase, *extra])


def _without_reader(answer_text: str, reading: ClaimReading, how: str) -> tuple[Span, ...]:
    """The spans when the reader names no phrase: ``lexical``, ``phrases`` or ``claim``."""
    claim, lexical = reading.spans, reading.lexical
    if how == "claim" or lexical == claim:
        return claim
    if how == "lexical":
        return lexical
    pieces = [p for s, e in claim for p in segments(answer_text, s, e)]
    out = list(lexical)
    for s, e in lexical:
        out += [(a, b) for a, b in pieces if a < e and s < b]
    return canonicalize(out)


def _name_or_number(text: str) -> bool:
    return bool(re.search(r"\d", text)) or text[:1].isupper()


def localize_with_reader(
    answer_text: str,
    claim_spans: Sequence[Span],
    evidence_texts: Sequence[str],
    scorer: Scorer,
    *,
    rule: ReaderRule = DEFAULT_RULE,
    max_calls: int = DEFAULT_MAX_CALLS,
) -> tuple[Span, ...]:
    """Error spans of one claim from the reader combined with the lexical localiser
    (:func:`read_claim` then :func:`decide`): at most ``max_calls`` reader calls."""
    reading = read_claim(
        answer_text,
        claim_spans,
        evidence_texts,
        scorer,
        max_calls=max_calls,
        supported_at=rule.supported_at,
    )
    return decide(answer_text, reading, rule)


class Localizer(Protocol):
    """What the audit's ``localize`` step asks of a localiser (:class:`ReaderLocalizer`)."""

    def localize(
        self, answer_text: str, claim_spans: Sequence[Span], evidence_texts: Sequence[str]
    ) -> tuple[Span, ...]:
        """Error spans (answer offsets) of one claim labelled unsupported."""
        ...

    def component(self) -> Component:
        """The localiser as a versioned run component."""
        ...


class ReaderLocalizer:
    """The audit's reader-based localiser: a scorer loaded on first use, the call budget
    and rule, and a versioned :class:`~auditor.types.Component` (weights digest, int8 or
    not, precision, budget, rule) recorded with every run that uses it. It reads with
    the entailment judge's reader (same weights, quantisation and precision), so the
    pairs the judge read are looked up, not read again."""

    name = "reader-localizer"
    version = "3"

    def __init__(
        self,
        *,
        weights_dir: str | Path | None = None,
        max_calls: int = DEFAULT_MAX_CALLS,
        rule: ReaderRule = DEFAULT_RULE,
        scorer: Scorer | None = None,
        weights_sha256: str | None = None,
        quantize: bool = QUANTIZE_BY_DEFAULT,
        precision: str = DEFAULT_PRECISION,
    ) -> None:
        if max_calls < 0:
            raise ConfigError(f"reader localiser: max_calls must be >= 0, got {max_calls}")
        self.weights_dir = Path(weights_dir) if weights_dir is not None else None
        self.max_calls, self.rule, self.quantize = max_calls, rule, quantize
        self.precision = check_precision(precision, "reader localiser")
        self._scorer = scorer
        if weights_sha256 is None:
            from auditor.entailment.model import WEIGHTS_DIR, weights_digest

            weights_sha256 = weights_digest(self.weights_dir or WEIGHTS_DIR)
        self.weights_sha256 = weights_sha256
        self.calls = 0
        """Reader calls made so far (all claims)."""

    def _score(self, premises: Sequence[str], hypotheses: Sequence[str]) -> np.ndarray:
        if self._scorer is None:
            self._scorer = entailment_scorer(
                self.weights_dir, quantize=self.quantize, precision=self.precision
            )
        self.calls += len(hypotheses)
        return self._scorer(premises, hypotheses)

    def localize(
        self, answer_text: str, claim_spans: Sequence[Span], evidence_texts: Sequence[str]
    ) -> tuple[Span, ...]:
        """Error spans of one claim (at most :attr:`max_calls` reader calls)."""
        return localize_with_reader(
            answer_text,
            claim_spans,
            evidence_texts,
            self._score,
            rule=self.rule,
            max_calls=self.max_calls,
        )

    def component(self) -> Component:
        """The localiser as a run component: the weights' sha256, int8 or not, the
        precision (as configured), the budget and the rule."""
        config = {
            "weights_sha256": self.weights_sha256,
            "quantize": self.quantize,
            "precision": self.precision,
            "max_calls": self.max_calls,
            "rule": asdict(self.rule),
        }
        digest = content_digest({"name": self.name, "version": self.version, **config})
        return Component(
            kind="localizer", name=self.name, version=self.version, digest=digest, config=config
        )

    @classmethod
    def from_component(
        cls, recorded: Mapping[str, Any], *, weights_dir: str | Path | None = None
    ) -> ReaderLocalizer:
        """The localiser a run recorded (its ``localizer`` component's config: budget,
        rule, int8 or not and precision; version 1 read in fp32, versions 1 and 2 without
        autocast), reading with the weights in
        ``weights_dir``. A replay builds it so that a changed default rule does not change
        the spans of an old run; errors name the field."""
        try:
            rule = ReaderRule(**dict(recorded["rule"]))
            max_calls = int(recorded["max_calls"])
            quantize = recorded.get("quantize", False)
            if not isinstance(quantize, bool):
                raise ValueError(f"quantize must be true or false, got {quantize!r}")
            precision = recorded.get("precision", "fp32")
            if precision not in PRECISIONS:
                raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(
                f"recorded localizer component: bad or missing field: {exc}"
            ) from None
        return cls(
            weights_dir=weights_dir,
            max_calls=max_calls,
            rule=rule,
            quantize=quantize,
            precision=precision,
        )
