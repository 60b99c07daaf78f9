"""Rule-made document-level training pairs (auditor/entailment/synth.py) on tiny fixtures."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from auditor.entailment import synth
from auditor.entailment.data import CONTRADICTION, ENTAILMENT, NEUTRAL
from auditor.errors import InputError

DOC = (
    "The Harbour Bridge was opened in 1932 by the mayor of Sydney. It is 503 metres long "
    "and carries eight lanes of traffic. John Bradfield designed the bridge after a long "
    "competition. The company Dorman Long built the steel arch in four years. In 1998, "
    "the bridge was closed for repairs for two weeks. Tourists can climb the arch with a "
    "guide every day. The pylons are made of granite from Moruya."
)
OTHER = (
    "Maria Lopez founded the Lisbon Book Fair in Portugal. The fair attracts 40,000 "
    "visitors every spring. Ana Costa chairs its committee in Porto. The 2019 fair sold "
    "12,000 books on its first day."
)


@pytest.fixture(scope="module")
def parse() -> synth.Parser:
    return synth.spacy_parser()


def _docs(source: str = "wice", split: str = "train") -> list[synth.SourceDoc]:
    return [
        synth.SourceDoc(source, "harbour", tuple(synth._sentences(DOC)), split),
        synth.SourceDoc(source, "fair", tuple(synth._sentences(OTHER)), split),
    ]


def test_document_split_is_a_stable_hash_with_the_sources_share() -> None:
    keys = [f"document {i}" for i in range(2000)]
    held = [synth.doc_split("faithbench", k) == "eval" for k in keys]
    assert 0.45 < np.mean(held) < 0.55  # evaluation sets hold out half their documents
    assert 0.12 < np.mean([synth.doc_split("fever_nli_dev", k) == "eval" for k in keys]) < 0.18
    assert [synth.doc_split("faithbench", k) for k in keys[:20]] == [
        synth.doc_split("faithbench", k) for k in keys[:20]
    ]
    assert synth.evaluation_split("summedits:news", "c", "doc text") == synth.doc_split(
        "summedits_news", "doc text"
    )
    assert synth.evaluation_split("factcheck", "the claim", "ev") == synth.doc_split(
        "factcheck", "the claim"
    )
    with pytest.raises(ValueError, match="unknown evaluation set"):
        synth.evaluation_split("nope", "c", "e")


def test_compressed_support_only_drops_or_moves_words(parse: synth.Parser) -> None:
    rng = np.random.default_rng(0)
    doc = parse(
        [
            "In 1998, the bridge, which carries eight lanes, was closed for repairs "
            "by the city council for two weeks."
        ]
    )[0]
    source_list = doc.text.lower().replace(",", " ").replace(".", " ").split()
    source_words = set(source_list)
    changed = 0
    for _ in range(20):
        claim, rule = synth.compress(doc, rng)
        words = claim.text().lower().replace(",", " ").replace(".", " ").split()
        assert set(words) <= source_words and "closed" in words
        changed += rule != "copy"
        assert len(words) < len(source_list) or rule in ("copy", "reorder")
    assert changed >= 15


def test_each_contradiction_edit_changes_what_the_claim_says(parse: synth.Parser) -> None:
    rng = np.random.default_rng(1)
    pool = {
        "PERSON": ["John Bradfield", "Ann Lee"],
        "GPE": ["Sydney", "Melbourne"],
        "ORG": ["Dorman Long"],
    }
    number = synth._Claim.of(parse(["The bridge is 503 metres long."])[0])
    edited, rule = synth._change_number(number, rng) or (None, "")
    assert rule == "number_change" and edited is not None
    assert "503" not in edited.text() and "metres long" in edited.text()
    said = synth._Claim.of(parse(["Ann Lee said the bridge will reopen on Monday."])[0])
    swapped, rule = synth._swap_entity(said, pool, rng) or (None, "")
    assert rule in ("attribution", "entity_swap") and swapped is not None
    assert swapped.text().startswith("John Bradfield")
    plain = synth._Claim.of(parse(["The bridge carries eight lanes of traffic."])[0])
    negated, rule = synth._negate(plain) or (None, "")
    assert rule == "negation_added" and negated is not None
    assert negated.text() == "The bridge does not carry eight lanes of traffic."
    back, rule = synth._negate(synth._Claim.of(parse(["The bridge is not open today."])[0])) or (
        None,
        "",
    )
    assert rule == "negation_removed" and back is not None and "not" not in back.text()
    rose = synth._Claim.of(parse(["Ticket prices rose sharply in 2020."])[0])
    fell, rule = synth._antonym(rose) or (None, "")
    assert rule == "antonym" and fell is not None and "fell" in fell.text()
    assert synth.contradict(synth._Claim.of(parse(["Hello there."])[0]), {}, rng) is None


def test_added_detail_names_someone_the_premise_never_mentions(parse: synth.Parser) -> None:
    rng = np.random.default_rng(2)
    claim = synth._Claim.of(parse(["The Royal Academy opened a new gallery."])[0])
    names = {"PERSON": ["John Bradfield", "Maria Lopez"], "GPE": ["Porto", "Sydney"]}
    for _ in range(10):
        made = synth.add_detail(claim, DOC, names, rng)
        assert made is not None and made[1] == "added_detail"
        text = made[0].text()
        assert "Maria Lopez" in text and "Bradfield" not in text
        assert text.startswith("The Royal Academy, ")


def test_generated_pairs_have_document_premises_all_classes_and_are_seeded(
    parse: synth.Parser,
) -> None:
    docs = [*_docs(), synth.SourceDoc("faithbench", "held", tuple(synth._sentences(DOC)), "eval")]
    config = synth.GenerateConfig(targets_per_doc=6)
    first = synth.generate(docs, parse, np.random.default_rng(7), config)
    again = synth.generate(docs, parse, np.random.default_rng(7), config)
    assert first == again
    labels = {p.label for p in first}
    assert labels == {ENTAILMENT, NEUTRAL, CONTRADICTION}
    for pair in first:
        n_sentences = len(synth._sentences(pair.premise))
        assert 2 <= n_sentences <= 12 and len(pair.premise.split()) <= 160
        assert pair.hypothesis not in ("", ".")
        if pair.label == ENTAILMENT and pair.rule == "support:copy":
            assert pair.hypothesis in pair.premise
        if pair.rule == "outside_window":
            assert pair.hypothesis not in pair.premise
    assert {p.split for p in first if p.source == "faithbench"} == {"eval"}
    summary = synth.summarize(first)
    assert summary["n"] == len(first) and "faithbench/eval" in summary["per_source"]


def test_pairs_round_trip_and_bad_lines_name_file_line_and_field(tmp_path: Path) -> None:
    pairs = [
        synth.SynthPair("p. q. r.", "p.", 0, "wice", "support:copy", "d", "train"),
        synth.SynthPair("p. q. r.", "not p.", 2, "wice", "negation_added", "d", "train"),
    ]
    path = tmp_path / "pairs.jsonl"
    synth.write_pairs(pairs, path)
    assert synth.read_pairs(path) == pairs
    assert synth.thin(pairs, "negation_added", 0.0, seed=1) == pairs[:1]
    bad = dict(pairs[0].__dict__, label=7)
    path.write_text(json.dumps(pairs[0].__dict__) + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(InputError, match="line 2") as info:
        synth.read_pairs(path)
    assert "label" in str(info.value)
    path.write_text("{not json\n")
    with pytest.raises(InputError, match="line 1"):
        synth.read_pairs(path)


def test_documents_load_from_the_shared_layout_with_their_splits(tmp_path: Path) -> None:
    sentences = synth._sentences(DOC)
    (tmp_path / "wice" / "claim").mkdir(parents=True)
    (tmp_path / "wice" / "claim" / "dev.jsonl").write_text(
        json.dumps({"claim": "c", "evidence": sentences, "label": "supported"}) + "\n"
    )
    (tmp_path / "faithbench").mkdir()
    with open(tmp_path / "faithbench" / "FaithBench.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=["source", "summary"])
        writer.writeheader()
        writer.writerows([{"source": DOC, "summary": "s1"}, {"source": DOC, "summary": "s2"}])
    (tmp_path / "summedits").mkdir()
    for domain in synth.SUMMEDITS_DOMAINS:
        (tmp_path / "summedits" / f"summedits_{domain}.json").write_text(
            json.dumps([{"doc": OTHER, "summary": "x", "label": 1}])
        )
    (tmp_path / "factcheck_gpt").mkdir()
    (tmp_path / "factcheck_gpt" / "subtask3_claim_evidence_stance.jsonl").write_text(
        json.dumps({"claim": "k", "evidence": DOC, "stance": "refute"}) + "\n"
    )
    nli = tmp_path / "nli"
    (nli / "fever_nli_dev").mkdir(parents=True)
    fillers = [f"Station {i} has a small cafe near the entrance." for i in range(8)]
    (nli / "fever_nli_dev" / "dev.raw.input0.txt").write_text(
        "\n".join([DOC, OTHER, *fillers]) + "\n"
    )  # BM25 neutrals need a few premises
    (nli / "fever_nli_dev" / "dev.raw.input1.txt").write_text(
        "\n".join(["claim one", "claim one", *(f"claim {i}" for i in range(8))]) + "\n"
    )
    (nli / "fever_nli_dev" / "dev.label.txt").write_text(
        "\n".join(["entailment", "not_entailment", *["entailment"] * 8]) + "\n"
    )
    (nli / "climate_fever").mkdir()
    (nli / "climate_fever" / "climate-fever.jsonl").write_text(
        json.dumps(
            {
                "claim_id": "1",
                "claim": "warming",
                "evidences": [{"evidence": s, "evidence_label": "SUPPORTS"} for s in sentences[:4]],
            }
        )
        + "\n"
    )
    (nli / "scifact_rte").mkdir()
    for name in ("RTE-scifact_train.tsv", "RTE-scifact_dev.tsv"):
        (nli / "scifact_rte" / name).write_text(
            "index\tsentence1\tsentence2\tentailment\n0\tA b c d.\tA b.\tentailment\n"
        )

    docs = synth.load_documents(tmp_path)
    by_source = {d.source: d for d in docs}
    assert set(by_source) == {
        "wice",
        "faithbench",
        "factcheck",
        "fever_nli_dev",
        "climate_fever",
        *(f"summedits_{d}" for d in synth.SUMMEDITS_DOMAINS),
    }
    assert len([d for d in docs if d.source == "faithbench"]) == 1  # one document, 2 rows
    assert by_source["wice"].split == synth.evaluation_split("wice", "c", sentences)
    assert by_source["factcheck"].split == synth.doc_split("factcheck", "k")
    fever = [d for d in docs if d.source == "fever_nli_dev"]
    assert len(fever) == 1  # the other claims' single-sentence evidence is too short
    assert set(fever[0].sentences) >= set(sentences) | set(synth._sentences(OTHER))

    (tmp_path / "wice" / "claim" / "dev.jsonl").write_text("[1]\n")
    with pytest.raises(InputError, match=r"dev\.jsonl"):
        synth.load_documents(tmp_path)
    (tmp_path / "wice" / "claim" / "dev.jsonl").unlink()
    with pytest.raises(InputError, match="not found"):
        synth.load_documents(tmp_path)
