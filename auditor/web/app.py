"""The review application: FastAPI routes, security, templates (``auditor serve``).

Pages (server-rendered with Jinja2, every value escaped): ``/`` the runs,
``/runs/{run}`` a run's report card, ``/runs/{run}/review`` its review queue,
``/runs/{run}/agreement`` judge-vs-human and reviewer-vs-reviewer agreement. The JSON
API under ``/api/`` serves the same data to scripts and to the queue's script, and
``POST /api/check`` checks one answer live (:mod:`auditor.web.checks`).

Security, because answers and evidence are untrusted text:

- autoescaping everywhere, a Content-Security-Policy that allows only this server's own
  script and style files (plots are ``data:`` images), links only to http(s) sources;
- without a token only loopback host names are answered (``127.0.0.1``, ``localhost``,
  ``[::1]``: a DNS-rebinding page cannot talk to the server);
- with a token (required by ``auditor serve`` on any other address) every request needs
  it: ``Authorization: Bearer TOKEN``, or the cookie set by opening any page once with
  ``?token=TOKEN``; otherwise 401;
- state-changing requests must be JSON (415 otherwise) and, unless they carry the token
  in the ``Authorization`` header, pass a same-origin check: an ``Origin`` (or
  ``Referer``) header naming another site gets 403 (CSRF);
- errors are one JSON (``/api/``) or HTML message naming the field; never a stack trace.
"""

from __future__ import annotations

import hmac
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup
from starlette.exceptions import HTTPException as StarletteHTTPException

from auditor.web import views
from auditor.web.checks import CheckService, check_router
from auditor.web.queue import REVIEW_LABELS, QueueFilter
from ledger import Ledger, open_ledger

log = logging.getLogger("auditor.web")

TOKEN_COOKIE = "auditor_token"
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)


def _static_dir() -> Path:
    return Path(str(resources.files("auditor.web").joinpath("static")))


def _templates() -> Environment:
    env = Environment(
        loader=PackageLoader("auditor.web", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["num"] = _num
    env.filters["ci"] = _ci
    env.filters["pct"] = lambda x: "n/a" if x is None else f"{x:.0%}"
    env.filters["short"] = lambda x, n=12: (x or "")[:n]
    env.filters["day"] = lambda x: str(x)[:10] if x else "-"
    env.filters["when"] = lambda x: str(x)[:19].replace("T", " ") if x else "-"
    env.filters["columns"] = lambda table: sorted({c for row in table.values() for c in row})
    env.filters["pretty"] = lambda x: json.dumps(x, indent=2, sort_keys=True, default=str)
    return env


def _num(x: float | None, digits: int = 3) -> str:
    if x is None or x != x:
        return "n/a"
    return f"{x:.{digits}f}"


def _ci(ci: Any) -> str:
    return f"[{ci[0]:.3f}, {ci[1]:.3f}]" if ci else ""


def _host_name(host_header: str) -> str:
    host = host_header.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _parse_bool(value: str | None, field: str) -> bool | None:
    if value is None or value == "" or value == "any":
        return None
    if value.lower() in ("true", "1", "yes"):
        return True
    if value.lower() in ("false", "0", "no"):
        return False
    raise views.WebError(422, field, f"must be true, false or empty, got {value[:40]!r}")


def _parse_int(value: str | None, field: str, default: int, lo: int, hi: int) -> int:
    if value is None or value == "":
        return default
    try:
        number = int(value)
    except ValueError:
        raise views.WebError(422, field, f"must be an integer, got {value[:40]!r}") from None
    if not lo <= number <= hi:
        raise views.WebError(422, field, f"must be between {lo} and {hi}, got {number}")
    return number


def create_app(
    db: str | Path | Ledger,
    *,
    token: str | None = None,
    allowed_hosts: frozenset[str] | None = None,
    n_boot: int = 2000,
    per_page: int = 20,
    index: str | Path | None = None,
    warm_checks: bool = False,
) -> FastAPI:
    """The review application on the ledger ``db`` (a path, a SQLAlchemy URL or an open
    :class:`~ledger.Ledger`; a path or URL is opened now, so a missing ledger fails here).

    ``token``: required on every request when set (module doc). ``allowed_hosts``: host
    names the server answers to (default: the loopback names without a token, any with
    one). ``n_boot``: bootstrap resamples of the figures; ``per_page``: queue page size.
    ``index``: the evidence index live checks (``POST /api/check``) search besides the
    answer's contexts; ``warm_checks``: load the checker's models at start-up rather than
    on the first check (:mod:`auditor.web.checks`).
    """
    ledger = db if isinstance(db, Ledger) else open_ledger(db, create=False)
    owned = not isinstance(db, Ledger)
    rows = views.ClaimRows(ledger)
    hosts = allowed_hosts if allowed_hosts is not None else (None if token else LOOPBACK_HOSTS)
    env = _templates()
    checks = CheckService(ledger, index=index)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        if warm_checks:
            await checks.warm()
        yield
        await checks.close()  # every check queued for the ledger is written first
        if owned:
            ledger.close()

    app = FastAPI(
        title="rag-auditor review",
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
        lifespan=lifespan,
    )
    app.state.ledger = ledger
    app.state.claim_rows = rows
    app.include_router(check_router(checks))
    app.mount("/static", StaticFiles(directory=_static_dir()), name="static")

    def page(name: str, request: Request, status: int = 200, **context: Any) -> HTMLResponse:
        html = env.get_template(name).render(
            request=request, review_labels=REVIEW_LABELS, **context
        )
        return HTMLResponse(html, status_code=status)

    def error_response(request: Request, status: int, field: str | None, message: str) -> Response:
        if request.url.path.startswith("/api/"):
            return JSONResponse(
                views.WebError(status, field, message).to_dict(), status_code=status
            )
        return page(
            "error.html", request, status=status, status_code=status, field=field, message=message
        )

    # ------------------------------------------------------------------ security
    @app.middleware("http")
    async def security(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        response = await _guard(request, call_next)
        response.headers["Content-Security-Policy"] = CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["X-Frame-Options"] = "DENY"
        response.headers["Referrer-Policy"] = "same-origin"
        response.headers.setdefault("Cache-Control", "no-store")
        return response

    async def _guard(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        host_header = request.headers.get("host", "")
        if hosts is not None and _host_name(host_header) not in hosts:
            return error_response(
                request,
                400,
                "host",
                "this server answers only to "
                f"{', '.join(sorted(hosts))} (start it with --host and "
                "--token-env to serve other names)",
            )
        via = None
        if token is not None:
            auth = request.headers.get("authorization", "")
            cookie = request.cookies.get(TOKEN_COOKIE, "")
            if auth[:7].lower() == "bearer " and hmac.compare_digest(
                auth[7:].strip().encode(), token.encode()
            ):
                via = "header"
            elif cookie and hmac.compare_digest(cookie.encode(), token.encode()):
                via = "cookie"
            else:
                given = request.query_params.get("token", "")
                if (
                    request.method in ("GET", "HEAD")
                    and given
                    and hmac.compare_digest(given.encode(), token.encode())
                ):
                    rest = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
                    target = request.url.path + (f"?{urlencode(rest)}" if rest else "")
                    redirect = RedirectResponse(target, status_code=303)
                    redirect.set_cookie(
                        TOKEN_COOKIE, token, httponly=True, samesite="strict", path="/"
                    )
                    return redirect
                response = error_response(
                    request,
                    401,
                    "token",
                    "this server needs its token: an "
                    "'Authorization: Bearer TOKEN' header, or open any page once with "
                    "?token=TOKEN",
                )
                response.headers["WWW-Authenticate"] = "Bearer"
                return response
        if request.method in UNSAFE_METHODS and via != "header":
            own = f"{request.url.scheme}://{host_header}".lower()
            origin = request.headers.get("origin")
            referer = request.headers.get("referer")
            if origin is not None:
                claimed = origin.strip().lower()
            elif referer:
                parts = urlsplit(referer)
                claimed = f"{parts.scheme}://{parts.netloc}".lower()
            else:
                claimed = None  # not a browser: cross-site forms cannot send JSON
            if claimed is not None and claimed != own:
                return error_response(
                    request,
                    403,
                    "origin",
                    f"cross-site request refused ({claimed[:80]} is not this server's origin)",
                )
        return await call_next(request)

    # ------------------------------------------------------------------ errors
    @app.exception_handler(views.WebError)
    async def web_error(request: Request, exc: views.WebError) -> Response:
        return error_response(request, exc.status, exc.field, exc.message)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        message = {404: "not found", 405: "method not allowed"}.get(
            exc.status_code, "request refused"
        )
        return error_response(request, exc.status_code, None, message)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> Response:
        first = exc.errors()[0] if exc.errors() else {}
        loc = [str(x) for x in first.get("loc", ()) if x not in ("query", "path", "body")]
        return error_response(
            request, 422, loc[-1] if loc else None, str(first.get("msg", "invalid request"))
        )

    @app.exception_handler(Exception)
    async def crashed(request: Request, exc: Exception) -> Response:
        log.error("internal error on %s %s", request.method, request.url.path, exc_info=exc)
        return error_response(request, 500, None, "internal error (see the server's log)")

    # ------------------------------------------------------------------ API
    @app.get("/api/runs")
    def api_runs() -> Any:
        """Every run, newest first, with its figures and review progress."""
        return JSONResponse(views.jsonable(views.run_summaries(ledger, n_boot=n_boot)))

    @app.get("/api/runs/{run}")
    def api_run(run: str) -> Any:
        info = views.resolve_run(ledger, run)
        return JSONResponse(
            views.jsonable(
                next(
                    s
                    for s in views.run_summaries(ledger, n_boot=n_boot)
                    if s["run_id"] == info.run_id
                )
            )
        )

    @app.get("/api/runs/{run}/claims")
    def api_claims(
        run: str,
        flagged: bool | None = None,
        reviewed: bool | None = None,
        label: list[str] = Query(default=[]),
        offset: int = Query(default=0, ge=0),
        limit: int = Query(default=100, ge=1, le=1000),
    ) -> Any:
        info = views.resolve_run(ledger, run)
        which = QueueFilter(labels=frozenset(label), flagged=flagged, reviewed=reviewed)
        claims, total = views.claims_list(
            ledger, info, which, offset=offset, limit=limit, rows=rows
        )
        return JSONResponse(views.jsonable(claims), headers={"X-Total-Count": str(total)})

    @app.get("/api/runs/{run}/claims/{claim}")
    def api_claim(run: str, claim: str) -> Any:
        info = views.resolve_run(ledger, run)
        return JSONResponse(views.jsonable(views.claim_detail(ledger, info, claim, rows=rows)))

    @app.get("/api/runs/{run}/claims/{claim}/audits")
    def api_claim_audits(run: str, claim: str) -> Any:
        info = views.resolve_run(ledger, run)
        detail = views.claim_detail(ledger, info, claim, rows=rows)
        return JSONResponse(views.jsonable(detail["audits"]))

    @app.post("/api/runs/{run}/claims/{claim}/audits")
    async def api_add_audit(run: str, claim: str, request: Request) -> Any:
        content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type != "application/json":
            raise views.WebError(415, "body", "must be JSON (Content-Type: application/json)")
        raw = await request.body()
        try:
            payload = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            raise views.WebError(400, "body", "is not valid JSON") from None
        from starlette.concurrency import run_in_threadpool

        def write() -> tuple[bool, dict[str, Any]]:
            info = views.resolve_run(ledger, run)
            return views.add_review(ledger, info, claim, payload)

        added, audit = await run_in_threadpool(write)
        return JSONResponse(
            {**views.jsonable(audit), "added": added}, status_code=201 if added else 200
        )

    @app.get("/api/runs/{run}/agreement")
    def api_agreement(run: str) -> Any:
        info = views.resolve_run(ledger, run)
        return JSONResponse(views.agreement_json(views.agreement(ledger, info, n_boot=n_boot)))

    # ------------------------------------------------------------------ pages
    @app.get("/report.css")
    def report_css() -> Response:
        from auditor.report.html import report_css as css

        # the standalone file's body rules, scoped to the report's article on this page
        return Response(css().replace("body{", ".report{"), media_type="text/css")

    @app.get("/", response_class=HTMLResponse)
    def runs_page(request: Request) -> Any:
        summaries = views.run_summaries(ledger, n_boot=n_boot)
        points = views.support_points(summaries)
        plot = None
        if points:
            from auditor.report.html import history_plot

            plot = Markup(
                history_plot(
                    points, "", title="Support precision across audit runs (95% intervals)"
                )
            )
        return page("runs.html", request, runs=summaries, plot=plot, n_boot=n_boot)

    @app.get("/runs/{run}", response_class=HTMLResponse)
    def run_page(request: Request, run: str) -> Any:
        from auditor.report.full import build_full_report
        from auditor.report.html import report_body

        info = views.resolve_run(ledger, run)
        report = build_full_report(ledger, info.run_id, n_boot=n_boot)
        return page(
            "run.html",
            request,
            run=info,
            section="card",
            body=Markup(report_body(report, review_base="")),
        )

    @app.get("/runs/{run}/review", response_class=HTMLResponse)
    def queue_page(request: Request, run: str) -> Any:
        q = request.query_params
        info = views.resolve_run(ledger, run)
        which = QueueFilter(
            labels=frozenset(x for x in q.getlist("label") if x),
            flagged=_parse_bool(q.get("flagged"), "flagged"),
            reviewed=_parse_bool(q.get("reviewed"), "reviewed"),
        )
        size = _parse_int(q.get("per_page"), "per_page", per_page, 1, 100_000)
        number = _parse_int(q.get("page"), "page", 1, 1, 10**9)
        data = views.queue_page(
            ledger, info, which, page=number, per_page=size, focus=q.get("claim") or None, rows=rows
        )

        def link(number: int) -> str:
            f = data["filter"]
            params: list[tuple[str, str]] = [("label", x) for x in sorted(f.labels)]
            for name, value in (("flagged", f.flagged), ("reviewed", f.reviewed)):
                if value is not None:
                    params.append((name, "true" if value else "false"))
            if size != per_page:
                params.append(("per_page", str(size)))
            params.append(("page", str(number)))
            return f"/runs/{info.run_id}/review?{urlencode(params)}"

        return page("queue.html", request, section="review", link=link, **data)

    @app.get("/runs/{run}/agreement", response_class=HTMLResponse)
    def agreement_page(request: Request, run: str) -> Any:
        info = views.resolve_run(ledger, run)
        data = views.agreement(ledger, info, n_boot=n_boot)
        return page("agreement.html", request, run=info, section="agreement", **data)

    return app
