"""Full matches over real websockets, humans and bots, covering every table parameter of RULES §1
and the presets of §11 across the cases."""

from __future__ import annotations

from typing import Any

import pytest

from bench._client import Account, Player, choose, play_out
from bench._server import ServerProcess
from tests.e2e.support import (
    Observer,
    accounts,
    add_bot,
    close_all,
    connect,
    join,
    open_table,
    results_of,
    stored_match,
    table_info,
    until_dealt,
)

# seats: "h" a human with an account, "g" a guest, or a bot level.
CASES: dict[str, dict[str, Any]] = {
    "2-guest-vs-easy-24-transfer-nodraws": {
        "seats": ["g", "easy"],
        "params": {"deck": 24, "transfer": True, "draws": False, "circle": "all", "timer": 0},
    },
    "3-classic36-normal-hard": {
        "seats": ["h", "normal", "hard"],
        "params": {"preset": "classic36", "timer": 15},
    },
    "4-24-neighbours-transfer": {
        "seats": ["g", "easy", "g", "normal"],
        "params": {"deck": 24, "circle": "neighbours", "transfer": True, "draws": True, "timer": 10},
    },
    "5-52-neighbours-cheating-nodraws": {
        "seats": ["h", "h", "easy", "h", "normal"],
        "params": {"deck": 52, "circle": "neighbours", "transfer": False, "draws": False, "cheating": True, "timer": 0},
    },
    "6-durac1993-bots": {
        "seats": ["h", "easy", "normal", "g", "easy", "normal"],
        "params": {"preset": "durac1993", "timer": 0},
    },
    "6-humans-36-neighbours-transfer-cheating": {
        "seats": ["g", "g", "g", "g", "g", "g"],
        "params": {"deck": 36, "circle": "neighbours", "transfer": True, "cheating": True, "timer": 30},
    },
}


def _policy(rules: dict[str, Any]) -> Any:
    """Random play that prefers transfers where allowed and cheats now and then at cheating tables."""
    prefer = ("transfer",) if rules["transfer"] else ()

    def policy(view: dict[str, Any], rng: Any) -> dict[str, Any] | None:
        return choose(view, rng, throw_in_p=0.5, cheat_p=0.1, prefer=prefer)

    return policy


FIRST_BOUT_CAP = {"durak_peak": 5, "classic36": 6, "durac1993": 6}  # §4 / §11, before any bout


@pytest.mark.parametrize("case", list(CASES))
async def test_full_match(server: ServerProcess, case: str) -> None:
    seats: list[str] = CASES[case]["seats"]
    params: dict[str, Any] = CASES[case]["params"]
    n = len(seats)
    humans = [i for i, kind in enumerate(seats) if kind in ("h", "g")]
    people: list[Account] = []
    players: list[Player] = []
    try:
        for i in humans:
            people += await accounts(server, f"m{abs(hash(case)) % 10**6}s{i}", guest=seats[i] == "g")
        creator = people[0]
        table = await open_table(creator, seats=n, **params)
        code, rules = table["code"], table["table"]["rules"]
        preset = params.get("preset", "durak_peak")
        assert rules["preset"] == preset and rules["seats"] == n
        for key, value in params.items():
            assert key == "preset" or rules[key] == value, (key, rules)
        watcher = await connect(server, table["watch_code"], None, "watcher")  # a spectator link
        players = [await connect(server, code, p, f"seat{i}") for i, p in zip(humans, people, strict=True)]
        for i, person in zip(humans, people, strict=True):
            if i != n - 1:
                assert await join(person, code, seat=i) == i
        for i, kind in enumerate(seats):
            if kind not in ("h", "g"):
                assert await add_bot(creator, code, kind, seat=i) == i
        if seats[-1] in ("h", "g"):
            assert await join(people[-1], code, seat=n - 1) == n - 1  # the last seat starts the match
        info = await table_info(creator, code)
        assert info["status"] == "playing"
        assert [s["kind"] for s in info["seats"]] == ["human" if k in ("h", "g") else "bot" for k in seats]
        await until_dealt(players)
        assert [p.seat for p in players] == humans
        first = players[0].last
        assert first is not None
        deadline = first["table"]["deadline_ms"]
        if rules["timer"]:
            assert 0 < deadline <= rules["timer"] * 1000
        else:  # no move timer: a person the match waits for has the idle limit (RULES §8), a bot nothing
            for seat in first["view"]["decision"]["seats"]:
                row = first["table"]["seats"][seat]
                assert (row["kind"], row["deadline_kind"]) in (("human", "idle"), ("bot", None)), row
            assert deadline is None or 0 < deadline <= 300_000
        view = first["view"]
        dealt, stock = sum(p["cards"] for p in view["players"]), view["stock"]
        assert dealt == 6 * n and view["stock"] == rules["deck"] - 6 * n  # §3: six each, the rest is stock
        assert view["cap"] == min(FIRST_BOUT_CAP[preset], 6)
        if preset == "durac1993":
            assert view["attacker"] == (view["dealer"] + 1) % n  # §11: the player after the dealer leads

        observer = Observer(rules)
        policy = _policy(rules)
        everyone = [*players, watcher]
        finals = await play_out(everyone, seed=n, policy=policy, watch=observer, timeout=60)
    finally:
        await close_all(*players, *people, *([watcher] if "watcher" in locals() else []))

    observer.check_stream()
    results = results_of(finals[0])
    assert all(results_of(final) == results for final in finals)
    outcome = results["outcome"]
    # Played to the end; at a cheating table the bots may challenge, and losing a challenge forfeits.
    assert outcome["reason"] in ((None, "challenge") if rules["cheating"] else (None,)), outcome
    if outcome["draw"]:
        assert rules["draws"] and outcome["durak"] is None
    else:
        assert sorted(s for group in outcome["places"] for s in group) == list(range(n))
        assert outcome["places"][-1] == [outcome["durak"]]
    if not rules["transfer"]:
        assert "transfer" not in observer.offered and "transferred" not in observer.events
    assert ("challenge" in observer.offered) == rules["cheating"]  # only cheating tables offer challenges
    assert observer.events.get("match_end")
    if outcome["reason"] is None:
        assert observer.events.get("bout_end")
        assert bool(observer.events.get("draw")) == (stock > 0)  # players refilled from the stock, if any
    # The match is stored (free tables too), with the bots named by level.
    detail = await stored_match(server, results["match_id"])
    assert detail["rules"] == rules and detail["draw"] == outcome["draw"] and detail["durak"] == outcome["durak"]
    assert [s["bot_level"] for s in detail["seats"]] == [None if k in ("h", "g") else k for k in seats]
    assert detail["actions"] == next(iter(observer.actions.values()))
