"""The web client's files go out gzipped and cached with revalidation (app/main.py, ``WebFiles``):
``Cache-Control: no-cache`` plus an ETag per encoding, 304 on a matching ``If-None-Match``, and a
deploy (a changed file) picked up at once. The API, the event stream and the websocket stay plain."""

from __future__ import annotations

import os

from app.main import WEB_DIR, _accepts_gzip
from app.web_pages import build_pages
from tests.api.support import Api

GZIP = {"Accept-Encoding": "gzip"}
IDENTITY = {"Accept-Encoding": "identity"}


async def test_text_files_are_gzipped_when_the_browser_accepts_it(api: Api) -> None:
    client = api.client()
    pages = build_pages(WEB_DIR)
    for path, served in (
        ("/", pages.lobby.body),
        ("/js/main.js", (WEB_DIR / "js/main.js").read_bytes()),
        ("/css/app.css", (WEB_DIR / "css/app.css").read_bytes()),
        ("/i18n/ru.json", (WEB_DIR / "i18n/ru.json").read_bytes()),
        ("/t/abcdef", pages.table.body),
        ("/w/abcdef", pages.table.body),
    ):
        response = await client.get(path, headers=GZIP)
        assert response.status_code == 200, path
        assert response.headers["content-encoding"] == "gzip", path
        assert response.headers["vary"] == "Accept-Encoding", path
        original = served
        assert response.content == original, path  # httpx decoded it
        assert int(response.headers["content-length"]) < len(original) * 0.7, path
        assert response.headers["content-security-policy"].startswith("default-src 'self'"), path


async def test_a_browser_that_refuses_gzip_gets_the_file_as_is(api: Api) -> None:
    client = api.client()
    for headers in (IDENTITY, {"Accept-Encoding": "gzip;q=0, br"}):
        response = await client.get("/js/main.js", headers=headers)
        assert "content-encoding" not in response.headers
        assert response.content == (WEB_DIR / "js" / "main.js").read_bytes()
        assert response.headers["vary"] == "Accept-Encoding"


async def test_files_are_revalidated_with_their_etag(api: Api) -> None:
    client = api.client()
    for headers in (GZIP, IDENTITY):
        first = await client.get("/js/api.js", headers=headers)
        assert first.headers["cache-control"] == "no-cache"
        etag = first.headers["etag"]
        again = await client.get("/js/api.js", headers={**headers, "If-None-Match": etag})
        assert again.status_code == 304
        assert again.content == b""
        assert again.headers["etag"] == etag
        assert again.headers["cache-control"] == "no-cache"
    # each encoding has its own ETag, so a cache never answers one with the other
    zipped = (await client.get("/js/api.js", headers=GZIP)).headers["etag"]
    plain = (await client.get("/js/api.js", headers=IDENTITY)).headers["etag"]
    assert zipped != plain
    assert (await client.get("/js/api.js", headers={**GZIP, "If-None-Match": plain})).status_code == 200


async def test_a_changed_file_is_served_fresh(api: Api) -> None:
    client = api.client()
    target = WEB_DIR / "favicon.svg"
    before = await client.get("/favicon.svg", headers=GZIP)
    stat = target.stat()
    original = target.read_bytes()
    try:
        target.write_bytes(original + b"\n<!-- deployed -->\n")
        os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10_000_000_000))
        after = await client.get("/favicon.svg", headers={**GZIP, "If-None-Match": before.headers["etag"]})
        assert after.status_code == 200
        assert after.content.endswith(b"<!-- deployed -->\n")
        assert after.headers["etag"] != before.headers["etag"]
    finally:
        target.write_bytes(original)
        os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns))


async def test_the_api_is_not_compressed_by_the_static_files(api: Api) -> None:
    response = await api.client().get("/api/tables", headers=GZIP)
    assert "content-encoding" not in response.headers
    assert response.headers["cache-control"] == "no-store"


async def test_a_missing_file_is_still_a_404(api: Api) -> None:
    response = await api.client().get("/js/nope.js", headers=GZIP)
    assert response.status_code == 404


def test_accept_encoding_is_read_with_its_qualities() -> None:
    assert _accepts_gzip("gzip, deflate, br")
    assert _accepts_gzip("br;q=1.0, gzip;q=0.8")
    assert _accepts_gzip("*")
    assert not _accepts_gzip("")
    assert not _accepts_gzip("identity")
    assert not _accepts_gzip("gzip;q=0")
    assert not _accepts_gzip("gzip;q=nonsense")


async def test_a_head_request_gets_the_headers_without_a_body(api: Api) -> None:
    response = await api.client().head("/js/main.js", headers=GZIP)
    assert response.status_code == 200
    assert response.headers["content-encoding"] == "gzip"
    assert response.headers["cache-control"] == "no-cache"
    assert response.content == b""
