"""NLI4CT (SemEval-2023 Task 7 and SemEval-2024 Task 2): statements about breast-cancer
clinical-trial reports, Entailment / Contradiction.

Statements: 2023 train + dev + Gold_test (2,400, with evidence indices) and the 2024
gold_test / gold_practice_test perturbations of them (6,942; their 700 unperturbed
statements are the 2023 ones and are read once). Premise: the evidence lines
(``Primary_evidence_index`` / ``Secondary_evidence_index``) of the statement's section of
the trial report(s), as "Primary trial: ... Secondary trial: ...", one sentence per report
line; a 2024 perturbation takes the evidence of the 2023 statement it was made from
(``Causal_type[1]``, same trials and section). Hypothesis: the statement.

Split: trials joined by a Comparison statement form one group (union-find), keyed by the
group's smallest NCT id; 5% of groups are ``eval``, so no trial's text is on both sides
and every perturbation sits with its original statement.

Length: 9,342 statements; 1,263 dropped because their evidence premise has more than 220
words (830 Contradiction, 433 Entailment; long Results / Adverse Events lists); 8,079 kept.
"""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

from auditor.entailment.data import CONTRADICTION, ENTAILMENT, NLIPair
from auditor.entailment.more._common import (
    clean,
    find,
    fits,
    make_pair,
    member_text,
    union,
    unknown_label,
)
from auditor.errors import InputError

SOURCE = "nli4ct"
LABEL_MAPPING: dict[str, str] = {
    "Entailment": "entailment",
    "Contradiction": "contradiction",
    "split": (
        "hash of the trial group (trials linked by a Comparison statement; key = smallest "
        "NCT id), 5% eval; 2024 perturbations go with their 2023 statement's trials"
    ),
}

_LABELS = {"Entailment": ENTAILMENT, "Contradiction": CONTRADICTION}
_ZIP = "semeval2023/Complete_dataset.zip"
_PARTS_2023 = ("train", "dev", "Gold_test")
_PARTS_2024 = ("gold_test", "gold_practice_test")
_END = (".", ":", ";", "?", "!", ",")
_GLUED_COUNT = re.compile(r"([A-Za-z)])(\d+/\d+ \()")  # "Anemia1/6 (16.67%)"


def _line_of(text: str, key: str, field: str) -> int | None:
    """Line (1-based) of ``field`` in the record ``key`` of a pretty-printed JSON text."""
    start = text.find(f'"{key}"')
    if start < 0:
        return None
    match = re.compile(rf'"{field}"\s*:').search(text, start)
    pos = match.start() if match else start
    return text.count("\n", 0, pos) + 1


def _report_text(lines: list[str], indices: list[int]) -> str:
    out = []
    for i in sorted(set(indices)):
        line = _GLUED_COUNT.sub(r"\1 \2", clean(lines[i]))
        if line:
            out.append(line if line.endswith(_END) else line + ".")
    return " ".join(out)


def load(root: Path) -> list[NLIPair]:
    """NLI4CT statements vs the evidence lines of their trial report section(s); trial
    groups hash-split 5% eval; premises over 220 words dropped."""
    folder = root / SOURCE
    zip_path = folder / _ZIP
    reports: dict[str, dict[str, list[str]]] = {}
    originals: dict[str, dict] = {}
    # (uuid, record, record holding the evidence indices, file, file text for errors)
    statements: list[tuple[str, dict, dict, str, str]] = []
    with zipfile.ZipFile(zip_path) as archive:
        for name in archive.namelist():
            if (
                name.startswith("Complete_dataset/CT json/")
                and name.endswith(".json")
                and "/._" not in name
            ):
                report = json.loads(archive.read(name))
                reports[report["Clinical Trial ID"]] = report
        for part in _PARTS_2023:
            member = f"Complete_dataset/{part}.json"
            text = member_text(archive, member)
            for uuid, record in json.loads(text).items():
                originals[uuid] = record
                statements.append((uuid, record, record, f"{zip_path}:{member}", text))
    for part in _PARTS_2024:
        path = folder / "semeval2024" / f"{part}.json"
        text = path.read_text(encoding="utf-8")
        for uuid, record in json.loads(text).items():
            if uuid in originals:
                continue  # an unperturbed 2023 statement, already read
            base = originals.get((record.get("Causal_type") or [None, None])[1])
            if base is None:
                raise InputError(
                    "statement has no 2023 original (Causal_type)",
                    file=str(path),
                    line=_line_of(text, uuid, "Causal_type"),
                    field="Causal_type",
                )
            statements.append((uuid, record, base, str(path), text))

    # the smaller id is the root, so the key is the group's smallest NCT id
    groups: dict[str, str] = {}
    for _, record, _, _, _ in statements:
        find(groups, record["Primary_id"])
        if record.get("Secondary_id"):
            union(groups, record["Primary_id"], record["Secondary_id"])

    pairs = []
    for uuid, record, base, file, text in statements:
        value = str(record.get("Label", "")).strip()
        if value not in _LABELS:
            raise unknown_label(value, file, _line_of(text, uuid, "Label"), "Label")
        section = record["Section_id"]
        parts = []
        for role in ("Primary", "Secondary"):
            trial = record.get(f"{role}_id")
            if not trial:
                continue
            body = _report_text(reports[trial][section], base[f"{role}_evidence_index"])
            if body:
                parts.append(f"{role} trial: {body}")
        premise = " ".join(parts)
        hypothesis = clean(record["Statement"])
        if fits(premise, hypothesis):
            key = find(groups, record["Primary_id"])
            pairs.append(make_pair(premise, hypothesis, _LABELS[value], SOURCE, key))
    return pairs
