"""The catalogue of judges: the built-in ones, the registry, and :func:`build_judge`.

A panel file names its members by registered name (``"numeric_consistency"``), by
``"package.module:Class"`` (a judge of another package, nothing to register), or by
the name of an entry point in the :data:`JUDGE_ENTRY_POINTS` group. The built-in judges
are listed in :func:`_load_builtin_judges`, one module each under ``auditor/judges/``,
registered under their ``name`` on the first look-up (so importing this module loads
no model and no client). The judge modules import :mod:`auditor.judges.base`, never
this module.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from auditor.judges.base import Judge
from auditor.registry import Registry

JudgeFactory = Callable[..., Judge]

JUDGE_ENTRY_POINTS = "rag_auditor.judges"
"""The entry-point group where other packages register judges (``name = "module:Class"``)."""


def _load_builtin_judges() -> None:
    """Register every built-in judge under the name panel files use (its ``name``; the
    ``llm`` judge takes its member name as a parameter)."""
    from auditor.judges.bigram_overlap import BigramOverlapJudge
    from auditor.judges.bm25_alignment import BM25AlignmentJudge
    from auditor.judges.content_overlap import ContentOverlapJudge
    from auditor.judges.embedding_similarity import EmbeddingSimilarityJudge
    from auditor.judges.entailment import EntailmentJudge
    from auditor.judges.entity_consistency import EntityConsistencyJudge
    from auditor.judges.factcg import FactCGJudge
    from auditor.judges.hf_classifier import HFClassifierJudge
    from auditor.judges.hhem import HHEMJudge
    from auditor.judges.lettucedetect import LettuceDetectJudge
    from auditor.judges.llm import LLMJudge
    from auditor.judges.minicheck import MiniCheckJudge
    from auditor.judges.negation_polarity import NegationPolarityJudge
    from auditor.judges.numeric_consistency import NumericConsistencyJudge

    builtin: dict[str, JudgeFactory] = {
        "content_overlap": ContentOverlapJudge,
        "embedding_similarity": EmbeddingSimilarityJudge,
        "numeric_consistency": NumericConsistencyJudge,
        "negation_polarity": NegationPolarityJudge,
        "entity_consistency": EntityConsistencyJudge,
        "bm25_alignment": BM25AlignmentJudge,
        "bigram_overlap": BigramOverlapJudge,
        "entailment": EntailmentJudge,
        "llm": LLMJudge,
        # checkpoint judges (docs/checkpoint-judges.md): torch and transformers load on use
        "hf_classifier": HFClassifierJudge,
        "minicheck": MiniCheckJudge,
        "hhem": HHEMJudge,
        "factcg": FactCGJudge,
        "lettucedetect": LettuceDetectJudge,
    }
    for name, judge in builtin.items():
        _JUDGES.register(name)(judge)


_JUDGES: Registry[Judge] = Registry(
    "judge", _load_builtin_judges, entry_points=JUDGE_ENTRY_POINTS, base=Judge
)
"""judges."""


def register_judge(name: str) -> Callable[[JudgeFactory], JudgeFactory]:
    """Decorator registering a judge factory (a class or function) under ``name``."""
    return _JUDGES.register(name)


def registered_judges() -> list[str]:
    """Names of every registered judge."""
    return _JUDGES.names()


def build_judge(name: str, params: Mapping[str, Any] | None = None) -> Judge:
    """Create a judge by registered name (or ``"package.module:Class"``, a judge defined
    in another package) with keyword parameters."""
    return _JUDGES.build(name, params)
