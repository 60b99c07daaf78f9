"""Plain-Python baseline of ``auditor spans score``: standard library only.

    python bench/spans_score_plain.py --gold GOLD.jsonl --pred PRED.jsonl [--average micro]

A straightforward script a user would write: ``json.loads`` each line, check the
spans, match the items by id, canonicalise each span set (sort, merge overlapping
and adjacent spans), and compute the six metrics item by item with interval
arithmetic (no numpy, no character sets), then average. It prints the same JSON
object as ``auditor spans score`` so the two can be compared figure by figure; it
is the baseline of ``bench/bench_span_metrics.py --whole-process``. The DetEval and
CLEval passes follow :mod:`auditor.spans._reference` (the test oracle) with
intersections computed from the interval ends.
"""

from __future__ import annotations

import argparse
import json
import sys

KEYS = ("exact_span", "character", "character_iou", "deteval_1d", "cleval_1d", "span_coverage")


def read(path: str) -> dict[str, tuple[str | None, list[tuple[int, int]]]]:
    out: dict[str, tuple[str | None, list[tuple[int, int]]]] = {}
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            rec = json.loads(line)
            key = str(rec["id"])
            if key in out:
                sys.exit(f"{path}:{number}: duplicate id {key!r}")
            text = rec.get("text")
            spans = []
            for s, e in rec["spans"]:
                if (
                    not (isinstance(s, int) and isinstance(e, int))
                    or s < 0
                    or e < s
                    or (text is not None and e > len(text))
                ):
                    sys.exit(f"{path}:{number}: bad span {[s, e]!r}")
                spans.append((s, e))
            out[key] = (text, spans)
    return out


def canonical(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[list[int]] = []
    for s, e in sorted(spans):
        if e <= s:
            continue
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]


def ov(a: tuple[int, int], b: tuple[int, int]) -> int:
    return max(0, min(a[1], b[1]) - max(a[0], b[0]))


def deteval(
    g: list[tuple[int, int]],
    p: list[tuple[int, int]],
    inter: list[list[int]],
    tr: float = 0.8,
    tp: float = 0.4,
    pen: float = 0.8,
) -> tuple[float, ...]:
    sig = [[inter[i][j] / (g[i][1] - g[i][0]) for j in range(len(p))] for i in range(len(g))]
    tau = [[inter[i][j] / (p[j][1] - p[j][0]) for j in range(len(p))] for i in range(len(g))]
    un_g, un_p = set(range(len(g))), set(range(len(p)))
    rc, pc = [0.0] * len(g), [0.0] * len(p)
    for i in range(len(g)):
        row = [j for j in range(len(p)) if inter[i][j] > 0]
        if len(row) != 1:
            continue
        j = row[0]
        col = [k for k in range(len(g)) if inter[k][j] > 0]
        if len(col) == 1 and sig[i][j] >= tr and tau[i][j] >= tp:
            rc[i], pc[j] = 1.0, 1.0
            un_g.discard(i)
            un_p.discard(j)
    for i in sorted(un_g):
        if sum(inter[i][j] > 0 for j in range(len(p))) <= 1:
            continue
        cand = [j for j in sorted(un_p) if inter[i][j] > 0 and tau[i][j] >= tp]
        if len(cand) == 1:
            j = cand[0]
            if sig[i][j] >= tr and tau[i][j] >= tp:
                rc[i], pc[j] = 1.0, 1.0
                un_g.discard(i)
                un_p.discard(j)
        elif len(cand) >= 2 and sum(sig[i][j] for j in cand) >= tr:
            rc[i] = pen
            for j in cand:
                pc[j] = pen
            un_g.discard(i)
            un_p.difference_update(cand)
    for j in sorted(un_p):
        if sum(inter[i][j] > 0 for i in range(len(g))) <= 1:
            continue
        cand = [i for i in sorted(un_g) if inter[i][j] > 0 and sig[i][j] >= tr]
        if len(cand) == 1:
            i = cand[0]
            if sig[i][j] >= tr and tau[i][j] >= tp:
                pc[j], rc[i] = 1.0, 1.0
                un_p.discard(j)
                un_g.discard(i)
        elif len(cand) >= 2 and sum(tau[i][j] for i in cand) >= tp:
            pc[j] = pen
            for i in cand:
                rc[i] = pen
            un_p.discard(j)
            un_g.difference_update(cand)
    return (sum(pc), float(len(p)), sum(rc), float(len(g)))


def cleval(
    g: list[tuple[int, int]],
    p: list[tuple[int, int]],
    inter: list[list[int]],
    gchars: int,
    pchars: int,
    ap: float = 0.3,
    w: float = 1.0,
) -> tuple[float, ...]:
    tau = [[inter[i][j] / (p[j][1] - p[j][0]) for j in range(len(p))] for i in range(len(g))]
    q = [[inter[i][j] > 0 and tau[i][j] >= ap for j in range(len(p))] for i in range(len(g))]
    match = [[False] * len(p) for _ in g]
    for i in range(len(g)):
        for j in range(len(p)):
            if q[i][j] and sum(q[i]) == 1 and sum(q[k][j] for k in range(len(g))) == 1:
                match[i][j] = True
    for i in range(len(g)):
        cand = [j for j in range(len(p)) if q[i][j]]
        if len(cand) >= 2:
            for j in cand:
                match[i][j] = True
    for j in range(len(p)):
        cand = [i for i in range(len(g)) if inter[i][j] > 0]
        if len(cand) >= 2 and sum(tau[i][j] for i in cand) >= ap:
            for i in cand:
                match[i][j] = True
    # canonical spans are disjoint, so the matched intersections are disjoint too
    correct = float(sum(inter[i][j] for i in range(len(g)) for j in range(len(p)) if match[i][j]))
    rpen = sum(max(sum(match[i]) - 1, 0) * w for i in range(len(g)))
    ppen = sum(max(sum(match[i][j] for i in range(len(g))) - 1, 0) * w for j in range(len(p)))
    return (max(0.0, correct - ppen), float(pchars), max(0.0, correct - rpen), float(gchars))


def counts(g: list[tuple[int, int]], p: list[tuple[int, int]]) -> dict[str, tuple[float, ...]]:
    inter = [[ov(a, b) for b in p] for a in g]
    gchars = sum(e - s for s, e in g)
    pchars = sum(e - s for s, e in p)
    both = float(sum(map(sum, inter)))
    exact = float(len(set(g) & set(p)))
    contained = sum(any(gs <= ps and pe <= ge for gs, ge in g) for ps, pe in p)
    hit = sum(any(gs <= ps and pe <= ge for ps, pe in p) for gs, ge in g)
    return {
        "exact_span": (exact, float(len(p)), exact, float(len(g))),
        "character": (both, float(pchars), both, float(gchars)),
        "character_iou": (both, float(gchars + pchars) - both),
        "span_coverage": (float(contained), float(len(p)), float(hit), float(len(g))),
        "deteval_1d": deteval(g, p, inter),
        "cleval_1d": cleval(g, p, inter, gchars, pchars),
    }


def prf(pc: float, pt: float, rc: float, rt: float) -> tuple[float, float, float]:
    if pt == 0 and rt == 0:
        return 1.0, 1.0, 1.0
    p = pc / pt if pt > 0 else 1.0
    r = rc / rt if rt > 0 else 1.0
    return p, r, (2.0 * p * r / (p + r) if p + r > 0 else 0.0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gold", required=True)
    ap.add_argument("--pred", required=True)
    ap.add_argument("--average", choices=("macro", "micro"), default="macro")
    args = ap.parse_args()
    gold, pred = read(args.gold), read(args.pred)
    if set(gold) != set(pred):
        sys.exit("ids differ between the files")
    per = []
    for key, (text, spans) in gold.items():
        ptext, pspans = pred[key]
        if text is not None and ptext is not None and text != ptext:
            sys.exit(f"id {key!r}: text differs")
        per.append(counts(canonical(spans), canonical(pspans)))
    out: dict[str, dict[str, float]] = {}
    for key in KEYS:
        if key == "character_iou":
            if args.average == "micro":
                i, u = sum(c[key][0] for c in per), sum(c[key][1] for c in per)
                out[key] = {"score": i / u if u else 1.0}
            else:
                out[key] = {
                    "score": sum(c[key][0] / c[key][1] if c[key][1] else 1.0 for c in per)
                    / len(per)
                }
            continue
        if args.average == "micro":
            p, r, f = prf(*(sum(c[key][t] for c in per) for t in range(4)))
        else:
            prfs = [prf(*c[key]) for c in per]
            p, r, f = (sum(x[t] for x in prfs) / len(prfs) for t in range(3))
        out[key] = {"precision": p, "recall": r, "f1": f}
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
