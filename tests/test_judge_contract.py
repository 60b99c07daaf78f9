"""One conformance suite run over every registered judge (as scikit-learn checks every
estimator): votes in {0, 0.5, 1}, a failure is an abstention with a reason, order
invariance, a deterministic digest derived from the judge's own parameters."""

from __future__ import annotations

import asyncio
import itertools
import tempfile
from pathlib import Path

import pytest

from auditor.errors import ConfigError
from auditor.judges.base import Judge
from auditor.judges.catalog import build_judge, registered_judges
from auditor.judges.panel import load_panel
from auditor.types import ABSTAIN, JudgePair
from tests.llm_fault_server import FaultServer
from tests.tiny_checkpoints import CHECKPOINT_JUDGES, checkpoint_for

pytestmark = pytest.mark.slow  # the embedding and entailment judges load models

PLUGIN = "tests.plugins.judges:KeywordJudge"
PAIRS = [
    JudgePair(
        "The trial enrolled 3,200 participants in 2019.",
        (
            "The trial enrolled 3,200 participants in 2019 across twelve hospitals.",
            "The weather in Paris was mild that spring.",
        ),
    ),
    JudgePair(
        "The trial enrolled 5,000 participants in 2019.",
        ("The trial enrolled 3,200 participants in 2019 across twelve hospitals.",),
    ),
    JudgePair("Marie Curie moved to Paris in 1891.", ()),
]


def _judges() -> list[str]:
    return [*registered_judges(), PLUGIN]


_CHECKPOINTS = Path(tempfile.mkdtemp(prefix="tiny-checkpoints-"))


def _build(name: str, server: FaultServer | None = None, **params: object) -> Judge:
    if name in CHECKPOINT_JUDGES:  # a tiny random-weight checkpoint of its architecture
        params.setdefault("checkpoint", str(checkpoint_for(name, _CHECKPOINTS)))
    if name == "llm":
        assert server is not None
        return build_judge(
            "llm",
            {"name": "llm", "base_url": server.base_url, "model": "m", "max_retries": 0, **params},
        )
    return build_judge(name, params)


@pytest.fixture(scope="module")
def server() -> FaultServer:
    with FaultServer(responder=lambda body: ("ok", '{"label": "supported"}')) as s:
        yield s


@pytest.mark.parametrize("name", _judges())
def test_votes_are_in_range_one_per_pair_and_abstain_without_evidence(
    name: str, server: FaultServer
) -> None:
    judge = _build(name, server)
    votes = judge.judge_sync(PAIRS)
    assert len(votes) == len(PAIRS)
    assert all(v.value in (0.0, ABSTAIN, 1.0) for v in votes)
    assert all(v.judge == judge.name for v in votes)
    no_evidence = votes[2]
    assert no_evidence.value == ABSTAIN and (no_evidence.error or no_evidence.raw)


@pytest.mark.parametrize("name", _judges())
def test_a_failure_is_an_abstention_with_a_reason(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if name == "llm":
        with FaultServer(script=[("status", 500)] * 10) as failing:
            votes = _build("llm", failing).judge_sync(PAIRS[:2])
    else:
        judge = _build(name)

        def boom(*_: object, **__: object) -> None:
            raise RuntimeError("injected failure")

        monkeypatch.setattr(judge, "score_batch", boom)
        votes = asyncio.run(judge.judge(PAIRS[:2]))
    assert len(votes) == 2
    assert all(v.value == ABSTAIN and v.error for v in votes)


@pytest.mark.parametrize("name", _judges())
def test_votes_do_not_depend_on_evidence_order(name: str, server: FaultServer) -> None:
    judge = _build(name, server)
    claim = "The trial enrolled 3,200 participants in 2019."
    evidence = (
        "The trial enrolled 3,200 participants in 2019 across twelve hospitals.",
        "A later report said the trial enrolled 5,000 participants.",
        "The weather in Paris was mild.",
    )
    rows = judge.judge_sync([JudgePair(claim, order) for order in itertools.permutations(evidence)])
    assert len({(v.value, round(v.scores.get("contradiction", 0.0), 6)) for v in rows}) == 1


@pytest.mark.parametrize("name", _judges())
def test_digest_is_deterministic_and_follows_the_parameters(name: str, server: FaultServer) -> None:
    a, b = _build(name, server), _build(name, server)
    assert a.digest == b.digest and len(a.digest) == 64
    params = a.get_params()
    assert params, "every judge declares its parameters in __init__"
    assert a.component().digest == a.digest and dict(a.component().config) == a.params
    numeric = [
        (k, v)
        for k, v in params.items()
        if isinstance(v, float | int) and not isinstance(v, bool) and v
    ]
    changed_digests = []
    for key, value in numeric:  # changing a parameter changes the digest
        try:
            changed = _build(name, server, **{key: type(value)(value * 0.5) or 1})
        except ConfigError:  # this value breaks a constraint between parameters
            continue
        assert changed.get_params()[key] != value
        changed_digests.append(changed.digest)
    assert a.digest not in changed_digests
    assert not numeric or changed_digests, "no numeric parameter could be changed"
    if name == "llm":  # operational settings are not part of the digest
        assert _build(name, server, timeout_s=5.0, max_concurrency=1).digest == a.digest


def test_plugin_judge_in_a_panel_file(tmp_path: Path) -> None:
    toml = tmp_path / "panel.toml"
    toml.write_text(
        f'name = "with-plugin"\n[[judges]]\nname = "{PLUGIN}"\nparams = {{ min_length = 4 }}\n'
    )
    panel = load_panel(toml)
    assert panel.member_names == ("keyword_plugin",)
    assert panel.members[0].get_params() == {"min_length": 4}
    toml.write_text('name = "bad"\n[[judges]]\nname = "tests.plugins.nothere:Judge"\n')
    with pytest.raises(ConfigError, match=r"cannot import 'tests\.plugins\.nothere'"):
        load_panel(toml)
    toml.write_text('name = "bad"\n[[judges]]\nname = "tests.plugins.judges:Missing"\n')
    with pytest.raises(ConfigError, match="no factory 'Missing'"):
        load_panel(toml)
    with pytest.raises(ConfigError, match="bad parameters"):
        build_judge(PLUGIN, {"min_length": 0})
    with pytest.raises(ConfigError, match="not a Judge"):
        build_judge("collections:OrderedDict")
