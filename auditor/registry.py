"""Named factories (judges, extractors): register by name, build from configuration.

Built-in factories are registered lazily, on the first look-up, so importing a
package never loads a model or a client.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Generic, TypeVar

from auditor.errors import ConfigError

T = TypeVar("T")


class Registry(Generic[T]):
    """Factories of one kind of component, by name."""

    def __init__(self, kind: str, load_builtins: Callable[[], None]) -> None:
        self.kind = kind
        self._load_builtins = load_builtins
        self._loaded = False
        self._factories: dict[str, Callable[..., T]] = {}

    def register(self, name: str) -> Callable[[Callable[..., T]], Callable[..., T]]:
        """Decorator registering a factory (a class or a function) under ``name``."""

        def decorator(factory: Callable[..., T]) -> Callable[..., T]:
            if name in self._factories and self._factories[name] is not factory:
                raise ValueError(f"{self.kind} {name!r} is already registered")
            self._factories[name] = factory
            return factory

        return decorator

    def _ensure_builtins(self) -> None:
        if not self._loaded:
            self._loaded = True
            self._load_builtins()

    def names(self) -> list[str]:
        """Every registered name, sorted."""
        self._ensure_builtins()
        return sorted(self._factories)

    def build(self, name: str, params: Mapping[str, Any] | None = None) -> T:
        """Create a component by name; :class:`ConfigError` for an unknown name or bad
        parameters."""
        self._ensure_builtins()
        if not isinstance(name, str):
            raise ConfigError(f"name: expected str, got {type(name).__name__}")
        try:
            factory = self._factories[name]
        except KeyError:
            known = ", ".join(sorted(self._factories))
            raise ConfigError(f"unknown {self.kind} {name!r}; registered {self.kind}s: "
                              f"{known}") from None
        try:
            return factory(**dict(params or {}))
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"{self.kind} {name!r}: bad parameters: {exc}") from None
