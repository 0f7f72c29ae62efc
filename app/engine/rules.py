"""Table parameters (rule book §1) and the house-rule presets (§11) as one validated value."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from functools import lru_cache
from typing import Any, Literal, TypedDict, cast

Circle = Literal["neighbours", "all"]
Preset = Literal["durak_peak", "classic36", "durac1993"]

MAX_SEATS = {24: 4, 36: 6, 52: 6}
PRESETS: tuple[Preset, ...] = ("durak_peak", "classic36", "durac1993")

PRESET_LABELS: dict[Preset, str] = {
    "durak_peak": "Durak Peak: the table parameters as chosen, at most 5 attacks until the first "
    "successful defence, 6 after.",
    "classic36": "Classic 36: 36 cards, throw-ins, no transfer; attacks never exceed 6 nor the "
    "defender's hand (no first-bout limit of 5); series scoring; if all hands empty together the "
    "match is void (a draw).",
    "durac1993": "Durac 1993 (Finnish): the top card of the stock is turned for trump; the holder of "
    "the lowest trump may swap it for the turned card before the first attack; the player after the "
    "dealer leads; cards are played singly or in groups of a rank (pairs, threes, fours, "
    "combinations), at most six at once; a transfer comes before any throw-in and adds one card to "
    "each led rank; attackers refill to six during the bout, the defender after it.",
}


class RulesError(ValueError):
    """A table that cannot be opened. ``field`` names the offending parameter."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.reason = message


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class RulesJson(TypedDict):
    """``Rules.to_json()``: every parameter."""

    deck: int
    seats: int
    circle: Circle
    transfer: bool
    draws: bool
    timer: int
    stake: int
    cheating: bool
    preset: Preset


@dataclass(frozen=True, slots=True)
class Rules:
    """The rules of one match. Construct with keywords; invalid tables raise ``RulesError``."""

    deck: int = 36
    seats: int = 2
    circle: Circle = "all"
    transfer: bool = False
    draws: bool = True
    timer: int = 30  # seconds per decision; 0 = no timer
    stake: int = 0
    cheating: bool = False
    preset: Preset = "durak_peak"

    def __post_init__(self) -> None:
        if self.preset not in PRESETS:
            raise RulesError("preset", f"unknown preset {self.preset!r}; choose one of {', '.join(PRESETS)}")
        if not _is_int(self.deck) or self.deck not in MAX_SEATS:
            raise RulesError("deck", f"no {self.deck!r}-card deck; choose 24, 36 or 52")
        if not _is_int(self.seats) or self.seats < 2:
            raise RulesError("seats", "a table needs at least 2 seats")
        if self.seats > MAX_SEATS[self.deck]:
            raise RulesError(
                "seats",
                f"{self.seats} players cannot each be dealt six cards from {self.deck} cards; "
                f"the {self.deck}-card deck seats at most {MAX_SEATS[self.deck]}",
            )
        if self.circle not in ("neighbours", "all"):
            raise RulesError("circle", f"throw-in circle must be 'neighbours' or 'all', not {self.circle!r}")
        for switch in ("transfer", "draws", "cheating"):
            if not isinstance(getattr(self, switch), bool):
                raise RulesError(switch, f"must be true or false, not {getattr(self, switch)!r}")
        if not _is_int(self.timer) or self.timer < 0 or self.timer > 600:
            raise RulesError("timer", "move timer must be 0 (off) or 1-600 seconds")
        if not _is_int(self.stake) or self.stake < 0:
            raise RulesError("stake", "stake must be 0 (free table) or a positive number of coins")
        if self.preset == "classic36":
            if self.deck != 36:
                raise RulesError("deck", "the Classic 36 preset is played with 36 cards")
            if self.transfer:
                raise RulesError("transfer", "the Classic 36 preset has no transfer")
            if not self.draws:
                raise RulesError("draws", "in Classic 36 a match where all hands empty together is void")

    # House switches (§11), derived from the preset so they can never disagree with it.
    @property
    def first_bout_cap(self) -> int:
        """Attack cap until the first successful defence: 5 at a Durak Peak table, else 6."""
        return 5 if self.preset == "durak_peak" else 6

    @property
    def durac(self) -> bool:
        return self.preset == "durac1993"

    def with_changes(self, **changes: Any) -> Rules:
        return replace(self, **changes)

    def to_json(self) -> RulesJson:
        return cast(RulesJson, dict(_rules_json(self)))  # a copy: the cached one stays as it is

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Rules:
        """Rules from their JSON (stored, or a client's: every key is checked)."""
        unknown = set(data) - set(cls.__dataclass_fields__)
        if unknown:
            raise RulesError(sorted(unknown)[0], "unknown table parameter")
        return cls(**data)

    @classmethod
    def for_preset(cls, preset: Preset, **changes: Any) -> Rules:
        """The preset's defaults, with the creator's choices (deck, seats, timer, stake...) applied."""
        defaults: dict[str, Any]
        if preset == "classic36":
            defaults = {"deck": 36, "transfer": False, "draws": True, "circle": "all"}
        elif preset == "durac1993":
            defaults = {"deck": 52, "transfer": True, "circle": "all"}
        elif preset == "durak_peak":
            defaults = {}
        else:
            raise RulesError("preset", f"unknown preset {preset!r}; choose one of {', '.join(PRESETS)}")
        return cls(**{**defaults, **changes, "preset": preset})


@lru_cache(maxsize=1024)
def _rules_json(rules: Rules) -> dict[str, Any]:
    return asdict(rules)
