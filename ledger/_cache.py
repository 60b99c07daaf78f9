"""The LLM response cache kept in the ledger."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import select

from ledger import models as m
from ledger._engine import LedgerCore, _now, _plain, _table


class ResponseCacheRepository(LedgerCore):
    """Hands out the ledger's LLM response cache."""

    def response_cache(self) -> LedgerResponseCache:
        """The LLM response cache kept in this ledger (``get``/``put`` by key)."""
        return LedgerResponseCache(self)


class LedgerResponseCache:
    """LLM responses keyed on model, prompt digest, parameters and input digest."""

    def __init__(self, ledger: LedgerCore) -> None:
        self.ledger = ledger

    def get(self, key: str) -> str | None:
        table = _table(m.LlmCacheRow)
        with self.ledger.engine.connect() as conn:
            value = conn.execute(select(table.c.response).where(table.c.key == key)).scalar()
        return None if value is None else str(value)

    def put(self, key: str, value: str, meta: Mapping[str, Any]) -> None:
        def write() -> None:
            with self.ledger._tx() as conn:
                self.ledger._insert_ignore(
                    conn,
                    m.LlmCacheRow,
                    [
                        {
                            "key": key,
                            "model": str(meta.get("model", "")),
                            "response": value,
                            "meta": _plain(dict(meta)),
                            "created_at": _now(),
                        }
                    ],
                )

        self.ledger._with_retries(write)
