"""Is removing word-list groups equivalent to ablating them?

``--freeze OUT.pkl`` computes, under ``wordlists.ablated(*GROUPS)``, the votes of the
model-free judges that read the lists (``numeric_consistency``, ``negation_polarity``,
``entity_consistency``: vote, abstention, scores and explanation) and the outputs of the
text toolkit's functions that read them (:mod:`auditor.text.roles`,
:mod:`auditor.text.quantities`) on a fixed set of claim/evidence pairs, and saves them.
``--check OUT.pkl`` computes the same with no ablation (the code after the groups were
removed) and reports every difference: none means the removal changed nothing the
ablation did not.

The pairs (deterministic): every answer sentence of the authored corpus's train and dev
splits (never test) against its domain's documents (every version), each changed line
between two versions of a document against the other version's line, the demo's answer
sentences against the demo corpus, the string literals of the judges' and toolkit's tests
paired within each test, and ``--nli`` pairs drawn evenly from ``../shared/data/nli_more``
and ``../shared/data/nli``.

    python bench/wordlist_removal_check.py --freeze /work/removal_ref.pkl   # before
    python bench/wordlist_removal_check.py --check /work/removal_ref.pkl    # after
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import json
import pickle
import random
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import nullcontext
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from authored_corpus import ROOT as AUTHORED
from authored_corpus import changed_lines, documents, load_split

from auditor import text as toolkit
from auditor.judges import wordlists
from auditor.judges.catalog import build_judge
from auditor.text import sentences
from auditor.types import JudgePair

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared" / "data"
JUDGES = ("numeric_consistency", "negation_polarity", "entity_consistency")
GROUPS = [
    "agent_classes",
    "agent_verbs",
    "ceased_support",
    "ended_tense_words",
    "ended_verbs",
    "event_classes",
    "every_day_phrases",
    "exception_words",
    "free_phrases",
    "frequency_words",
    "generic_subjects",
    "kind_words",
    "leading_roles",
    "leads_now",
    "maker_verbs",
    "named_thing_words",
    "no_object_words",
    "number_qualifiers",
    "number_slot_cues",
    "occurrence_nouns",
    "one_units",
    "one_verb_phrases",
    "only_exceptions",
    "ordinal_words",
    "other_days_phrases",
    "price_words",
    "rating_words",
    "role_link_phrases",
    "role_past_words",
    "role_verbs",
    "single_words",
    "sports",
    "stop_word_units",
    "succession_phrases",
    "synonyms",
    "team_verbs",
    "topic_stopwords",
    "transition_verbs",
    "unit_abbreviations",
    "unit_classes",
    "unmarked_plurals",
]
"""The 41 groups that changed no held-out vote and no authored dev label (session 19)."""
TEST_FILES = (
    "test_wordlists.py",
    "test_text_toolkit.py",
    "test_judges_slots.py",
    "test_judges_clauses.py",
    "test_judges_other_words.py",
    "test_judges_lexical.py",
    "test_labels.py",
    "test_span_reader.py",
)

Pair = tuple[str, str, tuple[str, ...]]  # (source, claim, evidence)


def _authored() -> Iterator[Pair]:
    for split in ("train", "dev"):
        for domain, labelled in load_split(split).items():
            versions = documents(AUTHORED / split / domain)
            texts = tuple(v["text"] for vs in versions.values() for v in vs)
            for s in labelled:
                yield f"authored:{split}", s.sentence, texts
            for vs in versions.values():
                for old, new in changed_lines(vs):
                    yield f"changed:{split}", new, (old,)
                    yield f"changed:{split}", old, (new,)


def _demo() -> Iterator[Pair]:
    folder = REPO / "auditor" / "samples"
    docs = [json.loads(line) for line in (folder / "corpus.jsonl").open(encoding="utf-8")]
    texts = tuple(d["text"] for d in docs)
    for line in (folder / "answers.jsonl").open(encoding="utf-8"):
        for sentence in sentences(json.loads(line)["answer"]):
            yield "demo", sentence, texts


def _strings(node: ast.AST) -> list[str]:
    return [
        n.value
        for n in ast.walk(node)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and " " in n.value.strip()
    ]


def _tests() -> Iterator[Pair]:
    """Within each test function (and each module-level statement), every string literal
    against the one after it and against all the others together."""
    for name in TEST_FILES:
        path = REPO / "tests" / name
        if not path.is_file():
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            found = [s for s in _strings(node) if len(s) < 2000]
            for i, claim in enumerate(found):
                others = tuple(found[:i] + found[i + 1 :])
                if i + 1 < len(found):
                    yield f"tests:{name}", claim, (found[i + 1],)
                if others:
                    yield f"tests:{name}", claim, others


def _nli(n: int) -> Iterator[Pair]:
    from auditor.entailment.data import (
        load_climate_fever,
        load_fever,
        load_fm2,
        load_healthver,
        load_mnli,
        load_rte,
        load_sick,
        load_snli,
    )
    from auditor.entailment.more import LOADERS

    sources: list[tuple[str, Callable[[], list[Any]]]] = [
        (f"nli_more:{name}", lambda load=load: load(SHARED / "nli_more"))
        for name, load in sorted(LOADERS.items())
    ]
    for name, load in (
        ("snli", load_snli),
        ("mnli", load_mnli),
        ("sick", load_sick),
        ("fever", load_fever),
        ("climate_fever", load_climate_fever),
        ("healthver", load_healthver),
        ("fm2", load_fm2),
        ("rte", load_rte),
    ):
        sources.append((f"nli:{name}", lambda load=load: load(SHARED / "nli")))
    each = max(1, n // len(sources))
    for source, load in sources:
        try:
            pairs = load()
        except (OSError, ValueError, KeyError) as exc:
            print(f"  {source}: not loaded ({exc})", file=sys.stderr)
            continue
        pairs = sorted(pairs, key=lambda p: (p.premise, p.hypothesis))
        for p in random.Random(source).sample(pairs, min(each, len(pairs))):
            if len(p.premise) < 6000:
                yield source, p.hypothesis, (p.premise,)


def build_pairs(nli: int) -> list[Pair]:
    """Every pair compared, in a fixed order, without repeats."""
    seen: set[tuple[str, tuple[str, ...]]] = set()
    out = []
    for source, claim, evidence in (*_authored(), *_demo(), *_tests(), *_nli(nli)):
        if claim.strip() and (claim, evidence) not in seen:
            seen.add((claim, evidence))
            out.append((source, claim, evidence))
    return out


def _safe(fn: Callable[..., Any], *args: Any) -> Any:
    try:
        return fn(*args)
    except Exception as exc:  # an error is an output to compare too
        return f"raised {type(exc).__name__}: {exc}"


def _vote(judge: Any, claim: str, evidence: tuple[str, ...]) -> Any:
    value, scores, raw = judge.score(JudgePair(claim=claim, evidence=evidence))
    return (value, value == 0.5, sorted(scores.items()), raw)


def _same(claim: str, evidence: tuple[str, ...]) -> list[tuple[bool, bool, bool]]:
    claimed = toolkit.quantities(claim)[:4]
    given = [x for text in evidence[:3] for x in toolkit.quantities(text)][:40]
    return [
        (toolkit.same_amount(a, b), toolkit.same_slot(a, b), toolkit.same_noun(a, b))
        for a in claimed
        for b in given
    ]


def _fields(x: Any) -> dict[str, Any]:
    """A dataclass value as its fields (a ``RoleFact``, a ``Quantity``): ``--check``
    compares the fields both versions have, so a field the removal dropped because it only
    ever held its default (or what another field says) is reported, not a difference."""
    return {f.name: getattr(x, f.name) for f in dataclasses.fields(x)}


def compute(pairs: list[Pair]) -> dict[tuple[Any, ...], Any]:
    """Every output, keyed by what produced it."""
    out: dict[tuple[Any, ...], Any] = {}
    judges = [build_judge(name) for name in JUDGES]
    out[("unit_stems",)] = sorted(toolkit.unit_stems().items())
    out[("currency_signs",)] = sorted(toolkit.currency_signs().items())
    out[("role_cue_words",)] = sorted(toolkit.role_cue_words())
    texts: dict[str, None] = {}
    for i, (_, claim, evidence) in enumerate(pairs):
        for judge in judges:
            out[("vote", judge.name, i)] = _safe(_vote, judge, claim, evidence)
        ev = list(evidence)
        out[("role_conflicts", i)] = _safe(toolkit.role_conflicts, claim, ev)
        out[("roles_confirmed", i)] = _safe(toolkit.roles_confirmed, claim, ev)
        out[("role_stated", i)] = _safe(toolkit.role_stated, claim, ev)
        out[("same", i)] = _safe(_same, claim, evidence)
        texts[claim] = None
        for text in evidence:
            for s in sentences(text):
                texts[s] = None
    words: dict[str, None] = {}
    for text in texts:
        out[("role_facts", text)] = _safe(lambda t: list(map(_fields, toolkit.role_facts(t))), text)
        if hasattr(toolkit, "placed_in_past"):
            out[("placed_in_past", text)] = _safe(toolkit.placed_in_past, text)
        out[("quantities", text)] = _safe(lambda t: list(map(_fields, toolkit.quantities(t))), text)
        out[("numbers", text)] = _safe(lambda t: sorted(toolkit.numbers(t)), text)
        out[("canonical_amounts", text)] = _safe(toolkit.canonical_amounts, text)
        for w in text.lower().split():
            words[w.strip(".,;:!?()\"'")] = None
    for w in words:
        out[("word_number", w)] = _safe(toolkit.word_number, w)
    return out


def _project(frozen: dict[Any, Any], now: dict[Any, Any]) -> dict[Any, Any]:
    """``frozen`` with each role fact and quantity reduced to the fields the current
    dataclasses have, and without the outputs of a function the removal dropped because
    it always returned one value; each field or function dropped is printed with the
    values it held (a dropped function that held several is left in: its outputs differ)."""
    out = dict(frozen)
    kinds_now = {k[0] for k in now}
    for kind in sorted({k[0] for k in frozen} - kinds_now):
        values = {repr(v) for k, v in frozen.items() if k[0] == kind}
        if len(values) == 1:  # a function that returned one value, removed with its uses
            out = {k: v for k, v in out.items() if k[0] != kind}
        print(f"{kind}: no longer computed; frozen: {len(values)} values {sorted(values)[:4]}")
    for kind in ("role_facts", "quantities"):
        fields = {
            n for k, v in now.items() if k[0] == kind and isinstance(v, list) for f in v for n in f
        }
        held: dict[str, set[str]] = {}
        for k, v in frozen.items():
            if k[0] == kind and isinstance(v, list):
                for f in v:
                    for name in set(f) - fields:
                        held.setdefault(name, set()).add(repr(f[name]))
                out[k] = [{n: x for n, x in f.items() if n in fields} for f in v]
        for name, values in sorted(held.items()):
            shown = ", ".join(sorted(values)[:4])
            print(f"{kind}: field {name!r} dropped ({len(values)} distinct values: {shown})")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--freeze", type=Path, help="compute under the ablation, save here")
    mode.add_argument("--check", type=Path, help="compute with no ablation, compare to this")
    parser.add_argument("--nli", type=int, default=4000, help="NLI pairs (default 4000)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    if args.check:
        with args.check.open("rb") as f:
            ref = pickle.load(f)
        pairs = ref["pairs"]
    else:
        pairs = build_pairs(args.nli)
    print(f"{len(pairs)} pairs", file=sys.stderr)
    present = [g for g in GROUPS if g in wordlists.groups()]
    with wordlists.ablated(*present) if args.freeze else nullcontext():
        outputs = compute(pairs)
    print(f"computed in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    if args.freeze:
        with args.freeze.open("wb") as f:
            pickle.dump({"groups": GROUPS, "pairs": pairs, "outputs": outputs}, f)
        print(f"froze {len(outputs)} outputs on {len(pairs)} pairs to {args.freeze}")
        return 0
    before = _project(ref["outputs"], outputs)
    keys = sorted(set(before) | set(outputs), key=repr)
    diff = [k for k in keys if before.get(k, "<missing>") != outputs.get(k, "<missing>")]
    votes = sum(1 for k in before if k[0] == "vote")
    print(f"{len(pairs)} pairs, {votes} votes, {len(before)} outputs compared: {len(diff)} differ")
    for k in diff[:20]:
        where = pairs[k[-1]][:2] if isinstance(k[-1], int) else ""
        print(f"  {k}: {where}\n    frozen: {before.get(k, '<missing>')!r}")
        print(f"    now:    {outputs.get(k, '<missing>')!r}")
    return 1 if diff else 0


if __name__ == "__main__":
    raise SystemExit(main())
