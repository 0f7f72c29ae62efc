"""Coins (§10): the pot split by place as a pure function of the outcome, and the series score."""

from __future__ import annotations

from app.engine.state import Outcome


def payout(outcome: Outcome, stake: int, seats: int, *, dealer: int) -> list[int]:
    """Coins each seat receives from the pot (stake × seats). The durak gets nothing; a draw refunds.

    Place k (1 = first out) weighs n − k; share = pot × weight // total weight, the remainder to the
    first place. Seats sharing a place split the coins of the places they occupy equally; coins that
    do not divide go one each to the tied seats nearest the dealer's left (the dealer himself last).
    """
    if stake < 0:
        raise ValueError("stake must not be negative")
    pot = stake * seats
    if outcome.draw:
        return [stake] * seats

    def from_dealers_left(group: tuple[int, ...]) -> list[int]:
        return sorted(group, key=lambda seat: (seat - dealer - 1) % seats)

    weights = [seats - k for k in range(1, seats + 1)]
    total = sum(weights)
    shares = [pot * w // total for w in weights]
    shares[0] += pot - sum(shares)
    paid = [0] * seats
    place = 0
    for group in outcome.places:
        coins = sum(shares[place : place + len(group)])
        place += len(group)
        if outcome.durak in group:
            continue
        each, odd = divmod(coins, len(group))
        for seat in group:
            paid[seat] = each
        for seat in from_dealers_left(group)[:odd]:
            paid[seat] += 1
    leftover = pot - sum(paid)  # only if the durak did not place last (never in play)
    if leftover:
        paid[from_dealers_left(outcome.places[0])[0]] += leftover
    return paid


def coin_changes(outcome: Outcome, stake: int, seats: int, *, dealer: int) -> list[int]:
    """Net change of each seat's balance: what it receives minus its stake."""
    return [received - stake for received in payout(outcome, stake, seats, dealer=dealer)]


def series_update(score: dict[int, tuple[int, int]], outcome: Outcome) -> dict[int, tuple[int, int]]:
    """Add one match to a series score ``{seat: (wins, losses)}``: a win to the first player out,
    a loss to the durak. A draw changes nothing."""
    new = dict(score)
    if outcome.draw:
        return new
    if outcome.order:
        first = outcome.order[0]
    else:
        first = outcome.places[0][0] if len(outcome.places[0]) == 1 else -1
    if first >= 0 and first != outcome.durak:
        wins, losses = new.get(first, (0, 0))
        new[first] = (wins + 1, losses)
    if outcome.durak is not None:
        wins, losses = new.get(outcome.durak, (0, 0))
        new[outcome.durak] = (wins, losses + 1)
    return new
