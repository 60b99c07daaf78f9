"""The typed run configuration of an audit (:class:`AuditConfig`).

Every field changes what an audit produces, so the whole configuration is
recorded with each run and is part of its id: the same answers audited with
``mode="dense"`` and ``mode="hybrid"`` are two runs.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from auditor.errors import AuditorError, ConfigError
from auditor.labels import LabelPolicy

RETRIEVAL_MODES = ("dense", "lexical", "hybrid")
LOCALIZERS = ("reader", "lexical")


@dataclass(frozen=True)
class AuditConfig:
    """What an audit does, apart from its components (index, panel, stacker).

    >>> from auditor import AuditConfig
    >>> config = AuditConfig(mode="dense", k=5, as_of="2026-06-30")
    >>> config.as_of.isoformat()
    '2026-06-30T00:00:00+00:00'
    >>> AuditConfig(k=0)
    Traceback (most recent call last):
    ...
    auditor.errors.ConfigError: k: must be >= 1, got 0
    """

    mode: str = "hybrid"
    """Retrieval: ``dense`` (FAISS), ``lexical`` (BM25) or ``hybrid`` (reciprocal rank fusion)."""
    k: int = 8
    """Passages retrieved per claim before they are split into current and superseded."""
    n_current: int = 3
    """Current passages (the answer's own contexts first) the panel judges a claim against."""
    n_superseded: int = 2
    """Superseded passages the panel judges a claim against, for ``stale``."""
    as_of: datetime | None = None
    """The audit date for answers without their own ``as_of``. None: the one default date,
    today 00:00 UTC (:func:`auditor.clock.default_as_of`), filled in when an
    :class:`~auditor.Auditor` is made (a run recorded without a date keeps none)."""
    policy: LabelPolicy = field(default_factory=LabelPolicy)
    """Thresholds of the labelling rules."""
    extractor: str = "rules"
    """Registered claim extractor (``rules`` offline, ``llm`` with a served model)."""
    second_opinion_band: float = 0.0
    """Claims whose stacked probability lies within this distance of the threshold are sent
    to the second-opinion judge, when the auditor has one (0: never)."""
    localizer: str = "lexical"
    """Error spans of ``contradicted`` and ``not_supported`` claims: ``lexical`` (words no
    evidence contains) or ``reader`` (the phrase whose deletion most raises the entailment
    reader's score, combined with the lexical localiser; :mod:`auditor.spans.reader`).
    ``stale`` claims are always localised lexically. The default stays ``lexical``: on
    held-out FaithBench, WiCE and Mu-SHROOM the reader did not pay for its calls
    (docs/spans.md)."""
    reader_calls: int = 6
    """Reader calls per claim at most when ``localizer`` is ``reader``."""

    def __post_init__(self) -> None:
        if self.as_of is not None:
            from auditor.clock import parse_datetime

            object.__setattr__(self, "as_of", parse_datetime(self.as_of, field="as_of"))
        if self.mode not in RETRIEVAL_MODES:
            raise ConfigError(
                f"mode: must be one of {', '.join(RETRIEVAL_MODES)}, got {self.mode!r}"
            )
        for name in ("k", "n_current"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise ConfigError(f"{name}: must be >= 1, got {getattr(self, name)!r}")
        if not isinstance(self.n_superseded, int) or self.n_superseded < 0:
            raise ConfigError(f"n_superseded: must be >= 0, got {self.n_superseded!r}")
        if self.n_current > self.k:
            raise ConfigError(f"n_current: must be <= k ({self.k}), got {self.n_current}")
        if not 0.0 <= self.second_opinion_band < 0.5:
            raise ConfigError(
                f"second_opinion_band: must be in [0, 0.5), got {self.second_opinion_band}"
            )
        if self.localizer not in LOCALIZERS:
            raise ConfigError(
                f"localizer: must be one of {', '.join(LOCALIZERS)}, got {self.localizer!r}"
            )
        if (
            not isinstance(self.reader_calls, int)
            or isinstance(self.reader_calls, bool)
            or self.reader_calls < 1
        ):
            raise ConfigError(f"reader_calls: must be an integer >= 1, got {self.reader_calls!r}")
        if not isinstance(self.policy, LabelPolicy):
            raise ConfigError(f"policy: expected a LabelPolicy, got {type(self.policy).__name__}")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (recorded with the run and digested into its id)."""
        out = asdict(self)
        out["as_of"] = self.as_of.isoformat() if self.as_of else None
        return out

    @classmethod
    def from_dict(
        cls, data: Mapping[str, Any], *, source: str = "run configuration"
    ) -> AuditConfig:
        """The configuration recorded with a run (fields it lacks take their defaults, except
        ``localizer``: a run recorded without one predates the reader localiser and was
        localised lexically)."""
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        values.setdefault("localizer", "lexical")  # explicit: the default may change
        policy = values.get("policy")
        if isinstance(policy, Mapping):
            recorded = dict(policy)
            # a run recorded without one predates the learned decision: the rules labelled it
            recorded.setdefault("label_model", None)
            values["policy"] = policy_from_dict(recorded, source=f"{source}: policy")
        try:
            return cls(**values)
        except (TypeError, AuditorError) as exc:
            raise ConfigError(f"{source}: {exc}") from None

    def with_policy_file(self, path: str | Path) -> AuditConfig:
        """This configuration with the label policy read from a TOML file."""
        return replace(self, policy=load_policy(path))


TEXT_POLICY_FIELDS = frozenset({"label_model"})
"""Label policy fields that hold text (the others are numbers)."""
RULES_ONLY = "rules"
"""``label_model = "rules"`` in a policy file: no learned model, the rules alone."""


def load_policy(path: str | Path) -> LabelPolicy:
    """A :class:`LabelPolicy` from a TOML file of its fields (``threshold = 0.5``, ...);
    an unknown field or a value out of range is a :class:`ConfigError` naming it."""
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the label policy: {exc.strerror}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    return policy_from_dict(data, source=str(path))


def policy_from_dict(data: dict[str, Any], *, source: str) -> LabelPolicy:
    """A :class:`LabelPolicy` from a mapping of its fields, validated."""
    known = {f.name for f in fields(LabelPolicy)}
    for name, value in data.items():
        if name not in known:
            import difflib

            close = difflib.get_close_matches(name, sorted(known), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(f"{source}: field {name!r}: not a label policy field{hint}")
        if name in TEXT_POLICY_FIELDS:
            if value is not None and not isinstance(value, str):
                raise ConfigError(f"{source}: field {name!r}: expected text, got {value!r}")
        elif not isinstance(value, int | float) or isinstance(value, bool):
            raise ConfigError(f"{source}: field {name!r}: expected a number, got {value!r}")
    whole = {f.name for f in fields(LabelPolicy) if f.type in ("int", int)}
    for name in whole & data.keys():
        if not float(data[name]).is_integer():
            raise ConfigError(
                f"{source}: field {name!r}: expected a whole number, got {data[name]!r}"
            )
    if data.get("label_model") == RULES_ONLY:
        data = {**data, "label_model": None}
    try:
        values: dict[str, Any] = {
            k: v if k in TEXT_POLICY_FIELDS else int(v) if k in whole else float(v)
            for k, v in data.items()
        }
        return LabelPolicy(**values)
    except ValueError as exc:
        raise ConfigError(f"{source}: {exc}") from None
