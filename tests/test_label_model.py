"""The learned label decision: features, fitting, storage, and the one decision entry point."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from auditor.config import load_policy
from auditor.decision import decide, label_model_component, needs_judging
from auditor.errors import ConfigError
from auditor.label_model import FEATURES, features, fit_label_model, load_label_model
from auditor.labels import ClaimSignals, LabelPolicy, decide_label
from auditor.types import Label, Vote

READER_SAYS_NO = (
    Vote("entailment", 1.0, scores={"entailment": 0.02, "neutral": 0.1, "contradiction": 0.88}),
    Vote("content_overlap", 0.0),
)
READER_SAYS_YES = (
    Vote("entailment", 0.0, scores={"entailment": 0.95, "neutral": 0.03, "contradiction": 0.02}),
    Vote("content_overlap", 0.0),
)


def signals(**kw: object) -> ClaimSignals:
    base: dict[str, object] = {"factual": True, "relevance": 0.7, "p_current": 0.3}
    return ClaimSignals(**{**base, **kw})  # type: ignore[arg-type]


def test_features_name_every_column_and_carry_the_rules_label() -> None:
    row = features(signals(votes=READER_SAYS_YES))
    assert row.shape == (len(FEATURES),)
    named = dict(zip(FEATURES, row, strict=True))
    rule = decide_label(signals(votes=READER_SAYS_YES))[0]
    assert named[f"rule_{rule.value}"] == 1.0
    assert named["reader_entailment"] == pytest.approx(0.95)
    assert named["judged"] == 1.0
    unjudged = dict(zip(FEATURES, features(signals(p_current=None, votes=())), strict=True))
    assert unjudged["judged"] == 0.0 and unjudged["reader_abstained"] == 0.0


def _toy() -> tuple[np.ndarray, list[str]]:
    cases = [(READER_SAYS_YES, "supported"), (READER_SAYS_NO, "contradicted")] * 20
    cases += [((), "unknown")] * 10
    x = np.array(
        [
            features(signals(votes=v, p_current=0.2 if v else None, relevance=0.8 if v else 0.1))
            for v, _ in cases
        ]
    )
    return x, [y for _, y in cases]


def test_a_fitted_model_separates_what_its_data_separates_and_round_trips(
    tmp_path: Path,
) -> None:
    x, y = _toy()
    model = fit_label_model(x, y, c=1.0, provenance={"data": "toy"})
    pred = np.array(model.classes)[model.probabilities(x).argmax(axis=1)]
    assert (pred == np.array(y)).all()
    assert np.allclose(model.probabilities(x).sum(axis=1), 1.0)
    path = tmp_path / "m.json"
    model.save(path)
    again = load_label_model(path)
    assert again.digest == model.digest
    assert np.allclose(again.probabilities(x), model.probabilities(x), atol=1e-6)
    assert again.provenance["data"] == "toy" and again.provenance["n"] == len(y)


def test_labels_outside_the_five_factual_ones_are_refused() -> None:
    x, y = _toy()
    with pytest.raises(ConfigError, match="not_factual"):
        fit_label_model(x, [*y[:-1], "not_factual"])


def test_a_model_for_other_features_is_refused(tmp_path: Path) -> None:
    x, y = _toy()
    path = tmp_path / "m.json"
    fit_label_model(x, y).save(path)
    data = json.loads(path.read_text())
    data["features"] = data["features"][:-1]
    path.write_text(json.dumps(data))
    with pytest.raises(ConfigError, match="refit"):
        load_label_model(path)
    path.write_text("{")
    with pytest.raises(ConfigError, match="not a label model"):
        load_label_model(path)


def test_the_policy_names_the_model_and_the_decision_uses_it(tmp_path: Path) -> None:
    x, y = _toy()
    path = tmp_path / "m.json"
    fit_label_model(x, y).save(path)
    policy_file = tmp_path / "policy.toml"
    policy_file.write_text(f'label_model = "{path}"\nthreshold = 0.5\n')
    policy = load_policy(policy_file)
    assert policy.label_model == str(path)
    label, reason = decide(signals(votes=READER_SAYS_NO, p_current=0.8), policy)
    assert label is Label.CONTRADICTED and "label model" in reason
    assert decide(signals(factual=False), policy)[0] is Label.NOT_FACTUAL
    component = label_model_component(policy)
    assert component is not None and component.digest == load_label_model(path).digest
    assert label_model_component(LabelPolicy(label_model=None)) is None


def test_with_a_model_every_factual_claim_with_evidence_is_judged() -> None:
    weak = signals(relevance=0.2, p_current=None, votes=())
    assert not needs_judging(weak, LabelPolicy(label_model=None))
    assert needs_judging(weak, LabelPolicy(label_model="default"))
    assert not needs_judging(signals(relevance=None), LabelPolicy(label_model="default"))
    assert not needs_judging(signals(factual=False), LabelPolicy(label_model="default"))


def test_a_missing_model_file_is_a_clear_error(tmp_path: Path) -> None:
    policy = LabelPolicy(label_model=str(tmp_path / "absent.json"))
    with pytest.raises(ConfigError, match=r"absent\.json"):
        decide(signals(votes=READER_SAYS_YES), policy)
    bad = tmp_path / "p.toml"
    bad.write_text("label_model = 3\n")
    with pytest.raises(ConfigError, match="expected text"):
        load_policy(bad)


def test_rules_alone_by_policy_file_and_for_runs_recorded_before_the_model(
    tmp_path: Path,
) -> None:
    from auditor.config import AuditConfig

    assert LabelPolicy().label_model == "default"
    policy_file = tmp_path / "rules.toml"
    policy_file.write_text('label_model = "rules"\n')
    assert load_policy(policy_file).label_model is None
    recorded = AuditConfig().to_dict()
    assert recorded["policy"]["label_model"] == "default"
    del recorded["policy"]["label_model"]  # a run recorded by an older version
    assert AuditConfig.from_dict(recorded).policy.label_model is None


def test_another_panels_votes_are_left_to_the_rules(tmp_path: Path) -> None:
    x, y = _toy()
    path = tmp_path / "m.json"
    fit_label_model(x, y).save(path)
    policy = LabelPolicy(label_model=str(path))
    own_panel = signals(votes=(Vote("keyword", 1.0),), p_current=0.9)
    label, reason = decide(own_panel, policy)
    assert (label, reason.split(" [")[0]) == decide_label(own_panel, policy)
    assert "reads the default panel" in reason
