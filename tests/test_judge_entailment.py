"""The shipped entailment cross-encoder and the ``entailment`` judge (real weights, CPU)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from auditor.digest import sha256_bytes
from auditor.entailment.model import (
    BF16_SCHEME,
    QUANTIZATION_SCHEME,
    WEIGHTS_DIR,
    evidence_windows,
    load_model,
    read_training_record,
    reader_digest,
    weights_digest,
)
from auditor.errors import ConfigError
from auditor.judges.catalog import build_judge
from auditor.judges.panel import load_panel
from auditor.precision import native_bf16
from auditor.types import ABSTAIN, JudgePair

pytestmark = pytest.mark.slow  # loads the entailment cross-encoder

TRIAL = (
    "The trial enrolled 3,200 participants across 14 hospitals and reported its "
    "results in March 2021."
)


def test_shipped_weights_are_compact_and_match_their_digest_and_record() -> None:
    weights = WEIGHTS_DIR / "model.safetensors"
    assert weights.stat().st_size <= 50 * 1024 * 1024
    record = read_training_record()
    assert record["weights_sha256"] == weights_digest()
    assert record["labels"] == ["entailment", "neutral", "contradiction"]
    assert load_model().digest == weights_digest()
    # the run it records fits the budget: at most about an hour on two cores
    assert record["wall_seconds"] <= 75 * 60 and record["config"]["threads"] >= 1


def test_model_tells_entailment_neutral_and_contradiction_apart() -> None:
    model = load_model()
    premise = "A man is playing a guitar on a stage in front of a large crowd."
    probs = model.predict(
        [premise] * 3,
        [
            "A man is playing an instrument.",
            "The man is a famous singer from Spain.",
            "Nobody is playing an instrument.",
        ],
    )
    assert np.allclose(probs.sum(axis=1), 1.0)
    assert list(probs.argmax(axis=1)) == [0, 1, 2]


def test_windows_cover_long_evidence_with_overlap() -> None:
    text = " ".join(f"w{i}" for i in range(450))
    windows = evidence_windows(text, words=200, stride=150)
    assert [w.split()[0] for w in windows] == ["w0", "w150", "w300"]
    assert windows[-1].split()[-1] == "w449"
    assert all(len(w.split()) <= 200 for w in windows)
    assert evidence_windows("short text") == ["short text"]
    assert evidence_windows("   ") == []


def test_judge_votes_and_exposes_the_contradiction_signal() -> None:
    judge = build_judge("entailment")
    pairs = [
        JudgePair("The trial enrolled 3,200 participants.", (TRIAL,)),
        JudgePair("The trial enrolled 5,000 participants.", (TRIAL,)),
        JudgePair("The trial was funded by a pharmaceutical company.", (TRIAL,)),
        JudgePair("The trial enrolled 3,200 participants.", ()),
    ]
    supported, contradicted, unsupported, empty = judge.judge_sync(pairs)
    assert supported.value == 0.0 and supported.scores["entailment"] >= 0.5
    assert contradicted.value == 1.0 and contradicted.scores["contradiction"] >= 0.5
    assert unsupported.value != 0.0
    assert unsupported.scores["contradiction"] < contradicted.scores["contradiction"]
    assert empty.value == ABSTAIN and empty.error == "no evidence"
    for vote in (supported, contradicted, unsupported):
        assert set(vote.scores) >= {
            "entailment",
            "neutral",
            "contradiction",
            "max_entailment",
            "confirmed_contradiction",
            "coverage",
            "contradicted",
        }
        assert sum(json.loads(vote.raw)["probs"]) == pytest.approx(1.0, abs=1e-3)
        assert json.loads(vote.raw)["windows"] == 1


def test_judge_finds_support_in_any_window_and_order_does_not_matter() -> None:
    filler = " ".join(["The hospital network also runs a training programme for nurses."] * 30)
    judge = build_judge("entailment")
    forward = judge.judge_sync(
        [JudgePair("The trial enrolled 3,200 participants.", (filler, TRIAL))]
    )[0]
    backward = judge.judge_sync(
        [JudgePair("The trial enrolled 3,200 participants.", (TRIAL, filler))]
    )[0]
    assert forward.value == backward.value == 0.0
    assert forward.scores == backward.scores
    assert json.loads(forward.raw)["windows"] > 2


def test_judge_digest_follows_weights_and_parameters() -> None:
    plain, quantized = build_judge("entailment"), build_judge("entailment", {"quantize": True})
    assert plain.params["weights_sha256"] == weights_digest()
    assert plain.digest != quantized.digest
    assert (
        quantized.judge_sync([JudgePair("The trial enrolled 3,200 participants.", (TRIAL,))])[
            0
        ].value
        == 0.0
    )


def test_entailment_judge_is_on_the_default_panel() -> None:
    assert "entailment" in load_panel(None).member_names


def test_a_contradiction_must_hold_at_sentence_level() -> None:
    evidence = (
        "Night trains run on the Red line on Friday and Saturday nights, every 30 minutes "
        "between midnight and 5 am. Other lines do not run overnight."
    )
    pair = JudgePair("Night trains run on the Red line on Friday and Saturday nights.", (evidence,))
    # without the sentence pass the window is read, and re-read sentence by sentence
    refined = build_judge("entailment", {"sentence_k": 0}).judge_sync([pair])[0]
    assert refined.value == 0.0 and refined.scores["contradiction"] < 0.5
    assert json.loads(refined.raw)["refined_to_sentences"] >= 1
    # a real contradiction survives the sentence-level reading
    wrong = build_judge("entailment").judge_sync(
        [JudgePair("Night trains run on the Blue line.", (evidence,))]
    )[0]
    assert wrong.value == 1.0 and wrong.scores["contradiction"] >= 0.5
    assert wrong.scores["contradicted"] == 1.0


def test_a_sentence_that_does_not_cover_the_claim_cannot_contradict_it() -> None:
    evidence = (
        "The museum opened in 1998 in the old harbour warehouse. "
        "Photography is not allowed in the galleries."
    )
    vote = build_judge("entailment").judge_sync(
        [JudgePair("The museum opened in 1998.", (evidence,))]
    )[0]
    assert vote.value == 0.0 and vote.scores["confirmed_contradiction"] < 0.5
    # with the coverage requirement off, the negated sentence may be read as a conflict;
    # with it on, nothing that misses the claim's content counts
    assert (
        build_judge("entailment", {"cover_at": 1.0})
        .judge_sync([JudgePair("The museum opened in 1998.", (evidence,))])[0]
        .value
        == 0.0
    )


def test_a_sentence_sharing_only_the_claims_names_cannot_contradict_it() -> None:
    from auditor.judges.entailment import predicate_words

    claim = "Marta Sousa coaches Harrow Vale Rovers."
    assert predicate_words(claim) == {"coach"}
    page = (
        "Harrow Vale Rovers is a football club founded in 1889 that plays at Quarry Lane, "
        "a stadium with 8,400 seats. The head coach is Marta Sousa, appointed in June 2023."
    )
    vote = build_judge("entailment").judge_sync([JudgePair(claim, (page,))])[0]
    raw = json.loads(vote.raw)
    # the first sentence holds the club's name (half the claim's content words) but says
    # nothing about who coaches it: it cannot contradict the claim; the page supports it
    assert vote.scores["confirmed_contradiction"] < vote.scores["max_entailment"]
    assert vote.value == 0.0 and not raw["contradicted"]
    # a sentence about the coaching (naming someone else) still covers the claim
    judge = build_judge("entailment")
    assert judge._covers(claim, "The head coach of Harrow Vale Rovers is Elena Ruiz.")
    assert not judge._covers(claim, "Harrow Vale Rovers is a football club founded in 1889.")


def test_a_passage_stating_the_claim_is_found_among_several() -> None:
    claim = "The Harbour Line operates eight branches in the northern district."
    passages = (
        claim[:-1]
        + ", according to the 2024 annual report. "
        + " ".join(
            [
                "Ticket prices rose by 8 percent in the last fiscal year, and passenger numbers "
                "grew steadily across the network."
            ]
            * 12
        ),
        "Opening hours are 9 am to 5 pm on weekdays and 12 to 5 pm on Sundays. " * 5,
        "The board approved a new depot. Construction will start next spring. " * 6,
    )
    judge = build_judge("entailment")
    assert judge.get_params()["sentence_k"] == 3
    vote = judge.judge_sync([JudgePair(claim, passages)])[0]
    alone = judge.judge_sync([JudgePair(claim, passages[:1])])[0]
    assert alone.value == 0.0
    assert vote.value == 0.0 and vote.scores["max_entailment"] >= 0.5
    # the cheap first pass skipped windows that share too few words with the claim
    raw = json.loads(vote.raw)
    assert raw["chunks_read"] < raw["windows"] + 3 + 10  # sentence_k is 3


def test_pruning_costs_nothing_on_a_clear_case() -> None:
    filler = " ".join(
        f"Ward {i} of the hospital network runs a training programme for nurses." for i in range(60)
    )
    pair = JudgePair("The trial enrolled 3,200 participants.", (filler, TRIAL))
    # the sentence pass alone decides this claim; without it the windows are read
    assert json.loads(build_judge("entailment").judge_sync([pair])[0].raw)["chunks_read"] == 1
    pruned = build_judge("entailment", {"sentence_k": 0}).judge_sync([pair])[0]
    full = build_judge("entailment", {"sentence_k": 0, "prune_below": 0.0}).judge_sync([pair])[0]
    assert pruned.value == full.value == 0.0
    assert json.loads(pruned.raw)["chunks_read"] < json.loads(full.raw)["chunks_read"]


def test_bad_reading_parameters_are_clean_errors() -> None:
    from auditor.errors import ConfigError

    for params in (
        {"cover_at": 1.5},
        {"sentence_k": -1},
        {"prune_below": -0.1},
        {"support_at": 0.1, "reject_below": 0.3},
    ):
        with pytest.raises(ConfigError):
            build_judge("entailment", params)


def test_a_summary_is_supported_only_when_every_sentence_is() -> None:
    judge = build_judge("entailment")
    one = judge.judge_sync([JudgePair("The trial enrolled 3,200 participants.", (TRIAL,))])[0]
    two = judge.judge_sync(
        [
            JudgePair(
                "The trial enrolled 3,200 participants. It was stopped "
                "early because of side effects.",
                (TRIAL,),
            )
        ]
    )[0]
    assert one.value == 0.0 and two.value != 0.0
    assert json.loads(two.raw)["claim_sentences"] == 2
    assert two.scores["max_entailment"] < one.scores["max_entailment"]


class _CountingNetwork:
    """Wraps the reader's network, counting the pairs it is run on."""

    def __init__(self, network: object) -> None:
        self.network, self.pairs = network, 0

    def __call__(self, **batch: object) -> object:
        self.pairs += len(batch["input_ids"])  # type: ignore[arg-type]
        return self.network(**batch)  # type: ignore[operator]


def test_a_second_pass_over_the_same_text_runs_no_forward_pass(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model = load_model()
    model.clear_scores()
    counter = _CountingNetwork(model.model)
    monkeypatch.setattr(model, "model", counter)
    long = " ".join([TRIAL] * 30)  # several windows, re-read sentence by sentence
    pairs = [
        JudgePair("The trial enrolled 3,200 participants.", (long,)),
        JudgePair("The trial enrolled 5,000 participants in 2021.", (TRIAL, long)),
    ]
    first = build_judge("entailment").judge_sync(pairs)
    read = counter.pairs
    assert read > 0 and model.forward_pairs >= read
    # the same claims and passages again (a superseded pass, a rejudge with the same
    # reader: a new judge object with other vote thresholds shares the loaded model)
    again = build_judge("entailment", {"support_at": 0.6}).judge_sync(pairs)
    assert counter.pairs == read
    assert [v.scores for v in again] == [v.scores for v in first]
    # only the claim sentence not read before goes through the network
    build_judge("entailment").judge_sync(
        [JudgePair("The trial reported its results in 2021.", (TRIAL,))]
    )
    assert 0 < counter.pairs - read <= 2
    # cached and fresh scores agree
    fresh = model.predict([TRIAL], ["The trial enrolled 3,200 participants."])
    cached = model.predict_cached([TRIAL], ["The trial enrolled 3,200 participants."])
    assert np.allclose(fresh, cached, atol=1e-5)


def test_windows_are_read_only_for_claim_sentences_the_best_sentences_leave_unsupported() -> None:
    passage = " ".join(
        [
            "The Harbour Line operates eight branches in the northern district.",
            *[f"Ward {i} of the hospital network trains nurses every spring." for i in range(80)],
        ]
    )
    judge = build_judge("entailment")
    stated = judge.judge_sync(
        [
            JudgePair(
                "The Harbour Line operates eight branches in the northern district.", (passage,)
            )
        ]
    )[0]
    raw = json.loads(stated.raw)
    assert stated.value == 0.0 and raw["windows"] > 3
    assert raw["windows_read"] == 0 and raw["decisive_kind"] == "sentence"
    absent = judge.judge_sync(
        [JudgePair("The Harbour Line was designed by Anna Berg in 1931.", (passage,))]
    )[0]
    assert absent.value in (1.0, 0.5)
    # unsupported: the windows were read, those covering the claim as well as its best
    # sentence (the one window holding it; the others share no content word with it) ...
    assert json.loads(absent.raw)["windows_read"] == 1
    # ... or, without prune_by_sentences, every window the lexical pruning keeps
    everything = build_judge("entailment", {"prune_by_sentences": False}).judge_sync(
        [JudgePair("The Harbour Line was designed by Anna Berg in 1931.", (passage,))]
    )[0]
    assert json.loads(everything.raw)["windows_read"] >= 2


def test_a_deciding_window_is_re_read_only_in_its_sentences_that_cover_the_claim() -> None:
    from auditor.entailment.model import load_model

    evidence = "The Harbour Line operates eight branches in the northern district. " + " ".join(
        f"The district library {i} opens at nine." for i in range(5)
    )  # five sentences sharing one content word ("district") with the claim
    pair = JudgePair(
        "The Harbour Line operates eight branches in the northern district.", (evidence,)
    )
    reader = load_model()
    reader.clear_scores()
    before = reader.forward_pairs
    vote = build_judge("entailment", {"sentence_k": 0}).judge_sync([pair])[0]
    raw = json.loads(vote.raw)
    assert vote.value == 0.0 and raw["windows_read"] == 1 and raw["refined_to_sentences"] == 1
    assert reader.forward_pairs - before == 2  # the window, then its one covering sentence


def test_the_int8_reader_quantises_the_encoder_per_channel_and_keeps_the_head_fp32() -> None:
    """Per-tensor int8 of every linear layer cost 2.9 points of held-out bacc; one scale
    per output channel on the encoder layers alone costs none measurable."""
    import torch

    model = load_model(quantize=True)
    modules = dict(model.model.named_modules())
    linear = ("query", "key", "value", "dense")
    encoder = [n for n in modules if ".encoder." in f".{n}." and n.endswith(linear)]
    assert len(encoder) == 6 * 6  # query, key, value, attention output, intermediate, output
    for name in encoder:
        weight = modules[name].weight()
        assert weight.dtype == torch.qint8, name
        assert weight.qscheme() == torch.per_channel_affine, name
    for name in ("classifier", "bert.pooler.dense"):
        assert type(modules[name]) is torch.nn.Linear, name
    premise = "The trial enrolled 3,200 participants in 2019."
    probs = model.predict([premise, premise], [premise, "The trial enrolled 5,000 people."])
    fp32 = load_model(precision="fp32").predict(
        [premise, premise], [premise, "The trial enrolled 5,000 people."]
    )
    assert np.argmax(probs[0]) == np.argmax(fp32[0]) == model.labels.index("entailment")
    assert np.abs(probs - fp32).max() < 0.2


def test_int8_and_bf16_scores_are_kept_apart_from_fp32_scores() -> None:
    sha = weights_digest()
    int8 = build_judge("entailment", {"quantize": True}).reader_identity
    fp32 = build_judge("entailment", {"precision": "fp32"}).reader_identity
    bf16 = build_judge("entailment", {"precision": "bf16"}).reader_identity
    assert fp32 == (sha, False)
    assert int8[1] is True and int8[0] not in (sha, fp32[0])
    assert (
        int8[0]
        == reader_digest(sha, True)
        == sha256_bytes(f"{sha}\n{QUANTIZATION_SCHEME}".encode())
    )
    assert bf16 == (reader_digest(sha, False, "bf16"), False)
    assert bf16[0] == sha256_bytes(f"{sha}\n{BF16_SCHEME}".encode())
    assert len({fp32[0], int8[0], bf16[0]}) == 3
    # int8 reads in its own way whatever the precision says
    assert (
        build_judge("entailment", {"quantize": True, "precision": "bf16"}).reader_identity == int8
    )


def test_auto_precision_follows_the_environment_then_the_cpu(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sha = weights_digest()
    judge = build_judge("entailment")
    assert judge.precision == "auto"
    monkeypatch.setenv("AUDITOR_PRECISION", "fp32")
    assert judge.reader_precision == "fp32" and judge.reader_identity == (sha, False)
    monkeypatch.setenv("AUDITOR_PRECISION", "bf16")
    assert judge.reader_precision == "bf16"
    assert judge.reader_identity == (reader_digest(sha, False, "bf16"), False)
    monkeypatch.setenv("AUDITOR_PRECISION", "fp64")
    with pytest.raises(ConfigError, match="AUDITOR_PRECISION"):
        judge.reader_identity  # noqa: B018
    monkeypatch.delenv("AUDITOR_PRECISION")
    assert judge.reader_precision == ("bf16" if native_bf16() else "fp32")
    with pytest.raises(ConfigError, match="entailment: precision"):
        build_judge("entailment", {"precision": "half"})


@pytest.mark.parametrize(("precision", "tolerance"), [("fp32", 1e-6), ("bf16", 0.0)])
def test_scores_do_not_depend_on_the_batch_they_are_read_in(
    precision: str, tolerance: float
) -> None:
    """Why fp32 and bf16 can be defaults and int8 cannot: a pair is padded to a width of
    its own, so its probabilities are the same read alone or among others (bit for bit
    in bf16, where a change of width alone moves them by up to 4e-3; int8 scales a
    batch's activations together: 0.05 on average)."""
    model = load_model(precision=precision)
    assert model.precision == precision
    premises = [TRIAL, "The museum opened in 1931.", "Ferries leave every hour from the pier."]
    claims = ["The trial enrolled 3,200 people.", "The museum opened in 1985.", "Ferries run."]
    together = model.predict(premises, claims, batch_size=3)
    alone = np.vstack([model.predict([p], [c]) for p, c in zip(premises, claims, strict=True)])
    longer = model.predict([*premises, " ".join([TRIAL] * 8)], [*claims, "Long."])[:3]
    assert np.abs(together - alone).max() <= tolerance
    assert np.abs(together - longer).max() <= tolerance


def test_bf16_reads_like_fp32() -> None:
    """bf16 matrix products move the reader's probabilities by thousandths, not its
    decisions."""
    premises = [TRIAL, "The museum opened in 1931.", "Ferries leave every hour from the pier."]
    claims = ["The trial enrolled 3,200 people.", "The museum opened in 1985.", "Ferries run."]
    fp32 = load_model(precision="fp32").predict(premises, claims)
    bf16 = load_model(precision="bf16").predict(premises, claims)
    assert np.abs(fp32 - bf16).max() < 0.02
    assert (fp32.argmax(axis=1) == bf16.argmax(axis=1)).all()


def test_the_best_covering_sentence_is_read_first_and_the_others_only_without_support() -> None:
    model = load_model()
    supported = JudgePair(
        "The trial enrolled 3,200 participants.",
        ("The trial enrolled 3,200 participants. The trial enrolled patients in 14 hospitals.",),
    )
    unsupported = JudgePair(
        "The trial enrolled 5,000 participants.",
        ("The trial enrolled 3,200 participants. The trial enrolled patients in 14 hospitals.",),
    )
    read = {}
    for best_first in (True, False):
        judge = build_judge("entailment", {"best_first": best_first})
        for name, pair in (("supported", supported), ("unsupported", unsupported)):
            model.clear_scores()
            before = model.forward_pairs
            vote = judge.judge_sync([pair])[0]
            read[name, best_first] = (model.forward_pairs - before, vote.value)
    assert read["supported", True] == (1, 0.0)  # decided by the best-covering sentence
    assert read["supported", False][0] == 2 and read["supported", False][1] == 0.0
    # without support from the best sentence, the next ones are read as before
    assert read["unsupported", True] == read["unsupported", False]
    assert read["unsupported", True][0] >= 2


def test_width_batches_cover_every_input_once_at_its_own_width() -> None:
    from auditor.batching import padded_width, width_batches

    lengths = np.random.default_rng(3).integers(1, 320, size=500)
    batches = width_batches(lengths, 32)
    flat = np.concatenate([idx for idx, _ in batches])
    assert sorted(flat.tolist()) == list(range(500))
    for idx, width in batches:
        assert 1 <= len(idx) <= 32
        assert all(padded_width(int(n)) == width for n in lengths[idx])
        assert (lengths[idx] <= width).all() and (width - lengths[idx] < 32).all()
    widths = [width for _, width in batches]
    assert widths == sorted(widths)  # shortest first
    # the width is the input's own: the same whatever else is in the call
    assert [w for _, w in width_batches(np.array([20, 131, 22, 25, 128]), 32)] == [24, 32, 128, 160]
    assert [padded_width(n) for n in (1, 8, 9, 64, 65, 128, 129, 320)] == [
        8,
        8,
        16,
        64,
        80,
        128,
        160,
        320,
    ]
    with pytest.raises(ValueError):
        padded_width(0)


def test_windows_covering_less_than_the_best_sentence_are_not_read() -> None:
    """prune_by_sentences: a window that covers less of the claim than the best sentence
    already read cannot state more of it; the window holding that sentence is still read."""
    from auditor.entailment.model import evidence_windows
    from auditor.judges.entailment import coverage

    filler = " ".join(
        f"Rain fell on the hills for day {n} while farmers watched the clouds gather slowly."
        for n in range(22)
    )
    evidence = "The trial enrolled 3,200 participants in 14 hospitals. " + filler
    claim = "The trial enrolled 5,000 participants."
    windows = evidence_windows(evidence)
    covers = [coverage(claim, w) for w in windows]
    assert len(windows) >= 2 and max(covers) > min(covers)  # the case under test
    read = {}
    for prune in (True, False):
        judge = build_judge("entailment", {"prune_by_sentences": prune})
        vote = judge.judge_sync([JudgePair(claim, (evidence,))])[0]
        read[prune] = json.loads(vote.raw)["windows_read"]
    assert read[False] == len(windows)
    assert read[True] == sum(c >= max(covers) for c in covers) >= 1
    assert read[True] < read[False]
