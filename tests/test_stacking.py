"""RAIM stacking: cross-fitting, metrics, paired bootstrap, ladder, admissibility, calibrate."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import cohen_kappa_score

from auditor.errors import InputError
from auditor.stacking.admissibility import admissibility, error_correlation
from auditor.stacking.calibrate import calibrate_votes, read_calibration_data
from auditor.stacking.fit import cross_fit, fit_stacker, make_folds
from auditor.stacking.ladder import best_cv_votes, dawid_skene, majority_vote
from auditor.stacking.metrics import bootstrap_scores, paired_verdict, scores
from auditor.stacking.model import Stacker, load_stacker
from auditor.stats.bootstrap import cluster_bootstrap_weights


def noisy_member(
    labels: np.ndarray, accuracy: float, abstain: float, rng: np.random.Generator
) -> np.ndarray:
    """Votes equal to the label with probability ``accuracy``; some abstentions."""
    correct = rng.random(labels.size) < accuracy
    votes = np.where(correct, labels, 1 - labels).astype(float)
    votes[rng.random(labels.size) < abstain] = 0.5
    return votes


def synthetic(
    n: int = 1200, n_clusters: int = 200, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    clusters = rng.integers(0, n_clusters, n)
    labels = (rng.random(n) < 0.4).astype(int)
    votes = np.stack(
        [
            noisy_member(labels, 0.8, 0.1, rng),
            noisy_member(labels, 0.75, 0.1, rng),
            noisy_member(labels, 0.7, 0.2, rng),
            rng.integers(0, 2, n).astype(float),
            1 - noisy_member(labels, 0.8, 0.0, rng),
        ],
        axis=1,
    )
    return votes, labels, clusters.astype(str)


def test_folds_are_grouped_by_cluster_and_stratified() -> None:
    _votes, labels, clusters = synthetic()
    _, codes = np.unique(clusters, return_inverse=True)
    fold = make_folds(labels, codes, 5, seed=1)
    for c in np.unique(codes):
        assert len(np.unique(fold[codes == c])) == 1
    assert sorted(np.unique(fold)) == [0, 1, 2, 3, 4]
    shares = [labels[fold == k].mean() for k in range(5)]
    assert max(shares) - min(shares) < 0.15


def test_cross_fit_is_out_of_fold() -> None:
    votes, labels, clusters = synthetic()
    cross = cross_fit(votes, labels, clusters, seed=3)
    for k in (0, 3):
        train = cross.fold != k
        model = LogisticRegression(C=1.0, solver="newton-cholesky").fit(votes[train], labels[train])
        expected = model.predict_proba(votes[~train])[:, 1]
        np.testing.assert_allclose(cross.proba[~train], expected, atol=1e-6)
    full = fit_stacker(votes, labels, [f"m{i}" for i in range(5)], clusters)
    assert not np.allclose(full.predict_proba(votes), cross.proba)


def test_stacker_weights_informative_echo_and_anti_correlated_members() -> None:
    votes, labels, clusters = synthetic(n=3000, n_clusters=400)
    stacker = fit_stacker(votes, labels, ["a", "b", "c", "noise", "anti"], clusters)
    coef = np.asarray(stacker.coef)
    assert coef[0] > 1.0 and coef[1] > 0.5
    assert abs(coef[3]) < 0.5 < abs(coef[0])
    assert coef[4] < -1.0  # anti-correlated but informative: negative weight


def test_stacker_round_trip_and_fitted_on_digest(tmp_path: Path) -> None:
    votes, labels, clusters = synthetic()
    members = [f"m{i}" for i in range(5)]
    stacker = fit_stacker(votes, labels, members, clusters)
    path = tmp_path / "s.json"
    stacker.save(path)
    loaded = load_stacker(path)
    assert loaded == stacker
    np.testing.assert_allclose(loaded.predict_proba(votes), stacker.predict_proba(votes))
    other = fit_stacker(votes, 1 - labels, members, clusters)
    assert other.fitted_on != stacker.fitted_on
    assert isinstance(stacker, Stacker) and stacker.threshold == 0.5


@pytest.mark.parametrize(
    ("labels", "clusters", "match"),
    [
        ([0, 1, 2, 0, 1, 0], None, "labels must be 0 or 1"),
        ([0, 1, 0, 1], None, "at least 5"),
        ([0, 1, 0, 1, 0, 1], ["a", "a", "b", "b", "c", "c"], "3 clusters"),
        ([1, 1, 1, 1, 1, 1], None, "both classes"),
    ],
)
def test_bad_input_is_a_clear_error(
    labels: list[int], clusters: list[str] | None, match: str
) -> None:
    votes = np.zeros((len(labels), 2))
    with pytest.raises(InputError, match=match):
        cross_fit(votes, labels, clusters)


def test_training_fold_with_one_class_is_an_error() -> None:
    labels = np.array([1] * 4 + [0] * 40)
    clusters = np.array(["pos"] * 4 + [f"c{i}" for i in range(40)])
    with pytest.raises(InputError, match="one class only"):
        cross_fit(np.ones((44, 2)) * 0.5, labels, clusters)


def test_votes_outside_range_are_rejected() -> None:
    with pytest.raises(InputError, match="votes"):
        cross_fit(np.full((10, 2), 2.0), [0, 1] * 5)


def test_scores_match_sklearn_and_count_abstentions_as_errors() -> None:
    rng = np.random.default_rng(5)
    labels = rng.integers(0, 2, 300)
    pred = noisy_member(labels, 0.7, 0.25, rng)
    kappa, bacc = scores(pred, labels)
    decided = pred != 0.5
    assert kappa[0] == pytest.approx(cohen_kappa_score(labels[decided], pred[decided]))
    tpr = np.mean(pred[labels == 1] == 1)
    tnr = np.mean(pred[labels == 0] == 0)
    assert bacc[0] == pytest.approx((tpr + tnr) / 2)


def test_undefined_scores_are_nan_with_warning() -> None:
    with pytest.warns(RuntimeWarning, match="undefined"):
        kappa, bacc = scores(np.full(6, 0.5), [0, 1, 0, 1, 0, 1])
    assert np.isnan(kappa[0]) and bacc[0] == 0.0
    with pytest.warns(RuntimeWarning):
        kappa, bacc = scores([0, 1, 1], [1, 1, 1])
    assert np.isnan(bacc[0])


def test_vectorised_bootstrap_equals_a_loop_over_resamples() -> None:
    rng = np.random.default_rng(2)
    labels = rng.integers(0, 2, 120)
    clusters = rng.integers(0, 30, 120).astype(str)
    pred = np.stack(
        [noisy_member(labels, 0.8, 0.1, rng), noisy_member(labels, 0.6, 0.0, rng)], axis=1
    )
    boot = bootstrap_scores(pred, labels, clusters, n_boot=25, rng=np.random.default_rng(9))
    _, codes = np.unique(clusters, return_inverse=True)
    counts = cluster_bootstrap_weights(np.arange(codes.max() + 1), 25, np.random.default_rng(9))
    for b in range(25):
        weight = counts[b, codes]
        for s in range(2):
            keep = (pred[:, s] != 0.5) & (weight > 0)
            expected = cohen_kappa_score(labels[keep], pred[keep, s], sample_weight=weight[keep])
            assert boot.boot_kappa[b, s] == pytest.approx(expected, abs=1e-9)


def test_paired_verdicts() -> None:
    assert paired_verdict((0.01, 0.1)) == "win"
    assert paired_verdict((0.01, 0.1), (0.02, 0.2)) == "clean_win"
    assert paired_verdict((0.01, 0.1), (-0.02, 0.2)) == "win"
    assert paired_verdict((-0.01, 0.1)) == "tie"
    assert paired_verdict((-0.1, -0.01)) == "loss"
    assert paired_verdict((float("nan"), float("nan"))) == "undefined"


def test_majority_ties_go_to_threshold() -> None:
    votes = np.array([[1, 0], [1, 1], [0, 0], [0.5, 0.5], [1, 0.5]])
    np.testing.assert_array_equal(majority_vote(votes), [1, 1, 0, 1, 1])


def test_dawid_skene_beats_majority_with_uneven_members() -> None:
    rng = np.random.default_rng(11)
    labels = (rng.random(2000) < 0.3).astype(int)
    votes = np.stack(
        [noisy_member(labels, acc, 0.1, rng) for acc in (0.95, 0.6, 0.6, 0.55, 0.55)], axis=1
    )
    ds = (dawid_skene(votes) >= 0.5).astype(int)
    maj = majority_vote(votes).astype(int)
    assert np.mean(ds == labels) > np.mean(maj == labels) + 0.05
    assert np.mean(ds == labels) > 0.85


def test_best_cv_picks_the_training_best_member() -> None:
    votes, labels, clusters = synthetic()
    _, codes = np.unique(clusters, return_inverse=True)
    fold = make_folds(labels, codes, 5, seed=0)
    out, chosen = best_cv_votes(votes, labels, fold)
    assert set(chosen) <= {0, 4}  # the two most informative members (anti has kappa < 0)
    assert chosen.count(0) >= 1
    np.testing.assert_array_equal(out[fold == 0], votes[fold == 0, chosen[0]])


def test_error_correlation_matches_corrcoef_without_abstentions() -> None:
    rng = np.random.default_rng(4)
    labels = rng.integers(0, 2, 500)
    votes = np.stack([noisy_member(labels, 0.8, 0.0, rng) for _ in range(3)], axis=1)
    votes[:, 2] = np.where(rng.random(500) < 0.8, votes[:, 0], votes[:, 2])  # echo member 0
    phi = error_correlation(votes, labels)
    errors = (votes != labels[:, None]).astype(float)
    expected = np.corrcoef(errors.T)
    iu = np.triu_indices(3, 1)
    np.testing.assert_allclose(phi[iu], expected[iu], atol=1e-9)
    assert phi[0, 2] > 0.5 > abs(phi[0, 1])


def test_admissibility_decisions() -> None:
    rng = np.random.default_rng(8)
    labels = rng.integers(0, 2, 1000)
    independent = np.stack([noisy_member(labels, 0.85, 0.0, rng) for _ in range(4)], axis=1)
    kappa = scores(independent, labels)[0]
    ok = admissibility(kappa, independent, labels)
    assert ok.admissible and ok.share_competent == 1.0 and ok.mean_error_corr < 0.1
    echoes = np.repeat(independent[:, :1], 4, axis=1)
    bad = admissibility(scores(echoes, labels)[0], echoes, labels)
    assert not bad.admissible and bad.mean_error_corr > 0.99 and "correlation" in bad.reason
    weak = np.stack([noisy_member(labels, 0.55, 0.0, rng) for _ in range(4)], axis=1)
    w = admissibility(scores(weak, labels)[0], weak, labels)
    assert not w.admissible and w.share_competent < 0.5
    assert w.thresholds == {"kappa0": 0.30, "c": 0.5, "phi0": 0.40}


def test_calibrate_votes_report_and_win_verdict() -> None:
    rng = np.random.default_rng(21)
    n = 2000
    labels = (rng.random(n) < 0.5).astype(int)
    clusters = rng.integers(0, 400, n).astype(str)
    votes = np.stack([noisy_member(labels, 0.75, 0.05, rng) for _ in range(5)], axis=1)
    members = [f"m{i}" for i in range(5)]
    datasets = np.where(np.arange(n) < n // 2, "a", "b")
    report = calibrate_votes(
        [str(i) for i in range(n)],
        votes,
        labels,
        clusters,
        members,
        seed=0,
        n_boot=300,
        datasets=list(datasets),
    ).report
    names = [r["name"] for r in report["ladder"]]
    assert names == [
        "mean_member",
        "majority",
        "dawid_skene",
        "best_avg",
        "best_cv",
        "oracle_best",
        "stacked",
    ]
    rung = {r["name"]: r for r in report["ladder"]}
    assert rung["stacked"]["kappa"] > rung["best_cv"]["kappa"] + 0.1
    assert report["paired"]["stacked_vs_best_cv"]["verdict"] in ("win", "clean_win")
    lo, hi = report["paired"]["stacked_vs_best_cv"]["ci"]
    assert 0 < lo < report["paired"]["stacked_vs_best_cv"]["delta_kappa"] < hi
    paired = report["paired"]["stacked_vs_best_cv"]
    assert paired["delta_bacc"] == pytest.approx(rung["stacked"]["bacc"] - rung["best_cv"]["bacc"])
    assert paired["bacc_ci"][0] <= paired["delta_bacc"] <= paired["bacc_ci"][1]
    assert report["admissibility"]["admissible"]
    assert len(report["predictions"]) == n
    first = report["predictions"][0]
    assert set(first) >= {"id", "stacked_prob", "stacked_label", "votes"}
    assert first["stacked_label"] == int(first["stacked_prob"] >= 0.5)
    for m in report["members"]:
        assert m["kappa_ci"][0] <= m["kappa"] <= m["kappa_ci"][1]
    json.dumps(report, allow_nan=False)


def test_calibrate_votes_member_always_abstaining_warns_and_falls_back() -> None:
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 2, 300)
    votes = np.stack([noisy_member(labels, 0.6, 0.0, rng), np.full(300, 0.5)], axis=1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = calibrate_votes(
            [str(i) for i in range(300)],
            votes,
            labels,
            np.arange(300).astype(str),
            ["a", "silent"],
            n_boot=100,
        ).report
    assert any("abstained on every item" in str(w.message) for w in caught)
    silent = report["members"][1]
    assert silent["kappa"] is None and silent["kappa_ci"] == [None, None]
    assert silent["abstain_rate"] == 1.0
    assert not report["admissibility"]["admissible"]
    assert report["decision"] == {
        "use": "fallback",
        "member": "a",
        "note": report["decision"]["note"],
    }
    assert report["stacker"]["fallback_member"] == "a"


def write_lines(path: Path, lines: list[object]) -> Path:
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    return path


def test_read_calibration_data_errors_name_file_line_field(tmp_path: Path) -> None:
    good = {"id": "a", "cluster": "c", "claim": "x", "evidence": ["e"], "label": 0}
    other = {**good, "id": "b"}
    cases = [
        ({**other, "label": 2}, "field 'label'"),
        ({**other, "label": True}, "field 'label'"),
        ({k: v for k, v in other.items() if k != "claim"}, "field 'claim'"),
        ({**other, "evidence": [1]}, "field 'evidence'"),
        ({**good}, "duplicate id"),
    ]
    for record, where in cases:
        path = write_lines(tmp_path / "d.jsonl", [good, record])
        with pytest.raises(InputError, match="line 2") as info:
            read_calibration_data(path)
        assert where in str(info.value) and str(path) in str(info.value)
    items = read_calibration_data(
        write_lines(tmp_path / "ok.jsonl", [good, {**good, "id": "b", "evidence": "s"}])
    )
    assert items[1].evidence == ("s",) and items[0].label == 0


def test_every_member_abstaining_gives_nan_figures_with_warnings() -> None:
    labels = np.array([0, 1] * 50)
    votes = np.full((100, 3), 0.5)
    with pytest.warns(RuntimeWarning):
        report = calibrate_votes(
            [str(i) for i in range(100)],
            votes,
            labels,
            np.arange(100).astype(str),
            ["a", "b", "c"],
            n_boot=50,
        ).report
    assert all(m["kappa"] is None for m in report["members"])
    stacked = {r["name"]: r for r in report["ladder"]}["stacked"]
    assert stacked["kappa"] in (None, 0.0)  # constant or fold-wise constant predictions
    assert report["paired"]["stacked_vs_best_cv"]["verdict"] == "undefined"
    assert report["stacker"]["coef"] == [0.0, 0.0, 0.0]
    assert report["admissibility"]["mean_error_corr"] is None
    assert not report["admissibility"]["admissible"]
    json.dumps(report, allow_nan=False)
