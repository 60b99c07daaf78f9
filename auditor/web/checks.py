"""``POST /api/check``: a live check of one answer on the server (:mod:`auditor.checker`).

The :class:`~auditor.checker.Checker` is built on the first check (or at start-up with
``warm=True``) on the application's ledger, and kept. Checks run one at a time (the
models use the process's threads); up to :data:`MAX_WAITING` more wait their turn in
arrival order, and a request beyond that is refused at once with 503 and
``Retry-After: 1``. Checks sent with ``record: true`` are written to the ledger by the
checker's background thread; :meth:`CheckService.close` (the application's shutdown)
writes every one still queued.
"""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from auditor.errors import InputError
from auditor.web.views import WebError
from ledger import Ledger

if TYPE_CHECKING:
    from auditor.checker import Checker

MAX_WAITING = 32
"""Checks that may wait for the running one; more are refused with 503."""
RETRY_AFTER_S = 1


class CheckService:
    """The server's checker (built once, on ``ledger``, searching ``index`` when given)
    and the bound on waiting checks."""

    def __init__(self, ledger: Ledger, *, index: str | Path | None = None) -> None:
        self.ledger = ledger
        self.index = index
        self._checker: Checker | None = None
        self._build = threading.Lock()
        self._turn = asyncio.Lock()
        self._waiting = 0

    def checker(self) -> Checker:
        """The checker, built on first use (loads the models)."""
        with self._build:
            if self._checker is None:
                from auditor.checker import Checker

                self._checker = Checker(self.index, self.ledger)
            return self._checker

    async def warm(self) -> None:
        """Build the checker and load every model now (in a worker thread: the panel
        runs its own event loop)."""
        checker = await run_in_threadpool(self.checker)
        await run_in_threadpool(checker.warm)

    async def close(self) -> None:
        """Write every queued record, then stop the checker (the ledger stays open)."""

        def stop() -> None:
            with self._build:
                if self._checker is not None:
                    self._checker.close()

        await run_in_threadpool(stop)

    async def respond(self, request: Request) -> JSONResponse:
        """Check the answer in ``request`` (JSON), or refuse it (415, 400, 422, 503)."""
        content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type != "application/json":
            raise WebError(415, "body", "must be JSON (Content-Type: application/json)")
        try:
            payload = json.loads(await request.body())
        except (ValueError, UnicodeDecodeError):
            raise WebError(400, "body", "is not valid JSON") from None
        from auditor.checker import check_request

        try:
            asked = check_request(payload)
        except InputError as exc:
            raise WebError(422, exc.field, str(exc)) from None
        if self._waiting >= MAX_WAITING + 1:
            error = WebError(503, None, "too many checks waiting; retry shortly")
            return JSONResponse(
                error.to_dict(), status_code=503, headers={"Retry-After": str(RETRY_AFTER_S)}
            )
        self._waiting += 1
        try:
            async with self._turn:
                checker = await run_in_threadpool(self.checker)
                result = await run_in_threadpool(
                    checker.check,
                    asked.answer,
                    asked.contexts,
                    question=asked.question,
                    as_of=asked.as_of,
                    record=asked.record,
                )
        except InputError as exc:
            raise WebError(422, exc.field, str(exc)) from None
        finally:
            self._waiting -= 1
        return JSONResponse(result.to_dict())


def check_router(service: CheckService) -> APIRouter:
    """The ``/api/check`` route over ``service``."""
    router = APIRouter()

    @router.post("/api/check")
    async def api_check(request: Request) -> Any:
        """Label one answer's claims against its contexts (module doc)."""
        return await service.respond(request)

    return router
