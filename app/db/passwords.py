"""Password hashing with argon2id. Hashing is deliberately slow, so it runs in a worker thread.

The cost is the ``password_hashing`` setting (``DURAK_PASSWORD_HASHING``): ``strong`` (the default,
RFC 9106's second recommended choice: 64 MiB, 3 passes, 4 lanes, about 160 ms of CPU a hash) or
``test`` (argon2's cheapest parameters, for test suites only: thousands of sign-ups and log-ins).
It is read from the process's settings when a password is hashed or checked, so one process uses
one cost. A log-in with a hash of other parameters than the current ones stores a new hash
(``needs_rehash``, at log-in): a password hashed cheaply by a test setting is hashed strongly at its
next log-in on a strong server.
"""

from __future__ import annotations

import asyncio
import logging
from functools import cache

from argon2 import Parameters, PasswordHasher, profiles
from argon2.exceptions import InvalidHashError, VerificationError

from app.config import PasswordHashing, get_settings

log = logging.getLogger("durak.security")  # with the other warnings of a risky configuration

PARAMETERS: dict[PasswordHashing, Parameters] = {
    "strong": profiles.RFC_9106_LOW_MEMORY,  # argon2-cffi's default too (25.1)
    "test": profiles.CHEAPEST,  # 8 KiB, one pass: microseconds, and no protection at all
}


@cache
def hasher_for(hashing: PasswordHashing) -> PasswordHasher:
    if hashing == "test":
        log.warning(
            "DURAK_PASSWORD_HASHING=test: passwords are hashed with argon2's cheapest parameters, which "
            "protect nothing. This setting is for test suites only; a real server needs the default, strong."
        )
    return PasswordHasher.from_parameters(PARAMETERS[hashing])


@cache
def _dummy_hash(hashing: PasswordHashing) -> str:
    """Verified when the name is unknown, so that a failed log-in takes as long whether or not the name
    exists: made once per cost, with the same parameters as real hashes, at the first such log-in."""
    return hasher_for(hashing).hash("not-a-real-password")


def _current() -> PasswordHashing:
    return get_settings().security.password_hashing


async def hash_password(password: str) -> str:
    return await asyncio.to_thread(hasher_for(_current()).hash, password)


def _verify(hashing: PasswordHashing, password_hash: str | None, password: str) -> bool:
    try:
        checked = password_hash if password_hash is not None else _dummy_hash(hashing)
        return hasher_for(hashing).verify(checked, password) and password_hash is not None
    except (VerificationError, InvalidHashError):
        return False


async def verify_password(password_hash: str | None, password: str) -> bool:
    """Whether ``password`` matches; ``None`` (unknown account) burns the same time and fails."""
    return await asyncio.to_thread(_verify, _current(), password_hash, password)


def needs_rehash(password_hash: str) -> bool:
    """Whether the hash was made with other parameters than the current setting's (stronger or cheaper)."""
    return hasher_for(_current()).check_needs_rehash(password_hash)
