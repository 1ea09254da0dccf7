"""Fake secrets of the right shape, generated (never committed as literals)."""

from __future__ import annotations

import random
import string

_ALNUM = string.ascii_letters + string.digits


def _pick(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def github_token(rng: random.Random) -> str:
    return "ghp_" + _pick(rng, _ALNUM, 36)


def aws_key_id(rng: random.Random) -> str:
    return "AKIA" + _pick(rng, string.ascii_uppercase + "234567", 16)


def openai_key(rng: random.Random) -> str:
    return "sk-proj-" + _pick(rng, _ALNUM, 48)


def db_password(rng: random.Random) -> str:
    return "Pw" + _pick(rng, _ALNUM, 18) + "9x"
