"""The dashboard: a static page (HTML/JS/CSS in web/static, no build step) over the REST API.

The page authenticates with a session cookie (HttpOnly, SameSite=Strict) that the sign-in form
sets after checking the local token, which the user reads from their own 0600 key file (or
``aletheia token``).  The token never travels in a URL.
"""

from __future__ import annotations

import hmac
import html
from pathlib import Path
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from aletheia.web import security

STATIC = Path(__file__).parent / "static"
_SESSION_DAYS = 30
_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
)
_HEADERS = {
    "content-security-policy": _CSP,
    "x-content-type-options": "nosniff",
    # no-referrer would make Chromium send "Origin: null" on our own form posts.
    "referrer-policy": "same-origin",
    "cache-control": "no-store",
}


def _signed_in(request: Request, token: str | None) -> bool:
    if token is None:
        return True
    cookie = request.cookies.get(security.COOKIE, "")
    return hmac.compare_digest(cookie.encode(), security.session_value(token).encode())


def _login_page(error: str = "", status: int = 200) -> HTMLResponse:
    template = (STATIC / "login.html").read_text(encoding="utf-8")
    note = f'<p class="error" role="alert">{html.escape(error)}</p>' if error else ""
    return HTMLResponse(template.replace("<!--error-->", note), status_code=status,
                        headers=_HEADERS)


def routes(token: str | None) -> list[BaseRoute]:
    async def index(request: Request) -> Response:
        if not _signed_in(request, token):
            return _login_page()
        return FileResponse(STATIC / "index.html", headers=_HEADERS)

    async def login(request: Request) -> Response:
        if token is None:
            return RedirectResponse("/", status_code=303)
        form = parse_qs((await request.body()).decode("utf-8", "replace"))
        given = (form.get("token") or [""])[0].strip()
        if not hmac.compare_digest(given.encode(), token.encode()):
            return _login_page("That is not the token in force.", 401)
        response = RedirectResponse("/", status_code=303)
        response.set_cookie(
            security.COOKIE, security.session_value(token), max_age=_SESSION_DAYS * 86400,
            httponly=True, samesite="strict", secure=request.url.scheme == "https", path="/",
        )
        return response

    async def logout(request: Request) -> Response:
        response = RedirectResponse("/", status_code=303)
        response.delete_cookie(security.COOKIE, path="/", httponly=True, samesite="strict")
        return response

    async def favicon(request: Request) -> Response:
        # Browsers ask for /favicon.ico whatever the page links: answer it, never a 404.
        return FileResponse(STATIC / "favicon.svg", media_type="image/svg+xml",
                            headers={"cache-control": "max-age=86400"})

    return [
        Route("/", endpoint=index, methods=["GET"]),
        Route("/favicon.ico", endpoint=favicon, methods=["GET"]),
        Route("/login", endpoint=login, methods=["POST"]),
        Route("/logout", endpoint=logout, methods=["POST"]),
        Mount("/static", app=StaticFiles(directory=STATIC), name="static"),
    ]
