//! The store's tables and their migrations. The version table says which
//! migrations a store has had; lancet applies the missing ones when it
//! opens a store, under a lock, so shards starting together migrate once.

use super::backend::Backend;
use anyhow::{bail, Context};

/// Each migration, in order; a store at version `n` has had the first `n`.
/// Written in the SQL both SQLite and PostgreSQL accept.
const MIGRATIONS: &[&str] = &[
    // 1: runs, their samples, findings, signatures and root-cause groups.
    "CREATE TABLE lancet_runs (
        run_id TEXT PRIMARY KEY,
        dbms TEXT NOT NULL,
        dbms_version TEXT NOT NULL,
        seed BIGINT NOT NULL,
        shard_index BIGINT NOT NULL,
        shard_count BIGINT NOT NULL,
        threads BIGINT NOT NULL,
        oracles TEXT NOT NULL,
        host TEXT NOT NULL,
        lancet_version TEXT NOT NULL,
        started_unix BIGINT NOT NULL,
        summary TEXT
    );
    CREATE TABLE lancet_samples (
        run_id TEXT NOT NULL,
        seq BIGINT NOT NULL,
        elapsed DOUBLE PRECISION NOT NULL,
        unix BIGINT NOT NULL,
        checks BIGINT NOT NULL,
        skipped BIGINT NOT NULL,
        nonempty BIGINT NOT NULL,
        statements BIGINT NOT NULL,
        databases BIGINT NOT NULL,
        findings BIGINT NOT NULL,
        plans BIGINT NOT NULL,
        per_oracle TEXT NOT NULL,
        PRIMARY KEY (run_id, seq)
    );
    CREATE TABLE lancet_signatures (
        signature TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        oracle TEXT,
        relation TEXT
    );
    CREATE TABLE lancet_run_bugs (
        run_id TEXT NOT NULL,
        signature TEXT NOT NULL,
        count BIGINT NOT NULL,
        not_written BIGINT NOT NULL,
        PRIMARY KEY (run_id, signature)
    );
    CREATE TABLE lancet_findings (
        run_id TEXT NOT NULL,
        file TEXT NOT NULL,
        signature TEXT NOT NULL,
        kind TEXT NOT NULL,
        oracle TEXT,
        found_unix BIGINT NOT NULL,
        seed BIGINT,
        thread BIGINT,
        db BIGINT,
        statements BIGINT NOT NULL,
        bytes BIGINT NOT NULL,
        reduced BIGINT NOT NULL,
        sql TEXT NOT NULL,
        record TEXT NOT NULL,
        PRIMARY KEY (run_id, file)
    );
    CREATE INDEX lancet_findings_signature ON lancet_findings (signature);
    CREATE TABLE lancet_groups (
        signature TEXT NOT NULL,
        label TEXT NOT NULL,
        PRIMARY KEY (signature, label)
    );",
    // 2: which bug each signature is an instance of (see the binary's
    // `bug` module), and the query that shows it.
    "CREATE TABLE lancet_bug_of (
        signature TEXT PRIMARY KEY,
        bug TEXT NOT NULL,
        core TEXT NOT NULL
    );",
];

/// The schema version this lancet writes.
pub fn current() -> i64 {
    MIGRATIONS.len() as i64
}

/// Brings the store to the current version. Refuses a store written by a
/// newer lancet rather than guess at its tables.
pub fn migrate(db: &mut Backend) -> anyhow::Result<()> {
    db.begin()?;
    let result = migrate_locked(db);
    match result {
        Ok(()) => db.commit(),
        Err(e) => {
            db.rollback();
            Err(e)
        }
    }
}

fn migrate_locked(db: &mut Backend) -> anyhow::Result<()> {
    if db.is_postgres() {
        // One migrator at a time across the fleet; held to the commit.
        db.batch("SELECT pg_advisory_xact_lock(7412350157120532)")?;
    }
    db.batch("CREATE TABLE IF NOT EXISTS lancet_store_version (version BIGINT NOT NULL)")?;
    let rows = db.query("SELECT version FROM lancet_store_version", &[])?;
    let version = match rows.as_slice() {
        [] => {
            db.execute("INSERT INTO lancet_store_version (version) VALUES (0)", &[])?;
            0
        }
        [row] => row[0].int(),
        _ => bail!(
            "the store's lancet_store_version table has several rows; it was not made by lancet"
        ),
    };
    if version > current() {
        bail!(
            "the store has schema version {version}, written by a newer lancet; this one knows \
             versions up to {}",
            current()
        );
    }
    for (i, step) in MIGRATIONS.iter().enumerate().skip(version as usize) {
        db.batch(step)
            .with_context(|| format!("migrating the store to schema version {}", i + 1))?;
    }
    db.execute(
        "UPDATE lancet_store_version SET version = $1",
        &[current().into()],
    )?;
    Ok(())
}
