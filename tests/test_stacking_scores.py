"""The score stacker (issue 13, item 3): features from the judges' scores with abstention
indicators, the same folds as RAIM's vote stacker, the paired comparison, the stacker
JSON recording its kind and features, and the audit flow serving both kinds."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

from auditor.errors import ConfigError, InputError
from auditor.stacking.calibrate import calibrate_votes
from auditor.stacking.features import feature_names, features_from_outputs, score_features
from auditor.stacking.fit import fit_score_stacker
from auditor.stacking.model import Stacker, load_stacker
from auditor.types import Vote

MEMBERS = ("a", "b", "c")


def synthetic(n: int = 900, seed: int = 0) -> tuple[np.ndarray, list, np.ndarray, np.ndarray]:
    """Three members whose votes are coarse, while member "a" also reports a probability
    that separates the classes much better than its thresholded vote; "c" abstains often
    and then reports nothing."""
    rng = np.random.default_rng(seed)
    labels = (rng.random(n) < 0.45).astype(int)
    clusters = rng.integers(0, 150, n)
    prob = np.clip(0.5 + (labels - 0.5) * 0.5 + rng.normal(0, 0.15, n), 0, 1)
    vote_a = np.where(prob > 0.2, 1.0, 0.0)  # a badly placed threshold: mostly 1
    vote_b = np.where(rng.random(n) < 0.65, labels, 1 - labels).astype(float)
    vote_c = np.where(
        rng.random(n) < 0.5, 0.5, np.where(rng.random(n) < 0.6, labels, 1 - labels)
    ).astype(float)
    votes = np.stack([vote_a, vote_b, vote_c], axis=1)
    scores = [
        [
            {"entailment": float(1 - p), "contradiction": float(p)},
            {"support": float(1 - vb)},
            {} if vc == 0.5 else {"support": float(1 - vc)},
        ]
        for p, vb, vc in zip(prob, vote_b, vote_c, strict=True)
    ]
    return votes, scores, labels, clusters


def test_feature_names_and_matrix() -> None:
    votes, scores, _, _ = synthetic(20)
    names = feature_names(scores, MEMBERS)
    assert names[:4] == ("a:vote", "a:abstain", "a:contradiction", "a:entailment")
    assert "c:abstain" in names and "c:support" in names
    x = features_from_outputs(votes, scores, MEMBERS, names)
    assert x.shape == (20, len(names))
    abstain = names.index("c:abstain")
    support = names.index("c:support")
    assert np.array_equal(x[:, abstain], (votes[:, 2] == 0.5).astype(float))
    assert np.all(x[votes[:, 2] == 0.5, support] == 0.0)  # abstained: no score
    with pytest.raises(ValueError, match="does not name a member"):
        features_from_outputs(votes, scores, MEMBERS, ("z:vote",))


def test_score_stacker_beats_the_vote_stacker_when_scores_carry_more() -> None:
    votes, scores, labels, clusters = synthetic()
    ids = [str(i) for i in range(len(labels))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        report = calibrate_votes(
            ids,
            votes,
            labels,
            clusters,
            MEMBERS,
            n_boot=300,
            scores=scores,
            kind="best",
            kappa0=0.0,
            phi0=1.0,
        ).report
    rungs = {row["name"]: row for row in report["ladder"]}
    assert rungs["score_stacked"]["kappa"] > rungs["stacked"]["kappa"] + 0.1
    paired = report["paired"]["scores_vs_votes"]
    assert paired["ci"][0] > 0 and paired["delta_bacc"] > 0
    assert report["stacker_kind"] == "scores"
    assert report["stacker"]["kind"] == "scores"
    assert report["stacker"]["features"][:2] == ["a:vote", "a:abstain"]
    assert "score_stacked_prob" in report["predictions"][0]


def test_kind_votes_keeps_raims_stacker_and_reports_both() -> None:
    votes, scores, labels, clusters = synthetic(400)
    ids = [str(i) for i in range(len(labels))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        result = calibrate_votes(ids, votes, labels, clusters, MEMBERS, n_boot=100, scores=scores)
    assert result.stacker.kind == "votes" and "kind" not in result.report["stacker"]
    assert "score_stacked" in {row["name"] for row in result.report["ladder"]}
    with pytest.raises(InputError, match="scores"):
        calibrate_votes(ids, votes, labels, clusters, MEMBERS, n_boot=10, kind="scores")
    with pytest.raises(InputError, match="kind"):
        calibrate_votes(
            ids, votes, labels, clusters, MEMBERS, n_boot=10, scores=scores, kind="magic"
        )


def test_admissibility_governs_the_score_stacker_too() -> None:
    votes, scores, labels, clusters = synthetic(400)
    ids = [str(i) for i in range(len(labels))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        result = calibrate_votes(
            ids,
            votes,
            labels,
            clusters,
            MEMBERS,
            n_boot=50,
            scores=scores,
            kind="scores",
            kappa0=0.99,
        )
    assert not result.report["admissibility"]["admissible"]
    stacker = result.stacker
    assert stacker.kind == "scores" and stacker.fallback_member is not None
    rows = [
        [Vote(m, float(v), scores=s) for m, v, s in zip(MEMBERS, vr, sr, strict=True)]
        for vr, sr in zip(votes[:5], scores[:5], strict=True)
    ]
    column = MEMBERS.index(stacker.fallback_member)
    assert np.array_equal(stacker.predict_votes(rows, MEMBERS), votes[:5, column])


def test_score_stacker_json_records_kind_and_features(tmp_path: Path) -> None:
    votes, scores, labels, _ = synthetic(300)
    names = feature_names(scores, MEMBERS)
    x = features_from_outputs(votes, scores, MEMBERS, names)
    stacker = fit_score_stacker(x, labels, MEMBERS, names)
    stacker.save(tmp_path / "s.json")
    loaded = load_stacker(tmp_path / "s.json")
    assert loaded == stacker and loaded.kind == "scores" and loaded.features == names
    assert loaded.component().name == "raim-scores"
    # the audit path: Votes in, the same probabilities as the feature matrix
    rows = [
        [Vote(m, float(v), scores=s) for m, v, s in zip(MEMBERS, vr, sr, strict=True)]
        for vr, sr in zip(votes, scores, strict=True)
    ]
    assert np.allclose(loaded.predict_votes(rows, MEMBERS), loaded.predict_proba(x))
    assert np.allclose(score_features(rows, MEMBERS, names), x)
    # a failed vote is an abstention with no scores
    failed = [Vote("a", 0.5, error="timeout", scores={"entailment": 0.9}), *rows[0][1:]]
    f = score_features([failed], MEMBERS, names)[0]
    assert f[names.index("a:abstain")] == 1.0 and f[names.index("a:entailment")] == 0.0
    # an edited file fails its digest; a feature naming an unknown member is refused
    text = (tmp_path / "s.json").read_text().replace('"a:vote"', '"a:abstain_x"')
    (tmp_path / "bad.json").write_text(text)
    with pytest.raises(ConfigError, match="digest mismatch"):
        load_stacker(tmp_path / "bad.json")
    with pytest.raises(ValueError, match="members the stacker lacks"):
        Stacker(members=MEMBERS, coef=(1.0,), intercept=0.0, kind="scores", features=("zz:vote",))
    with pytest.raises(ValueError, match="kind"):
        Stacker(members=MEMBERS, coef=(1.0, 1.0, 1.0), intercept=0.0, kind="mean")


def test_the_shipped_vote_stacker_is_unchanged_and_reads_votes() -> None:
    stacker = load_stacker(None)  # its recorded digest still verifies
    assert stacker.kind == "votes" and stacker.features == ()
    n = len(stacker.members)
    rows = [[Vote(m, 0.0) for m in stacker.members], [Vote(m, 1.0) for m in stacker.members]]
    expected = stacker.predict_proba(np.array([[0.0] * n, [1.0] * n]))
    assert np.allclose(stacker.predict_votes(rows, stacker.members), expected)
    with pytest.raises(ConfigError, match="fitted on members"):
        stacker.predict_votes(rows, list(reversed(stacker.members)))
