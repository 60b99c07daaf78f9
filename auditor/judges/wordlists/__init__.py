"""The judges' word lists: one text file per rule group beside this module, read here.

Each ``<group>.txt`` holds one entry per line (a word or a phrase), ``#`` starting a
comment (a whole line, or after a space), blank lines ignored. An entry may carry a
value after `` = `` (``twenty = 20``, ``hrs = hour``); a line ``[name]`` starts a section
(``number_words``: numbers, tens, multipliers). A *pattern* list (its header says so)
holds regular-expression alternatives, one per line, exactly as the pattern they are
joined into reads them (:func:`one_of`); every other list holds literal words. The
judges and the text toolkit they share (:mod:`auditor.text`; this module imports nothing
of the project, so the toolkit may import it) read the lists only through :func:`words`,
:func:`entries`, :func:`mapping`, :func:`pairs`, :func:`sections` and :func:`one_of` (or
through values built from them by a function wrapped in :func:`derived`), so that
:func:`ablated` reaches every use of a group.

Ablation is for measurement only (``bench/ablate_rule_groups.py``): under
``with ablated("antonyms"):`` every accessor returns an empty list for that group, each
:func:`derived` value is rebuilt for that state, and a regular expression built from
the group matches nothing (:data:`NEVER`, :func:`alternation`). The caches of text
functions whose results depend on a list (registered with :func:`cleared_on_ablation`)
are emptied on entering and leaving. Outside ``ablated`` nothing changes: the files are
read once per process and every derived value is built once.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from types import MappingProxyType
from typing import TypeVar

T = TypeVar("T")

NEVER = re.compile(r"(?!)")
"""A pattern that matches nothing: what a regular expression of an ablated group is."""

_ABLATED: frozenset[str] = frozenset()
_CLEARS: list[Callable[[], None]] = []


@dataclass(frozen=True)
class _Group:
    sections: Mapping[str, tuple[tuple[str, str | None], ...]]
    """Per section (``""`` before the first ``[name]``), the entries in file order with
    their values (None for an entry without ``= value``)."""


def _parse(text: str, group: str) -> _Group:
    sections: dict[str, list[tuple[str, str | None]]] = {"": []}
    current = ""
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split(" #", 1)[0].strip() if not raw.lstrip().startswith("#") else ""
        if not line:
            continue
        if line.startswith("[") and line.endswith("]"):
            current = line[1:-1].strip()
            if not current or current in sections:
                raise ValueError(f"{group}.txt:{number}: empty or repeated section {line}")
            sections[current] = []
            continue
        key, sep, value = line.partition(" = ")
        key = key.strip()
        if not key:
            raise ValueError(f"{group}.txt:{number}: an entry without a word: {raw!r}")
        sections[current].append((key, value.strip() if sep else None))
    return _Group(MappingProxyType({k: tuple(v) for k, v in sections.items()}))


def _folder() -> Traversable:
    return resources.files(__name__)


@functools.cache
def groups() -> tuple[str, ...]:
    """The names of every group, sorted (one ``<group>.txt`` file each)."""
    return tuple(
        sorted(p.name[: -len(".txt")] for p in _folder().iterdir() if p.name.endswith(".txt"))
    )


@functools.cache
def _load(group: str) -> _Group:
    if group not in groups():
        raise KeyError(f"no word list {group!r}; known: {', '.join(groups())}")
    return _parse(_folder().joinpath(f"{group}.txt").read_text(encoding="utf-8"), group)


def _rows(group: str, section: str) -> tuple[tuple[str, str | None], ...]:
    loaded = _load(group)  # an unknown group is an error, ablated or not
    if group in _ABLATED:
        return ()
    try:
        return loaded.sections[section]
    except KeyError:
        raise KeyError(f"word list {group!r} has no section [{section}]") from None


@functools.cache
def _words(group: str) -> frozenset[str]:
    return frozenset(k for rows in _load(group).sections.values() for k, _ in rows)


def words(group: str) -> frozenset[str]:
    """Every entry of ``group`` (all its sections); empty while the group is ablated."""
    return frozenset() if group in _ABLATED else _words(group)


def entries(group: str, section: str = "") -> tuple[str, ...]:
    """The entries of one section of ``group`` in file order (without their values)."""
    return tuple(k for k, _ in _rows(group, section))


def sections(group: str) -> tuple[str, ...]:
    """The ``[name]`` sections of ``group`` in file order (none while it is ablated)."""
    if group in _ABLATED:
        return ()
    return tuple(name for name in _load(group).sections if name)


def pairs(group: str, section: str = "") -> tuple[tuple[str, str], ...]:
    """The ``entry = value`` lines of one section of ``group`` in file order (an entry
    may repeat: ``north = south`` and ``north = southern``); an entry without a value is
    an error."""
    out = []
    for key, value in _rows(group, section):
        if value is None:
            raise ValueError(f"word list {group!r}: {key!r} has no '= value'")
        out.append((key, value))
    return tuple(out)


def mapping(group: str, section: str = "") -> dict[str, str]:
    """:func:`pairs` as a dict (a repeated entry: the last value)."""
    return dict(pairs(group, section))


def alternation(phrases: Iterable[str], space: str = r"\s+") -> str:
    """A regular-expression group matching any of ``phrases`` literally, in the order
    given (a space in a phrase matching ``space``); ``(?!)``, which matches nothing,
    when there is none, so that a pattern built from an ablated group never matches."""
    parts = [space.join(re.escape(w) for w in p.split(" ")) for p in phrases]
    return "(?:" + "|".join(parts) + ")" if parts else "(?!)"


def one_of(group: str, section: str = "") -> str:
    """The entries of a section of a *pattern* list (each line a regular-expression
    alternative, as its file's header says) joined into one group ``(?:a|b|c)``, in file
    order; ``(?!)``, which matches nothing, when the group is ablated."""
    found = entries(group, section)
    return "(?:" + "|".join(found) + ")" if found else "(?!)"


def state() -> frozenset[str]:
    """The groups ablated now (empty outside :func:`ablated`)."""
    return _ABLATED


def derived(build: Callable[[], T]) -> Callable[[], T]:
    """``build`` (a function of no argument that reads word lists) called once per
    ablation state: a set, table or compiled pattern built from the lists, as cheap to
    get again as a dictionary look-up."""
    built: dict[frozenset[str], T] = {}

    @functools.wraps(build)
    def get() -> T:
        try:
            return built[_ABLATED]
        except KeyError:
            value = built[_ABLATED] = build()
            return value

    return get


F = TypeVar("F", bound=Callable[..., object])


def cleared_on_ablation(cached: F) -> F:
    """Register a ``functools.lru_cache`` function whose results depend on word lists:
    :func:`ablated` empties its cache on entering and leaving."""
    clear = getattr(cached, "cache_clear", None)
    if clear is None:
        raise TypeError(f"{cached!r} has no cache_clear (wrap an lru_cache function)")
    _CLEARS.append(clear)
    return cached


def _set_state(ablated_now: frozenset[str]) -> None:
    global _ABLATED
    _ABLATED = ablated_now
    for clear in _CLEARS:
        clear()


@contextmanager
def ablated(*names: str) -> Iterator[frozenset[str]]:
    """Within the block, the named groups are empty (for measuring what each is worth;
    never in an audit). Nests: an inner block adds its groups to the outer one's."""
    for name in names:
        _load(name)  # a typo is an error, not a silent no-op
    before = _ABLATED
    _set_state(before | frozenset(names))
    try:
        yield _ABLATED
    finally:
        _set_state(before)


def digest() -> str:
    """sha256 of every list file and of the ablation state: what a cache of judge
    outputs keyed on the judges' code must also be keyed on."""
    h = hashlib.sha256()
    for name in groups():
        h.update(name.encode() + b"\0")
        h.update(_folder().joinpath(f"{name}.txt").read_bytes())
    h.update(("ablated:" + ",".join(sorted(_ABLATED))).encode())
    return h.hexdigest()


__all__ = [
    "NEVER",
    "ablated",
    "alternation",
    "cleared_on_ablation",
    "derived",
    "digest",
    "entries",
    "groups",
    "mapping",
    "one_of",
    "pairs",
    "sections",
    "state",
    "words",
]
