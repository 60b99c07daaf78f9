"""Time-aware labels on real answer timelines: precision and recall of stale, supported, unknown.

Usage::

    python bench/eval_temporal.py [--data DIR] [--n-situated 80] [--n-timeqa 40] [--seed 0]

Data (read-only, never copied): ``situatedqa_temporal/raw_data/temp.dev.jsonl`` (the dev
split: questions whose answer changed, with the start date of the previous and the
current answer) and ``timeqa/human_annotated_train.json`` (time-scoped questions
"... from 2004 to 2005?" grouped by entity and relation into multi-period timelines).
``--data`` defaults to ``$AUDITOR_DATA`` or ``../shared/data`` relative to the repo.

For each timeline a dated corpus is built: one document per question, one version per
answer period ("As of <start>, the answer to "<question>" is <answer>."), published at
the period start (ingest then supersedes each version at the next one's start). Claims
state each period's answer ("The answer to "<question>" is <answer>."), and are
audited through the real path (rules extractor, evidence index, the default offline
panel and its shipped stacker, :func:`auditor.runner.run_audit` into a temporary
SQLite ledger) with a per-answer as-of date:

* SituatedQA: before the first period (gold ``unknown``: no evidence yet), between the
  two starts (previous answer gold ``supported``; current answer not yet known: gold
  "unsupported"), after the current start (previous answer gold ``stale``, current
  ``supported``).
* TimeQA: as of the middle of each period j: answers of earlier periods gold ``stale``,
  period j ``supported``, later periods "unsupported"; plus time-scoped claims
  ("From Y1 to Y2, the answer to ... was A.") of earlier periods, gold ``supported``
  (a true statement about the past is not stale).
* Unknown: the same SituatedQA claims as of after the current start against a corpus
  from which the documents of half of the questions were removed: their claims are gold
  ``unknown``; the others keep their gold labels.

Prints a confusion table and precision / recall (with counts) per label.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

REPO = Path(__file__).resolve().parents[1]
UNSUPPORTED = "unsupported"
"""Gold class for a claim the evidence at as-of does not back (contradicted/not_supported)."""


@dataclass(frozen=True)
class Period:
    start: datetime
    answer: str


@dataclass(frozen=True)
class Timeline:
    key: str
    question: str
    periods: tuple[Period, ...]


@dataclass(frozen=True)
class Case:
    answer_id: str
    claim: str
    question: str
    as_of: datetime
    gold: str
    kind: str


def data_dir(arg: str | None) -> Path:
    return Path(arg or os.environ.get("AUDITOR_DATA") or REPO.parent / "shared" / "data")


def _clean(text: str) -> str:
    text = re.sub(r"\s+([.,;:!?)])", r"\1", text.replace('"', "'"))
    return re.sub(r"\(\s+", "(", text).strip()


def _date(d: dict | None) -> datetime | None:
    if not d or not d.get("year"):
        return None
    return datetime(int(d["year"]), int(d.get("month") or 1), int(d.get("date") or 1), tzinfo=UTC)


def situated_timelines(path: Path, n: int, rng: np.random.Generator) -> list[Timeline]:
    """Questions with a dated previous and current answer that differ."""
    out = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            for tl in rec.get("timelines") or []:
                prev, cur = _date(tl.get("prev_start")), _date(tl.get("cur_start"))
                pa, ca = tl.get("prev_answers") or [], tl.get("cur_answers") or []
                if not (prev and cur and pa and ca) or cur - prev < timedelta(days=365):
                    continue
                if pa[0].strip().lower() == ca[0].strip().lower():
                    continue
                out.append(
                    Timeline(
                        f"sqa{rec['id']}",
                        _clean(rec["question"]),
                        (Period(prev, _clean(pa[0])), Period(cur, _clean(ca[0]))),
                    )
                )
                break
    pick = rng.choice(len(out), size=min(n, len(out)), replace=False)
    return [out[i] for i in sorted(pick)]


_SCOPE = re.compile(
    r"\s+(?:from|between|in|during|since)\s+(?:[A-Za-z]+\.?\s+)?(\d{4})"
    r"(?:.*?(\d{4}))?.*$",
    re.IGNORECASE,
)


def timeqa_timelines(path: Path, n: int, rng: np.random.Generator) -> list[Timeline]:
    """Per entity and question stem, the answers of successive time-scoped questions."""
    entities = json.loads(path.read_text(encoding="utf-8"))
    out: list[Timeline] = []
    for ent in entities:
        groups: dict[str, list[tuple[int, str]]] = {}
        for question, answers in ent["questions"]:
            m = _SCOPE.search(question)
            if not m or not answers:
                continue
            stem = _clean(question[: m.start()].rstrip(" ,") + "?")
            groups.setdefault(stem, []).append((int(m.group(1)), _clean(answers[0]["answer"])))
        for stem, items in groups.items():
            items.sort()
            periods: list[Period] = []
            for year, answer in items:
                seen = {p.answer.lower() for p in periods}
                if (
                    len(answer) < 2
                    or answer.lower() in seen
                    or (periods and year <= periods[-1].start.year)
                ):
                    continue
                periods.append(Period(datetime(year, 1, 1, tzinfo=UTC), answer))
            if len(periods) >= 2:
                out.append(Timeline(f"tqa{len(out)}", stem, tuple(periods[:4])))
    pick = rng.choice(len(out), size=min(n, len(out)), replace=False)
    return [out[i] for i in sorted(pick)]


def documents(timelines: Sequence[Timeline]) -> list:
    from auditor.retrieval.documents import make_document

    return [
        make_document(
            t.key,
            f'As of {p.start.date().isoformat()}, the answer to "{t.question}" is {p.answer}.',
            version=f"v{j + 1}",
            published_at=p.start,
            source=f"bench:{t.key}",
        )
        for t in timelines
        for j, p in enumerate(t.periods)
    ]


def claim_text(t: Timeline, p: Period) -> str:
    return f'The answer to "{t.question}" is {p.answer}.'


def _mid(a: datetime, b: datetime) -> datetime:
    return a + (b - a) / 2


def situated_cases(timelines: Sequence[Timeline]) -> list[Case]:
    cases = []
    for t in timelines:
        (prev, cur) = t.periods
        scenarios = (
            ("before", prev.start - timedelta(days=365), ("unknown", "unknown")),
            ("between", _mid(prev.start, cur.start), ("supported", UNSUPPORTED)),
            ("after", cur.start + timedelta(days=365), ("stale", "supported")),
        )
        for name, as_of, golds in scenarios:
            for which, p, gold in (("prev", prev, golds[0]), ("cur", cur, golds[1])):
                cases.append(
                    Case(
                        f"{t.key}|{name}|{which}",
                        claim_text(t, p),
                        t.question,
                        as_of,
                        gold,
                        f"{name}:{which}",
                    )
                )
    return cases


def timeqa_cases(timelines: Sequence[Timeline]) -> list[Case]:
    cases = []
    for t in timelines:
        for j, pj in enumerate(t.periods):
            end = (
                t.periods[j + 1].start if j + 1 < len(t.periods) else pj.start + timedelta(days=730)
            )
            as_of = _mid(pj.start, end)
            for i, p in enumerate(t.periods):
                gold = "stale" if i < j else "supported" if i == j else UNSUPPORTED
                cases.append(
                    Case(
                        f"{t.key}|{j}|{i}",
                        claim_text(t, p),
                        t.question,
                        as_of,
                        gold,
                        "earlier" if i < j else "now" if i == j else "later",
                    )
                )
                if i < j:
                    y2 = t.periods[i + 1].start.year
                    scoped = (
                        f'From {p.start.year} to {y2}, the answer to "{t.question}" was {p.answer}.'
                    )
                    cases.append(
                        Case(
                            f"{t.key}|{j}|{i}|scoped",
                            scoped,
                            t.question,
                            as_of,
                            "supported",
                            "scoped",
                        )
                    )
    return cases


def audit(
    cases: Sequence[Case], docs: Sequence, workdir: Path, name: str, policy: object | None = None
) -> dict[str, str]:
    """Run the real audit path; the label of each case's first factual claim."""
    from auditor import AuditConfig, Auditor
    from auditor.labels import LabelPolicy
    from auditor.retrieval import EvidenceIndex, ingest
    from auditor.types import Answer
    from ledger import open_ledger

    index_dir, db = workdir / f"{name}-index", workdir / f"{name}.db"
    with open_ledger(db) as ledger:
        ingest(
            list(docs), index_dir, on_commit=lambda r: ledger.record_corpus(r.versions, r.chunks)
        )
        index = EvidenceIndex.open(index_dir)
        config = AuditConfig(
            as_of=None, policy=policy if isinstance(policy, LabelPolicy) else LabelPolicy()
        )
        answers = [
            Answer(id=c.answer_id, question=c.question, answer=c.claim, as_of=c.as_of)
            for c in cases
        ]
        with Auditor(index, ledger, config=config) as auditor:
            summary = auditor.audit(answers)
        labels: dict[str, str] = {}
        extra = 0
        for row in ledger.claim_results(summary.run_id):
            if not row.factual:
                continue
            if row.answer_id in labels:
                extra += 1
                continue
            labels[row.answer_id] = row.label or "none"
            REASONS[row.answer_id] = row.reason or ""
    if extra:
        print(f"  note: {extra} answers gave more than one factual claim (first one scored)")
    return labels


REASONS: dict[str, str] = {}
"""Each scored claim's recorded reason, by case id (for ``--dump``)."""


def dump(path: Path, part: str, cases: Sequence[Case], labels: dict[str, str]) -> None:
    """Append one JSON line per case: its id, kind, gold, label, reason and claim."""
    with path.open("a", encoding="utf-8") as out:
        for c in cases:
            row = {
                "part": part,
                "id": c.answer_id,
                "kind": c.kind,
                "gold": c.gold,
                "label": labels.get(c.answer_id, "no_claim"),
                "reason": REASONS.get(c.answer_id, ""),
                "claim": c.claim,
                "as_of": c.as_of.isoformat() if c.as_of else None,
            }
            out.write(json.dumps(row) + "\n")


def _unsupported(label: str) -> str:
    return UNSUPPORTED if label in ("contradicted", "not_supported") else label


def score(
    cases: Sequence[Case], labels: dict[str, str], title: str, targets: Sequence[str]
) -> None:
    pred = {c.answer_id: labels.get(c.answer_id, "no_claim") for c in cases}
    print(f"\n== {title}: {len(cases)} claims ==")
    by_kind: dict[str, Counter[str]] = {}
    for c in cases:
        by_kind.setdefault(f"{c.kind} (gold {c.gold})", Counter())[pred[c.answer_id]] += 1
    for kind, counts in sorted(by_kind.items()):
        print(f"  {kind:<34} " + ", ".join(f"{k} {v}" for k, v in counts.most_common()))
    for target in targets:
        gold = np.array([c.gold == target for c in cases])
        hit = np.array([_unsupported(pred[c.answer_id]) == target for c in cases])
        tp = int((gold & hit).sum())
        p = tp / hit.sum() if hit.sum() else float("nan")
        r = tp / gold.sum() if gold.sum() else float("nan")
        print(
            f"  {target:<12} precision {p:.3f} ({tp}/{int(hit.sum())})   "
            f"recall {r:.3f} ({tp}/{int(gold.sum())})"
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default=None)
    parser.add_argument("--n-situated", type=int, default=80)
    parser.add_argument("--n-timeqa", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", choices=("situated", "timeqa", "unknown"), default=None)
    parser.add_argument(
        "--stale-margin",
        type=float,
        default=None,
        help="LabelPolicy.stale_margin (default: the policy's default)",
    )
    parser.add_argument(
        "--min-coverage",
        type=float,
        default=None,
        help="LabelPolicy.min_coverage (0: relevance by cosine alone)",
    )
    parser.add_argument(
        "--label-model",
        default=None,
        help="LabelPolicy.label_model: a model file, 'default', or 'none' for the rules",
    )
    parser.add_argument(
        "--dump", type=Path, default=None, help="write every case's label and reason (JSONL)"
    )
    args = parser.parse_args(argv)
    from auditor.labels import LabelPolicy

    if args.dump is not None:
        args.dump.write_text("", encoding="utf-8")

    overrides = {
        name: value
        for name, value in (
            ("stale_margin", args.stale_margin),
            ("min_coverage", args.min_coverage),
        )
        if value is not None
    }
    policy = LabelPolicy(**overrides)
    if args.label_model is not None:
        model = None if args.label_model == "none" else args.label_model
        policy = replace(policy, label_model=model)
    print(f"label policy: {policy}")
    root = data_dir(args.data)
    sqa_path = root / "situatedqa_temporal" / "raw_data" / "temp.dev.jsonl"
    tqa_path = root / "timeqa" / "human_annotated_train.json"
    if not sqa_path.exists() or not tqa_path.exists():
        print(f"data not found under {root} (set --data or AUDITOR_DATA)", file=sys.stderr)
        return 2
    rng = np.random.default_rng(args.seed)
    targets = ("stale", "supported", "unknown", UNSUPPORTED)
    with tempfile.TemporaryDirectory(prefix="eval-temporal-") as tmp:
        work = Path(tmp)
        sqa = situated_timelines(sqa_path, args.n_situated, rng)
        if args.only in (None, "situated"):
            cases = situated_cases(sqa)
            t0 = time.perf_counter()
            labels = audit(cases, documents(sqa), work, "situated", policy)
            print(
                f"SituatedQA dev: {len(sqa)} timelines, {len(cases)} claims, "
                f"{time.perf_counter() - t0:.0f} s"
            )
            score(cases, labels, "SituatedQA (dev) before/between/after", targets)
            if args.dump is not None:
                dump(args.dump, "situated", cases, labels)
        if args.only in (None, "timeqa"):
            tqa = timeqa_timelines(tqa_path, args.n_timeqa, rng)
            cases = timeqa_cases(tqa)
            t0 = time.perf_counter()
            labels = audit(cases, documents(tqa), work, "timeqa", policy)
            print(
                f"\nTimeQA train: {len(tqa)} timelines, {len(cases)} claims, "
                f"{time.perf_counter() - t0:.0f} s"
            )
            score(cases, labels, "TimeQA (human train) per-period as-of", targets)
            if args.dump is not None:
                dump(args.dump, "timeqa", cases, labels)
        if args.only in (None, "unknown"):
            removed = {t.key for i, t in enumerate(sqa) if i % 2 == 0}
            kept = [t for t in sqa if t.key not in removed]
            cases = [
                Case(
                    c.answer_id + "|removed"
                    if c.answer_id.split("|")[0] in removed
                    else c.answer_id,
                    c.claim,
                    c.question,
                    c.as_of,
                    "unknown" if c.answer_id.split("|")[0] in removed else c.gold,
                    ("removed:" if c.answer_id.split("|")[0] in removed else "kept:") + c.kind,
                )
                for c in situated_cases(sqa)
                if c.kind.startswith("after")
            ]
            t0 = time.perf_counter()
            labels = audit(cases, documents(kept), work, "unknown", policy)
            print(
                f"\nUnknown: {len(removed)} of {len(sqa)} documents removed, {len(cases)} "
                f"claims, {time.perf_counter() - t0:.0f} s"
            )
            score(cases, labels, "SituatedQA with the needed document removed", targets)
            if args.dump is not None:
                dump(args.dump, "unknown", cases, labels)
    return 0


if __name__ == "__main__":
    sys.exit(main())
