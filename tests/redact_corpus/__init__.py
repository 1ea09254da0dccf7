"""The redaction corpus shared by the tests and the benchmarks.

Positives (secrets of every family issue 13 names, written as an attacker would) and ordinary
snippets that must pass unchanged. Every secret is generated at run time from a seeded RNG in
the right shape; nothing secret-shaped is committed. ``build()`` returns the same cases for the
same seed. ``score`` runs them through ``aletheia redact --jsonl`` (a real process).
"""

from __future__ import annotations

import random

from tests.redact_corpus import attacks, legacy, ordinary
from tests.redact_corpus.case import FRAGMENT, Case, leak
from tests.redact_corpus.fakes import Fake, grouped

SEED = 20240514


def build(seed: int = SEED) -> list[Case]:
    fake = Fake(random.Random(seed))
    return (legacy.token_cases(fake) + legacy.specific_cases(fake) + legacy.generic_cases(fake)
            + legacy.private_cases(fake) + attacks.cases(fake) + legacy.negative_cases(fake)
            + ordinary.negatives(fake))


def first_corpus(seed: int = SEED) -> list[Case]:
    """The corpus as it was before issue 13 (same seed, same order, same cases): the 10 MB log
    of bench/redact.py sprinkles these, so its throughput stays comparable across changes."""
    fake = Fake(random.Random(seed))
    return (legacy.token_cases(fake) + legacy.specific_cases(fake) + legacy.generic_cases(fake)
            + legacy.private_cases(fake) + legacy.negative_cases(fake))


__all__ = ["first_corpus", "FRAGMENT", "SEED", "Case", "Fake", "build", "grouped", "leak"]
