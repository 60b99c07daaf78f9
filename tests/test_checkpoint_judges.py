"""Checkpoint judges (docs/checkpoint-judges.md) on tiny random-weight models built here:
no download. Each adapter's exact input against its documented format, label mapping
from ``id2label``, max over chunks, spans as character offsets, clear errors for a
missing folder or an offline hub id, and digests that follow the weights."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from transformers import (
    T5ForConditionalGeneration,
)

from auditor.errors import ConfigError
from auditor.judges._checkpoint import ALLOW_DOWNLOAD_ENV, max_over_chunks, sentence_chunks
from auditor.judges.catalog import build_judge
from auditor.judges.factcg import FactCGJudge, factcg_input
from auditor.judges.hf_classifier import HFClassifierJudge
from auditor.judges.hhem import HHEM_PROMPT, HHEMJudge, hhem_input
from auditor.judges.lettucedetect import (
    LettuceDetectJudge,
    LettuceDetectLocalizer,
    lettuce_prompt,
    token_spans,
)
from auditor.judges.minicheck import MiniCheckJudge, minicheck_input
from auditor.judges.panel import Panel
from auditor.types import ABSTAIN, JudgePair
from tests.tiny_checkpoints import (
    CLAIM,
    CORPUS,
    EVIDENCE,
    deberta,
    hhem,
    lettuce,
    roberta,
    t5_config,
    t5_tokenizer,
)


def _expected_probs(folder: Path, text: str) -> np.ndarray:
    """The softmax of a sequence classifier on one text, read here by hand."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForSequenceClassification.from_pretrained(folder).eval()
    with torch.no_grad():
        logits = model(**tok(text, return_tensors="pt")).logits
    return torch.softmax(logits, dim=-1)[0].numpy()


# -- loading and identity --------------------------------------------------------------


def test_a_missing_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"checkpoint folder .* not found"):
        HFClassifierJudge(checkpoint=str(tmp_path / "nowhere" / "model"))


def test_an_offline_hub_id_names_the_parameter_and_how_to_allow_download(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(ALLOW_DOWNLOAD_ENV, raising=False)
    with pytest.raises(ConfigError) as info:
        build_judge("minicheck", {"checkpoint": "auditor-tests/no-such-checkpoint"})
    message = str(info.value)
    assert "`checkpoint`" in message and "allow_download = true" in message
    assert f"{ALLOW_DOWNLOAD_ENV}=1" in message and "offline is the default" in message


def test_digest_follows_the_weights_and_revision_not_the_path(tmp_path: Path) -> None:
    folder = roberta(tmp_path / "a", {0: "entailment", 1: "neutral", 2: "contradiction"})
    first = HFClassifierJudge(checkpoint=str(folder))
    moved = shutil.copytree(folder, tmp_path / "b")
    assert HFClassifierJudge(checkpoint=str(moved)).digest == first.digest
    panel = Panel("p", (first,), "cfg").digest
    roberta(folder, {0: "entailment", 1: "neutral", 2: "contradiction"}, bias=[1.0, 0.0, 0.0])
    changed = HFClassifierJudge(checkpoint=str(folder))
    assert changed.identity()["weights_sha256"] != first.identity()["weights_sha256"]
    assert changed.digest != first.digest and Panel("p", (changed,), "cfg").digest != panel
    config = json.loads((moved / "config.json").read_text())
    (moved / "config.json").write_text(json.dumps({**config, "_commit_hash": "abc123"}))
    revised = HFClassifierJudge(checkpoint=str(moved))
    assert revised.identity()["checkpoint_revision"] == "abc123"
    assert revised.digest != first.digest


# -- hf_classifier: labels, chunks, votes ------------------------------------------------


def test_labels_come_from_id2label_reversed_included(tmp_path: Path) -> None:
    bias = [4.0, 0.0, 0.0]  # class 0 wins whatever the input
    nli = HFClassifierJudge(
        checkpoint=str(
            roberta(tmp_path / "n", {0: "contradiction", 1: "neutral", 2: "entailment"}, bias)
        )
    )
    rev = HFClassifierJudge(
        checkpoint=str(
            roberta(tmp_path / "r", {0: "ENTAILMENT", 1: "Neutral", 2: "contradiction"}, bias)
        )
    )
    assert nli.roles == ("contradict", "neither", "support")
    assert rev.roles == ("support", "neither", "contradict")
    (a,) = nli.judge_sync([JudgePair(CLAIM, (EVIDENCE,))])
    (b,) = rev.judge_sync([JudgePair(CLAIM, (EVIDENCE,))])
    top = np.exp(4.0) / (np.exp(4.0) + 2)
    assert a.value == 1.0 and a.scores["contradiction"] == pytest.approx(top, abs=1e-5)
    assert b.value == 0.0 and b.scores["support"] == pytest.approx(top, abs=1e-5)


def test_binary_labels_and_unknown_labels(tmp_path: Path) -> None:
    folder = roberta(tmp_path / "b", {0: "not_supported", 1: "supported"}, [0.0, 2.0])
    assert HFClassifierJudge(checkpoint=str(folder)).roles == ("neither", "support")
    odd = roberta(tmp_path / "o", {0: "yes", 1: "no"})
    with pytest.raises(ConfigError, match=r"label 'yes'.*label_map"):
        HFClassifierJudge(checkpoint=str(odd))
    judge = build_judge(
        "hf_classifier", {"checkpoint": str(odd), "label_map": {"yes": "support", "no": "neither"}}
    )
    assert judge.roles == ("support", "neither")  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match="role must be one of"):
        HFClassifierJudge(checkpoint=str(odd), label_map={"yes": "true"})


def test_windows_overlap_and_support_is_the_max_over_chunks(tmp_path: Path) -> None:
    folder = roberta(tmp_path / "w", {0: "entailment", 1: "neutral", 2: "contradiction"})
    judge = HFClassifierJudge(checkpoint=str(folder), window_tokens=4, overlap_tokens=1)
    words = EVIDENCE.split()  # one token per word with this tokenizer
    assert judge.chunks(EVIDENCE) == [
        " ".join(words[s : s + 4]) for s in range(0, len(words) - 1, 3)
    ]
    (vote,) = judge.judge_sync([JudgePair(CLAIM, (EVIDENCE,))])
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForSequenceClassification.from_pretrained(folder).eval()
    with torch.no_grad():
        support = [
            float(torch.softmax(model(**tok(w, CLAIM, return_tensors="pt")).logits, -1)[0, 0])
            for w in judge.chunks(EVIDENCE)
        ]
    assert vote.scores["support"] == pytest.approx(max(support), abs=1e-5)
    assert json.loads(vote.raw)["chunks"] == len(support)


def test_max_over_chunks_on_given_scores() -> None:
    rows = [np.array([0.2, 0.1, 0.7]), np.array([0.9, 0.0, 0.1]), np.array([0.9, 0.1, 0.0])]
    best, probs = max_over_chunks(rows)
    assert best == 1 and probs.tolist() == [0.9, 0.0, 0.1]  # first of the ties
    with pytest.raises(ValueError):
        max_over_chunks([])


def test_no_evidence_is_an_abstention(tmp_path: Path) -> None:
    folder = roberta(tmp_path / "e", {0: "entailment", 1: "neutral", 2: "contradiction"})
    none, blank = HFClassifierJudge(checkpoint=str(folder)).judge_sync(
        [JudgePair(CLAIM, ()), JudgePair(CLAIM, ("  ",))]
    )
    assert none.value == blank.value == ABSTAIN and none.error == "no evidence"
    assert json.loads(blank.raw) == {"reason": "no evidence"}


# -- minicheck ---------------------------------------------------------------------------


def test_minicheck_chunks_as_published() -> None:
    units = ["a b c.", "d e f.", "\n", "g h."]
    words = sentence_chunks(units, 5, lambda u: len(u.split()), " ")
    assert words == ["a b c.", "d e f.\ng h."]  # " \n " becomes a newline
    assert sentence_chunks(["a b c d e f"], 2, lambda u: len(u.split()), " ") == ["a b c d e f"]


def test_minicheck_roberta_reads_doc_eos_claim(tmp_path: Path) -> None:
    folder = roberta(tmp_path / "m", {0: "LABEL_0", 1: "LABEL_1"})
    judge = MiniCheckJudge(checkpoint=str(folder))
    assert not judge.seq2seq and minicheck_input("D.", "C.", "</s>", seq2seq=False) == "D.</s>C."
    (vote,) = judge.judge_sync([JudgePair(CLAIM, (EVIDENCE,))])
    expected = _expected_probs(folder, f"{EVIDENCE}</s>{CLAIM}")[1]
    assert vote.scores["support"] == pytest.approx(float(expected), abs=1e-5)
    assert vote.value == (0.0 if expected >= 0.5 else 1.0)


def test_minicheck_deberta_uses_its_own_eos(tmp_path: Path) -> None:
    folder = deberta(tmp_path / "d")
    (vote,) = MiniCheckJudge(checkpoint=str(folder)).judge_sync([JudgePair(CLAIM, (EVIDENCE,))])
    expected = _expected_probs(folder, f"{EVIDENCE}</s>{CLAIM}")[1]
    assert vote.scores["support"] == pytest.approx(float(expected), abs=1e-5)


def test_minicheck_flan_t5_scores_tokens_3_and_209(tmp_path: Path) -> None:
    folder = tmp_path / "t5"
    tok = t5_tokenizer(folder)
    model = T5ForConditionalGeneration(t5_config()).eval()
    model.save_pretrained(folder)
    judge = MiniCheckJudge(checkpoint=str(folder), chunk_size=6)
    assert judge.seq2seq
    assert minicheck_input("D.", "C.", "</s>", seq2seq=True) == "predict: D.</s>C."
    doc = "The bridge opened in 1932. It cost 3200 dollars."
    assert judge.chunks(doc) == ["The bridge opened in 1932.", "It cost 3200 dollars."]
    (vote,) = judge.judge_sync([JudgePair(CLAIM, (doc,))])
    with torch.no_grad():
        support = []
        for chunk in judge.chunks(doc):
            batch = tok(f"predict: {chunk}</s>{CLAIM}", return_tensors="pt")
            logits = model(**batch, decoder_input_ids=torch.zeros((1, 1), dtype=torch.long)).logits
            support.append(float(torch.softmax(logits[0, 0, [3, 209]], -1)[1]))
    assert vote.scores["support"] == pytest.approx(max(support), abs=1e-5)


# -- factcg ------------------------------------------------------------------------------


def test_factcg_template_and_chunks(tmp_path: Path) -> None:
    assert factcg_input("Doc {x}.", "Claim.") == (
        "Doc {x}.\n\nChoose your answer: based on the paragraph above can we conclude that "
        '"Claim."?\n\nOPTIONS:\n- Yes\n- No\nI think the answer is '
    )
    folder = deberta(tmp_path / "f")
    judge = FactCGJudge(checkpoint=str(folder), chunk_size=9)
    doc = "The bridge opened in 1932. It cost 3200 dollars. It is big."
    assert judge.chunks(doc) == ["The bridge opened in 1932.", "It cost 3200 dollars.\nIt is big."]
    (vote,) = judge.judge_sync([JudgePair(CLAIM, (doc,))])
    expected = max(_expected_probs(folder, factcg_input(c, CLAIM))[1] for c in judge.chunks(doc))
    assert vote.scores["support"] == pytest.approx(float(expected), abs=1e-5)


# -- hhem --------------------------------------------------------------------------------


def test_hhem_prompt_and_head_without_remote_code(tmp_path: Path) -> None:
    assert hhem_input("P {text2}", "H", HHEM_PROMPT) == (
        "<pad> Determine if the hypothesis is true given the premise?\n\n"
        "Premise: P {text2}\n\nHypothesis: H"
    )
    folder = hhem(tmp_path / "hhem", bias=[0.0, 3.0])
    judge = HHEMJudge(checkpoint=str(folder))
    (vote,) = judge.judge_sync([JudgePair(CLAIM, (EVIDENCE,))])
    assert vote.value == 0.0
    assert vote.scores["support"] == pytest.approx(float(1 / (1 + np.exp(-3.0))), abs=1e-5)


# -- lettucedetect -----------------------------------------------------------------------


def test_lettucedetect_prompt_spans_and_vote(tmp_path: Path) -> None:
    assert lettuce_prompt(["A.", "B."], "Q?") == (
        "Briefly answer the following question:\nQ?\nBear in mind that your response should "
        "be strictly based on the following 2 passages:\npassage 1: A.\npassage 2: B.\n"
        "In case the passages do not contain the necessary information to answer the "
        'question, please reply with: "Unable to answer based on given passages."\noutput:'
    )
    assert lettuce_prompt(["A."], None) == "Summarize the following text:\npassage 1: A.\noutput:"
    assert token_spans([(0, 3), (4, 6), (6, 6), (7, 9), (10, 12)], [1, 1, 1, 0, 1]) == [
        (0, 6),
        (10, 12),
    ]
    flagged = LettuceDetectJudge(checkpoint=str(lettuce(tmp_path / "h", [0.0, 4.0])))
    clean = LettuceDetectJudge(checkpoint=str(lettuce(tmp_path / "c", [4.0, 0.0])))
    offsets, probs = flagged.read(CLAIM, [EVIDENCE])
    assert [CLAIM[s:e] for s, e in offsets] == CLAIM.split()
    assert probs == pytest.approx([1 / (1 + np.exp(-4.0))] * len(offsets), abs=1e-5)
    (bad,) = flagged.judge_sync([JudgePair(CLAIM, (EVIDENCE,))])
    (good,) = clean.judge_sync([JudgePair(CLAIM, (EVIDENCE,))])
    assert bad.value == 1.0 and json.loads(bad.raw)["spans"] == [[0, len(CLAIM)]]
    assert good.value == 0.0 and good.scores["hallucinated_share"] == 0.0


def test_lettucedetect_groups_passages_that_do_not_fit(tmp_path: Path) -> None:
    judge = LettuceDetectJudge(checkpoint=str(lettuce(tmp_path / "g", [0.0, 4.0])), max_length=40)
    passages = [EVIDENCE, CORPUS[1], CORPUS[2]]
    prompts = judge.prompts(CLAIM, passages, None)
    assert len(prompts) > 1 and all(p.startswith("Summarize") for p in prompts)
    assert "".join(prompts).count("passage 1:") == len(prompts)


def test_lettucedetect_localizer_spans_are_answer_offsets(tmp_path: Path) -> None:
    answer = "Intro here . The bridge opened in 1932 ."
    claim = [(12, len(answer))]
    flagged = LettuceDetectLocalizer(
        LettuceDetectJudge(checkpoint=str(lettuce(tmp_path / "h", [0.0, 4.0])))
    )
    assert flagged.localize(answer, claim, [EVIDENCE]) == ((12, len(answer)),)
    clean = LettuceDetectLocalizer(
        LettuceDetectJudge(checkpoint=str(lettuce(tmp_path / "c", [4.0, 0.0])))
    )
    from auditor.spans.localize import localize_error

    assert clean.localize(answer, claim, ["It opened in 1931 ."]) == localize_error(
        answer, claim, ["It opened in 1931 ."]
    )
    component = flagged.component()
    assert component.kind == "localizer" and component.digest != clean.component().digest
