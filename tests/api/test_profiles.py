"""A player's profile shows what ``/api/matches`` shows the caller: a private table's matches only
to those who played them and to admins (in the recent matches, the rating history and the counts),
and coin results only to the player himself and to admins."""

from __future__ import annotations

from typing import Any

import httpx

from tests.api.support import Api
from tests.api.test_matches_api import finish_staked_match


async def _profile(client: httpx.AsyncClient, name: str) -> dict[str, Any]:
    response = await client.get(f"/api/players/{name}")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def _ids(profile: dict[str, Any]) -> tuple[list[str], list[str]]:
    return [m["match_id"] for m in profile["recent_matches"]], [p["match_id"] for p in profile["rating_history"]]


async def test_a_profile_hides_private_matches_and_coin_results_from_those_who_may_not_see_them(api: Api) -> None:
    ann, ben, cat = await api.signed_up("ann"), await api.signed_up("ben"), await api.signed_up("cat")
    root = await api.admin()
    ids = [(await c.get("/api/me")).json()["id"] for c in (ann, ben)]
    await finish_staked_match(api, "open-one", ids, cheating=False, minutes=0)
    await finish_staked_match(api, "secret-one", ids, cheating=False, minutes=10, private=True)

    for stranger in (api.client(), cat, await api.guest("gus")):
        assert (await stranger.get("/api/matches/secret-one")).status_code == 404  # as the history says
        profile = await _profile(stranger, "ann")
        recent, rated = _ids(profile)
        assert recent == ["open-one"] and rated == ["open-one"]
        assert profile["matches_played"] == 1
        assert sum(kind["played"] for kind in profile["by_table_type"].values()) == 1
        assert profile["recent_matches"][0]["players"] == ["p0", "p1"]  # a public match's players are public
        assert all(m["coin_change"] is None for m in profile["recent_matches"])
        assert "secret-one" not in str(profile)

    # Ben played both: he sees both on Ann's profile, but not her coins.
    profile = await _profile(ben, "ann")
    assert _ids(profile) == (["secret-one", "open-one"], ["open-one", "secret-one"])
    assert profile["matches_played"] == 2
    assert all(m["coin_change"] is None for m in profile["recent_matches"])

    # Ann sees everything of her own, coins included; so does an admin.
    for viewer in (ann, root):
        profile = await _profile(viewer, "ann")
        assert _ids(profile) == (["secret-one", "open-one"], ["open-one", "secret-one"])
        assert profile["matches_played"] == 2
        changes = [m["coin_change"] for m in profile["recent_matches"]]
        assert all(isinstance(change, int) for change in changes) and all(change != 0 for change in changes)
    balance = (await ann.get("/api/me")).json()["balance"]
    assert balance == 1000 + sum(m["coin_change"] for m in (await _profile(ann, "ann"))["recent_matches"])
