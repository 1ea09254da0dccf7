"""The fact write API and reader: every fact enters hub.db through ``add_facts``.

It redacts the text, dedupes by a hash of the normalised text and merges near-duplicates
(character-trigram cosine similarity ≥ 0.92 with the same anchors, see ``similarity``) into
the fact already stored, so a re-run or a rephrasing never adds a second row.  Stdlib only.

Knowledge updates: a fact may fill a slot (``subject``, e.g. ``command:test``) with a
``value``.  A newer fact in a slot that holds another value supersedes the active one (kept,
``status = 'superseded'``, ``superseded_by`` names its successor); the same value again only adds
evidence.  "Newer" is the time of the memories behind a fact (``observed_at``), not the time it
was written, so sessions compressed out of order cannot bring an old choice back.  A change
statement ("move from poetry to uv") also names the old values it drops (``replaces``): active
facts that hold one of them are superseded by it.  ``history`` walks the chain.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import sqlite3
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aletheia import ids, shapes, tombstones
from aletheia.changes import NAMED_THING, mentions, value_pattern, version_successor, without
from aletheia.context import VALUE_LIKE, outdated
from aletheia.db import tx
from aletheia.errors import InvalidInput
from aletheia.redact import redact
from aletheia.vocab import FACT_KINDS, FACT_STATUSES, SCOPES

if TYPE_CHECKING:
    from aletheia.pages import Page

RULE_CONFIDENCE = 0.45
NEAR_DUPLICATE = 0.92
TEXT_CAP = 1000
SOURCE_IDS_CAP = 200
# How many full-text candidates a new fact is compared with (near-duplicates share almost
# every word, so they rank at the top of a BM25 OR-query over the fact's longest words).
_CANDIDATES = 12
_CANDIDATE_TERMS = 8
MAX_LIMIT = 1000


@dataclass
class FactIn:
    """A fact as an extractor hands it over (before redaction)."""

    project: str
    text: str
    kind: str = "fact"
    session_id: str | None = None
    source_ids: list[str] = field(default_factory=list)
    confidence: float = RULE_CONFIDENCE
    extractor: str = "rules"
    scope: str = "project"
    # Project knowledge (see the module docstring): the slot it fills and with what value,
    # its evidence, when it was observed, and the old values a change statement drops.
    subject: str | None = None
    value: str | None = None
    stated: bool = False
    confirmed: int = 0
    observed_at: int | None = None
    replaces: list[str] = field(default_factory=list)
    # The slot holds nothing current after this fact (a dependency removed): it supersedes the
    # slot's fact and is stored superseded itself, so it shows in the history, not as current.
    ends: bool = False
    # A file the session deleted (``moved_to`` None) or renamed: the fact is the record of it
    # (stored as history) and what the store knew about the file is retired or follows it.
    removes_file: str | None = None
    moved_to: str | None = None


@dataclass
class AddResult:
    added: list[str] = field(default_factory=list)
    merged: list[str] = field(default_factory=list)  # existing facts that gained sources
    unchanged: int = 0  # already known (or dismissed): nothing to do
    superseded: list[str] = field(default_factory=list)  # older facts a newer one replaced

    def to_dict(self) -> dict[str, Any]:
        return {"added": len(self.added), "merged": len(self.merged), "unchanged": self.unchanged,
                "superseded": len(self.superseded)}


# --- text identity -----------------------------------------------------------------------

_SPACE = re.compile(r"\s+")
_TRAILING = re.compile(r"[\s.;:,!]+$")
# Anchors: the parts of a coding fact where one character changes the meaning.
_CODE_SPAN = re.compile(r"`([^`]+)`")
_NUMBER = re.compile(r"\d+(?:\.\d+)*")
_PATHISH = re.compile(r"[\w.-]*[/\\][\w./\\-]+|\b[\w-]+\.[a-z]{1,5}\b")


def normalize(text: str) -> str:
    """Case-folded, NFKC, whitespace collapsed, trailing punctuation dropped."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return _TRAILING.sub("", _SPACE.sub(" ", text).strip())


def fact_hash(text: str) -> str:
    return hashlib.sha256(normalize(text).encode("utf-8", "surrogatepass")).hexdigest()


def _trigrams(text: str) -> Counter[str]:
    padded = f"  {normalize(text)} "
    return Counter(padded[i : i + 3] for i in range(len(padded) - 2))


def anchors(text: str) -> frozenset[str]:
    """Code spans, numbers and paths: two facts that differ in one of them are different facts
    (``port 8000`` vs ``port 8001``, ``test_a.py`` vs ``test_b.py``) however similar the prose."""
    norm = unicodedata.normalize("NFKC", text)
    found = {f"`{m.strip()}`" for m in _CODE_SPAN.findall(norm)}
    bare = _CODE_SPAN.sub(" ", norm)
    found.update(_NUMBER.findall(bare))
    found.update(p.strip("./\\").casefold() for p in _PATHISH.findall(bare))
    return frozenset(found)


def similarity(a: str, b: str) -> float:
    """Cosine similarity of the two texts' character-trigram count vectors (after
    ``normalize``), or 0.0 when their anchors differ.  Trigrams tolerate rephrasing at the
    edges ("passes" / "passed", an added article) while the anchor check keeps commands,
    numbers and paths exact."""
    if anchors(a) != anchors(b):
        return 0.0
    ta, tb = _trigrams(a), _trigrams(b)
    if not ta or not tb:
        return 0.0
    dot = sum(count * tb[gram] for gram, count in ta.items() if gram in tb)
    norm_a = math.sqrt(sum(c * c for c in ta.values()))
    norm_b = math.sqrt(sum(c * c for c in tb.values()))
    return dot / (norm_a * norm_b)


# --- writing ------------------------------------------------------------------------------

_ROW = ("rowid, id, status, source_ids, confidence, subject, value, session_ids, confirmed, "
        "stated, observed_at")
_BY_HASH = f"SELECT {_ROW} FROM fact WHERE project = ? AND content_hash = ?"

_CANDIDATES_SQL = f"""
SELECT f.text, {', '.join('f.' + c.strip() for c in _ROW.split(','))}
FROM fact_fts JOIN fact f ON f.rowid = fact_fts.rowid
WHERE fact_fts MATCH ? AND f.project = ?
ORDER BY bm25(fact_fts) LIMIT ?
"""

_INSERT_FACT = """
INSERT INTO fact (id, project, scope, session_id, kind, text, confidence, source_ids, status,
                  extractor, content_hash, created_at, updated_at, subject, value, session_ids,
                  confirmed, stated, observed_at, superseded_by)
VALUES (:id, :project, :scope, :session_id, :kind, :text, :confidence, :source_ids, :status,
        :extractor, :content_hash, :now, :now, :subject, :value, :session_ids, :confirmed,
        :stated, :observed_at, :superseded_by)
"""

_MERGE_INTO = """
UPDATE fact SET source_ids = ?, confidence = ?, session_ids = ?, confirmed = ?, stated = ?,
    observed_at = ?, updated_at = ? WHERE rowid = ?
"""
_SLOT = f"""
SELECT {_ROW} FROM fact WHERE project = ? AND subject = ? AND status = 'active'
ORDER BY observed_at DESC, rowid DESC
"""
_SUPERSEDE = """
UPDATE fact SET status = 'superseded', superseded_by = ?, updated_at = ?
WHERE rowid = ? AND status = 'active'
"""
_REACTIVATE = "UPDATE fact SET status = 'active', superseded_by = NULL, observed_at = ?, updated_at = ? WHERE rowid = ?"
_REACTIVATE_AS_IS = "UPDATE fact SET status = 'active', superseded_by = NULL, updated_at = ? WHERE rowid = ?"
_RETIRED_BY = "SELECT rowid, text, subject FROM fact WHERE superseded_by = ? AND status = 'superseded'"
# Facts a change statement can retire: what the project uses, runs and prefers.
_REPLACEABLE = ("stack", "command", "convention", "decision", "fact", "error_fix", "file_role")
_HOLDING = """
SELECT rowid, id, kind, text, subject, value, observed_at FROM fact
WHERE project = ? AND status = 'active' AND kind IN ({kinds}) AND id != ?
    AND coalesce(observed_at, created_at) <= ?
"""

_WORD = re.compile(r"[^\W_]{3,}", re.UNICODE)


def _clean_text(value: Any) -> str:
    if not isinstance(value, str):
        raise InvalidInput("a fact's text must be a string")
    # Redacted before it is folded and cut (a key is recognised by its lines); the pre-cut
    # bounds the cost and leaves room for a block that straddles the final cut.
    text = " ".join(redact(value[: 4 * TEXT_CAP + 16384]).split())
    if len(text) > TEXT_CAP:
        text = text[: TEXT_CAP - 1].rstrip() + "…"
    return text


def _validate(f: FactIn) -> None:
    if f.kind not in FACT_KINDS:
        raise InvalidInput(f"fact kind must be one of {', '.join(FACT_KINDS)}")
    if f.scope not in SCOPES:
        raise InvalidInput(f"scope must be one of {', '.join(SCOPES)}")
    if not isinstance(f.project, str) or not f.project.strip():
        raise InvalidInput("project must not be empty")
    if isinstance(f.confidence, bool) or not 0.0 <= float(f.confidence) <= 1.0:
        raise InvalidInput("confidence must be between 0 and 1")
    if not f.extractor:
        raise InvalidInput("extractor must not be empty")


def _union(existing: Sequence[str], new: Iterable[str]) -> list[str]:
    out = list(existing)
    seen = set(out)
    for item in new:
        if item not in seen and len(out) < SOURCE_IDS_CAP:
            seen.add(item)
            out.append(item)
    return out


def _fts_query(text: str) -> str | None:
    words = sorted({w.lower() for w in _WORD.findall(text)}, key=lambda w: (-len(w), w))
    if not words:
        return None
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in words[:_CANDIDATE_TERMS])


def _near_duplicate(conn: sqlite3.Connection, project: str, text: str) -> sqlite3.Row | None:
    query = _fts_query(text)
    if query is None:
        return None
    best: tuple[float, sqlite3.Row] | None = None
    for row in conn.execute(_CANDIDATES_SQL, (query, project, _CANDIDATES)):
        score = similarity(text, row["text"])
        if score >= NEAR_DUPLICATE and (best is None or score > best[0]):
            best = (score, row)
    return best[1] if best else None


def _observed(f: FactIn, now: int) -> int:
    return int(f.observed_at) if f.observed_at is not None else now


def _merge(
    conn: sqlite3.Connection, row: sqlite3.Row, f: FactIn, sources: list[str], now: int
) -> bool:
    """Fold ``f``'s sources and evidence into an active stored fact; False when nothing
    changes (a re-run brings the same sources: it adds no evidence)."""
    if row["status"] != "active":
        return False  # a dismissed (or superseded) fact stays down: no resurrection by re-run
    old_sources = json.loads(row["source_ids"] or "[]")
    merged = _union(old_sources, sources)
    fresh = len(merged) > len(old_sources)
    confidence = max(float(row["confidence"]), float(f.confidence))
    sessions = json.loads(row["session_ids"] or "[]")
    if f.session_id and f.session_id not in sessions and len(sessions) < SOURCE_IDS_CAP:
        sessions = [*sessions, f.session_id]
    confirmed = int(row["confirmed"]) + (int(f.confirmed) if fresh else 0)
    stated = max(int(row["stated"]), int(bool(f.stated)))
    observed = max(int(row["observed_at"] or 0), _observed(f, now))
    if (merged == old_sources and confidence == float(row["confidence"])
            and sessions == json.loads(row["session_ids"] or "[]")
            and confirmed == int(row["confirmed"]) and stated == int(row["stated"])):
        return False
    conn.execute(_MERGE_INTO, (json.dumps(merged), confidence, json.dumps(sessions), confirmed,
                               stated, observed, now, row["rowid"]))
    return True


def _same_value(a: str | None, b: str | None) -> bool:
    return bool(a) and bool(b) and normalize(str(a)) == normalize(str(b))


def _holds(text: str, token: str) -> bool:
    return mentions(text, token)


def _slot_olds(old: sqlite3.Row, f: FactIn) -> list[str]:
    """What a slot's old value is called in prose, when the new fact drops it: a package
    manager, a runtime, a port that was replaced; a dependency only when it was removed."""
    subject, value = str(old["subject"] or ""), str(old["value"] or "")
    if subject.startswith("env:"):
        return []  # a setting's value (`true`, `local`, `redis`) names far more than the setting
    if subject.startswith("dep:"):
        return [subject[4:]] if f.value == "(removed)" else []
    if not value or _same_value(value, f.value):
        return []
    if re.search(r"[A-Za-z]", value) and len(value) >= 2 or re.fullmatch(r"\d{4,5}", value):
        return [value]
    return []


_ROW_ALL = "SELECT * FROM fact WHERE rowid = ?"
# Slots whose value is a command line.
_COMMAND_SLOTS = ("command:", "make:", "script:")
# The values the project replaced that the current knowledge must not say (``context.outdated``):
# slots whose old values stand for more than a value (commands, make targets, scripts, settings,
# files) and removed dependencies (a note may name the package it replaced) are left out.
_NOT_OUTDATED = (*_COMMAND_SLOTS, "env:", "dep:", "file:")
# Slots whose old value prose can simply say as the new one ("on Node 20" → "on Node 22").
_RESTATED_SLOTS = ("runtime:", "port:", "tool:", "setting:")
# Prose a knowledge update can restate (a command or a stack fact is superseded, not restated).
_RESTATABLE = ("decision", "convention", "fact")
_WHY = " — why: "
_SPAN = re.compile(r"`[^`]*`")


_LABEL = re.compile(r"^\w+:\s+")


def _named(text: str) -> list[str]:
    """The named things (a capital, a digit, a code span) in ``text`` after its first word and
    a ``Kind:`` label."""
    words = _LABEL.sub("", text, count=1).split(None, 1)
    return NAMED_THING.findall(words[1]) if len(words) > 1 else []


def _restated(text: str, olds: list[str], news: Mapping[str, str]) -> str | None:
    """``text`` said in its current form, or None when it cannot be: an old value with a known
    successor (a runtime, a port, a package manager) is replaced by it ("Rails 7.1 on Ruby 3.2"
    → "… Ruby 3.3"); one named only in the reason is left out ("why: … was slow"); anything
    else (an old value in a command, a claim about the old choice) retires the fact."""
    head, sep, why = text.partition(_WHY)
    for old in olds:
        if not _holds(text, old):
            continue
        new = news.get(old)
        spans = " ".join(_SPAN.findall(head))
        if _holds(head, old) and (new is None or _holds(spans, old)):
            return None
        rest = re.sub(value_pattern(old), " ", head, flags=re.I)
        if _holds(head, old) and len(_WORD.findall(rest)) < 8 and len(_named(rest)) < 2:
            # It is about the old value ("Use npm for now."), not a mention in passing; a short
            # list of other named things ("Rails 7.1 on Ruby 3.2, Postgres, Tailwind") is one.
            return None
        pattern = re.compile(value_pattern(old), re.I)
        # (the value is text, not a template: a backslash in it stays a backslash)
        head = pattern.sub(new.replace("\\", "\\\\"), head) if new else head
        why = pattern.sub("…", why)
    return head + sep + why


def _role_without(text: str, olds: list[str]) -> str | None:
    """A file's role without the clauses naming an old value ("… polls every 30 s through a
    route handler" → "… through a route handler"): the file still does the rest.  None when
    little is left or the file's own name went with it."""
    head = text.split(" ", 1)[0]
    out = without(text, olds)
    return out if out.startswith(head) and len(out) >= len(head) + 12 else None


def _restate(conn: sqlite3.Connection, row: sqlite3.Row, text: str, now: int, *,
             subject: Any = ..., value: Any = ...) -> str:
    """A new version of a stored fact with ``text`` (same evidence, the same slot and value
    unless ``subject`` or ``value`` names another), which supersedes it."""
    old = conn.execute(_ROW_ALL, (row["rowid"],)).fetchone()
    # The new text holds values from elsewhere (a successor's value, a path a rename named):
    # written like every other fact, redacted and capped.
    text = _clean_text(text)
    if subject is not ...:
        subject = _clean_slot(subject)
    digest = fact_hash(text)
    known = conn.execute(_BY_HASH, (old["project"], digest)).fetchone()
    if known is not None:
        return str(known["id"])
    fact_id = ids.new_id(now)
    conn.execute(_INSERT_FACT, {
        "id": fact_id, "project": old["project"], "scope": old["scope"], "session_id": old["session_id"],
        "kind": old["kind"], "text": text, "confidence": old["confidence"], "source_ids": old["source_ids"],
        "extractor": old["extractor"], "content_hash": digest, "now": now, "status": "active",
        "subject": old["subject"] if subject is ... else subject,
        "value": old["value"] if value is ... else _clean_slot(value),
        "session_ids": old["session_ids"],
        "confirmed": old["confirmed"], "stated": old["stated"], "observed_at": old["observed_at"],
        "superseded_by": None,
    })
    return fact_id


def _retire(conn: sqlite3.Connection, project: str, new_id: str, f: FactIn, olds: list[str],
            observed: int, now: int, result: AddResult, news: Mapping[str, str] | None = None) -> None:
    """Active facts that speak of an old value (named by a change statement, or the value a
    slot just lost) are superseded by the new fact, or by their own current form where prose
    can be restated (see ``_restated``)."""
    olds = list(dict.fromkeys(o for o in olds if isinstance(o, str) and o.strip()))
    if not olds:
        return
    sql = _HOLDING.format(kinds=",".join("?" * len(_REPLACEABLE)))
    rows = conn.execute(sql, (project, *_REPLACEABLE, new_id, observed)).fetchall()
    # A slot whose fact names an old value ("polls every 30 seconds", slot value "30 s") held
    # that value under its own name too: prose naming either is about the old choice.
    for row in rows:
        value, subject = str(row["value"] or ""), str(row["subject"] or "")
        if (value and subject and not subject.startswith((*_NOT_OUTDATED, "replaced:")) and not value.startswith("(")
                and value.lower() not in {o.lower() for o in olds}
                and not (f.value and _same_value(value, f.value))
                and any(_holds(str(row["text"]), o) for o in olds) and VALUE_LIKE.search(value)):
            olds.append(value)
    for row in rows:
        text, value = str(row["text"]), row["value"]
        if f.value and (_same_value(value, f.value) or _holds(text, f.value)):
            continue  # it already speaks of the new choice
        if any(_same_value(value, o) for o in olds):
            conn.execute(_SUPERSEDE, (new_id, now, row["rowid"]))
            result.superseded.append(row["id"])
            continue
        hits = [o for o in olds if _holds(text, o)]
        if not hits:
            continue
        if row["kind"] in _RESTATABLE:
            current = _restated(text, hits, news or {})
        else:
            current = _role_without(text, hits) if row["kind"] == "file_role" else None
        successor = _restate(conn, row, current, now) if current and current != text else new_id
        conn.execute(_SUPERSEDE, (successor, now, row["rowid"]))
        result.superseded.append(row["id"])


# The names a statement gives one slot: the project's own server is "the API", "the app", "the
# dev server" by turns ("The API listens on port 4000" … "Move the dev server to 4100"); polling
# for fresh data is "poll", "refresh", "refetch" ("refresh the metrics every 30 s" … "make the
# metrics poll every 10 s").
_APP_PORT = frozenset("api app server service backend web http dev dev-server api-server web-server "
                      "app-server endpoint phoenix".split())
_REFRESH = re.compile(r"\b(?:poll|polls|polling|refresh|refreshes|refreshing|refetch|refetches|refetching|"
                      r"reload|reloads|re-?fetch|update|updates|sync|syncs)\b", re.I)


def same_slot(subject: str, text: str) -> str:
    """``subject`` under the one name its kind of slot has (see ``_APP_PORT``, ``_REFRESH``)."""
    family, _, name = subject.partition(":")
    if family == "port" and (name in _APP_PORT or name.rsplit("-", 1)[-1] in _APP_PORT):
        return "port:app"
    if family == "setting" and name.startswith("every-") and _REFRESH.search(f"{name[6:]} {text}"):
        return "setting:every-poll"
    return subject


def _slot_place(conn: sqlite3.Connection, project: str, f: FactIn, observed: int
                ) -> tuple[sqlite3.Row | None, list[sqlite3.Row], str | None]:
    """Where a new fact with a subject goes: (an active fact of the same value to merge into,
    the active facts it supersedes, the newer fact that supersedes it already)."""
    rows = conn.execute(_SLOT, (project, f.subject)).fetchall()
    for row in rows:
        if _same_value(row["value"], f.value):
            return row, [], None
    newer = [r for r in rows if int(r["observed_at"] or 0) > observed]
    if newer:
        return None, [], str(newer[0]["id"])
    return None, rows, None


def _revive(conn: sqlite3.Connection, row: sqlite3.Row, project: str, f: FactIn, observed: int,
            now: int, result: AddResult) -> bool:
    """A superseded slot fact said again later than the current one becomes current again
    (A → B → A); a fact that ends its slot ends it again."""
    if row["status"] != "superseded" or observed <= int(row["observed_at"] or 0):
        return False
    if not row["subject"]:
        # A file's role retired when the file was removed comes back when a later session
        # shows the file again (written anew, renamed back).
        by = conn.execute("SELECT subject, observed_at FROM fact WHERE id = (SELECT superseded_by "
                          "FROM fact WHERE rowid = ?)", (row["rowid"],)).fetchone()
        if by is None or not str(by["subject"] or "").startswith("file:") or observed <= int(by["observed_at"] or 0):
            return False
        conn.execute(_REACTIVATE, (observed, now, row["rowid"]))
        return True
    current = conn.execute(_SLOT, (project, row["subject"])).fetchall()
    if any(int(c["observed_at"] or 0) >= observed for c in current):
        return False
    if f.ends:  # said again later: it ends the slot again, and stays out of the current ones
        conn.execute("UPDATE fact SET observed_at = ?, updated_at = ? WHERE rowid = ?",
                     (observed, now, row["rowid"]))
    else:
        conn.execute(_REACTIVATE, (observed, now, row["rowid"]))
    value = str(row["value"] or "")
    for c in current:
        conn.execute(_SUPERSEDE, (row["id"], now, c["rowid"]))
        result.superseded.append(c["id"])
        if value and not f.ends:
            # What the interim value retired for naming this one is current again with it
            # (`mypy src` → a misread command → `mypy src`: the fix that names it comes back).
            for r in conn.execute(_RETIRED_BY, (c["id"],)).fetchall():
                if r["subject"] is None and _holds(str(r["text"]), value):
                    conn.execute(_REACTIVATE_AS_IS, (now, r["rowid"]))
    return True


_ABOUT_FILE = """
SELECT rowid, id, kind, text, subject, value FROM fact
WHERE project = ? AND status = 'active' AND coalesce(observed_at, created_at) <= ? AND instr(text, ?) > 0
LIMIT 500
"""


_MAKEFILES = ("makefile", "gnumakefile")
_MAKE_COMMANDS = """
SELECT rowid, id, kind, text, subject, value FROM fact
WHERE project = ? AND status = 'active' AND kind = 'command' AND subject LIKE 'command:%'
    AND coalesce(observed_at, created_at) <= ? AND value LIKE 'make%'
"""
_MAKE_RUN = re.compile(r"^make(?:\s+(?!-C\b|--directory\b|-f\b|--file\b)\S.*)?$")
# Words that start a command without being the tool it runs with (an interpreter, a wrapper):
# `python manage.py migrate` outlives a move of the tests from `python -m pytest` to `uv run`.
_NOT_A_PROGRAM = frozenset("sudo env command exec time nice timeout npx bunx pnpx uvx python python3 py node "
                           "ruby php java perl bash sh zsh pwsh powershell cd".split())
_MOVED_SLOTS = """
SELECT o.subject, o.value AS was, n.value AS now, n.observed_at FROM fact o JOIN fact n ON n.id = o.superseded_by
WHERE o.project = ? AND o.kind = 'command' AND n.kind = 'command' AND n.subject = o.subject
"""
_COMMANDS_OF = """
SELECT rowid, id, value FROM fact WHERE project = ? AND kind = 'command' AND status = 'active' AND id != ?
    AND coalesce(observed_at, created_at) <= ? AND instr(lower(value), ?) > 0
"""


def program(command: str) -> str:
    """The tool a command runs with (`stack build` → stack; `PGPASSWORD=… dbmate up` → dbmate)."""
    for word in command.split():
        if "=" in word and not word.startswith("-"):
            continue  # an environment assignment before the command
        return word.rsplit("/", 1)[-1].lower()
    return ""


def _program_moved_off(conn: sqlite3.Connection, project: str, fact_id: str, older: list[sqlite3.Row], value: str,
                       observed: int, now: int, result: AddResult) -> None:
    """A project that moved its commands off a tool (`stack build` → `cabal build`, `stack test` →
    `cabal test`: two slots or more, and no slot ever moved to it, as a revert would) no longer runs that tool's other
    commands either (`stack install hlint`): the older active ones are superseded by the new one.
    One slot alone is not a move (`npm test` → `vitest run` leaves `npm install` current)."""
    new = program(value)
    for gone in {program(str(o["value"] or "")) for o in older} - {new, ""} - _NOT_A_PROGRAM:
        moved: set[str] = set()
        back = 0
        for r in conn.execute(_MOVED_SLOTS, (project,)).fetchall():
            was, then = program(str(r["was"] or "")), program(str(r["now"] or ""))
            if was == gone and then != gone:
                moved.add(str(r["subject"]))
            elif then == gone and was != gone:
                back += 1
        if len(moved) < 2 or back:
            continue
        for row in conn.execute(_COMMANDS_OF, (project, fact_id, observed, gone)).fetchall():
            if program(str(row["value"] or "")) == gone:
                conn.execute(_SUPERSEDE, (fact_id, now, row["rowid"]))
                result.superseded.append(row["id"])


_COMMANDS_NAMING = """
SELECT rowid, id, kind, text, subject, value FROM fact
WHERE project = ? AND status = 'active' AND kind = 'command' AND coalesce(observed_at, created_at) <= ?
    AND instr(value, ?) > 0
LIMIT 200
"""


def _arg_re(path: str) -> str:
    """``path`` (or a path under it) as a whole argument of a command line."""
    return r"(?<![^\s=\"'`])(?:\./)?" + re.escape(path) + r"(?=[/\s\"'`]|$)"


def _commands_naming(conn: sqlite3.Connection, project: str, path: str, observed: int) -> list[sqlite3.Row]:
    """Active commands observed by ``observed`` that take ``path`` (or a path under it) as an
    argument (`ansible-lint roles/pihole`, `pytest tests/test_old.py`): once it is removed they
    run on nothing."""
    return [r for r in conn.execute(_COMMANDS_NAMING, (project, observed, path)).fetchall()
            if re.search(_arg_re(path), str(r["value"] or ""))]


def _path_re(path: str) -> str:
    """``path`` or a path under it, as a code span begins."""
    return r"(?<=`)" + re.escape(path) + r"(?=[`/])"


def about_file(kind: str, text: str, path: str) -> bool:
    """Is a fact about ``path`` (or a file under it): a file role that names it, or a fact read
    from it (its text ends ``(`path`)``, ``(`path` [tool.ruff])``)?  A decision or a fix that
    names it in passing is not."""
    if kind == "file_role" and re.search(_path_re(path), text):
        return True
    return re.search(r"\(`" + re.escape(path) + r"(?:/[^`]*)?`[^()]*\)", text) is not None


def _file_removed(conn: sqlite3.Connection, project: str, f: FactIn, text: str, digest: str,
                  sources: list[str], observed: int, now: int, result: AddResult) -> None:
    """A file deleted or renamed (``f.removes_file``): the active facts about it observed
    before that are superseded, by their own text at the new path for a rename, else by the
    record of the removal (kept as history, with the session as its evidence).  The record is
    kept even when the store knew nothing about the file yet: a session compressed later (an
    import of old transcripts) may bring facts about it from before the removal."""
    path = str(f.removes_file).strip().rstrip("/")
    rows = [r for r in conn.execute(_ABOUT_FILE, (project, observed, f"`{path}")).fetchall()
            if about_file(str(r["kind"]), str(r["text"]), path)]
    if path.lower() in _MAKEFILES:
        # The project's Makefile is gone: `make test` and the like no longer run anything.
        rows += [r for r in conn.execute(_MAKE_COMMANDS, (project, observed)).fetchall()
                 if _MAKE_RUN.match(str(r["value"] or "")) and r["id"] not in {x["id"] for x in rows}]
    rows += [r for r in _commands_naming(conn, project, path, observed) if r["id"] not in {x["id"] for x in rows}]
    known = conn.execute(_BY_HASH, (project, digest)).fetchone()
    if known is None:
        record = ids.new_id(now)
        session = redact(f.session_id) if f.session_id else None
        conn.execute(_INSERT_FACT, {
            "id": record, "project": project, "scope": f.scope, "session_id": session,
            "kind": f.kind, "text": text, "confidence": float(f.confidence),
            "source_ids": json.dumps(sources), "extractor": f.extractor, "content_hash": digest,
            "now": now, "status": "superseded", "subject": _clean_slot(f.subject),
            "value": _clean_slot(f.value), "session_ids": json.dumps([session] if session else []),
            "confirmed": 0, "stated": 0, "observed_at": observed, "superseded_by": None,
        })
        result.added.append(record)
    else:
        record = str(known["id"])
        if observed > int(known["observed_at"] or 0):
            conn.execute("UPDATE fact SET observed_at = ?, updated_at = ? WHERE rowid = ?",
                         (observed, now, known["rowid"]))
            result.merged.append(record)
    moved = f.moved_to.strip().rstrip("/") if f.moved_to else None
    for row in rows:
        _follow(conn, row, path, moved, record, now, result)


# What runs the file it is given (or goes into the folder): a command whose removed path follows
# one of these ran that path, not a tool on it.
_RUNNERS = frozenset("python python3 node bash sh zsh ruby perl php deno bun tsx ts-node run exec source . cd "
                     "pushd".split())


def _command_without(line: str, path: str, moved: str | None) -> str | None:
    """A command line given ``path`` as an argument, at ``moved`` (a rename) or without it
    (`ansible-lint roles/pihole` → `ansible-lint`, `pytest tests/test_old.py -q` → `pytest -q`: the
    tool still runs on the rest); None when the path was what it ran (`python scripts/old.py`,
    `./old.sh`, `cd old && make`)."""
    pattern = _arg_re(path)
    if moved:
        return re.sub(pattern, moved.replace("\\", "\\\\"), line)
    found = re.search(pattern, line)
    if found is None:
        return line
    before = line[:found.start()].split()
    if not before or before[-1] in _RUNNERS or not re.match(r"^[\w.-]+$", before[0]):
        return None
    rest = re.sub(r"\s{2,}", " ", re.sub(pattern + r"[^\s`'\"]*", " ", line)).strip()
    return rest if rest and not re.search(pattern, rest) else None


def _follow(conn: sqlite3.Connection, row: sqlite3.Row, path: str, moved: str | None, record: str,
            now: int, result: AddResult) -> None:
    """Supersede a fact about a removed file: by its text at the new path (a rename), else by
    the record of the removal."""
    successor = record
    line = str(row["value"] or "") if row["kind"] == "command" else ""
    if line and re.search(_arg_re(path), line):
        # a command given the file or folder: run on its new path, or on the rest without it
        now_line = _command_without(line, path, moved)
        if now_line and line in str(row["text"]):
            successor = _restate(conn, row, str(row["text"]).replace(line, now_line), now, value=now_line)
    elif moved:
        new_text = re.sub(_path_re(path), moved.replace("\\", "\\\\"), str(row["text"]))
        subject = row["subject"]
        if subject and re.search(r"@" + re.escape(path) + r"(?=/|$)", str(subject)):
            subject = re.sub(r"@" + re.escape(path) + r"(?=/|$)", "@" + moved, str(subject))
        if new_text != row["text"]:
            successor = _restate(conn, row, new_text, now, subject=subject)
    conn.execute(_SUPERSEDE, (successor, now, row["rowid"]))
    result.superseded.append(row["id"])


_FILE_SPAN = re.compile(r"`([^`\s]+)`")
_FROM_FILE = re.compile(r"\(`([^`\s]+)`")
_LATER_REMOVAL = """
SELECT id, subject, value FROM fact WHERE project = ? AND subject IN ({marks}) AND observed_at > ?
ORDER BY observed_at, rowid LIMIT 20
"""


def _removed_later(conn: sqlite3.Connection, project: str, fact_id: str, kind: str, text: str,
                   observed: int, now: int, result: AddResult) -> None:
    """A fact about a file that a later session removed (its session compressed after the
    removal's: an import of old transcripts) is superseded as the removal would have done."""
    paths = _FROM_FILE.findall(text) + (_FILE_SPAN.findall(text) if kind == "file_role" else [])
    subjects: set[str] = set()
    for path in paths:
        parts = path.strip("/").split("/")
        subjects.update(f"file:{'/'.join(parts[:i])}" for i in range(1, len(parts) + 1))
    if not subjects:
        return
    sql = _LATER_REMOVAL.format(marks=",".join("?" * len(subjects)))
    for rec in conn.execute(sql, (project, *sorted(subjects), observed)).fetchall():
        path = str(rec["subject"])[len("file:"):]
        if not about_file(kind, text, path):
            continue
        value = str(rec["value"] or "")
        moved = value[len("(moved to "):-1] if value.startswith("(moved to ") else None
        row = conn.execute("SELECT rowid, * FROM fact WHERE id = ?", (fact_id,)).fetchone()
        _follow(conn, row, path, moved, str(rec["id"]), now, result)
        return


def add_facts(
    conn: sqlite3.Connection, facts: Iterable[FactIn], *, now: int | None = None
) -> AddResult:
    """Store ``facts`` in one transaction (or inside the caller's): redact, dedupe, merge."""
    stamp = ids.now_ms() if now is None else now
    items = list(facts)
    for f in items:
        _validate(f)
    result = AddResult()
    outdated: dict[str, list[tuple[str, int]]] = {}  # per project, read once per call
    with tx(conn):
        for f in items:
            text = _clean_text(f.text)
            if len(text) < 3:
                continue
            if f.subject:
                f.subject = same_slot(f.subject, text)
            project = redact(f.project.strip())
            sources = _union([], (s for s in f.source_ids if isinstance(s, str)))
            digest = fact_hash(text)
            if tombstones.blocked(conn, [tombstones.fact_key(project, digest)]):
                result.unchanged += 1  # erased for good: no import or re-run brings it back
                continue
            observed = _observed(f, stamp)
            if f.removes_file:
                _file_removed(conn, project, f, text, digest, sources, observed, stamp, result)
                continue
            row = conn.execute(_BY_HASH, (project, digest)).fetchone()
            if row is None:
                row = _near_duplicate(conn, project, text)
                if row is not None and f.subject and (row["subject"] != f.subject or not _same_value(
                        row["value"], f.value)):
                    # a near-identical sentence with another value is an update; of another slot,
                    # another fact ("`Vitest` was replaced by `Jest`" after "`Jest` … by `Vitest`")
                    row = None
            if row is not None:
                if _revive(conn, row, project, f, observed, stamp, result) or _merge(
                        conn, row, f, sources, stamp):
                    result.merged.append(row["id"])
                else:
                    result.unchanged += 1
                continue
            if not f.subject and f.kind in _SAID_AS_CURRENT:
                # Prose written after a change (an answer describing a file, a note) that still
                # names a value the project replaced says what is current only without it.
                current = _without_outdated(conn, project, text, observed, outdated)
                if current != text:
                    text, digest = current, fact_hash(current)
                    if conn.execute(_BY_HASH, (project, digest)).fetchone() is not None:
                        result.unchanged += 1
                        continue
            older: list[sqlite3.Row] = []
            successor = None
            if f.subject:
                same, older, successor = _slot_place(conn, project, f, observed)
                if same is not None:
                    if _merge(conn, same, f, sources, stamp):
                        result.merged.append(same["id"])
                    else:
                        result.unchanged += 1
                    continue
            fact_id = ids.new_id(stamp)
            session = redact(f.session_id) if f.session_id else None
            conn.execute(
                _INSERT_FACT,
                {
                    "id": fact_id, "project": project, "scope": f.scope,
                    "session_id": session, "kind": f.kind, "text": text,
                    "confidence": float(f.confidence), "source_ids": json.dumps(sources),
                    "extractor": f.extractor, "content_hash": digest, "now": stamp,
                    "status": "superseded" if successor or (f.ends and f.subject) else "active",
                    "subject": _clean_slot(f.subject), "value": _clean_slot(f.value),
                    "session_ids": json.dumps([session] if session else []),
                    "confirmed": max(0, int(f.confirmed)), "stated": int(bool(f.stated)),
                    "observed_at": observed, "superseded_by": successor,
                },
            )
            result.added.append(fact_id)
            olds = list(f.replaces)
            # a named thing's new version ("Bump Django from 4.2 to 5.0"): prose naming the old
            # one in passing is said again with it
            news = {o: n for o in olds if (n := version_successor(o, text))}
            for old in older:
                conn.execute(_SUPERSEDE, (fact_id, stamp, old["rowid"]))
                result.superseded.append(old["id"])
                for token in _slot_olds(old, f):
                    olds.append(token)
                    if f.value and str(f.subject or "").startswith(_RESTATED_SLOTS):
                        news[token] = str(f.value)
            if older and f.kind == "command" and f.value:
                _program_moved_off(conn, project, fact_id, older, str(f.value), observed, stamp, result)
            if successor is None:
                if str(f.subject or "").startswith("now:") and f.value:
                    # "switched the unit tests over to Vitest": what the project used before for that
                    # purpose is replaced (recorded like a change statement's old values)
                    for gone in _tools_replaced(conn, project, fact_id, str(f.subject)[4:], f.value, observed):
                        olds.append(gone)
                        items.append(FactIn(
                            project=f.project, text=f"`{gone}` was replaced by `{f.value}`.", kind="decision",
                            session_id=f.session_id, source_ids=list(f.source_ids), subject=f"replaced:{gone}",
                            value="(replaced)", stated=f.stated, observed_at=observed, replaces=[gone], ends=True))
                _retire(conn, project, fact_id, f, olds, observed, stamp, result, news)
                if not f.subject:
                    _measures_replaced(conn, project, fact_id, text, observed, stamp, result)
                if not f.ends:
                    _removed_later(conn, project, fact_id, f.kind, text, observed, stamp, result)
    return result


def _without_measures(text: str, gone: list[str]) -> str | None:
    """``text`` without the old measures ``gone``: without the clauses saying them where enough is
    left ("… pulls the NAS shares every night at 3, keeps 7 daily" → the rest), else without
    their words alone ("… every night, keeps 7 daily"); None when little is left."""
    label = _LABEL.match(text)
    head, body = (label.group(0), text[label.end():]) if label else ("", text)
    for rest in (without(body, gone), _MEASURE_GAP.sub(" ", re.sub(
            "|".join(r"(?:\b(?:at|to|for|of|every|by|in|after)\s+)?" + re.escape(g) for g in gone), "\x00", body))):
        rest = re.sub(r"\s+([,.;:])", r"\1", rest.replace("\x00", "")).strip(" ,;")
        if len(_WORD.findall(rest)) >= 6:
            return head + rest[:1].upper() + rest[1:] if head else rest
    return None


_MEASURE_GAP = re.compile(r"\s{2,}")


def _measures_replaced(conn: sqlite3.Connection, project: str, new_id: str, text: str, observed: int, now: int,
                       result: AddResult) -> None:
    """A measure said anew ("move the backups to quarter past two", "sessions are good for 14 days
    now"): the older active facts saying another of its kind about the same thing ("every night at
    3", "make it a week": a word of the sentence in common, a period within a factor of it) are
    superseded, by their own text without the clauses saying the old measure where prose can say
    the rest (a decision, a convention), else by it.  A change of a measure rarely names the old one
    the way a change statement does ("once a day" and "every 24 hours" are one value), so
    ``_retire`` does not see it; talk-only changes are the usual case."""
    from aletheia import measures
    from aletheia.changes import sentences

    new = measures.said(sentences(text), anew=True)
    if not new:
        return
    sql = _HOLDING.format(kinds=",".join("?" * len(_REPLACEABLE)))
    for row in conn.execute(sql, (project, *_REPLACEABLE, new_id, observed)).fetchall():
        old = measures.said(sentences(str(row["text"])))
        said_then = {(kind, value) for kind, value, _, _ in old}
        said_now = {(kind, value) for kind, value, _, _ in new}
        # An old value the new statement does not say again, with a new one of its kind close to it
        # said about the same thing.
        gone = {raw for k, v, about, raw in old if (k, v) not in said_now and any(
            kind == k and (kind, value) not in said_then and words & about and measures.comparable(kind, value, {v})
            for kind, value, words, _ in new)}
        if not gone:
            continue
        rest = _without_measures(str(row["text"]), sorted(gone)) if row["kind"] in _RESTATABLE else None
        successor = _restate(conn, row, rest, now) if rest else new_id
        conn.execute(_SUPERSEDE, (successor, now, row["rowid"]))
        result.superseded.append(row["id"])


_NAMING = """
SELECT text FROM fact WHERE project = ? AND status = 'active' AND kind IN ({kinds}) AND id != ?
    AND coalesce(observed_at, created_at) <= ? AND instr(lower(text), ?) > 0
LIMIT 200
"""


def _tools_replaced(conn: sqlite3.Connection, project: str, fact_id: str, purpose: str, tool: str,
                    observed: int) -> list[str]:
    """The tools of ``purpose`` other than ``tool`` that earlier active facts name (and that do not
    name ``tool``): what the project used for it before a session said ``tool`` is now the one
    (the extractor's ``now:<purpose>`` record, ``claims.tool_claims``)."""
    from aletheia.claims import named_tools, purpose_tools

    out: list[str] = []
    sql = _NAMING.format(kinds=",".join("?" * len(_REPLACEABLE)))
    for probe in sorted(purpose_tools().get(purpose, frozenset()) - {tool}):
        for (said,) in conn.execute(sql, (project, *_REPLACEABLE, fact_id, observed, probe)).fetchall():
            if probe in named_tools(str(said)).get(purpose, set()) and not mentions(str(said), tool):
                out.append(probe)
                break
    return out


# Kinds of prose said as what holds now (a decision or a rule keeps its own words: a later change
# retires or restates it, see ``_retire``).
_SAID_AS_CURRENT = ("file_role", "fact")


def _without_outdated(conn: sqlite3.Connection, project: str, text: str, observed: int,
                      cache: dict[str, list[tuple[str, int]]]) -> str:
    """``text`` without the clauses naming a value the project replaced before ``observed``
    ("…; poetry.lock is replaced by uv.lock" once `Poetry` was replaced), or as it is when
    nothing would be left."""
    if project not in cache:
        cache[project] = outdated(conn, project, history=_NOT_OUTDATED, removed_deps=False)
    olds = [t for t, at in cache[project] if at <= observed and mentions(text, t)]
    if not olds:
        return text
    out = without(text, olds)
    return _clean_text(out) if len(out) >= 12 else text




def _clean_slot(value: str | None) -> str | None:
    if value is None:
        return None
    text = " ".join(redact(str(value)[:16384]).split())[:200]
    return text or None


# --- facts another store wrote (bundles) ---------------------------------------------------

# Known by id, or by text in the project (UNIQUE (project, content_hash)): ignored.
_IMPORT_FACT = """
INSERT OR IGNORE INTO fact (id, project, scope, session_id, kind, text, confidence, source_ids,
                            status, extractor, content_hash, created_at, updated_at, subject,
                            value, session_ids, confirmed, stated, observed_at, superseded_by)
VALUES (:id, :project, :scope, :session_id, :kind, :text, :confidence, :source_ids, :status,
        :extractor, :content_hash, :created_at, :updated_at, :subject, :value, :session_ids,
        :confirmed, :stated, :observed_at, :superseded_by)
"""


def prepare_import(f: FactIn, *, id: str, status: str, created_at: int,
                   updated_at: int | None = None, session_ids: Sequence[str] = (),
                   superseded_by: str | None = None) -> dict[str, Any]:
    """A fact as another store wrote it, as the row to insert: the same checks, text cleaning,
    redaction and content hash as ``add_facts`` (so the same text is the same fact here), with
    its own id, status, times and evidence kept.  Raises ``InvalidInput``; writes nothing."""
    _validate(f)
    if status not in FACT_STATUSES:
        raise InvalidInput(f"status must be one of {', '.join(FACT_STATUSES)}")
    text = _clean_text(f.text)
    if len(text) < 3:
        raise InvalidInput("a fact needs text")
    sessions = [redact(s) for s in session_ids if isinstance(s, str)][:SOURCE_IDS_CAP]
    return {
        "id": id, "project": redact(f.project.strip()), "scope": f.scope,
        "session_id": redact(f.session_id) if f.session_id else None, "kind": f.kind,
        "text": text, "confidence": float(f.confidence),
        "source_ids": json.dumps(_union([], (s for s in f.source_ids if isinstance(s, str)))),
        "status": status, "extractor": f.extractor, "content_hash": fact_hash(text),
        "created_at": created_at, "updated_at": updated_at or created_at,
        "subject": _clean_slot(f.subject), "value": _clean_slot(f.value),
        "session_ids": json.dumps(sessions), "confirmed": max(0, int(f.confirmed)),
        "stated": int(bool(f.stated)), "observed_at": f.observed_at,
        "superseded_by": superseded_by,
    }


def insert_import(conn: sqlite3.Connection, row: dict[str, Any]) -> bool:
    """Insert a ``prepare_import`` row unless it is known (by id, or the same text in the
    project) or was erased for good; True when added.  Inside the caller's transaction."""
    if tombstones.blocked(conn, [tombstones.fact_key(row["project"], row["content_hash"])]):
        return False
    return conn.execute(_IMPORT_FACT, row).rowcount == 1


# --- reading ------------------------------------------------------------------------------

def evidence(fact: Mapping[str, Any]) -> dict[str, Any]:
    """What supports a fact: sessions, confirmations (a passing command, the project's own
    files, an answer naming the command it ran), whether the user said it; and whether that is enough for the context block."""
    sessions = fact.get("session_ids")
    if isinstance(sessions, str):
        try:
            sessions = json.loads(sessions or "[]")
        except ValueError:
            sessions = []
    count = len(sessions) if isinstance(sessions, list) else 0
    confirmed = int(fact.get("confirmed") or 0)
    stated = bool(fact.get("stated"))
    return {"sessions": count, "confirmed": confirmed, "stated": stated,
            "strong": strong(count, confirmed, stated)}


def strong(sessions: int, confirmed: int, stated: bool) -> bool:
    """Enough evidence for the block: the user said it, a passing command, the project's own
    files or an answer naming the command it ran confirmed it, or two sessions support it.  Anything else (one assistant remark, one
    session's guess) stays searchable but out of the block."""
    return stated or confirmed > 0 or sessions >= 2


_HISTORY = f"SELECT {shapes.FACT_COLUMNS} FROM fact WHERE id = ?"
_PREDECESSORS = f"SELECT {shapes.FACT_COLUMNS} FROM fact WHERE superseded_by = ? ORDER BY observed_at DESC, id DESC"


def history(conn: sqlite3.Connection, fact_id: str) -> list[shapes.Fact]:
    """The chain a fact belongs to, newest first: the facts it replaced (and what they
    replaced), led by the current one when ``fact_id`` was itself superseded."""
    row = conn.execute(_HISTORY, (fact_id,)).fetchone()
    if row is None:
        from aletheia.errors import NotFound

        raise NotFound(f"no fact with id {fact_id}")
    head = row
    seen = {str(row["id"])}
    while head["superseded_by"]:
        nxt = conn.execute(_HISTORY, (head["superseded_by"],)).fetchone()
        if nxt is None or nxt["id"] in seen:
            break
        seen.add(str(nxt["id"]))
        head = nxt
    out = [shapes.fact(head)]
    queue = [str(head["id"])]
    done = {str(head["id"])}
    while queue and len(out) < 200:
        for r in conn.execute(_PREDECESSORS, (queue.pop(0),)):
            if r["id"] not in done:
                done.add(str(r["id"]))
                out.append(shapes.fact(r))
                queue.append(str(r["id"]))
    return out


def page_facts(
    conn: sqlite3.Connection,
    *,
    project: str | None = None,
    scope: str | None = None,
    status: str | None = "active",
    kind: str | None = None,
    session_id: str | None = None,
    limit: int = 100,
    cursor: str | None = None,
    max_limit: int = MAX_LIMIT,
) -> Page:
    """Facts newest first, one keyset page; ``project`` also shows global facts (the one
    meaning of ``project=``, aletheia.filters); ``status=None`` shows all.  The one fact-list
    query: the CLI, REST, MCP and the dashboard all page through it."""
    from aletheia import filters

    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= max_limit:
        raise InvalidInput(f"limit must be between 1 and {max_limit}")
    where = filters.facts(filters.Filter(project=project, scope=scope, status=status, kind=kind,
                                         session_id=session_id, dismissed=None))
    return where.page(conn, f"SELECT {shapes.FACT_COLUMNS} FROM fact", limit, cursor, shapes.fact)


def list_facts(
    conn: sqlite3.Connection,
    *,
    project: str | None = None,
    scope: str | None = None,
    status: str | None = "active",
    kind: str | None = None,
    session_id: str | None = None,
    limit: int = 100,
) -> list[dict[str, Any]]:
    """The first page of ``page_facts`` as a list (what the CLI prints)."""
    return page_facts(conn, project=project, scope=scope, status=status, kind=kind,
                      session_id=session_id, limit=limit).items


_REPLACERS = """
SELECT DISTINCT superseded_by FROM fact
WHERE (project = ? OR ? IS NULL) AND status = 'superseded' AND superseded_by IS NOT NULL
ORDER BY updated_at DESC LIMIT ?
"""


def chains(conn: sqlite3.Connection, project: str | None, *, limit: int = 50) -> list[list[shapes.Fact]]:
    """Every knowledge update of a project: each chain newest first, led by its current fact
    (or its last version, when that was dismissed)."""
    out: list[list[shapes.Fact]] = []
    heads: set[str] = set()
    for (fact_id,) in conn.execute(_REPLACERS, (project, project, limit * 4)).fetchall():
        chain = history(conn, fact_id)
        if chain[0]["id"] in heads:
            continue
        heads.add(chain[0]["id"])
        out.append(chain)
        if len(out) >= limit:
            break
    return out


def evidence_label(fact: Mapping[str, Any]) -> str:
    """``u, ✓2, 3s``: the user said it, confirmed twice, seen in three sessions."""
    ev = fact.get("evidence") or evidence(fact)
    parts = (["u"] if ev["stated"] else []) + ([f"✓{ev['confirmed']}"] if ev["confirmed"] else []) + \
        ([f"{ev['sessions']}s"] if ev["sessions"] >= 2 else [])
    return ", ".join(parts) or "weak"
