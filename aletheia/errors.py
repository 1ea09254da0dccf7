"""Errors a user can hit, typed so each interface renders them once (CLI line, JSON body, MCP error)."""

from __future__ import annotations


class AletheiaError(Exception):
    """Base for user-facing errors; ``status`` is the HTTP status an interface should use."""

    status = 400

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidInput(AletheiaError):
    status = 400


class NotFound(AletheiaError):
    status = 404


class Conflict(AletheiaError):
    status = 409
