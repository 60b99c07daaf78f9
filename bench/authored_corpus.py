"""The authored audit corpus (``data/authored/``): validation, freezing and loading.

``python bench/authored_corpus.py validate DIR...`` checks domain folders against
``data/authored/SPEC.md`` and names file, line and field for every problem (all of them,
not only the first). ``freeze SPLIT`` writes ``data/authored/SPLIT.sha256``; ``check
SPLIT`` verifies it. ``stats`` counts domains, answers and labels per split.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent / "data" / "authored"
LABELS = ("supported", "contradicted", "not_supported", "unknown", "stale", "not_factual")
TAGS = frozenset(
    [
        "paraphrase",
        "number_words",
        "unit",
        "date",
        "negation",
        "role",
        "successor",
        "condition",
        "quantifier",
        "table",
        "list",
        "added_detail",
        "uncovered_subject",
        "version_change",
        "as_of_between_versions",
        "opinion",
        "hedge",
        "pleasantry",
        "citation",
        "obligation",
        "comparison",
        "frequency",
        "plain",
    ]
)
FILES = ("corpus.jsonl", "answers.jsonl", "labels.jsonl")
DOC_FIELDS = {"id", "title", "source", "version", "published_at", "text"}
ANSWER_FIELDS = {"id", "question", "answer", "as_of"}
LABEL_FIELDS = {"answer_id", "sentence", "label", "doc_id", "evidence", "tags"}


@dataclass(frozen=True)
class LabelledSentence:
    """One labelled sentence of an authored answer, with its character span."""

    domain: str
    answer_id: str
    sentence: str
    start: int
    end: int
    label: str
    doc_id: str | None
    evidence: str | None
    tags: tuple[str, ...]


def _records(path: Path, problems: list[str]) -> list[tuple[int, dict[str, Any]]]:
    out = []
    if not path.is_file():
        problems.append(f"{path}: missing")
        return out
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"{path}:{number}: not JSON ({exc.msg})")
            continue
        if not isinstance(record, dict):
            problems.append(f"{path}:{number}: not a JSON object")
            continue
        out.append((number, record))
    return out


def _fields(path: Path, number: int, record: dict[str, Any], known: set[str], problems: list[str]):
    for name in sorted(set(record) - known):
        problems.append(f"{path}:{number}: field {name!r} is not one of {sorted(known)}")
    for name in sorted(known - set(record)):
        problems.append(f"{path}:{number}: field {name!r} missing")


def _version_problem(
    versions: list[dict[str, Any]], as_of: str, evidence: str, label: Any
) -> str | None:
    """Why the quote is from the wrong version for the label as of ``as_of`` (None if
    right): the current version at ``as_of`` states it, except for ``stale``, where an
    older version states it and the current one does not."""
    visible = sorted(
        (v for v in versions if str(v.get("published_at", "")) <= as_of),
        key=lambda v: str(v.get("published_at", "")),
    )
    if not visible:
        return f"quotes a document not yet published at as_of {as_of}"
    current, older = visible[-1], visible[:-1]
    if label == "stale":
        if evidence in str(current.get("text", "")):
            return "for 'stale' is still stated by the current version"
        if not any(evidence in str(v.get("text", "")) for v in older):
            return "for 'stale' is in no version superseded at the answer's as_of"
        return None
    if evidence not in str(current.get("text", "")):
        return f"is not in the version current at as_of {as_of}"
    return None


def validate(folder: Path) -> tuple[list[str], list[LabelledSentence]]:
    """Every problem in one domain folder, and its labelled sentences with spans."""
    problems: list[str] = []
    docs: dict[str, list[dict[str, Any]]] = {}
    path = folder / "corpus.jsonl"
    for number, rec in _records(path, problems):
        _fields(path, number, rec, DOC_FIELDS, problems)
        words = len(str(rec.get("text", "")).split())
        if not 120 <= words <= 700:
            problems.append(f"{path}:{number}: field 'text' has {words} words (150-600 wanted)")
        docs.setdefault(str(rec.get("id")), []).append(rec)
    for doc_id, versions in docs.items():
        dates = [v.get("published_at") for v in versions]
        if len(set(dates)) != len(dates):
            problems.append(f"{path}: document {doc_id!r} has two versions with one date")
    answers: dict[str, dict[str, Any]] = {}
    path = folder / "answers.jsonl"
    for number, rec in _records(path, problems):
        _fields(path, number, rec, ANSWER_FIELDS, problems)
        if rec.get("id") in answers:
            problems.append(f"{path}:{number}: field 'id' {rec.get('id')!r} repeated")
        answers[str(rec.get("id"))] = rec
    path = folder / "labels.jsonl"
    cursor: dict[str, int] = {}
    out: list[LabelledSentence] = []
    for number, rec in _records(path, problems):
        _fields(path, number, rec, LABEL_FIELDS, problems)
        where = f"{path}:{number}"
        answer = answers.get(str(rec.get("answer_id")))
        if answer is None:
            problems.append(f"{where}: field 'answer_id' {rec.get('answer_id')!r} is no answer")
            continue
        text, sentence = str(answer.get("answer", "")), str(rec.get("sentence", ""))
        start = text.find(sentence, cursor.get(answer["id"], 0)) if sentence else -1
        if start < 0:
            problems.append(
                f"{where}: field 'sentence' is not in answer {answer['id']!r} (in order)"
            )
            continue
        gap = text[cursor.get(answer["id"], 0) : start]
        if gap.strip():
            problems.append(
                f"{where}: text {gap.strip()[:40]!r} before this sentence is unlabelled"
            )
        cursor[answer["id"]] = start + len(sentence)
        label = rec.get("label")
        if label not in LABELS:
            problems.append(f"{where}: field 'label' {label!r} is not one of {LABELS}")
        doc_id, evidence = rec.get("doc_id"), rec.get("evidence")
        if label in ("unknown", "not_factual"):
            if doc_id is not None or evidence is not None:
                problems.append(f"{where}: fields 'doc_id'/'evidence' must be null for {label}")
        elif doc_id not in docs:
            problems.append(f"{where}: field 'doc_id' {doc_id!r} is no document")
        elif not isinstance(evidence, str) or not any(
            evidence in str(v.get("text", "")) for v in docs[doc_id]
        ):
            problems.append(f"{where}: field 'evidence' is not an exact quote of {doc_id!r}")
        elif label == "stale" and len(docs[doc_id]) < 2:
            problems.append(f"{where}: label 'stale' but {doc_id!r} has one version")
        else:
            problem = _version_problem(docs[doc_id], str(answer.get("as_of")), evidence, label)
            if problem:
                problems.append(f"{where}: field 'evidence' {problem}")
        tags = rec.get("tags")
        if not isinstance(tags, list) or not tags or set(tags) - TAGS:
            problems.append(f"{where}: field 'tags' must be a non-empty list from SPEC.md")
            tags = []
        out.append(
            LabelledSentence(
                folder.name,
                str(answer["id"]),
                sentence,
                start,
                start + len(sentence),
                str(label),
                doc_id,
                evidence,
                tuple(tags),
            )
        )
    for answer_id, answer in answers.items():
        rest = str(answer.get("answer", ""))[cursor.get(answer_id, 0) :]
        if rest.strip():
            problems.append(
                f"{folder / 'answers.jsonl'}: answer {answer_id!r}: "
                f"{rest.strip()[:40]!r} unlabelled"
            )
    return problems, out


def split_digest(split: str, root: Path = ROOT) -> dict[str, str]:
    """sha256 of every file of a split, by path relative to ``root``."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted((root / split).glob("*/*.jsonl"))
    }


def load_split(
    split: str, root: Path = ROOT, only: set[str] | None = None
) -> dict[str, list[LabelledSentence]]:
    """Labelled sentences per domain of a split, or of the domains in ``only`` (problems
    raise ``ValueError``)."""
    out = {}
    for folder in sorted(p for p in (root / split).iterdir() if p.is_dir()):
        if only is not None and folder.name not in only:
            continue
        problems, sentences = validate(folder)
        if problems:
            raise ValueError("\n".join(problems[:20]))
        out[folder.name] = sentences
    return out


def documents(folder: Path) -> dict[str, list[dict[str, Any]]]:
    """A domain's document versions by id, oldest first."""
    docs: dict[str, list[dict[str, Any]]] = {}
    for line in (folder / "corpus.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            rec = json.loads(line)
            docs.setdefault(rec["id"], []).append(rec)
    return {k: sorted(v, key=lambda r: str(r["published_at"])) for k, v in docs.items()}


def _units(text: str) -> list[str]:
    """A document's lines, and the sentences of each line (headings, list items and
    table rows are lines of their own)."""
    import re

    out = []
    for line in text.splitlines():
        line = line.strip()
        if line:
            out.extend(s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])", line) if s)
    return out


def _closest(text: str, units: list[str]) -> str | None:
    import difflib

    scored = [(difflib.SequenceMatcher(None, text, u).ratio(), u) for u in units if u != text]
    return max(scored)[1] if scored else None


def _window(unit: str, units: list[str], width: int = 2) -> str:
    i = units.index(unit) if unit in units else 0
    return " ".join(units[max(0, i - width) : i + width + 1])


def changed_lines(versions: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """VitaminC-style pairs from consecutive versions of one document: a line of the older
    version and its counterpart in the newer one (the most similar line, at least 0.6
    alike) where a number changed, so each states what the other contradicts."""
    import difflib
    import re

    out = []
    for older, newer in itertools.pairwise(versions):
        before, after = _units(older["text"]), _units(newer["text"])
        for line in before:
            if line in after or not re.search(r"\d", line) or len(line.split()) < 4:
                continue
            match = difflib.get_close_matches(line, after, n=1, cutoff=0.6)
            if not match:
                continue
            numbers = set(re.findall(r"\d[\d,.:]*", line)), set(re.findall(r"\d[\d,.:]*", match[0]))
            if numbers[0] and numbers[1] and numbers[0] != numbers[1]:
                out.append((line, match[0]))
    return out


def reader_domain(domain: str) -> bool:
    """True for the train domains whose pairs the reader trains on (half of them, by a
    sha256 of the name); the label decision is fitted on the other half, so it learns how
    far to trust the reader on domains the reader never saw."""
    return hashlib.sha256(domain.encode("utf-8")).digest()[0] % 2 == 0


def reader_pairs(split: str, root: Path = ROOT, domains: set[str] | None = None) -> list[Any]:
    """Entailment pairs from a split's labelled sentences, for the reader: the deciding
    quote (and its window of neighbouring lines) against the sentence, entailment for
    supported, contradiction for contradicted, neutral for not_supported; for stale, the
    old version's quote entails it and the current version's counterpart line (the most
    similar line of the newest version) contradicts it; for unknown, the domain's most
    similar line is neutral. ``split`` in the pairs is ``train`` for the train split (the
    ``domains`` given, else its :func:`reader_domain` half) and ``eval`` otherwise."""
    from auditor.entailment.data import CONTRADICTION, ENTAILMENT, NEUTRAL, NLIPair

    tag = "train" if split == "train" else "eval"
    out: list[NLIPair] = []
    for domain, sentences in load_split(split, root).items():
        if split == "train" and not (
            domain in domains if domains is not None else reader_domain(domain)
        ):
            continue
        docs = documents(root / split / domain)
        every = [u for versions in docs.values() for u in _units(versions[-1]["text"])]

        def add(premise: str | None, sentence: str, label: int, units: list[str]) -> None:
            if premise:
                out.append(NLIPair(premise, sentence, label, "authored", tag))
                window = _window(premise, units)
                if window != premise:
                    out.append(NLIPair(window, sentence, label, "authored_window", tag))

        for versions in docs.values():
            for old, new in changed_lines(versions):
                out.append(NLIPair(new, old, CONTRADICTION, "authored_versions", tag))
                out.append(NLIPair(old, new, CONTRADICTION, "authored_versions", tag))
        for s in sentences:
            if s.label == "unknown":
                add(_closest(s.sentence, every), s.sentence, NEUTRAL, every)
                continue
            if s.doc_id is None or s.evidence is None:
                continue
            versions = docs[s.doc_id]
            holder = next(v for v in versions if s.evidence in v["text"])
            units = _units(holder["text"])
            quote = next((u for u in units if s.evidence in u or u in s.evidence), s.evidence)
            if s.label == "stale":
                add(quote, s.sentence, ENTAILMENT, units)
                newest = _units(versions[-1]["text"])
                if holder is not versions[-1]:
                    counterpart = _closest(quote, newest)
                    if counterpart and counterpart not in units:
                        add(counterpart, s.sentence, CONTRADICTION, newest)
            else:
                label = {"supported": ENTAILMENT, "contradicted": CONTRADICTION}.get(
                    s.label, NEUTRAL
                )
                add(quote, s.sentence, label, units)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("validate")
    p.add_argument("folders", nargs="+", type=Path)
    for name in ("freeze", "check"):
        sub.add_parser(name).add_argument("split")
    sub.add_parser("stats")
    args = parser.parse_args(argv)
    if args.command == "validate":
        bad = 0
        for folder in args.folders:
            problems, sentences = validate(folder)
            counts = Counter(s.label for s in sentences)
            print(f"{folder}: {len(sentences)} sentences {dict(counts)}; {len(problems)} problems")
            for line in problems:
                print("  " + line)
            bad += bool(problems)
        return 1 if bad else 0
    if args.command in ("freeze", "check"):
        path = ROOT / f"{args.split}.sha256"
        digests = split_digest(args.split)
        lines = "".join(f"{h}  {p}\n" for p, h in digests.items())
        if args.command == "freeze":
            path.write_text(lines, encoding="utf-8")
            print(f"{path}: {len(digests)} files")
            return 0
        same = path.read_text(encoding="utf-8") == lines
        print(f"{path}: {'unchanged' if same else 'CHANGED'}")
        return 0 if same else 1
    for split in ("train", "dev", "test"):
        if not (ROOT / split).is_dir():
            continue
        data = load_split(split)
        labels = Counter(s.label for v in data.values() for s in v)
        print(f"{split}: {len(data)} domains, {sum(labels.values())} sentences {dict(labels)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
