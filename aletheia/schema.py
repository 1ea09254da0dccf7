"""hub.db schema as numbered migrations.  Add a new number; never edit an applied one.

Times are integer epoch milliseconds.  List-valued columns (facts, concepts, files, tools,
source_ids) hold JSON arrays.
"""

from __future__ import annotations

MIGRATION_1 = """
CREATE TABLE IF NOT EXISTS schema_migration (
    version INTEGER PRIMARY KEY,
    applied_at INTEGER NOT NULL
);

CREATE TABLE memory (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    project TEXT NOT NULL,
    scope TEXT NOT NULL DEFAULT 'project' CHECK (scope IN ('project', 'global')),
    session_id TEXT,
    tool TEXT,
    kind TEXT NOT NULL,
    title TEXT NOT NULL DEFAULT '',
    subtitle TEXT NOT NULL DEFAULT '',
    narrative TEXT NOT NULL DEFAULT '',
    facts TEXT NOT NULL DEFAULT '[]',
    concepts TEXT NOT NULL DEFAULT '[]',
    files TEXT NOT NULL DEFAULT '[]',
    created_at INTEGER NOT NULL,
    updated_at INTEGER,
    pinned INTEGER NOT NULL DEFAULT 0,
    importance REAL NOT NULL DEFAULT 0,
    dismissed_at INTEGER,
    source TEXT NOT NULL,
    content_hash TEXT NOT NULL UNIQUE,
    extracted_at INTEGER
);
CREATE INDEX memory_project_time ON memory(project, created_at);
CREATE INDEX memory_session_time ON memory(session_id, created_at);
CREATE INDEX memory_time ON memory(created_at);
CREATE INDEX memory_pinned ON memory(pinned) WHERE pinned = 1;

CREATE VIRTUAL TABLE memory_fts USING fts5(
    title, subtitle, narrative, facts, concepts,
    content='memory', content_rowid='rowid',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER memory_ai AFTER INSERT ON memory BEGIN
    INSERT INTO memory_fts(rowid, title, subtitle, narrative, facts, concepts)
    VALUES (new.rowid, new.title, new.subtitle, new.narrative, new.facts, new.concepts);
END;
CREATE TRIGGER memory_ad AFTER DELETE ON memory BEGIN
    INSERT INTO memory_fts(memory_fts, rowid, title, subtitle, narrative, facts, concepts)
    VALUES ('delete', old.rowid, old.title, old.subtitle, old.narrative, old.facts, old.concepts);
END;
CREATE TRIGGER memory_au AFTER UPDATE OF title, subtitle, narrative, facts, concepts ON memory BEGIN
    INSERT INTO memory_fts(memory_fts, rowid, title, subtitle, narrative, facts, concepts)
    VALUES ('delete', old.rowid, old.title, old.subtitle, old.narrative, old.facts, old.concepts);
    INSERT INTO memory_fts(rowid, title, subtitle, narrative, facts, concepts)
    VALUES (new.rowid, new.title, new.subtitle, new.narrative, new.facts, new.concepts);
END;

CREATE TABLE session (
    id TEXT PRIMARY KEY,
    project TEXT NOT NULL,
    tool TEXT,
    started_at INTEGER NOT NULL,
    last_event_at INTEGER NOT NULL,
    ended_at INTEGER,
    first_request TEXT,
    summary_memory_id TEXT,
    event_count INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX session_project ON session(project, last_event_at);

CREATE TABLE stop_queue (
    session_id TEXT PRIMARY KEY,
    project TEXT NOT NULL,
    tool TEXT,
    queued_at INTEGER NOT NULL
);

CREATE TABLE job (
    id INTEGER PRIMARY KEY,
    type TEXT NOT NULL DEFAULT 'extract_session',
    session_id TEXT NOT NULL,
    project TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'pending'
        CHECK (state IN ('pending', 'running', 'retry_wait', 'done', 'dead')),
    attempts INTEGER NOT NULL DEFAULT 0,
    max_attempts INTEGER NOT NULL DEFAULT 5,
    lease_owner TEXT,
    lease_expires_at INTEGER,
    next_run_at INTEGER NOT NULL,
    last_error TEXT,
    result TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    finished_at INTEGER
);
CREATE INDEX job_due ON job(state, next_run_at);
CREATE INDEX job_session ON job(session_id);
-- At most one unfinished job per session: duplicate stop events give one job.
CREATE UNIQUE INDEX job_one_open_per_session ON job(type, session_id)
    WHERE state IN ('pending', 'running', 'retry_wait');

CREATE TABLE fact (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    project TEXT NOT NULL,
    scope TEXT NOT NULL DEFAULT 'project' CHECK (scope IN ('project', 'global')),
    session_id TEXT,
    kind TEXT NOT NULL DEFAULT 'fact',
    text TEXT NOT NULL,
    confidence REAL NOT NULL,
    source_ids TEXT NOT NULL DEFAULT '[]',
    status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'superseded', 'dismissed')),
    extractor TEXT NOT NULL DEFAULT 'rules',
    content_hash TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    UNIQUE (project, content_hash)
);
CREATE INDEX fact_project ON fact(project, status);
CREATE VIRTUAL TABLE fact_fts USING fts5(
    text, content='fact', content_rowid='rowid',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER fact_ai AFTER INSERT ON fact BEGIN
    INSERT INTO fact_fts(rowid, text) VALUES (new.rowid, new.text);
END;
CREATE TRIGGER fact_ad AFTER DELETE ON fact BEGIN
    INSERT INTO fact_fts(fact_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
END;
CREATE TRIGGER fact_au AFTER UPDATE OF text ON fact BEGIN
    INSERT INTO fact_fts(fact_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
    INSERT INTO fact_fts(rowid, text) VALUES (new.rowid, new.text);
END;

CREATE TABLE rule (
    id TEXT PRIMARY KEY,
    project TEXT,
    text TEXT NOT NULL,
    enabled INTEGER NOT NULL DEFAULT 1,
    tools TEXT NOT NULL DEFAULT '[]',
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);

CREATE TABLE receipt (
    id TEXT PRIMARY KEY,
    created_at INTEGER NOT NULL,
    body TEXT NOT NULL,
    signature TEXT NOT NULL
);

CREATE TABLE setting (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    updated_at INTEGER NOT NULL
);
"""

# Compression: when the job's latest Huey message was sent (the ticker re-sends one
# for a job whose message was lost) and when its latest attempt started; the provider's token
# use per UTC day (a budget shared by every worker); an index over the worker's own memories
# (summaries), so superseding a project summary never scans the project's memories.
MIGRATION_2 = """
ALTER TABLE job ADD COLUMN enqueued_at INTEGER;
ALTER TABLE job ADD COLUMN started_at INTEGER;

CREATE TABLE provider_usage (
    day TEXT PRIMARY KEY,
    tokens INTEGER NOT NULL DEFAULT 0,
    calls INTEGER NOT NULL DEFAULT 0,
    updated_at INTEGER NOT NULL
);

CREATE INDEX memory_worker_rows ON memory(project, kind, session_id) WHERE source = 'worker';
"""

MIGRATION_3 = """
-- Search: live memories per (project, scope), so a search knows its scope's size without
-- counting (the 20 % rule of query shaping needs it on every query).
CREATE TABLE memory_count (
    project TEXT NOT NULL,
    scope TEXT NOT NULL,
    n INTEGER NOT NULL,
    PRIMARY KEY (project, scope)
) WITHOUT ROWID;
INSERT INTO memory_count(project, scope, n)
    SELECT project, scope, count(*) FROM memory WHERE dismissed_at IS NULL GROUP BY project, scope;
CREATE TRIGGER memory_count_ai AFTER INSERT ON memory WHEN new.dismissed_at IS NULL BEGIN
    INSERT INTO memory_count(project, scope, n) VALUES (new.project, new.scope, 1)
    ON CONFLICT(project, scope) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER memory_count_ad AFTER DELETE ON memory WHEN old.dismissed_at IS NULL BEGIN
    UPDATE memory_count SET n = n - 1 WHERE project = old.project AND scope = old.scope;
END;
CREATE TRIGGER memory_count_au AFTER UPDATE OF project, scope, dismissed_at ON memory BEGIN
    UPDATE memory_count SET n = n - 1
        WHERE old.dismissed_at IS NULL AND project = old.project AND scope = old.scope;
    INSERT INTO memory_count(project, scope, n)
        SELECT new.project, new.scope, 1 WHERE new.dismissed_at IS NULL
    ON CONFLICT(project, scope) DO UPDATE SET n = n + 1;
END;
-- A project-scoped search also sees promoted (global) memories: this keeps that OR indexed.
CREATE INDEX memory_global ON memory(created_at) WHERE scope = 'global';

-- Semantic search (the optional extra): one float32 vector per memory, keyed by its rowid.
-- Filled in the background (never by the hook); erase deletes it with the memory.
CREATE TABLE memory_vec (
    rowid INTEGER PRIMARY KEY,
    model TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX memory_vec_model ON memory_vec(model);
CREATE TRIGGER memory_vec_ad AFTER DELETE ON memory BEGIN
    DELETE FROM memory_vec WHERE rowid = old.rowid;
END;
CREATE TRIGGER memory_vec_au AFTER UPDATE OF title, subtitle, narrative ON memory BEGIN
    DELETE FROM memory_vec WHERE rowid = old.rowid;
END;
"""

# Search at scale: each memory's project (and "global" once promoted) as a token in its own
# full-text column, so a project-scoped query is cut to the project's postings inside FTS5 —
# BM25 and the row look-ups then touch ~1/20 of what they did at 20 projects — instead of
# being filtered after ranking.  The column has weight 0 in bm25(); it never scores.  The
# token is 'p' + hex(project) (one alphanumeric token whatever the path holds); it is only a
# pre-filter: the SQL project filter still decides.  The index is rebuilt (about 1 s per
# 50,000 memories); the hook never runs an upgrade (db.connect(upgrade=False)).
MIGRATION_4 = """
ALTER TABLE memory ADD COLUMN fts_scope TEXT GENERATED ALWAYS AS
    ('p' || hex(project) || CASE scope WHEN 'global' THEN ' zglobal' ELSE '' END) VIRTUAL;
DROP TRIGGER memory_ai;
DROP TRIGGER memory_ad;
DROP TRIGGER memory_au;
DROP TABLE memory_fts;
CREATE VIRTUAL TABLE memory_fts USING fts5(
    title, subtitle, narrative, facts, concepts, fts_scope,
    content='memory', content_rowid='rowid',
    tokenize='porter unicode61 remove_diacritics 2'
);
INSERT INTO memory_fts(memory_fts) VALUES ('rebuild');
CREATE TRIGGER memory_ai AFTER INSERT ON memory BEGIN
    INSERT INTO memory_fts(rowid, title, subtitle, narrative, facts, concepts, fts_scope)
    VALUES (new.rowid, new.title, new.subtitle, new.narrative, new.facts, new.concepts,
            new.fts_scope);
END;
CREATE TRIGGER memory_ad AFTER DELETE ON memory BEGIN
    INSERT INTO memory_fts(memory_fts, rowid, title, subtitle, narrative, facts, concepts,
                           fts_scope)
    VALUES ('delete', old.rowid, old.title, old.subtitle, old.narrative, old.facts,
            old.concepts, old.fts_scope);
END;
CREATE TRIGGER memory_au AFTER UPDATE OF title, subtitle, narrative, facts, concepts, project,
    scope ON memory BEGIN
    INSERT INTO memory_fts(memory_fts, rowid, title, subtitle, narrative, facts, concepts,
                           fts_scope)
    VALUES ('delete', old.rowid, old.title, old.subtitle, old.narrative, old.facts,
            old.concepts, old.fts_scope);
    INSERT INTO memory_fts(rowid, title, subtitle, narrative, facts, concepts, fts_scope)
    VALUES (new.rowid, new.title, new.subtitle, new.narrative, new.facts, new.concepts,
            new.fts_scope);
END;
"""


def scope_token(project: str) -> str:
    """The ``fts_scope`` token of a project's memories, as MIGRATION_4 generates it."""
    return "p" + project.encode("utf-8", "surrogatepass").hex().upper()


# Tombstones: hashes (never text) of what erase removed, checked by the store's write API so an
# import, a spool replay or a bundle cannot bring it back; shingles (8-word window hashes) per
# receipt find derived copies at erase time and let `receipts verify` check none came back.
MIGRATION_5 = """
CREATE TABLE tombstone (
    hash TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    receipt_id TEXT,
    created_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE erased_shingle (
    receipt_id TEXT NOT NULL,
    hash INTEGER NOT NULL,
    PRIMARY KEY (receipt_id, hash)
) WITHOUT ROWID;
"""

# Project knowledge.  A fact may fill a slot (``subject``: "command:test",
# "tool:package-manager", "dep:fastapi", "port:dev-server" …) with a ``value``; a newer fact in
# the same slot supersedes the older one (kept, ``status = 'superseded'``, ``superseded_by``
# links the chain).  Evidence decides what reaches the block: the sessions that support a fact
# (``session_ids``), how often a passing command or the project's own files confirmed it
# (``confirmed``), and whether the user said it (``stated``).  ``observed_at`` is the time of the
# newest memory behind it: sessions compressed out of order cannot make an old choice current.
#
# ``context_state`` counts changes that alter a project's context block (facts, the worker's
# summaries, pins, dismissals, promotions, rules, settings; '*' for what every project sees), so
# a block precomputed at version N is known current with one indexed read.  Hook captures
# (source 'hook', unpinned, project scope, not notes) do not count.
MIGRATION_CONTEXT = """
ALTER TABLE fact ADD COLUMN subject TEXT;
ALTER TABLE fact ADD COLUMN value TEXT;
ALTER TABLE fact ADD COLUMN session_ids TEXT NOT NULL DEFAULT '[]';
ALTER TABLE fact ADD COLUMN confirmed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE fact ADD COLUMN stated INTEGER NOT NULL DEFAULT 0;
ALTER TABLE fact ADD COLUMN observed_at INTEGER;
ALTER TABLE fact ADD COLUMN superseded_by TEXT;
UPDATE fact SET observed_at = created_at,
    session_ids = CASE WHEN session_id IS NULL THEN '[]' ELSE json_array(session_id) END;
CREATE INDEX fact_subject ON fact(project, subject, status) WHERE subject IS NOT NULL;
-- The block reads a project's facts and the promoted (global) ones: both by index.
CREATE INDEX fact_global ON fact(status) WHERE scope = 'global';
-- Notes saved by hand are listed in the block's recent work: found without scanning the hooks'.
CREATE INDEX memory_notes ON memory(project, created_at) WHERE kind = 'note';

CREATE TABLE context_state (
    project TEXT PRIMARY KEY,
    version INTEGER NOT NULL,
    changed_at INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TRIGGER context_fact_ai AFTER INSERT ON fact BEGIN
    INSERT INTO context_state(project, version, changed_at)
    VALUES (CASE new.scope WHEN 'global' THEN '*' ELSE new.project END, 1, new.updated_at)
    ON CONFLICT(project) DO UPDATE SET version = version + 1, changed_at = excluded.changed_at;
END;
CREATE TRIGGER context_fact_au AFTER UPDATE ON fact BEGIN
    INSERT INTO context_state(project, version, changed_at)
    VALUES (CASE WHEN new.scope = 'global' OR old.scope = 'global' THEN '*' ELSE new.project END,
            1, new.updated_at)
    ON CONFLICT(project) DO UPDATE SET version = version + 1, changed_at = excluded.changed_at;
END;
CREATE TRIGGER context_fact_ad AFTER DELETE ON fact BEGIN
    INSERT INTO context_state(project, version, changed_at)
    VALUES (CASE old.scope WHEN 'global' THEN '*' ELSE old.project END, 1, old.updated_at)
    ON CONFLICT(project) DO UPDATE SET version = version + 1;
END;
CREATE TRIGGER context_memory_ai AFTER INSERT ON memory
WHEN new.source = 'worker' OR new.pinned = 1 OR new.scope = 'global' OR new.kind = 'note' BEGIN
    INSERT INTO context_state(project, version, changed_at)
    VALUES (CASE new.scope WHEN 'global' THEN '*' ELSE new.project END, 1, new.created_at)
    ON CONFLICT(project) DO UPDATE SET version = version + 1, changed_at = excluded.changed_at;
END;
CREATE TRIGGER context_memory_au AFTER UPDATE OF pinned, dismissed_at, scope, title, kind ON memory
WHEN new.source = 'worker' OR new.pinned = 1 OR old.pinned = 1 OR new.scope = 'global'
    OR old.scope = 'global' OR old.dismissed_at IS NOT new.dismissed_at OR new.kind = 'note' BEGIN
    INSERT INTO context_state(project, version, changed_at)
    VALUES (CASE WHEN new.scope = 'global' OR old.scope = 'global' THEN '*' ELSE new.project END,
            1, coalesce(new.updated_at, new.created_at))
    ON CONFLICT(project) DO UPDATE SET version = version + 1, changed_at = excluded.changed_at;
END;
CREATE TRIGGER context_memory_ad AFTER DELETE ON memory
WHEN old.source = 'worker' OR old.pinned = 1 OR old.scope = 'global' OR old.kind = 'note' BEGIN
    INSERT INTO context_state(project, version, changed_at)
    VALUES (CASE old.scope WHEN 'global' THEN '*' ELSE old.project END, 1, old.created_at)
    ON CONFLICT(project) DO UPDATE SET version = version + 1;
END;
CREATE TRIGGER context_rule_ai AFTER INSERT ON rule BEGIN
    INSERT INTO context_state(project, version, changed_at)
    VALUES (coalesce(new.project, '*'), 1, new.updated_at)
    ON CONFLICT(project) DO UPDATE SET version = version + 1, changed_at = excluded.changed_at;
END;
CREATE TRIGGER context_rule_au AFTER UPDATE ON rule BEGIN
    INSERT INTO context_state(project, version, changed_at)
    VALUES (CASE WHEN new.project IS old.project THEN coalesce(new.project, '*') ELSE '*' END,
            1, new.updated_at)
    ON CONFLICT(project) DO UPDATE SET version = version + 1, changed_at = excluded.changed_at;
END;
CREATE TRIGGER context_rule_ad AFTER DELETE ON rule BEGIN
    INSERT INTO context_state(project, version, changed_at)
    VALUES (coalesce(old.project, '*'), 1, old.updated_at)
    ON CONFLICT(project) DO UPDATE SET version = version + 1;
END;
CREATE TRIGGER context_setting_ai AFTER INSERT ON setting BEGIN
    INSERT INTO context_state(project, version, changed_at) VALUES ('*', 1, new.updated_at)
    ON CONFLICT(project) DO UPDATE SET version = version + 1, changed_at = excluded.changed_at;
END;
CREATE TRIGGER context_setting_au AFTER UPDATE ON setting BEGIN
    INSERT INTO context_state(project, version, changed_at) VALUES ('*', 1, new.updated_at)
    ON CONFLICT(project) DO UPDATE SET version = version + 1, changed_at = excluded.changed_at;
END;
CREATE TRIGGER context_setting_ad AFTER DELETE ON setting BEGIN
    INSERT INTO context_state(project, version, changed_at) VALUES ('*', 1, old.updated_at)
    ON CONFLICT(project) DO UPDATE SET version = version + 1;
END;
"""

# Search: code identifiers found by their parts.  ``idents`` holds what
# ``aletheia.idents.index_text`` derives from a memory's text — the parts of CamelCase names,
# the joined form of snake_case/kebab-case ones — as a seventh full-text column (weight 1), so
# ``InvalidAccessKeyId`` is found by "access key" and ``--no-verify`` by "noverify".  The write
# API fills it; this upgrade fills it for what is stored (the ``aletheia_idents`` function, which
# ``db`` registers for the upgrade) and rebuilds the index: about 2 s per 50,000 memories, about
# a minute per 1,000,000 (the hook never runs an upgrade).
MIGRATION_IDENTS = """
DROP TRIGGER memory_ai;
DROP TRIGGER memory_ad;
DROP TRIGGER memory_au;
ALTER TABLE memory ADD COLUMN idents TEXT NOT NULL DEFAULT '';
UPDATE memory SET idents = aletheia_idents(title, subtitle, narrative, facts, concepts)
    WHERE aletheia_idents(title, subtitle, narrative, facts, concepts) != '';
DROP TABLE memory_fts;
CREATE VIRTUAL TABLE memory_fts USING fts5(
    title, subtitle, narrative, facts, concepts, fts_scope, idents,
    content='memory', content_rowid='rowid',
    tokenize='porter unicode61 remove_diacritics 2'
);
INSERT INTO memory_fts(memory_fts) VALUES ('rebuild');
CREATE TRIGGER memory_ai AFTER INSERT ON memory BEGIN
    INSERT INTO memory_fts(rowid, title, subtitle, narrative, facts, concepts, fts_scope, idents)
    VALUES (new.rowid, new.title, new.subtitle, new.narrative, new.facts, new.concepts,
            new.fts_scope, new.idents);
END;
CREATE TRIGGER memory_ad AFTER DELETE ON memory BEGIN
    INSERT INTO memory_fts(memory_fts, rowid, title, subtitle, narrative, facts, concepts,
                           fts_scope, idents)
    VALUES ('delete', old.rowid, old.title, old.subtitle, old.narrative, old.facts,
            old.concepts, old.fts_scope, old.idents);
END;
CREATE TRIGGER memory_au AFTER UPDATE OF title, subtitle, narrative, facts, concepts, project,
    scope, idents ON memory BEGIN
    INSERT INTO memory_fts(memory_fts, rowid, title, subtitle, narrative, facts, concepts,
                           fts_scope, idents)
    VALUES ('delete', old.rowid, old.title, old.subtitle, old.narrative, old.facts,
            old.concepts, old.fts_scope, old.idents);
    INSERT INTO memory_fts(rowid, title, subtitle, narrative, facts, concepts, fts_scope, idents)
    VALUES (new.rowid, new.title, new.subtitle, new.narrative, new.facts, new.concepts,
            new.fts_scope, new.idents);
END;
"""

# The block lists a session by its first request until the session is compressed, so a new
# session (or its first prompt) changes the block too: one change per session, not per event.
MIGRATION_CONTEXT_SESSIONS = """
-- A session's first request appears in recent work until the session is compressed.
CREATE TRIGGER context_session_ai AFTER INSERT ON session WHEN new.first_request IS NOT NULL BEGIN
    INSERT INTO context_state(project, version, changed_at) VALUES (new.project, 1, new.started_at)
    ON CONFLICT(project) DO UPDATE SET version = version + 1, changed_at = excluded.changed_at;
END;
CREATE TRIGGER context_session_au AFTER UPDATE OF first_request ON session
WHEN old.first_request IS NULL AND new.first_request IS NOT NULL BEGIN
    INSERT INTO context_state(project, version, changed_at) VALUES (new.project, 1, new.last_event_at)
    ON CONFLICT(project) DO UPDATE SET version = version + 1, changed_at = excluded.changed_at;
END;
"""

# Faults (issue 14): each worker's heartbeat, so ``doctor`` tells a running worker from none and
# says when sessions wait with nobody to compress them.  One row per worker, pruned.
MIGRATION_9 = """
CREATE TABLE worker (
    name TEXT PRIMARY KEY,
    hostname TEXT NOT NULL,
    pid INTEGER NOT NULL,
    started_at INTEGER NOT NULL,
    beat_at INTEGER NOT NULL,
    stopped_at INTEGER
);
"""

# Search speed (issue 11): what an unread memory says it changed, kept once a search has worked
# it out (``aletheia.stated``; ``rules`` says with which patterns).  Derived: an edit or an
# erase of the memory drops it.  Memories from before have no row and are read as before.
MIGRATION_STATED = """
CREATE TABLE memory_stated (
    rowid INTEGER PRIMARY KEY,
    rules TEXT NOT NULL,
    olds TEXT NOT NULL
);
CREATE TRIGGER memory_stated_ad AFTER DELETE ON memory BEGIN
    DELETE FROM memory_stated WHERE rowid = old.rowid;
END;
CREATE TRIGGER memory_stated_au AFTER UPDATE OF title, subtitle, narrative, concepts ON memory BEGIN
    DELETE FROM memory_stated WHERE rowid = old.rowid;
END;
"""

# Search speed (issue 11): a count of the changes to what the index holds of a stored memory
# (an edit of its indexed text, its project or scope; a delete).  A new memory does not count:
# it is a new rowid.  So a search process keeps the index's token count per memory
# (``search._doc_sizes``) and knows its copy current with one read: a scoped query on a common
# word read ~1,400 of them from the index each time.  One row; a hook's insert writes nothing
# more.
MIGRATION_EDITS = """
CREATE TABLE memory_edits (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    n INTEGER NOT NULL
);
-- (from a random count: a store made anew at the same path is never taken for the old one)
INSERT INTO memory_edits(id, n) VALUES (1, abs(random() % 1000000000000));
CREATE TRIGGER memory_edits_au AFTER UPDATE OF title, subtitle, narrative, facts, concepts, project,
    scope, idents ON memory BEGIN
    UPDATE memory_edits SET n = n + 1 WHERE id = 1;
END;
CREATE TRIGGER memory_edits_ad AFTER DELETE ON memory BEGIN
    UPDATE memory_edits SET n = n + 1 WHERE id = 1;
END;
"""

# Search speed (issue 11): the edits of a dependency manifest, by project and time.  Search
# follows a dependency one of them swapped (``search._swapped_later``); it found them with a match
# of the manifests' names in the index, whose words ("build", "description", "go") a common query
# shares: ~5 ms of a scoped query at 50,000 memories, growing with the store.  A partial index
# holds only these rows (no trigger, nothing for a hook to compute).  The names are
# ``followed.MANIFESTS`` as of this migration (a test keeps the two the same: a name added there
# needs a migration that makes the index again); LIKE finds more than the file names (any case,
# anywhere in the title), and search reads the edit to know.
MANIFEST_FILES = ("package.json", "pyproject.toml", "requirements.txt", "Cargo.toml", "go.mod", "Gemfile",
                  "mix.exs", "composer.json", "vcpkg.json", "conanfile.txt", "libs.versions.toml",
                  "build.gradle", "build.gradle.kts", "pom.xml", "pubspec.yaml", "Package.swift", "deno.json",
                  "Podfile", "DESCRIPTION", "flake.nix", "stack.yaml")
MANIFEST_EDIT = ("kind = 'tool_event' AND (title LIKE 'Edit %' OR title LIKE 'MultiEdit %') AND ("
                 + " OR ".join(f"title LIKE '%{name}%'" for name in MANIFEST_FILES) + ")")
MIGRATION_MANIFEST_EDITS = f"""
CREATE INDEX memory_manifest_edits ON memory(project, created_at) WHERE {MANIFEST_EDIT};
"""

# Search speed (issue 11): what a prompt or an answer says of the tool of each purpose, and what a
# command installs, kept once a search has worked it out (``stated.tool_claims``; ``rules`` says
# with which patterns).  Derived: an edit or an erase of the memory drops it.
MIGRATION_CLAIMS = """
CREATE TABLE memory_claims (
    rowid INTEGER PRIMARY KEY,
    rules TEXT NOT NULL,
    named TEXT NOT NULL,
    claims TEXT NOT NULL
);
CREATE TRIGGER memory_claims_ad AFTER DELETE ON memory BEGIN
    DELETE FROM memory_claims WHERE rowid = old.rowid;
END;
CREATE TRIGGER memory_claims_au AFTER UPDATE OF kind, title, subtitle, narrative, concepts ON memory BEGIN
    DELETE FROM memory_claims WHERE rowid = old.rowid;
END;
"""

MIGRATIONS: dict[int, str] = {
    1: MIGRATION_1,
    2: MIGRATION_2,
    3: MIGRATION_3,
    4: MIGRATION_4,
    5: MIGRATION_5,
    6: MIGRATION_CONTEXT,
    7: MIGRATION_IDENTS,
    8: MIGRATION_CONTEXT_SESSIONS,
    9: MIGRATION_9,
    10: MIGRATION_STATED,
    11: MIGRATION_EDITS,
    12: MIGRATION_MANIFEST_EDITS,
    13: MIGRATION_CLAIMS,
}
