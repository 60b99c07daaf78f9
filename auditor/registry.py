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

    def __init__(
        self,
        kind: str,
        load_builtins: Callable[[], None],
        *,
        entry_points: str | None = None,
        base: type | None = None,
    ) -> None:
        self.kind = kind
        self._load_builtins = load_builtins
        self._group = entry_points
        self._base = base
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
            if self._group is not None:
                from importlib.metadata import entry_points

                for ep in entry_points(group=self._group):
                    if ep.name not in self._factories:
                        self._factories[ep.name] = _Lazy(ep.value, self)

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
        if ":" in name and name not in self._factories:
            factory = self._import(name)
            return self._call(name, factory, params)
        try:
            factory = self._factories[name]
        except KeyError:
            known = ", ".join(sorted(self._factories))
            raise ConfigError(
                f"unknown {self.kind} {name!r}; registered {self.kind}s: {known}"
            ) from None
        return self._call(name, factory, params)

    def _call(self, name: str, factory: Callable[..., T], params: Mapping[str, Any] | None) -> T:
        try:
            built = factory(**dict(params or {}))
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"{self.kind} {name!r}: bad parameters: {exc}") from None
        if self._base is not None and not isinstance(built, self._base):
            raise ConfigError(
                f"{self.kind} {name!r}: the factory made a "
                f"{type(built).__name__}, not a {self._base.__name__}"
            )
        return built

    def _import(self, spec: str) -> Callable[..., T]:
        """The factory named by ``"package.module:attribute"``."""
        import importlib

        module_name, _, attr = spec.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise ConfigError(
                f"{self.kind} {spec!r}: cannot import {module_name!r}: {exc}"
            ) from None
        factory = getattr(module, attr, None)
        if not callable(factory):
            raise ConfigError(f"{self.kind} {spec!r}: {module_name!r} has no factory {attr!r}")
        return factory


class _Lazy(Generic[T]):
    """A factory registered by entry point: imported on first use."""

    def __init__(self, spec: str, registry: Registry[T]) -> None:
        self.spec, self.registry = spec, registry

    def __call__(self, **params: Any) -> T:
        return self.registry._import(self.spec)(**params)
