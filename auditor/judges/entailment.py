"""The ``entailment`` judge: the shipped three-way cross-encoder read over evidence chunks.

Reading long evidence (after SummaC-ZS and MiniCheck). A claim of several sentences is
split into its sentences (a summary is supported only when every sentence is). Each
claim sentence is read against two kinds of chunk of the evidence, cheapest first:

1. **sentences**: the ``sentence_k`` evidence sentences that share the most content
   words with the claim sentence (its lexical coverage), read alone; with ``best_first``
   (the default since v10) the best-covering one first, and the others only when it
   does not entail the claim sentence at ``support_at`` (18 % fewer reader pairs on
   WiCE answers, 13 % on the document sets). When one of them entails the claim
   sentence at ``support_at``, the claim sentence is decided and no window is read for
   it: support is the maximum over chunks, so a window could only
   raise it, and a window's contradiction counts only as far as one of its own
   sentences confirms it (below), which the covering sentences already stand for.
2. **windows**, for the claim sentences the first pass leaves unsupported: each passage
   cut into overlapping word windows (:func:`evidence_windows`, ``window_words`` /
   ``window_stride``), pruned by two cheap lexical passes: with ``prune_by_sentences``
   (the default since v12) a window covering less of the claim sentence's content words
   than the best sentence already read is skipped (it cannot state more of the claim
   than that sentence did, and its extra text only distracts the reader: on the
   training halves of the document sets 16 % fewer reader pairs and mean balanced
   accuracy +0.010, no set lower); of the others, a window sharing less than
   ``prune_below`` of the claim sentence's content words is skipped unless it is among
   the two best-covering windows (with three windows or fewer, all are read). Then every
   window that can decide the claim sentence (entailment or contradiction at least
   ``reject_below``, up to ``refine_rounds`` of them, strongest first) is **re-read
   sentence by sentence**, for support as well as for contradiction; only its sentences
   that cover at least ``cover_at`` of the claim sentence's content words are read (no
   other sentence can confirm a contradiction, and the sentences covering the claim
   best were read in the first pass).

No pair is read twice: the reader's scores are kept per (window or sentence, claim
sentence) digest by the loaded model (:meth:`EntailmentModel.predict_cached`), so the
current and superseded passes of a run and a ``rejudge`` in the same process with an
unchanged reader look them up instead of running the network again. Across processes,
an audit stores the scores its judging asked for with the run (:mod:`auditor.reader_scores`:
:meth:`EntailmentJudge.keep_reader_scores`, :meth:`EntailmentJudge.take_reader_scores`),
and a re-judge of the run offers them back to the judge
(:meth:`EntailmentJudge.offer_reader_scores`): when every pair it asks for is among those
of its own weights it does not even load the reader, otherwise they go into the loaded
model's cache before it reads.

Per claim sentence: **support** is the maximum entailment over every chunk read (a
fact stated in one chunk is supported, whatever else the evidence says); a
**contradiction** counts only from a chunk that covers the claim's content (at least
``cover_at`` of its content words, and one of them outside its names when it has such
words: a sentence that shares only "Harrow Vale Rovers" with "Marta Sousa coaches Harrow
Vale Rovers" says nothing about who coaches it) and, for a window that was re-read, only as far as
one of its sentences confirms it (a multi-sentence window with an unrelated negated
sentence pushes this small model towards "contradiction"). A claim sentence is
contradicted when its confirmed contradiction reaches ``contradict_at`` and exceeds its
support. The claim's entailment is that of its least supported sentence, its
contradiction that of its most contradicted one.

Vote: 1 (not supported) when a sentence is contradicted or the claim's entailment is
below ``reject_below``; 0 (supported) when it reaches ``support_at``; abstain in
between. Scores: ``entailment`` / ``neutral`` / ``contradiction`` (the decisive chunk's
probabilities; ``contradiction`` is what the labelling step uses to tell
``contradicted`` from ``not_supported``), ``max_entailment`` (the claim's entailment),
``max_contradiction`` (the largest raw contradiction of any chunk read),
``confirmed_contradiction``, ``coverage`` (of the decisive chunk) and ``contradicted``
(1.0 when a sentence is contradicted, else 0.0).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

import numpy as np

from auditor.entailment.model import (
    INFERENCE_MAX_LENGTH,
    QUANTIZE_BY_DEFAULT,
    SCORE_CACHE_SIZE,
    WEIGHTS_DIR,
    WINDOW_STRIDE,
    WINDOW_WORDS,
    PairScore,
    ScoreJournal,
    effective_precision,
    evidence_windows,
    load_model,
    pair_key,
    reader_digest,
    weights_digest,
    weights_labels,
)
from auditor.errors import ConfigError
from auditor.judges.base import LocalJudge
from auditor.judges.wordlists import cleared_on_ablation
from auditor.precision import DEFAULT_PRECISION, check_precision
from auditor.text import canonical_amounts, content_words, entities, sentences, stem
from auditor.types import ABSTAIN, JudgePair

Result = tuple[float, dict[str, float], str]
Key = tuple[str, str]  # (premise chunk, claim sentence)
SCORE_LABELS = ("entailment", "neutral", "contradiction")


@dataclass
class _Chunk:
    """One chunk read against one claim sentence."""

    text: str
    kind: str  # "window" or "sentence"
    coverage: float
    probs: np.ndarray  # (3,) entailment, neutral, contradiction
    confirmed_c: float  # contradiction that counts (0 when the chunk does not cover)


@cleared_on_ablation
@lru_cache(maxsize=4096)
def predicate_words(claim: str) -> frozenset[str]:
    """The claim's content words that are not part of a name ("coach" of "Marta Sousa
    coaches Harrow Vale Rovers")."""
    names = entities(claim)
    names |= {stem(n) for n in names}
    return content_words(claim) - names


def coverage(claim: str, chunk: str) -> float:
    """Share of the claim's content words (stemmed, stop words out) found in ``chunk``;
    1.0 for a claim without content words."""
    wanted = content_words(claim)
    if not wanted:
        return 1.0
    return len(wanted & content_words(chunk)) / len(wanted)


class EntailmentJudge(LocalJudge):
    """Offline NLI cross-encoder (MiniLM-L6 fine-tuned on public NLI, claim and
    rule-made document-level data), read at window and sentence level."""

    name = "entailment"
    version = "16"  # 14: "£18"; 15: a line is a sentence; 16: no "one" units (word lists)
    volatile_params = frozenset({"batch_size", "weights"})  # cannot change a vote

    def __init__(
        self,
        support_at: float = 0.5,
        reject_below: float = 0.2,
        quantize: bool = QUANTIZE_BY_DEFAULT,
        window_words: int = WINDOW_WORDS,
        window_stride: int = WINDOW_STRIDE,
        refine_rounds: int = 3,
        batch_size: int = 32,
        weights: str | None = None,
        sentence_k: int = 3,
        best_first: bool = True,
        prune_by_sentences: bool = True,
        cover_at: float = 0.5,
        prune_below: float = 0.2,
        contradict_at: float = 0.5,
        precision: str = DEFAULT_PRECISION,
    ) -> None:
        folder = Path(weights) if weights else WEIGHTS_DIR
        # the weights enter the digest through their sha256 (identity), not their path
        self._weights_sha256 = weights_digest(folder)
        super().__init__(weights_sha256=self._weights_sha256)
        self._journal: ScoreJournal | None = None
        self._offered: dict[bytes, np.ndarray] = {}  # stored scores, in the reader's order
        self._offered_to: object | None = None  # the loaded reader that has them
        if not 0.0 <= reject_below <= support_at <= 1.0:
            raise ConfigError("entailment: need 0 <= reject_below <= support_at <= 1")
        for name, value in (
            ("cover_at", cover_at),
            ("prune_below", prune_below),
            ("contradict_at", contradict_at),
        ):
            if not 0.0 <= value <= 1.0:
                raise ConfigError(f"entailment: {name} must be in [0, 1], got {value}")
        if sentence_k < 0 or refine_rounds < 0:
            raise ConfigError("entailment: sentence_k and refine_rounds must be >= 0")
        self.weights, self._folder = weights, folder
        self.support_at, self.reject_below = support_at, reject_below
        self.quantize, self.batch_size = quantize, batch_size
        self.window_words, self.window_stride = window_words, window_stride
        self.refine_rounds, self.sentence_k = refine_rounds, sentence_k
        self.best_first, self.prune_by_sentences = best_first, prune_by_sentences
        self.cover_at, self.prune_below, self.contradict_at = cover_at, prune_below, contradict_at
        self.precision = check_precision(precision, "entailment")

    def score_batch(self, pairs: Sequence[JudgePair]) -> list[Result]:
        # "costs eighteen pounds" against "cost £18": this reader entails only the sign form
        pairs = [
            replace(
                pair,
                claim=canonical_amounts(pair.claim),
                evidence=tuple(canonical_amounts(text) for text in pair.evidence),
            )
            for pair in pairs
        ]
        windows = [
            list(
                dict.fromkeys(
                    w
                    for text in pair.evidence
                    for w in evidence_windows(
                        text, words=self.window_words, stride=self.window_stride
                    )
                )
            )
            for pair in pairs
        ]
        units = [
            list(dict.fromkeys(s for text in pair.evidence for s in sentences(text)))
            for pair in pairs
        ]
        claims = [sentences(pair.claim) or [pair.claim] for pair in pairs]
        # first pass: the best-covering evidence sentences of each claim sentence (with
        # best_first, the best one alone, then the others where it does not entail)
        ranked = [
            [self._best_sentences(sents, part) for part in parts]
            for sents, parts in zip(units, claims, strict=True)
        ]
        first = (
            [[sents[:1] for sents in chosen] for chosen in ranked] if self.best_first else ranked
        )
        scored: dict[Key, np.ndarray] = {}
        self._read(first, claims, scored)
        best_sents = [
            [
                top if self._supported(top, part, scored) else sents
                for top, sents, part in zip(tops, chosen, parts, strict=True)
            ]
            for tops, chosen, parts in zip(first, ranked, claims, strict=True)
        ]
        self._read(best_sents, claims, scored)
        # second pass: the covering windows of each claim sentence its sentences leave unsupported
        wins_read = [
            [
                []
                if self._supported(sents, part, scored)
                else self._covering_windows(group, part, sents)
                for sents, part in zip(chosen, parts, strict=True)
            ]
            for group, chosen, parts in zip(windows, best_sents, claims, strict=True)
        ]
        self._read(wins_read, claims, scored)
        # third pass: re-read every deciding window sentence by sentence
        reread: list[list[list[str]]] = []
        requests: set[Key] = set()
        for chosen, parts in zip(wins_read, claims, strict=True):
            per_part = []
            for wins, part in zip(chosen, parts, strict=True):
                deciding = self._deciding(wins, part, scored)
                per_part.append(deciding)
                for window in deciding:
                    requests.update(
                        (s, part) for s in sentences(window) if coverage(part, s) >= self.cover_at
                    )
            reread.append(per_part)
        scored.update(self._predict(requests - set(scored)))
        results: list[Result] = []
        for i, parts in enumerate(claims):
            if not windows[i]:
                results.append((ABSTAIN, {}, json.dumps({"reason": "no evidence"})))
                continue
            cells = [
                self._chunks(wins, sents, reread[i][j], part, scored)
                for j, (wins, sents, part) in enumerate(
                    zip(wins_read[i], best_sents[i], parts, strict=True)
                )
            ]
            results.append(
                self._result(
                    cells,
                    parts,
                    (len(windows[i]), sum(map(len, wins_read[i])), sum(map(len, reread[i]))),
                )
            )
        return results

    def _read(
        self,
        chunks: list[list[list[str]]],
        claims: list[list[str]],
        scored: dict[Key, np.ndarray],
    ) -> None:
        """Read into ``scored`` every (chunk, claim sentence) pair of ``chunks`` (per pair,
        per claim sentence) that it does not hold yet."""
        wanted = {
            (chunk, part)
            for per_pair, parts in zip(chunks, claims, strict=True)
            for texts, part in zip(per_pair, parts, strict=True)
            for chunk in texts
        }
        scored.update(self._predict(wanted - set(scored)))

    def _best_sentences(self, sents: list[str], part: str) -> list[str]:
        """The ``sentence_k`` evidence sentences sharing the most content words with
        ``part`` (at least one), best first; ties in text order-free."""
        candidates = [(coverage(part, s), s) for s in sents]
        candidates = sorted((c for c in candidates if c[0] > 0), key=lambda c: (-c[0], c[1]))
        return [s for _, s in candidates[: self.sentence_k]]

    def _covering_windows(self, group: list[str], part: str, read: list[str]) -> list[str]:
        """The windows worth reading for ``part``: with ``prune_by_sentences``, only those
        covering at least as much of its content words as the best sentence ``read``
        already; of those, all of three or fewer, else the two best-covering ones and
        every other sharing ``prune_below`` of its content words."""
        if self.prune_by_sentences and read:
            most = max(coverage(part, s) for s in read)
            group = [w for w in group if coverage(part, w) >= most]
        if len(group) <= 3:
            return list(group)
        ranked = sorted(group, key=lambda w: (-coverage(part, w), w))  # order-free ties
        best = set(ranked[:2])
        return [w for w in group if w in best or coverage(part, w) >= self.prune_below]

    def _supported(self, sents: list[str], part: str, scored: dict[Key, np.ndarray]) -> bool:
        """Whether a sentence already read entails ``part`` at ``support_at``."""
        return any(float(scored[(s, part)][0]) >= self.support_at for s in sents)

    def _deciding(self, wins: list[str], part: str, scored: dict[Key, np.ndarray]) -> list[str]:
        """Windows of several sentences whose entailment or contradiction can decide
        the claim sentence, strongest first, at most ``refine_rounds``."""
        ranked = []
        for window in wins:
            probs = scored[(window, part)]
            strength = max(float(probs[0]), float(probs[2]))
            if strength >= self.reject_below and len(sentences(window)) > 1:
                ranked.append((strength, window))
        ranked.sort(key=lambda r: -r[0])
        return [w for _, w in ranked[: self.refine_rounds]]

    def _chunks(
        self,
        wins: list[str],
        sents: list[str],
        reread: list[str],
        part: str,
        scored: dict[Key, np.ndarray],
    ) -> list[_Chunk]:
        chunks: list[_Chunk] = []
        finer: dict[str, float] = {}
        sents = [s for s in sents if s not in wins]
        for window in reread:
            inside = [s for s in sentences(window) if (s, part) in scored]
            finer[window] = max(
                (float(scored[(s, part)][2]) for s in inside if self._covers(part, s)),
                default=0.0,
            )
            sents.extend(s for s in inside if s not in sents and s not in wins)
        for text, kind in [*((w, "window") for w in wins), *((s, "sentence") for s in sents)]:
            probs = scored[(text, part)]
            cov = coverage(part, text)
            confirmed = float(probs[2]) if self._covers(part, text) else 0.0
            if text in finer:
                confirmed = min(confirmed, float(finer[text]))
            chunks.append(_Chunk(text, kind, cov, probs, confirmed))
        return chunks

    def _covers(self, part: str, chunk: str) -> bool:
        """Whether ``chunk`` covers the claim sentence's content, so that its
        contradiction counts: at least ``cover_at`` of its content words, and one of them
        outside its names when it has such words (a sentence sharing only the names is
        about the same thing, not about what the claim says of it)."""
        if coverage(part, chunk) < self.cover_at:
            return False
        predicate = predicate_words(part)
        return not predicate or bool(predicate & content_words(chunk))

    @property
    def reader_precision(self) -> str:
        """What the reader computes in here: ``fp32`` or ``bf16`` (:attr:`precision`
        resolved by :func:`~auditor.precision.resolve_precision`; fp32 for int8)."""
        return effective_precision(self.quantize, self.precision)

    @property
    def reader_identity(self) -> tuple[str, bool]:
        """``(reader digest, quantised)``: what the reader's pair scores are valid for (the
        weights' sha256, or for the int8 or bf16 reader that of the weights and the
        scheme: :func:`~auditor.entailment.model.reader_digest`)."""
        digest = reader_digest(self._weights_sha256, self.quantize, self.reader_precision)
        return digest, self.quantize

    def keep_reader_scores(self, on: bool = True) -> None:
        """From now on, keep the score of every pair this judge asks the reader for, read
        or looked up, until :meth:`take_reader_scores` (an audit stores them with its
        run); ``on=False`` stops keeping them and forgets those kept."""
        if not on:
            self._journal = None
        elif self._journal is None:
            self._journal = {}

    def take_reader_scores(self) -> list[PairScore]:
        """The pair scores kept since the last call (see :meth:`keep_reader_scores`), and
        forget them; empty when nothing is being kept."""
        if not self._journal:
            return []
        order = [self._labels().index(label) for label in SCORE_LABELS]
        taken = [
            (key, (float(row[order[0]]), float(row[order[1]]), float(row[order[2]])))
            for key, row in self._journal.items()
        ]
        self._journal = {}
        return taken

    def offer_reader_scores(self, scores: Sequence[PairScore]) -> None:
        """Pair scores read earlier by this judge's weights (:attr:`reader_identity`): a
        pair among them is not read again. When every pair the judge asks for is among
        them, the reader is not even loaded; otherwise they go into the loaded reader's
        cache before it reads."""
        if not scores:
            return
        order = [SCORE_LABELS.index(label) for label in self._labels()]
        for key, probs in scores:
            self._offered.pop(key, None)
            if len(self._offered) >= SCORE_CACHE_SIZE:  # bounded like the reader's cache
                del self._offered[next(iter(self._offered))]
            self._offered[key] = np.array([probs[i] for i in order], dtype=np.float64)
        self._offered_to = None  # the reader has not got these yet

    def _labels(self) -> tuple[str, ...]:
        """The reader's class labels (from its config, without loading it); the three
        that reader scores are stored as must be among them."""
        labels = weights_labels(self._folder)
        missing = sorted(set(SCORE_LABELS) - set(labels))
        if missing:
            raise ConfigError(
                f"entailment weights in {self._folder} have labels {list(labels)}: "
                f"reader scores are stored as {list(SCORE_LABELS)}, {missing} missing"
            )
        return labels

    def _predict(self, keys: set[Key]) -> dict[Key, np.ndarray]:
        unique = sorted(keys)
        if not unique:
            return {}
        if self._offered:
            known: dict[bytes, np.ndarray] = {}
            for p, h in unique:
                key = pair_key(p, h, INFERENCE_MAX_LENGTH)
                row = self._offered.get(key)
                if row is None:
                    break
                known[key] = row
            else:  # every pair known: no need of the reader itself
                if self._journal is not None:
                    self._journal.update(known)
                return dict(zip(unique, known.values(), strict=True))
        model = load_model(self._folder, quantize=self.quantize, precision=self.precision)
        if self._offered and self._offered_to is not model:
            model.preload(self._offered.items())
            self._offered_to = model
        probs = model.predict_cached(
            [k[0] for k in unique],
            [k[1] for k in unique],
            batch_size=self.batch_size,
            max_length=INFERENCE_MAX_LENGTH,
            journal=self._journal,
        )
        return dict(zip(unique, probs, strict=True))

    def _result(
        self, cells: list[list[_Chunk]], parts: list[str], counts: tuple[int, int, int]
    ) -> Result:
        """The vote and scores from the chunks read; ``counts`` are the windows the
        evidence has, those read and those re-read sentence by sentence."""
        per_sentence = []
        for chunks in cells:
            support = max(chunks, key=lambda c: float(c.probs[0]))
            conflict = max(chunks, key=lambda c: c.confirmed_c)
            contradicted = (
                conflict.confirmed_c >= self.contradict_at
                and conflict.confirmed_c > float(support.probs[0])
            )
            per_sentence.append(
                (float(support.probs[0]), conflict.confirmed_c, contradicted, support, conflict)
            )
        claim_e = min(p[0] for p in per_sentence)
        claim_c = max(p[1] for p in per_sentence)
        raw_c = max(float(c.probs[2]) for chunks in cells for c in chunks)
        flagged = [k for k, p in enumerate(per_sentence) if p[2]]
        if flagged:
            k = max(flagged, key=lambda j: per_sentence[j][1])
            decisive, vote = per_sentence[k][4], 1.0
        else:
            k = int(np.argmin([p[0] for p in per_sentence]))
            decisive = per_sentence[k][3]
            vote = (
                0.0
                if claim_e >= self.support_at
                else 1.0
                if claim_e < self.reject_below
                else ABSTAIN
            )
        e, n, c = (float(x) for x in decisive.probs)
        scores = {
            "entailment": e,
            "neutral": n,
            "contradiction": decisive.confirmed_c,
            "max_entailment": claim_e,
            "max_contradiction": raw_c,
            "confirmed_contradiction": claim_c,
            "coverage": decisive.coverage,
            "contradicted": float(bool(flagged)),
        }
        raw = json.dumps(
            {
                "windows": counts[0],
                "windows_read": counts[1],
                "claim_sentences": len(parts),
                "chunks_read": sum(len(c) for c in cells),
                "refined_to_sentences": counts[2],
                "decisive_sentence": k,
                "decisive_kind": decisive.kind,
                "contradicted": bool(flagged),
                "chunk_text": decisive.text[:300],
                "probs": [round(e, 4), round(n, 4), round(c, 4)],
            }
        )
        return vote, scores, raw
