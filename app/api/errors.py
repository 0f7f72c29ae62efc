"""The error body every route returns (``{"detail": "..."}``) and OpenAPI ``responses=`` helpers."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


class ErrorOut(BaseModel):
    detail: str


_DESCRIPTIONS = {
    400: "The request body could not be parsed (not JSON, or not UTF-8).",
    401: "No valid session cookie.",
    403: "Signed in, but not allowed (a guest, or not an admin).",
    404: "Not found.",
    409: "Conflicts with the current state.",
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
