"""The browser's half of provably fair deals (web/js/fairness.js): WebCrypto recomputes the same
commitment and deck as the server's reference implementation, and rejects a changed record."""

from __future__ import annotations

from typing import Any

from app.engine.fairness import deck_order, record

SERVER_SEED = bytes.fromhex("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08")


def published(size: int, seeds: list[bytes]) -> dict[str, Any]:
    return record(
        SERVER_SEED, "tbl_Example-Code", 7, size, seeds, deck_order(SERVER_SEED, "tbl_Example-Code", 7, size, seeds)
    )


def test_webcrypto_recomputes_the_deal(new_context: Any) -> None:
    page = new_context().new_page()
    page.goto("/")
    cases = [
        published(36, [bytes.fromhex("00112233445566778899aabbccddeeff"), b""]),
        published(24, [b"", b"", b"\x01" * 16, b""]),
        published(52, [b"\xff" * 16, b"\x10" * 16]),
    ]
    for fairness in cases:
        result = page.evaluate("async (f) => (await import('/js/fairness.js')).verifyDeal(f)", fairness)
        assert result["ok"] is True, result
        assert result["deck"] == fairness["deck"] and result["commitment"] == fairness["commitment"]
    changed = dict(cases[0], client_seeds=["00112233445566778899aabbccddeefe", ""])
    result = page.evaluate("async (f) => (await import('/js/fairness.js')).verifyDeal(f)", changed)
    assert result["ok"] is False and result["commitmentOk"] is True and result["deckOk"] is False
    changed = dict(cases[0], server_seed="00" + cases[0]["server_seed"][2:])
    result = page.evaluate("async (f) => (await import('/js/fairness.js')).verifyDeal(f)", changed)
    assert result["commitmentOk"] is False and result["deckOk"] is False
    seed = page.evaluate("async () => (await import('/js/fairness.js')).newClientSeed()")
    assert len(seed) == 32 and int(seed, 16) >= 0
