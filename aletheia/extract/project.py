"""The project summary: the project at a glance, from its sessions and its best-evidenced
active facts (it reads the store, so its SQL lives here)."""

from __future__ import annotations

import sqlite3

from aletheia import ids
from aletheia.extract.items import cap
from aletheia.extract.session import SummaryDraft
from aletheia.vocab import RAN_SLOT

_RECENT_SESSIONS = """
SELECT id, first_request, last_event_at FROM session
WHERE project = ? AND first_request IS NOT NULL ORDER BY last_event_at DESC, id LIMIT ?
"""
_SESSION_COUNT = "SELECT count(*) FROM session WHERE project = ?"
# (not the commands run clean, ``vocab.RAN_SLOT``: the block lists those; here they would take the
# notes' place)
_TOP_FACTS = f"""
SELECT text FROM fact WHERE project = ? AND status = 'active' AND kind = ?
    AND coalesce(subject, '') NOT LIKE '{RAN_SLOT}%'
ORDER BY json_array_length(source_ids) DESC, confidence DESC, created_at DESC, rowid DESC LIMIT ?
"""
_PROJECT_SECTIONS = (
    ("command", "How to work here", 8),
    ("convention", "Conventions", 8),
    ("decision", "Decisions", 6),
    ("error_fix", "Errors seen and fixed", 6),
    ("file_role", "Files", 12),
    ("fact", "Notes", 6),
)


def project_summary(conn: sqlite3.Connection, project: str) -> SummaryDraft:
    """The project at a glance, from its sessions and its best-evidenced active facts."""
    from aletheia.project import project_name

    name = project_name(project)
    count = int(conn.execute(_SESSION_COUNT, (project,)).fetchone()[0])
    lines = [f"Project: {name} ({project})", f"Sessions: {count}"]
    recent = conn.execute(_RECENT_SESSIONS, (project, 8)).fetchall()
    if recent:
        lines.append("Recent requests:")
        lines.extend(f"- {ids.iso(r['last_event_at'])[:10]} {cap(r['first_request'], 140)}" for r in recent)
    all_facts: list[str] = []
    for kind, heading, limit in _PROJECT_SECTIONS:
        texts = [r[0] for r in conn.execute(_TOP_FACTS, (project, kind, limit))]
        if texts:
            lines.append(f"{heading}:")
            lines.extend(f"- {cap(t, 240)}" for t in texts)
            all_facts.extend(texts)
    return SummaryDraft(
        title=f"Project summary: {name}",
        narrative="\n".join(lines),
        concepts=["project_summary"],
        facts=all_facts[:20],
    )
