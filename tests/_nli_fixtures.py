"""Tiny NLI files in the shared data layout, for loader and training tests."""

from __future__ import annotations

from pathlib import Path

SICK_HEADER = "pair_ID\tsentence_A\tsentence_B\trelatedness_score\tentailment_judgment\n"


def write_sick(root: Path, rows: dict[str, list[tuple[str, str, str]]]) -> None:
    folder = root / "sick"
    folder.mkdir(parents=True)
    for name in ("SICK_train.txt", "SICK_trial.txt", "SICK_test_annotated.txt"):
        lines = [f"{i}\t{a}\t{b}\t3.0\t{y}\n" for i, (a, b, y) in enumerate(rows.get(name, []))]
        (folder / name).write_text(SICK_HEADER + "".join(lines), encoding="utf-8")
