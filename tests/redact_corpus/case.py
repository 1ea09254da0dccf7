"""One corpus case, and what "caught" means for it."""

from __future__ import annotations

from dataclasses import dataclass

FRAGMENT = 8  # a secret counts as leaked if any 8 characters of it survive in a row


@dataclass(frozen=True)
class Case:
    """One input. A positive lists the secret substrings that must disappear; a negative (no
    secrets) must come out byte-identical."""

    id: str
    family: str
    kind: str
    text: str
    secrets: tuple[str, ...] = ()
    marker: str = ""  # the marker expected in the output ("" = any); for the strict unit tests
    keep: tuple[str, ...] = ()  # context that must survive (a name, a host, the command)

    @property
    def positive(self) -> bool:
        return bool(self.secrets)

    @property
    def marker_kind(self) -> str:
        return self.marker[len("[redacted:") : -1] if self.marker.startswith("[redacted:") else ""


def leak(case: Case, output: str) -> str | None:
    """The first fragment of a secret that survives in ``output`` (None: caught).  A secret
    shorter than FRAGMENT must be gone whole."""
    for secret in case.secrets:
        if len(secret) <= FRAGMENT:
            if secret in output:
                return secret
            continue
        for i in range(len(secret) - FRAGMENT + 1):
            piece = secret[i : i + FRAGMENT]
            if piece in output:
                return piece
    return None
