"""Helpers for the end-to-end tests: lobby calls over HTTP, seating players on websockets, the
stake settlement of RULES §10 computed independently of the engine."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from bench._client import DECK_RANKS, Account, Player, is_cheat
from bench._server import ServerProcess
from tests.support.wait import eventually


async def accounts(server: ServerProcess, *names: str, guest: bool = False) -> list[Account]:
    return list(await asyncio.gather(*(Account.create(server.base_url, name, guest=guest) for name in names)))


async def close_all(*things: Account | Player) -> None:
    await asyncio.gather(*(thing.aclose() if isinstance(thing, Account) else thing.close() for thing in things))


async def open_table(creator: Account, **params: Any) -> dict[str, Any]:
    params.setdefault("bot_delay_ms", 0)
    response = await creator.http.post("/api/tables", json=params)
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


async def join(account: Account, code: str, seat: int | None = None) -> int:
    response = await account.http.post(f"/api/tables/{code}/join", json={} if seat is None else {"seat": seat})
    assert response.status_code == 200, response.text
    return int(response.json()["seat"])


async def add_bot(creator: Account, code: str, level: str, seat: int | None = None) -> int:
    body: dict[str, Any] = {"level": level} if seat is None else {"level": level, "seat": seat}
    response = await creator.http.post(f"/api/tables/{code}/bots", json=body)
    assert response.status_code == 200, response.text
    return int(response.json()["seat"])


async def table_info(account: Account, code: str) -> dict[str, Any]:
    response = await account.http.get(f"/api/tables/{code}")
    assert response.status_code == 200, response.text
    info: dict[str, Any] = response.json()
    return info


async def connect(server: ServerProcess, code: str, account: Account | None, name: str) -> Player:
    """A connection that has said hello (the welcome is in ``player.last``)."""
    headers = account.headers if account is not None else {"origin": server.base_url}
    player = await Player.connect(server.ws_url, code, headers, name)
    await player.hello()
    return player


async def until_dealt(players: list[Player], timeout: float = 10.0) -> None:
    """Wait until every player's latest snapshot shows the running match with its own hand. At a
    staked table each player first confirms he is ready (the ready check, RULES §8): the match
    starts with the last confirmation."""
    for player in players:
        table = player.last["table"] if player.last is not None else None
        if table is not None and table["rules"]["stake"] > 0:
            reply = await player.do({"type": "ready"}, timeout)
            assert reply["type"] == "ack" or reply.get("code") == "no_ready_check", reply

    async def one(player: Player) -> None:
        if player.view is None or player.last is None or player.last["table"]["status"] != "playing":
            await player.until(
                lambda m: m["type"] == "update" and m["view"] is not None and m["table"]["status"] == "playing",
                timeout,
            )

    await asyncio.gather(*(one(p) for p in players))


def results_of(final: dict[str, Any]) -> dict[str, Any]:
    """The ``results`` event of the finishing update (outcome, coin changes, match id)."""
    found = [e for e in final["events"] if e["type"] == "results"]
    assert found, f"no results event in {final['events']}"
    return found[0]


def expected_payout(outcome: dict[str, Any], stake: int, seats: int) -> list[int]:
    """RULES §10, written out again: the pot (stake × players) goes to everyone but the durak by
    place; place k (1 = first out) weighs n − k; share = pot × weight // total, the remainder to the
    first place; seats sharing a place split the coins of the places they hold (what does not divide
    goes to the lowest seat of the first place); a draw refunds every stake."""
    pot = stake * seats
    if outcome["draw"]:
        return [stake] * seats
    weights = [seats - k for k in range(1, seats + 1)]
    shares = [pot * w // sum(weights) for w in weights]
    shares[0] += pot - sum(shares)
    paid = [0] * seats
    place = 0
    for group in outcome["places"]:
        coins = sum(shares[place : place + len(group)])
        place += len(group)
        if outcome["durak"] not in group:
            for seat in group:
                paid[seat] = coins // len(group)
    paid[min(outcome["places"][0])] += pot - sum(paid)
    return paid


async def stored_match(server: ServerProcess, match_id: str, timeout: float = 10.0) -> dict[str, Any]:
    """``GET /api/matches/{id}`` (public), once the table has stored the finished match."""
    async with httpx.AsyncClient(base_url=server.base_url) as http:

        async def stored() -> bool:
            return (await http.get(f"/api/matches/{match_id}")).status_code != 404

        await eventually(stored, timeout, f"match {match_id} is stored", every=0.05)
        response = await http.get(f"/api/matches/{match_id}")
    assert response.status_code == 200, response.text
    detail: dict[str, Any] = response.json()
    return detail


async def recorded_match(account: Account, match_id: str, timeout: float = 10.0) -> dict[str, Any]:
    """The stored match as ``GET /api/matches/{id}`` gives it, once it is in ``?account=me``."""

    async def recorded() -> bool:
        page = (await account.http.get("/api/matches", params={"account": "me"})).json()
        return any(item["id"] == match_id for item in page["items"])

    await eventually(recorded, timeout, f"match {match_id} is recorded for {account.name}", every=0.05)
    response = await account.http.get(f"/api/matches/{match_id}")
    assert response.status_code == 200, response.text
    detail: dict[str, Any] = response.json()
    return detail


ACTION_EVENTS = ("move", "take", "pass", "challenge", "exchange_trump", "forfeit")


class Observer:
    """Checks what every connection is told during a match, message by message (the ``watch`` hook
    of :func:`bench._client.autoplay`), and keeps what the tests assert on at the end."""

    def __init__(self, rules: dict[str, Any]) -> None:
        self.rules = rules
        self.versions: dict[str, list[int]] = {}
        self.actions: dict[str, int] = {}
        self.offered: dict[str, int] = {}  # legal action types offered to seated players
        self.events: dict[str, int] = {}
        self.caps: list[int] = []
        self.first_views: list[dict[str, Any]] = []

    def __call__(self, player: Any, message: dict[str, Any]) -> None:
        if message["type"] not in ("update", "welcome"):
            return
        versions = self.versions.setdefault(player.name, [])
        if message["type"] == "update" and (not versions or message["version"] != versions[-1]):
            versions.append(message["version"])
            actions = sum(1 for e in message["events"] if e["type"] in ACTION_EVENTS)
            self.actions[player.name] = self.actions.get(player.name, 0) + actions
        for event in message.get("events") or ():
            self.events[event["type"]] = self.events.get(event["type"], 0) + 1
            if event["type"] == "draw" and event["seat"] != message["seat"]:
                assert "cards" not in event, f"{player.name} saw seat {event['seat']}'s drawn cards"
        view = message["view"]
        if view is None:
            return
        assert view["rules"] == self.rules, "the match runs under other rules than the table's"
        if view["ply"] == 0 and view["seat"] is not None:
            self.first_views.append(view)
            self.caps.append(view["cap"])
        if message["seat"] is None:
            assert "hand" not in view and not view.get("legal"), "a spectator was shown a hand"
            return
        ranks = DECK_RANKS[self.rules["deck"]]
        assert all(card[:-1] in ranks for card in view["hand"]), view["hand"]
        for action in view["legal"]:
            self.offered[action["type"]] = self.offered.get(action["type"], 0) + 1
            if not self.rules["cheating"]:
                assert not is_cheat(view, action), f"a normal table offered a cheating move {action}"
            if action["type"] == "throw_in" and self.rules["circle"] == "neighbours":
                assert action["seat"] in _neighbours(view), f"{action} offered outside the defender's neighbours"

    def check_stream(self) -> None:
        """Every connection saw every version once the match ran (no gaps) and the same actions."""
        for name, versions in self.versions.items():
            assert versions == list(range(versions[0], versions[0] + len(versions))), f"{name}: gaps {versions}"
        assert len(set(self.actions.values())) == 1, self.actions


def _neighbours(view: dict[str, Any]) -> set[int]:
    """The seats on both sides of the defender among the players still holding cards (a superset
    of who may throw in at a ``neighbours`` table)."""
    live = [p["seat"] for p in view["players"] if (not p["out"] and p["cards"] > 0) or p["seat"] == view["defender"]]
    i = live.index(view["defender"])
    return {live[(i - 1) % len(live)], live[(i + 1) % len(live)]} - {view["defender"]}
