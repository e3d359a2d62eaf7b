//! Versioned schema migrations. The database's `user_version` is the number
//! of migrations applied; each runs in its own transaction with the version
//! bump, so a failed one leaves the database as it was.

use rusqlite::Connection;

use super::StoreError;

/// One schema step. Never edit a released one: add the next.
pub struct Migration {
    pub description: &'static str,
    pub sql: &'static str,
}

pub const MIGRATIONS: &[Migration] = &[
    Migration {
        description: "sessions, append-only messages, batches, tool calls with history, settings, pins, audit log",
        sql: r#"
CREATE TABLE sessions (
    id          TEXT PRIMARY KEY,
    title       TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);

CREATE TABLE messages (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id    TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    run_id        TEXT,
    role          TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool', 'notice')),
    content       TEXT NOT NULL,
    tool_calls    TEXT,
    tool_call_id  TEXT,
    call_id       TEXT,
    created_at    INTEGER NOT NULL
);
CREATE INDEX messages_by_session ON messages(session_id, id);
CREATE TRIGGER messages_are_append_only BEFORE UPDATE ON messages
BEGIN
    SELECT RAISE(ABORT, 'messages are append-only');
END;

CREATE TABLE batches (
    reply_id              TEXT PRIMARY KEY,
    session_id            TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    run_id                TEXT NOT NULL,
    assistant_message_id  INTEGER NOT NULL,
    state                 TEXT NOT NULL
        CHECK (state IN ('pending', 'executing', 'done', 'superseded', 'expired')),
    created_at            INTEGER NOT NULL,
    expires_at            INTEGER NOT NULL
);
CREATE UNIQUE INDEX one_open_batch_per_session
    ON batches(session_id) WHERE state IN ('pending', 'executing');

CREATE TABLE tool_calls (
    id                  TEXT PRIMARY KEY,
    session_id          TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    reply_id            TEXT NOT NULL REFERENCES batches(reply_id) ON DELETE CASCADE,
    seq                 INTEGER NOT NULL,
    model_call_id       TEXT NOT NULL,
    qualified_name      TEXT NOT NULL,
    server              TEXT,
    tool                TEXT,
    title               TEXT,
    description         TEXT,
    proposed_arguments  TEXT NOT NULL,
    arguments           TEXT,
    arguments_hash      TEXT,
    approved_hash       TEXT,
    input_schema        TEXT,
    destructive         INTEGER NOT NULL DEFAULT 0,
    definition_changed  INTEGER NOT NULL DEFAULT 0,
    sends_key           INTEGER NOT NULL DEFAULT 0,
    status              TEXT NOT NULL,
    output              TEXT,
    is_error            INTEGER NOT NULL DEFAULT 0,
    created_at          INTEGER NOT NULL,
    updated_at          INTEGER NOT NULL,
    UNIQUE (reply_id, seq)
);
CREATE INDEX tool_calls_by_status ON tool_calls(status);

CREATE TABLE tool_call_history (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    call_id      TEXT NOT NULL REFERENCES tool_calls(id) ON DELETE CASCADE,
    from_status  TEXT,
    to_status    TEXT NOT NULL,
    note         TEXT,
    at           INTEGER NOT NULL
);

CREATE TABLE settings (
    key         TEXT PRIMARY KEY,
    value       TEXT NOT NULL,
    updated_at  INTEGER NOT NULL
);

CREATE TABLE tool_pins (
    server      TEXT NOT NULL,
    tool        TEXT NOT NULL,
    hash        TEXT NOT NULL,
    definition  TEXT NOT NULL,
    pinned_at   INTEGER NOT NULL,
    PRIMARY KEY (server, tool)
);

-- Kept when a session is deleted: the audit outlives the chat.
CREATE TABLE audit_log (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    at              INTEGER NOT NULL,
    session_id      TEXT NOT NULL,
    call_id         TEXT NOT NULL,
    server          TEXT NOT NULL,
    tool            TEXT NOT NULL,
    arguments_hash  TEXT NOT NULL,
    decision        TEXT NOT NULL,
    reason          TEXT
);
"#,
    },
    Migration {
        description: "indexes for a session's calls and a call's history, so reading a transcript or deleting a session does not scan every call; none by status, which nothing reads and every move rewrote",
        sql: r#"
CREATE INDEX tool_calls_by_session ON tool_calls(session_id, created_at);
CREATE INDEX tool_call_history_by_call ON tool_call_history(call_id);
DROP INDEX tool_calls_by_status;
"#,
    },
    Migration {
        description: "audit rows for an accepted tool definition: the pinned hash before and after",
        sql: r#"
ALTER TABLE audit_log ADD COLUMN old_definition_hash TEXT;
ALTER TABLE audit_log ADD COLUMN new_definition_hash TEXT;
"#,
    },
    Migration {
        description: "a call's flag named for what it means: the call can change something (it carries an idempotency key and is stored before it is sent)",
        sql: r#"
ALTER TABLE tool_calls RENAME COLUMN sends_key TO can_change;
"#,
    },
    Migration {
        description: "what a card shows of a call: the server's trust, the tool's read-only claim, and the preview computed by the server (with the tool that computes it); a result's structured content, why code refused a call and the user's reason for denying one; the preview each decision was taken on, in the audit log",
        sql: r#"
ALTER TABLE tool_calls ADD COLUMN trusted INTEGER NOT NULL DEFAULT 1;
ALTER TABLE tool_calls ADD COLUMN declares_read_only INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tool_calls ADD COLUMN preview_tool TEXT;
ALTER TABLE tool_calls ADD COLUMN preview TEXT;
ALTER TABLE tool_calls ADD COLUMN structured_output TEXT;
ALTER TABLE tool_calls ADD COLUMN rejection TEXT;
ALTER TABLE tool_calls ADD COLUMN deny_reason TEXT;
ALTER TABLE audit_log ADD COLUMN preview TEXT;
"#,
    },
    Migration {
        description: "answers the user asked the model to write again: kept, but no longer part of the conversation (messages stay append-only); and how a session's last run failed, until the next one starts",
        sql: r#"
CREATE TABLE withdrawn_messages (
    message_id    INTEGER PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
    withdrawn_at  INTEGER NOT NULL
);
CREATE TABLE run_failures (
    session_id  TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
    run_id      TEXT NOT NULL,
    error       TEXT NOT NULL,
    failed_at   INTEGER NOT NULL
);
"#,
    },
    Migration {
        description: "what a call's server asked the user for (MCP input requests), one row a round: the requests and the server's requestState exactly as received, when it expires, and the responses sent back",
        sql: r#"
CREATE TABLE input_requests (
    id             TEXT PRIMARY KEY,
    call_id        TEXT NOT NULL REFERENCES tool_calls(id) ON DELETE CASCADE,
    session_id     TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    round          INTEGER NOT NULL,
    requests       TEXT NOT NULL,
    request_state  TEXT,
    created_at     INTEGER NOT NULL,
    expires_at     INTEGER NOT NULL,
    responses      TEXT,
    answered_at    INTEGER,
    UNIQUE (call_id, round)
);
CREATE INDEX input_requests_by_session ON input_requests(session_id);
"#,
    },
    Migration {
        description: "what a card's badge says a call risks (moves money, reaches out, irreversible, undoable, adds, reads); calls stored before it are read from whether they were shown destructive",
        sql: r#"
ALTER TABLE tool_calls ADD COLUMN risk TEXT;
"#,
    },
    Migration {
        description: "what labels a call's arguments once it is history: its tool's input schema cut down to titles and choices; calls stored before it keep their full schema there",
        sql: r#"
ALTER TABLE tool_calls ADD COLUMN labels_schema TEXT;
UPDATE tool_calls SET labels_schema = input_schema;
"#,
    },
    Migration {
        description: "the shopper's checkout mandates: made when they approve a merchant's signed checkout, sent with its completion, kept with the merchant's signature and, once completed, the merchant's signed receipt",
        sql: r#"
CREATE TABLE mandates (
    call_id              TEXT PRIMARY KEY REFERENCES tool_calls(id) ON DELETE CASCADE,
    session_id           TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    server               TEXT NOT NULL,
    merchant             TEXT NOT NULL,
    checkout_id          TEXT NOT NULL,
    checkout             TEXT NOT NULL,
    merchant_signature   TEXT NOT NULL,
    merchant_keys        TEXT NOT NULL,
    mandate              TEXT NOT NULL,
    created_at           INTEGER NOT NULL,
    receipt              TEXT,
    completed_at         INTEGER
);
CREATE INDEX mandates_by_session ON mandates(session_id);
"#,
    },
    Migration {
        description: "a tool's input schema and what labels its arguments, kept once by their hash and named by each call, not copied into every call's row; calls stored before it keep their own copy",
        sql: r#"
CREATE TABLE tool_schemas (
    hash           TEXT PRIMARY KEY,
    input_schema   TEXT NOT NULL,
    labels_schema  TEXT
) WITHOUT ROWID;
ALTER TABLE tool_calls ADD COLUMN schema_hash TEXT REFERENCES tool_schemas(hash);
"#,
    },
];

/// The schema version this build writes.
pub fn known() -> i64 {
    i64::try_from(MIGRATIONS.len()).unwrap_or(i64::MAX)
}

/// Brings the schema up to date.
pub fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    migrate_with(conn, MIGRATIONS)
}

pub(crate) fn migrate_with(
    conn: &mut Connection,
    migrations: &[Migration],
) -> Result<(), StoreError> {
    let current: i64 = conn.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    let known = i64::try_from(migrations.len()).unwrap_or(i64::MAX);
    if current > known {
        return Err(StoreError::TooNew {
            found: current,
            known,
        });
    }
    for (index, migration) in migrations
        .iter()
        .enumerate()
        .skip(usize::try_from(current).unwrap_or(0))
    {
        let version = index + 1;
        tracing::info!(version, migration.description, "migrating database");
        let tx = conn.transaction()?;
        tx.execute_batch(migration.sql)
            .map_err(|source| StoreError::Migration { version, source })?;
        tx.pragma_update(
            None,
            "user_version",
            i64::try_from(version).unwrap_or(i64::MAX),
        )?;
        tx.commit()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn version(conn: &Connection) -> i64 {
        conn.query_row("PRAGMA user_version", [], |row| row.get(0))
            .unwrap()
    }

    const FIRST: Migration = Migration {
        description: "a",
        sql: "CREATE TABLE a (x INTEGER);",
    };
    const SECOND: Migration = Migration {
        description: "b",
        sql: "ALTER TABLE a ADD COLUMN y TEXT;",
    };
    const BROKEN: Migration = Migration {
        description: "broken",
        sql: "CREATE TABLE c (z INTEGER); INSERT INTO nowhere VALUES (1);",
    };

    #[test]
    fn the_real_migrations_apply_once_and_again_change_nothing() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate(&mut conn).unwrap();
        assert_eq!(version(&conn), MIGRATIONS.len() as i64);
        migrate(&mut conn).unwrap();
        assert_eq!(version(&conn), MIGRATIONS.len() as i64);
        let tables: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN
                 ('sessions','messages','batches','tool_calls','tool_call_history','settings','tool_pins','audit_log')",
                [],
                |row| row.get(0),
            )
            .unwrap();
        assert_eq!(tables, 8);
    }

    /// The plan SQLite picks for `sql`, as its detail lines.
    fn plan(conn: &Connection, sql: &str) -> String {
        let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
        let rows = stmt.query_map([], |row| row.get::<_, String>(3)).unwrap();
        rows.map(Result::unwrap).collect::<Vec<_>>().join("; ")
    }

    #[test]
    fn a_sessions_calls_and_a_calls_history_are_found_by_index() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate(&mut conn).unwrap();
        let calls = plan(
            &conn,
            "SELECT id FROM tool_calls WHERE session_id = 's' ORDER BY created_at",
        );
        assert!(calls.contains("tool_calls_by_session"), "{calls}");
        let history = plan(&conn, "DELETE FROM tool_call_history WHERE call_id = 'c'");
        assert!(history.contains("tool_call_history_by_call"), "{history}");
    }

    #[test]
    fn only_the_missing_steps_run_when_a_database_is_behind() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate_with(&mut conn, &[FIRST]).unwrap();
        conn.execute("INSERT INTO a (x) VALUES (7)", []).unwrap();
        migrate_with(&mut conn, &[FIRST, SECOND]).unwrap();
        assert_eq!(version(&conn), 2);
        let kept: i64 = conn.query_row("SELECT x FROM a", [], |r| r.get(0)).unwrap();
        assert_eq!(kept, 7, "the first step did not run again");
    }

    #[test]
    fn a_failing_step_leaves_the_database_as_it_was() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate_with(&mut conn, &[FIRST]).unwrap();
        let err = migrate_with(&mut conn, &[FIRST, BROKEN]).unwrap_err();
        assert!(
            matches!(err, StoreError::Migration { version: 2, .. }),
            "{err:?}"
        );
        assert_eq!(version(&conn), 1);
        let half_done: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE name = 'c'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(half_done, 0);
    }

    #[test]
    fn a_database_from_a_newer_app_is_refused() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.pragma_update(None, "user_version", 99).unwrap();
        let err = migrate(&mut conn).unwrap_err();
        assert!(
            matches!(err, StoreError::TooNew { found: 99, .. }),
            "{err:?}"
        );
    }

    #[test]
    fn messages_cannot_be_rewritten() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate(&mut conn).unwrap();
        conn.execute("INSERT INTO sessions VALUES ('s', 't', 0, 0)", [])
            .unwrap();
        conn.execute(
            "INSERT INTO messages (session_id, role, content, created_at) VALUES ('s', 'user', 'hi', 0)",
            [],
        )
        .unwrap();
        let err = conn
            .execute("UPDATE messages SET content = 'changed'", [])
            .unwrap_err();
        assert!(err.to_string().contains("append-only"), "{err}");
    }
}
