"""The error body every route returns (``{"detail": "..."}``), OpenAPI ``responses=`` helpers, and the
handler of request validation errors (422), whose answers are always valid JSON and never echo a
secret or a large input."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel


class ErrorOut(BaseModel):
    detail: str


_DESCRIPTIONS = {
    400: "The request body could not be parsed (not JSON, or not UTF-8).",
    401: "No valid session cookie.",
    403: "Signed in, but not allowed (a guest, or not an admin).",
    404: "Not found.",
    409: "Conflicts with the current state.",
    410: "`table_closed`: the table left memory (idle, or finished a while ago); its matches are in the history.",
    429: "Too many requests; the Retry-After header says when to try again.",
    503: "A needed component is not available.",
}


def responses(*codes: int, **descriptions: str) -> dict[int | str, dict[str, Any]]:
    """``responses=`` for a route: each code with the ``ErrorOut`` body and a description.

    Override a description with a keyword such as ``r409="name taken"``.
    """
    out: dict[int | str, dict[str, Any]] = {}
    for code in codes:
        text = descriptions.get(f"r{code}", _DESCRIPTIONS.get(code, "Error."))
        out[code] = {"model": ErrorOut, "description": text}
    return out


# --- 422: request validation errors -----------------------------------------------------------------

SECRET_FIELDS = frozenset({"password"})  # a 422 never says what was sent in these
MAX_ECHO_CHARS = 100  # longer inputs (and any list or object) are not echoed


async def request_validation_error(request: Request, exc: Exception) -> JSONResponse:
    """FastAPI's 422 body, ``{"detail": [{"loc", "msg", "type", "input"?, "ctx"?}]}``, made safe to send.

    FastAPI's own handler fails (a 500) when the input it echoes is not valid JSON (``NaN``,
    ``Infinity``, ``1e400``) or not valid Unicode (a lone surrogate), and it echoes passwords and
    whole bodies. Here ``loc``, ``msg`` and ``ctx`` are cleaned, and ``input`` is echoed only when it
    is a short scalar in a field that is not secret (never the whole body).
    """
    assert isinstance(exc, RequestValidationError)
    return JSONResponse(status_code=422, content={"detail": [safe_error(error) for error in exc.errors()]})


def safe_error(error: Mapping[str, Any]) -> dict[str, Any]:
    """One validation error as JSON that can always be encoded and reveals no secret."""
    loc = [part if isinstance(part, int) else _text(str(part)) for part in error.get("loc", ())]
    out: dict[str, Any] = {"loc": loc, "msg": _text(str(error.get("msg", ""))), "type": str(error.get("type", ""))}
    whole = len(loc) < 2  # the whole body (or query, ...) may hold a secret
    secret = whole or any(isinstance(part, str) and part.lower() in SECRET_FIELDS for part in loc)
    if not secret and "input" in error:
        echoed = _scalar(error["input"])
        if echoed is not _OMIT:
            out["input"] = echoed
    ctx = error.get("ctx")
    if isinstance(ctx, Mapping):
        cleaned = {str(key): _scalar(value, exceptions=True) for key, value in ctx.items()}
        out["ctx"] = {key: value for key, value in cleaned.items() if value is not _OMIT}
    return out


_OMIT = object()


def _scalar(value: Any, *, exceptions: bool = False) -> Any:
    """``value`` when it is a JSON scalar worth echoing (finite, short, valid Unicode), else ``_OMIT``."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value if abs(value) < 10**18 else _OMIT
    if isinstance(value, float):
        return value if math.isfinite(value) else _OMIT
    if isinstance(value, str):
        return _text(value) if len(value) <= MAX_ECHO_CHARS else _OMIT
    if exceptions and isinstance(value, Exception):
        return _text(str(value))
    return _OMIT


def _text(text: str) -> str:
    """Text that encodes as UTF-8 (a lone surrogate becomes its escape, ``\\ud800``), cut to length."""
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text if len(text) <= MAX_ECHO_CHARS * 2 else text[: MAX_ECHO_CHARS * 2] + "…"
