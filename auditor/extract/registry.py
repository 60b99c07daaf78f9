"""Registry of extractor factories: ``build_extractor("rules")``, ``build_extractor("llm")``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from auditor.errors import ConfigError
from auditor.extract.base import Extractor

ExtractorFactory = Callable[..., Extractor]
_REGISTRY: dict[str, ExtractorFactory] = {}


def register_extractor(name: str) -> Callable[[ExtractorFactory], ExtractorFactory]:
    """Decorator registering an extractor factory (a class or function) under ``name``."""

    def decorator(factory: ExtractorFactory) -> ExtractorFactory:
        if name in _REGISTRY and _REGISTRY[name] is not factory:
            raise ValueError(f"extractor {name!r} is already registered")
        _REGISTRY[name] = factory
        return factory

    return decorator


def registered_extractors() -> list[str]:
    """Names of every registered extractor."""
    _load_builtin()
    return sorted(_REGISTRY)


def build_extractor(name: str, params: Mapping[str, Any] | None = None,
                    **kwargs: Any) -> Extractor:
    """Create an extractor by registered name; parameters as a mapping and/or keywords.

    Raises :class:`ConfigError` for an unknown name or bad parameters.
    """
    _load_builtin()
    if not isinstance(name, str):
        raise ConfigError(f"name: expected str, got {type(name).__name__}")
    try:
        factory = _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY))
        raise ConfigError(f"unknown extractor {name!r}; registered extractors: {known}") from None
    merged = {**dict(params or {}), **kwargs}
    try:
        return factory(**merged)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"extractor {name!r}: bad parameters: {exc}") from None


_BUILTIN_LOADED = False


def _load_builtin() -> None:
    global _BUILTIN_LOADED
    if _BUILTIN_LOADED:
        return
    from auditor.extract.llm import LLMExtractor
    from auditor.extract.rules import RuleExtractor, SentenceExtractor

    register_extractor("rules")(RuleExtractor)
    register_extractor("sentences")(SentenceExtractor)
    register_extractor("llm")(LLMExtractor)
    _BUILTIN_LOADED = True
