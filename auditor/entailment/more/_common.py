"""Rules shared by the ``nli_more`` loaders: text cleaning, the length limit and eval share,
label lookup, JSONL / TSV / zip reading and the union-find that keys a group by its smallest
member. Private: :mod:`auditor.entailment.more` does not treat it as a loader.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from auditor.entailment.data import CONTRADICTION, ENTAILMENT, NEUTRAL, NLIPair, hash_split
from auditor.errors import InputError

MAX_WORDS = 220  # premises longer than this are dropped
EVAL_SHARE = 0.05  # share of split keys (groups) that are ``eval``

# the usual three-way labels, spelt out
THREE_WAY = {"entailment": ENTAILMENT, "neutral": NEUTRAL, "contradiction": CONTRADICTION}

_Node = TypeVar("_Node", str, int)


def clean(text: str | None) -> str:
    """``text`` with runs of whitespace collapsed to one space and the ends stripped."""
    return " ".join((text or "").split())


def fits(premise: str, hypothesis: str) -> bool:
    """Both texts are non-empty and the premise has at most :data:`MAX_WORDS` words."""
    return bool(premise) and bool(hypothesis) and len(premise.split()) <= MAX_WORDS


def make_pair(premise: str, hypothesis: str, label: int, source: str, key: str) -> NLIPair:
    """The pair, ``eval`` for :data:`EVAL_SHARE` of split keys (by hash of ``key``)."""
    return NLIPair(premise, hypothesis, label, source, hash_split(key, EVAL_SHARE))


def unknown_label(
    value: object, file: str | Path, line: int | None, field: str | None
) -> InputError:
    """The error for a label that is not in the dataset's mapping."""
    return InputError(f"unknown label {value!r}", file=str(file), line=line, field=field)


def label_of(
    mapping: Mapping[str, int],
    value: object,
    file: str | Path,
    line: int | None,
    field: str | None,
) -> int:
    """The class of ``value`` (stripped) in ``mapping``, or an :class:`InputError` naming
    the file, line and field."""
    try:
        return mapping[str(value).strip()]
    except KeyError:
        raise unknown_label(value, file, line, field) from None


def record_label(
    mapping: Mapping[str, int], record: Mapping[str, Any], field: str, file: str | Path, line: int
) -> int:
    """The class of a JSON record's ``field`` (as stripped text; an error names the stripped
    text, the file, line and field)."""
    return label_of(mapping, str(record.get(field, "")).strip(), file, line, field)


def jsonl_records(text: str, file: str | Path) -> Iterator[tuple[int, Any]]:
    """(1-based line, record) of each non-blank line of a JSONL text."""
    for i, raw in enumerate(text.split("\n"), 1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise InputError(f"bad JSON: {exc.msg}", file=str(file), line=i) from None
        yield i, record


def jsonl_file(path: Path) -> Iterator[tuple[int, Any]]:
    """(1-based line, record) of each non-blank line of a UTF-8 JSONL file."""
    return jsonl_records(path.read_text(encoding="utf-8"), path)


def member_text(archive: zipfile.ZipFile, member: str) -> str:
    """A zip member's text (UTF-8)."""
    return archive.read(member).decode("utf-8")


def zip_texts(path: Path, members: Sequence[str]) -> Iterator[tuple[str, str]]:
    """(member, text) of each of ``members`` of the zip file ``path``, in order."""
    with zipfile.ZipFile(path) as archive:
        for member in members:
            yield member, member_text(archive, member)


def zip_jsonl_pairs(
    path: Path,
    members: Sequence[str],
    source: str,
    labels: Mapping[str, int],
    premise_field: str,
    hypothesis_field: str,
    label_field: str = "gold_label",
) -> list[NLIPair]:
    """Pairs of JSONL members of a zip file (errors name ``<zip>/<member>``), one record a
    pair; premises too long are dropped and the premise text is the split key."""
    pairs: list[NLIPair] = []
    for member, text in zip_texts(path, members):
        where = f"{path}/{member}"
        for i, record in jsonl_records(text, where):
            label = label_of(labels, record.get(label_field), where, i, label_field)
            premise = clean(record.get(premise_field))
            hypothesis = clean(record.get(hypothesis_field))
            if fits(premise, hypothesis):
                pairs.append(make_pair(premise, hypothesis, label, source, premise))
    return pairs


def tsv_rows(
    path: Path,
    width: int,
    *,
    header: Sequence[str] | None = None,
    skip_header: bool = False,
    encoding: str = "utf-8-sig",
    repair: Callable[[list[str]], list[str]] | None = None,
) -> Iterator[tuple[int, list[str]]]:
    """(1-based line, fields) of each non-blank row of an unquoted TSV file.

    ``header``: the first line must hold these names (else an error) and is skipped;
    ``skip_header``: the first line is skipped unchecked. ``repair`` may fix a row's fields
    before the check that there are ``width`` of them."""
    lines = path.read_text(encoding=encoding).split("\n")
    first = 1
    if header is not None:
        found = [h.strip() for h in lines[0].rstrip("\r").split("\t")]
        expected = list(header)
        if found != expected:
            raise InputError(f"expected header {expected}, got {found}", file=str(path), line=1)
        first = 2
    elif skip_header:
        first = 2
    for i, raw in enumerate(lines[first - 1 :], first):
        raw = raw.rstrip("\r")
        if not raw.strip():
            continue
        fields = raw.split("\t")
        if repair is not None:
            fields = repair(fields)
        if len(fields) != width:
            raise InputError(
                f"expected {width} tab-separated fields, got {len(fields)}", file=str(path), line=i
            )
        yield i, fields


def find(parent: dict[_Node, _Node], node: _Node) -> _Node:
    """Root of ``node`` in the union-find forest ``parent`` (a new node is its own root)."""
    parent.setdefault(node, node)
    while parent[node] != node:
        parent[node] = parent[parent[node]]
        node = parent[node]
    return node


def union(parent: dict[_Node, _Node], a: _Node, b: _Node) -> None:
    """Join the groups of ``a`` and ``b``; the smaller root stays the root, so a group's
    root is always its smallest member."""
    root_a, root_b = find(parent, a), find(parent, b)
    if root_a != root_b:
        parent[max(root_a, root_b)] = min(root_a, root_b)
