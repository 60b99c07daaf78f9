"""Registry of extractor factories: ``build_extractor("rules")``, ``build_extractor("llm")``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from auditor.extract.base import Extractor
from auditor.registry import Registry

ExtractorFactory = Callable[..., Extractor]


def _load_builtin() -> None:
    from auditor.extract.llm import LLMExtractor
    from auditor.extract.rules import RuleExtractor, SentenceExtractor

    register_extractor("rules")(RuleExtractor)
    register_extractor("sentences")(SentenceExtractor)
    register_extractor("llm")(LLMExtractor)


_EXTRACTORS: Registry[Extractor] = Registry("extractor", _load_builtin)


def register_extractor(name: str) -> Callable[[ExtractorFactory], ExtractorFactory]:
    """Decorator registering an extractor factory (a class or function) under ``name``."""
    return _EXTRACTORS.register(name)


def registered_extractors() -> list[str]:
    """Names of every registered extractor."""
    return _EXTRACTORS.names()


def build_extractor(name: str, params: Mapping[str, Any] | None = None, **kwargs: Any) -> Extractor:
    """Create an extractor by registered name; parameters as a mapping and/or keywords.

    Raises :class:`ConfigError` for an unknown name or bad parameters.
    """
    return _EXTRACTORS.build(name, {**dict(params or {}), **kwargs})
