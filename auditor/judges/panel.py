"""A judge panel: named members built from a TOML config whose digest is recorded."""

from __future__ import annotations

import asyncio
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from auditor.digest import content_digest, sha256_bytes
from auditor.errors import ConfigError
from auditor.judges.base import Judge
from auditor.judges.catalog import build_judge
from auditor.types import Component, JudgePair, Vote

DEFAULT_PANEL = "panel.toml"


@dataclass(frozen=True)
class Panel:
    """An ordered set of judges; the order fixes the stacker's feature columns."""

    name: str
    members: tuple[Judge, ...]
    config_digest: str

    @property
    def member_names(self) -> tuple[str, ...]:
        return tuple(member.name for member in self.members)

    @property
    def digest(self) -> str:
        """Digest over the members' digests (order matters)."""
        return content_digest({"name": self.name, "members": [m.digest for m in self.members]})

    def component(self) -> Component:
        return Component(
            kind="panel",
            name=self.name,
            version=self.digest[:12],
            digest=self.digest,
            config={"members": list(self.member_names), "config_digest": self.config_digest},
        )

    async def judge(
        self,
        pairs: Sequence[JudgePair],
        known: Sequence[Mapping[str, Vote]] | None = None,
    ) -> list[list[Vote]]:
        """Votes per pair, one per member in member order; members run concurrently.

        ``known`` (one mapping per pair, judge digest -> vote) holds votes already cast on
        a pair by a judge of that digest (a re-judge of stored evidence): a member judges
        only the pairs it has no known vote for, and the known ones are returned as they
        are."""
        if known is not None and len(known) != len(pairs):
            raise ValueError(f"known: expected {len(pairs)} mappings, got {len(known)}")
        per_member = await asyncio.gather(
            *(self._member_votes(member, pairs, known) for member in self.members)
        )
        return [list(row) for row in zip(*per_member, strict=True)] if pairs else []

    @staticmethod
    async def _member_votes(
        member: Judge, pairs: Sequence[JudgePair], known: Sequence[Mapping[str, Vote]] | None
    ) -> list[Vote]:
        digest = member.digest
        todo = [i for i in range(len(pairs)) if known is None or digest not in known[i]]
        fresh = await member.judge([pairs[i] for i in todo]) if todo else []
        if len(fresh) != len(todo):
            raise RuntimeError(
                f"judge {member.name!r} returned {len(fresh)} votes for {len(todo)} pairs"
            )
        if known is None:
            return list(fresh)
        votes = [known[i].get(digest) for i in range(len(pairs))]
        for i, vote in zip(todo, fresh, strict=True):
            votes[i] = vote
        return [v for v in votes if v is not None]

    def judge_sync(
        self, pairs: Sequence[JudgePair], known: Sequence[Mapping[str, Vote]] | None = None
    ) -> list[list[Vote]]:
        """Blocking wrapper around :meth:`judge`."""
        return asyncio.run(self.judge(pairs, known))


def panel_from_config(config: dict[str, Any], *, source: str, digest: str) -> Panel:
    """Build a panel from a parsed config: ``name`` and a ``[[judges]]`` array of tables
    with ``name`` and optional ``params``."""
    judges = config.get("judges")
    if not isinstance(judges, list) or not judges:
        raise ConfigError(f"{source}: field 'judges': expected a non-empty array of tables")
    members = []
    for i, entry in enumerate(judges):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise ConfigError(f"{source}: judges[{i}]: field 'name': expected a string")
        params = entry.get("params", {})
        if not isinstance(params, dict):
            raise ConfigError(f"{source}: judges[{i}]: field 'params': expected a table")
        try:
            members.append(build_judge(entry["name"], params))
        except ConfigError as exc:
            raise ConfigError(f"{source}: judges[{i}]: {exc}") from None
    names = [m.name for m in members]
    if len(set(names)) != len(names):
        raise ConfigError(f"{source}: field 'judges': member names must be unique: {names}")
    return Panel(
        name=str(config.get("name", Path(source).stem)),
        members=tuple(members),
        config_digest=digest,
    )


def load_panel(path: str | Path | None = None) -> Panel:
    """Load a panel from a TOML file; ``None`` loads the default offline panel."""
    if path is None:
        data = resources.files("auditor.samples").joinpath(DEFAULT_PANEL).read_bytes()
        source = f"auditor/samples/{DEFAULT_PANEL}"
    else:
        try:
            data = Path(path).read_bytes()
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read panel config: {exc.strerror}") from None
        source = str(path)
    try:
        config = tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{source}: not valid TOML: {exc}") from None
    return panel_from_config(config, source=source, digest=sha256_bytes(data))
