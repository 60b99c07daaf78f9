"""What each phrase-rule group of the judges is worth on held-out data: the held-out
measurement of ``bench/calibrate_shared.py fit-default`` run once with nothing ablated
(``none``, the baseline) and once per rule group with that group's word list empty
(:func:`auditor.judges.wordlists.ablated`), each paired against the baseline.

    python bench/ablate_rule_groups.py OUT_DIR [--groups antonyms,role_words+feature_verbs]
        [--limit 150] [--eval-limit 150]
        [--sets wice,summedits:news,summedits:samsum,factcheck] [--eval-sets ...]
        [--fit-side stacker] [--kind votes] [--system votes] [--authored dev]

Defaults are the held-out command of docs/stacking.md (``--limit 150 --eval-limit 150
--sets wice,summedits:news,summedits:samsum,factcheck --fit-side stacker --kind votes``;
held-out report on every set, FaithBench included). ``--groups`` takes comma-separated
groups, ``a+b`` ablating two together (default: every group, one at a time). Every run
refits the stacker on the ablated votes (as shipping without the group would), so
``--system votes`` (the refitted vote stacker) is what is compared; ``--system previous``
compares the shipped stacker applied to the ablated votes without refitting.

Per run it writes ``OUT_DIR/<run>.json`` (the fit-default summary; its held-out items
carry every member's vote per item) and ``OUT_DIR/<run>.stacker.json``; then
``OUT_DIR/ablation.json`` and, on stdout, a table: per run, per set and pooled over the
claim-level sets, kappa and balanced accuracy with the paired difference against the
baseline and its 95 % cluster-bootstrap interval (``bench/compare_held_out.py``), how many
held-out votes (item x judge) and stacked predictions the ablation changed (a group that
changes no held-out vote has no held-out effect), and, with ``--authored SPLIT``, the
authored corpus's sentence accuracy (``bench/eval_authored.py``, shipped stacker) with its
paired difference.

The judges' vote cache (``$AUDITOR_VOTE_CACHE``) is keyed on the word lists and the
ablation state (:func:`auditor.judges.wordlists.digest`), so a rerun reads the runs
already made. One run costs what one fit-default costs (the reader's scores are kept in
memory across runs of one process).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import calibrate_shared as cs
import compare_held_out

from auditor.judges.wordlists import ablated, groups

BASELINE = "none"
HELD_OUT_SETS = "wice,summedits:news,summedits:samsum,factcheck"


def parse_runs(spec: str | None) -> list[tuple[str, tuple[str, ...]]]:
    """(name, groups ablated) per run, the baseline first: ``"a,b+c"`` -> none, a, b+c."""
    runs: list[tuple[str, tuple[str, ...]]] = [(BASELINE, ())]
    names = spec.split(",") if spec else list(groups())
    known = set(groups())
    for name in (n.strip() for n in names):
        if not name or name == BASELINE:
            continue
        parts = tuple(name.split("+"))
        unknown = [p for p in parts if p not in known]
        if unknown:
            raise SystemExit(f"error: no rule group {', '.join(unknown)}; known: {sorted(known)}")
        runs.append((name, parts))
    return runs


def vote_changes(base: dict[str, Any], other: dict[str, Any], system: str) -> dict[str, Any]:
    """How many held-out votes (item x member) and stacked predictions differ, per member
    and per set."""
    if base["ids"] != other["ids"]:
        raise SystemExit("error: the runs hold different held-out items")
    a, b = np.asarray(base["votes"]), np.asarray(other["votes"])
    changed = a != b
    datasets = np.asarray(base["datasets"])
    pa = np.asarray(base["predictions"][system])
    pb = np.asarray(other["predictions"][system])
    return {
        "votes": int(changed.sum()),
        "items_with_a_vote_changed": int(changed.any(axis=1).sum()),
        "per_member": {m: int(changed[:, j].sum()) for j, m in enumerate(base["members"])},
        "per_set": {d: int(changed[datasets == d].sum()) for d in dict.fromkeys(datasets.tolist())},
        "predictions": int((pa != pb).sum()),
        "n_items": len(base["ids"]),
    }


def paired(before: Path, after: Path, system: str) -> dict[str, Any]:
    """``bench/compare_held_out.py BEFORE AFTER --system SYSTEM``, read back."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        compare_held_out.main([str(before), str(after), "--system", system])
    result: dict[str, Any] = json.loads(out.getvalue())
    return result


def authored(
    split: str, domains: set[str] | None = None
) -> tuple[list[tuple[str, str, str]], dict[str, Any]]:
    """Sentence rows (cluster, gold, predicted) and figures of the authored split (or of
    its ``domains``), audited with the default panel, the shipped stacker and the default
    policy."""
    import eval_authored
    from authored_corpus import load_split

    from auditor import AuditConfig

    claims, figures = eval_authored.evaluate_split(
        split,
        AuditConfig(),
        None,
        lambda m: print(m, file=sys.stderr, flush=True),
        domains=domains,
    )
    return eval_authored.sentence_rows(claims, load_split(split, only=domains)), figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="output folder")
    parser.add_argument("--groups", default=None, help="comma-separated; a+b ablates both")
    parser.add_argument("--data", default=None, help="shared data folder")
    parser.add_argument("--limit", type=int, default=150, help="fit items per set")
    parser.add_argument("--eval-limit", type=int, default=150, help="held-out items per set")
    parser.add_argument("--sets", default=HELD_OUT_SETS, help="comma-separated fit sets")
    parser.add_argument("--eval-sets", default=None, help="held-out sets (default: all)")
    parser.add_argument("--fit-side", choices=("train", "stacker"), default="stacker")
    parser.add_argument("--kind", choices=("votes", "scores", "best"), default="votes")
    parser.add_argument("--system", default="votes", help="the system compared (see --kind)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--authored", default=None, help="also the authored corpus's split (dev), per run"
    )
    parser.add_argument(
        "--authored-domains", default=None, help="comma-separated: only these authored domains"
    )
    args = parser.parse_args(argv)
    runs = parse_runs(args.groups)
    root = cs.data_dir(args.data)
    if not root.exists():
        print(f"error: data folder {root} not found (set AUDITOR_DATA)", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    eval_sets = tuple(args.eval_sets.split(",")) if args.eval_sets else cs.DATASETS
    domains = set(args.authored_domains.split(",")) if args.authored_domains else None
    results: dict[str, Any] = {
        "command": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "runs": {},
    }
    base_rows: list[tuple[str, str, str]] | None = None
    for name, ablate in runs:
        started = time.time()
        print(f"== {name}: ablating {', '.join(ablate) or 'nothing'}", file=sys.stderr, flush=True)
        stem = name if len(name) <= 80 else f"{len(ablate)}-groups-{_short_digest(name)}"
        stacker = args.out / f"{stem}.stacker.json"
        stacker.unlink(missing_ok=True)  # so that "previous" is the shipped stacker
        with ablated(*ablate):
            summary = cs.fit_default(
                stacker,
                root,
                seed=args.seed,
                kind=args.kind,
                limit=args.limit,
                sets=tuple(args.sets.split(",")),
                eval_sets=eval_sets,
                eval_limit=args.eval_limit,
                fit_side=args.fit_side,
            )
            rows, figures = authored(args.authored, domains) if args.authored else (None, None)
        path = args.out / f"{stem}.json"
        path.write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
        run: dict[str, Any] = {"ablated": list(ablate), "file": path.name}
        if figures is not None:
            run["authored"] = {"split": args.authored, "figures": figures}
        if name == BASELINE:
            base_rows = rows
        else:
            base = args.out / f"{BASELINE}.json"
            run["paired"] = paired(base, path, args.system)
            run["changed"] = vote_changes(_items(base), summary["held_out"]["items"], args.system)
            if rows is not None and base_rows is not None:
                import eval_authored

                run["authored"]["paired_accuracy"] = eval_authored.paired_accuracy(base_rows, rows)
        run["seconds"] = round(time.time() - started, 1)
        results["runs"][name] = run
        (args.out / "ablation.json").write_text(json.dumps(results, indent=1) + "\n")
    print_table(results)
    return 0


def _short_digest(text: str) -> str:
    """A file name for a run whose name is too long for one."""
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def _items(path: Path) -> dict[str, Any]:
    items: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))["held_out"]["items"]
    return items


def print_table(results: dict[str, Any]) -> None:
    """Per run and set: the paired kappa and bacc change against the baseline with its
    interval; votes and predictions changed; the authored accuracy change."""
    for name, run in results["runs"].items():
        if name == BASELINE:
            continue
        changed = run["changed"]
        line = (
            f"\n{name}: {changed['votes']} held-out votes changed "
            f"({changed['items_with_a_vote_changed']} of {changed['n_items']} items), "
            f"{changed['predictions']} predictions"
        )
        members = {m: n for m, n in changed["per_member"].items() if n}
        if members:
            line += " [" + ", ".join(f"{m} {n}" for m, n in members.items()) + "]"
        if "paired_accuracy" in run.get("authored", {}):
            acc = run["authored"]["paired_accuracy"]
            line += (
                f"; authored accuracy {acc['difference']:+.3f} "
                f"[{acc['interval'][0]:+.3f}, {acc['interval'][1]:+.3f}]"
            )
        print(line)
        print(f"  {'set':22s} {'kappa':>13s} {'dkappa [95% CI]':>26s} {'dbacc [95% CI]':>26s}")
        for group, row in run["paired"].items():
            dk, ik = row["kappa_difference"], row["kappa_interval"]
            db, ib = row["bacc_difference"], row["bacc_interval"]
            print(
                f"  {group:22s} {row['kappa'][0]:6.3f}>{row['kappa'][1]:6.3f} "
                f"{dk:+8.3f} [{ik[0]:+.3f}, {ik[1]:+.3f}] "
                f"{db:+8.3f} [{ib[0]:+.3f}, {ib[1]:+.3f}]"
            )


if __name__ == "__main__":
    raise SystemExit(main())
