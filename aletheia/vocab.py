"""The fixed words of aletheia, each list written once: hosts, kinds, scopes, states, sources.

The CLI's choices, the store's and services' checks, the REST models and OpenAPI enums, the
MCP tool schemas and the dashboard (``GET /v1/vocabulary``) all derive from these tuples.  The
schema's CHECK constraints are SQL written by past migrations: a test holds them equal.
Standard library only and nothing but literals: the hook imports it.
"""

# Host tools we install into and whose hook payloads we adapt.
HOSTS = ("claude-code", "codex", "gemini", "cursor", "opencode", "windsurf", "command-code")

# Memory kinds that aletheia writes itself.  A memory may carry another kind (``aletheia save
# --kind``, an import): the store accepts any non-empty kind, and these are the known ones.
MEMORY_KINDS = (
    "prompt",
    "tool_event",
    "note",
    "response",
    "session_start",
    "session_end",
    "summary",
    "project_summary",
    "turn",
)
SUMMARY_KINDS = ("summary", "project_summary")  # what the worker derives, never re-extracted

FACT_KINDS = ("fact", "decision", "convention", "command", "error_fix", "file_role", "stack")
FACT_STATUSES = ("active", "superseded", "dismissed")
# The slot of a command that worked although no word of it says what it does, by its program and
# subcommand (``command:ran:rebar3 dialyzer``): kept once it is a habit, listed with the commands.
RAN_SLOT = "command:ran:"


def ran_command(subject: object) -> bool:
    """Is this fact subject the slot of a command run clean (``RAN_SLOT``)?"""
    return str(subject or "").startswith(RAN_SLOT)


# Where a memory or fact is seen: its own project only, or every project (after promotion).
SCOPES = ("project", "global")

# The job (lease) table.  ``JOB_STATE_ORDER`` is the order lists show: what needs a person first.
JOB_STATES = ("pending", "running", "retry_wait", "done", "dead")
OPEN_JOB_STATES = ("pending", "running", "retry_wait")
JOB_STATE_ORDER = ("dead", "running", "retry_wait", "pending", "done")
JOB_STATE_LABELS = {
    "dead": "dead",
    "running": "running",
    "retry_wait": "waiting to retry",
    "pending": "pending",
    "done": "done",
}

# What wrote a memory (its ``source``); imports are ``import:<what>``.
SOURCES = ("hook", "cli", "rest", "mcp", "worker", "watch")
IMPORT_SOURCES = ("import:claude-mem", "import:claude-code", "import:codex", "import:bundle")


def as_dict() -> dict[str, object]:
    """Every list, for clients that cannot import this module (the dashboard)."""
    return {
        "hosts": list(HOSTS),
        "memory_kinds": list(MEMORY_KINDS),
        "fact_kinds": list(FACT_KINDS),
        "fact_statuses": list(FACT_STATUSES),
        "scopes": list(SCOPES),
        "job_states": [{"name": s, "label": JOB_STATE_LABELS[s]} for s in JOB_STATE_ORDER],
        "sources": [*SOURCES, *IMPORT_SOURCES],
    }
