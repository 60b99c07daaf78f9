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

Rows: ``localize`` (localize_error with every sentence as a claim span),
``every sentence`` and ``nothing`` (trivial baselines), and, as an upper-bound
setting where the claim label is known (as in the audit flow, which localises only
unsupported claims): ``localize (flagged)`` (only sentences that overlap the union
gold) beside ``flagged sentences`` (marking those sentences whole).

    python bench/eval_localisation.py [--data ../shared/data] [--labels all|unwanted]
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
KEYS = (("character_iou", "score", "char IoU"), ("character", "f1", "char F1"),
        ("span_coverage", "f1", "SC F1"))


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
                        str(lab).startswith("Unwanted") for lab in ann["label"]):
                    continue
                s, e = ann.get("summary_start"), ann.get("summary_end")
                if s is None or e is None or e <= s:
                    continue
                per.setdefault(str(ann["annotator_id"]), []).append((int(s), int(e)))
            items.append({"text": sample["summary"], "evidence": [sample["source"]],
                          "annotators": list(per.values())})
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


def evaluate(items: list[dict[str, Any]]) -> tuple[dict[str, dict[str, Any]], float]:
    """Scores of every method against union and majority gold; seconds per localisation."""
    golds = {mode: [_combine(it["annotators"], len(it["text"]), mode) for it in items]
             for mode in ("union", "majority")}
    sentences = [sentence_spans(it["text"]) for it in items]
    flagged = [[s for s in sents if _overlaps(s, g)]
               for sents, g in zip(sentences, golds["union"], strict=True)]
    t0 = time.perf_counter()
    localized = [list(localize_error(it["text"], sents, it["evidence"]))
                 for it, sents in zip(items, sentences, strict=True)]
    per_call = (time.perf_counter() - t0) / max(len(items), 1)
    localized_flagged = [list(localize_error(it["text"], fl, it["evidence"])) if fl else []
                         for it, fl in zip(items, flagged, strict=True)]
    methods: dict[str, list[list[Span]]] = {"localize": localized, "every sentence": sentences,
               "nothing": [[] for _ in items], "localize (flagged)": localized_flagged,
               "flagged sentences": flagged}
    results: dict[str, dict[str, Any]] = {}
    for name, pred in methods.items():
        lengths = [len(it["text"]) for it in items]
        p = batch_from_lists(pred, name=name, text_lengths=lengths)
        results[name] = {}
        for mode, gold in golds.items():
            g = batch_from_lists(gold, name="gold", text_lengths=lengths)
            results[name][mode] = {avg: score_spans(g, p, average=avg)
                                   for avg in ("macro", "micro")}
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
    default = os.environ.get("AUDITOR_DATA",
                             str(Path(__file__).resolve().parents[1] / ".." / "shared" / "data"))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path(default),
                    help="benchmark data folder (default ../shared/data or $AUDITOR_DATA)")
    ap.add_argument("--labels", choices=("all", "unwanted"), default="all",
                    help="FaithBench spans to use as gold: all labels, or Unwanted.* only")
    args = ap.parse_args()
    fb_dir = args.data / "faithbench"
    if fb_dir.exists():
        items = load_faithbench(fb_dir, args.labels)
        n_gold = sum(bool(it["annotators"]) for it in items)
        res, per_call = evaluate(items)
        print_table(f"FaithBench ({len(items)} summaries, {n_gold} with gold spans, "
                    f"labels={args.labels}; cells: macro / micro; "
                    f"localize {per_call * 1e3:.2f} ms per summary)", res, ("union", "majority"))
    else:
        print(f"skip FaithBench: {fb_dir} not found")
    wice = args.data / "wice" / "non_supported_tokens" / "dev.jsonl"
    if wice.exists():
        for ev in ("supporting", "article"):
            items, unaligned = load_wice(wice, ev)
            res, per_call = evaluate(items)
            print_table(f"WiCE non_supported_tokens dev ({len(items)} claims, evidence = "
                        f"{ev} sentences, {unaligned} tokens not located in the claim; "
                        f"one aggregated annotation: union = majority; "
                        f"localize {per_call * 1e3:.2f} ms per claim)", res, ("union",))
    else:
        print(f"skip WiCE: {wice} not found")


if __name__ == "__main__":
    main()
