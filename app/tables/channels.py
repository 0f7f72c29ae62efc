"""Broker channel names of a table (the broker adds its own prefix)."""


def inbox(code: str) -> str:
    return f"t:{code}:in"


def person(code: str, principal_key: str) -> str:
    return f"t:{code}:p:{principal_key}"


def watch(code: str) -> str:
    return f"t:{code}:watch"


LOBBY = "lobby"
