"""Evaluate :func:`auditor.spans.localize_error` on FaithBench and WiCE.

FaithBench (``faithbench/batch_*.json``): the answer is the summary, the evidence is
the source, gold = each annotator's ``summary_start``/``summary_end`` character spans,
combined as their union or strict majority (> half of the annotators who marked
anything on that sample: annotators who found nothing leave no record, so the true
annotator count is unknown). WiCE (``wice/non_supported_tokens/dev.jsonl``): the
answer is the claim, token-level ``non_supported_spans`` become character spans
(runs of consecutive marked tokens), evidence = the supporting sentences (and, in a
second row, the whole cited article); WiCE has one aggregated annotation, so union
and majority coincide.

Mu-SHROOM (``mushroom_val/mushroom.en-val.v2.extra.jsonl``): the answer is the model
output, gold = each annotator's character spans; the set ships no evidence document, so
the question is the only evidence (the reader and the lexical localiser are near blind
there: read its rows as a floor).

Rows: ``localize`` (localize_error with every sentence as a claim span),
``every sentence`` and ``nothing`` (trivial baselines), and, as an upper-bound
setting where the claim label is known (as in the audit flow, which localises only
unsupported claims): ``localize (flagged)`` (only sentences that overlap the union
gold) beside ``flagged sentences`` (marking those sentences whole).

With ``--reader N`` the reader-based localiser (:mod:`auditor.spans.reader`, at most
``--max-calls`` reader calls per sentence) is added on a seeded sample of N items per set,
beside every other row recomputed on the same sample: ``reader+lexical`` (every
sentence) and ``reader+lexical (flagged)``.

    python bench/eval_localisation.py [--data ../shared/data] [--labels all|unwanted]
                                      [--reader N] [--max-calls 10]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from auditor.spans import (
    batch_from_lists,
    localize_error,
    mask_to_spans,
    score_spans,
)
from auditor.types import Span

_SENTENCE = re.compile(r"\S.*?(?:[.!?]['\")\]]*(?=\s|$)|$)", re.S)
KEYS = (
    ("character_iou", "score", "char IoU"),
    ("character", "f1", "char F1"),
    ("span_coverage", "f1", "SC F1"),
)


def sentence_spans(text: str) -> list[Span]:
    """Half-open spans of the sentences of ``text`` (split after . ! ? and a space)."""
    return [(m.start(), m.end()) for m in _SENTENCE.finditer(text)]


def _overlaps(a: Span, spans: Sequence[Span]) -> bool:
    return any(s < a[1] and a[0] < e for s, e in spans)


def _combine(annotator_spans: list[list[Span]], length: int, mode: str) -> list[Span]:
    if not annotator_spans:
        return []
    votes = np.zeros(length, dtype=np.int64)
    for spans in annotator_spans:
        mask = np.zeros(length, dtype=bool)
        for s, e in spans:
            mask[s:e] = True
        votes += mask
    keep = votes > 0 if mode == "union" else 2 * votes > len(annotator_spans)
    return list(mask_to_spans(keep))


def load_faithbench(folder: Path, labels: str) -> list[dict[str, Any]]:
    """Samples: answer text, evidence, per-annotator gold spans."""
    items = []
    for path in sorted(folder.glob("batch_*.json")):
        for sample in json.loads(path.read_text(encoding="utf-8"))["samples"]:
            per: dict[str, list[Span]] = {}
            for ann in sample["annotations"]:
                if labels == "unwanted" and not any(
                    str(lab).startswith("Unwanted") for lab in ann["label"]
                ):
                    continue
                s, e = ann.get("summary_start"), ann.get("summary_end")
                if s is None or e is None or e <= s:
                    continue
                per.setdefault(str(ann["annotator_id"]), []).append((int(s), int(e)))
            items.append(
                {
                    "text": sample["summary"],
                    "evidence": [sample["source"]],
                    "annotators": list(per.values()),
                }
            )
    return items


def _token_offsets(claim: str, tokens: Sequence[str]) -> list[Span | None]:
    out: list[Span | None] = []
    pos = 0
    for tok in tokens:
        i = claim.find(tok, pos)
        if i < 0:
            out.append(None)
            continue
        out.append((i, i + len(tok)))
        pos = i + len(tok)
    return out


def load_wice(path: Path, evidence: str) -> tuple[list[dict[str, Any]], int]:
    """Claims with character gold spans; also the number of tokens not found in the claim."""
    items, unaligned = [], 0
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        rec = json.loads(line)
        claim = rec["claim"]
        offsets = _token_offsets(claim, rec["claim_tokens"])
        unaligned += sum(o is None for o in offsets)
        gold: list[Span] = []
        run: Span | None = None
        for off, marked in zip(offsets, rec["non_supported_spans"], strict=True):
            if off is None:
                continue
            if marked:
                run = off if run is None else (run[0], off[1])
            elif run is not None:
                gold.append(run)
                run = None
        if run is not None:
            gold.append(run)
        if evidence == "supporting":
            idx = sorted({i for group in rec["supporting_sentences"] for i in group})
            ev = [rec["evidence"][i] for i in idx if 0 <= i < len(rec["evidence"])]
        else:
            ev = list(rec["evidence"])
        items.append({"text": claim, "evidence": ev, "annotators": [gold]})
    return items, unaligned


def load_mushroom(path: Path) -> list[dict[str, Any]]:
    """Mu-SHROOM val items: model output, the question as evidence, annotators' spans."""
    items = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        rec = json.loads(line)
        text = rec["model_output_text"]
        annotators = [
            [(int(s), min(int(e), len(text))) for s, e in spans if int(e) > int(s)]
            for spans in rec.get("annotations", {}).values()
        ]
        items.append(
            {
                "text": text,
                "evidence": [rec["model_input"]],
                "annotators": [a for a in annotators if a],
            }
        )
    return items


def evaluate(
    items: list[dict[str, Any]], reader: Any = None, max_calls: int = 10
) -> tuple[dict[str, dict[str, Any]], float]:
    """Scores of every method against union and majority gold; seconds per localisation
    (of the reader-based localiser when ``reader`` is given)."""
    golds = {
        mode: [_combine(it["annotators"], len(it["text"]), mode) for it in items]
        for mode in ("union", "majority")
    }
    sentences = [sentence_spans(it["text"]) for it in items]
    flagged = [
        [s for s in sents if _overlaps(s, g)]
        for sents, g in zip(sentences, golds["union"], strict=True)
    ]
    t0 = time.perf_counter()
    localized = [
        list(localize_error(it["text"], sents, it["evidence"]))
        for it, sents in zip(items, sentences, strict=True)
    ]
    per_call = (time.perf_counter() - t0) / max(len(items), 1)
    localized_flagged = [
        list(localize_error(it["text"], fl, it["evidence"])) if fl else []
        for it, fl in zip(items, flagged, strict=True)
    ]
    methods: dict[str, list[list[Span]]] = {
        "localize": localized,
        "every sentence": sentences,
        "nothing": [[] for _ in items],
        "localize (flagged)": localized_flagged,
        "flagged sentences": flagged,
    }
    if reader is not None:
        from auditor.spans.reader import localize_with_reader

        t0 = time.perf_counter()
        methods["reader+lexical"] = [
            list(
                localize_with_reader(
                    it["text"], sents, it["evidence"], scorer=reader, max_calls=max_calls
                )
            )
            for it, sents in zip(items, sentences, strict=True)
        ]
        per_call = (time.perf_counter() - t0) / max(len(items), 1)
        methods["reader+lexical (flagged)"] = [
            (
                list(
                    localize_with_reader(
                        it["text"], fl, it["evidence"], scorer=reader, max_calls=max_calls
                    )
                )
                or fl
            )
            if fl
            else []
            for it, fl in zip(items, flagged, strict=True)
        ]
    results: dict[str, dict[str, Any]] = {}
    for name, pred in methods.items():
        lengths = [len(it["text"]) for it in items]
        p = batch_from_lists(pred, name=name, text_lengths=lengths)
        results[name] = {}
        for mode, gold in golds.items():
            g = batch_from_lists(gold, name="gold", text_lengths=lengths)
            results[name][mode] = {
                avg: score_spans(g, p, average=avg) for avg in ("macro", "micro")
            }
    return results, per_call


def print_table(title: str, results: dict[str, dict[str, Any]], modes: Sequence[str]) -> None:
    """Markdown table: rows = methods, columns = metric x reference (macro / micro)."""
    print(f"\n### {title}\n")
    head = ["method"] + [f"{label} {mode}" for mode in modes for _, _, label in KEYS]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for name, res in results.items():
        cells = [name]
        for mode in modes:
            for key, field, _ in KEYS:
                ma = res[mode]["macro"][key][field]
                mi = res[mode]["micro"][key][field]
                cells.append(f"{ma:.3f} / {mi:.3f}")
        print("| " + " | ".join(cells) + " |")


def main() -> None:
    default = os.environ.get(
        "AUDITOR_DATA", str(Path(__file__).resolve().parents[1] / ".." / "shared" / "data")
    )
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--data",
        type=Path,
        default=Path(default),
        help="benchmark data folder (default ../shared/data or $AUDITOR_DATA)",
    )
    ap.add_argument(
        "--labels",
        choices=("all", "unwanted"),
        default="all",
        help="FaithBench spans to use as gold: all labels, or Unwanted.* only",
    )
    ap.add_argument(
        "--reader",
        type=int,
        default=0,
        help="add the reader-based localiser on a seeded sample of N items per set",
    )
    ap.add_argument("--max-calls", type=int, default=10, help="reader calls per sentence at most")
    args = ap.parse_args()
    if args.reader:
        run_reader(args)
        return
    fb_dir = args.data / "faithbench"
    if fb_dir.exists():
        items = load_faithbench(fb_dir, args.labels)
        n_gold = sum(bool(it["annotators"]) for it in items)
        res, per_call = evaluate(items)
        print_table(
            f"FaithBench ({len(items)} summaries, {n_gold} with gold spans, "
            f"labels={args.labels}; cells: macro / micro; "
            f"localize {per_call * 1e3:.2f} ms per summary)",
            res,
            ("union", "majority"),
        )
    else:
        print(f"skip FaithBench: {fb_dir} not found")
    wice = args.data / "wice" / "non_supported_tokens" / "dev.jsonl"
    if wice.exists():
        for ev in ("supporting", "article"):
            items, unaligned = load_wice(wice, ev)
            res, per_call = evaluate(items)
            print_table(
                f"WiCE non_supported_tokens dev ({len(items)} claims, evidence = "
                f"{ev} sentences, {unaligned} tokens not located in the claim; "
                f"one aggregated annotation: union = majority; "
                f"localize {per_call * 1e3:.2f} ms per claim)",
                res,
                ("union",),
            )
    else:
        print(f"skip WiCE: {wice} not found")


def run_reader(args: argparse.Namespace) -> None:
    """Every row, the reader's included, on a seeded sample of ``args.reader`` items/set."""
    from auditor.spans.reader import entailment_scorer

    scorer = entailment_scorer()
    rng = np.random.default_rng(0)
    sets: list[tuple[str, list[dict[str, Any]]]] = []
    fb_dir = args.data / "faithbench"
    if fb_dir.exists():
        sets.append(("FaithBench", load_faithbench(fb_dir, args.labels)))
    wice = args.data / "wice" / "non_supported_tokens" / "dev.jsonl"
    if wice.exists():
        sets.append(
            (
                "WiCE non_supported_tokens dev (supporting sentences)",
                load_wice(wice, "supporting")[0],
            )
        )
    shroom = args.data / "mushroom_val" / "mushroom.en-val.v2.extra.jsonl"
    if shroom.exists():
        sets.append(("Mu-SHROOM en val (question as the only evidence)", load_mushroom(shroom)))
    for title, items in sets:
        keep = sorted(rng.choice(len(items), min(args.reader, len(items)), replace=False))
        sample = [items[i] for i in keep]
        res, per_call = evaluate(sample, reader=scorer, max_calls=args.max_calls)
        modes = ("union",) if title.startswith("WiCE") else ("union", "majority")
        print_table(
            f"{title}: seeded sample of {len(sample)} of {len(items)} items; cells: "
            f"macro / micro; reader+lexical {per_call:.2f} s per item",
            res,
            modes,
        )


if __name__ == "__main__":
    main()
