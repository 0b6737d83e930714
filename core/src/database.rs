//! The databases a provider creates for a run, as the runner names,
//! remembers and drops them: below the provider and the transaction
//! capability, which both take them.

use crate::connection::Connection;
use serde::{Deserialize, Serialize};

/// Names one database of a run: `lancet_<run>_<thread>_<index>`. `run` is
/// a token drawn from the operating system's randomness for each process
/// (never the clock or the seed), so that no other process can predict or
/// share a name; the whole name stays within PostgreSQL's 63 bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DatabaseId {
    pub run: String,
    pub thread: u32,
    pub index: u64,
}

/// A database a provider created, as the runner must remember it to drop
/// it later: its name and what identifies it on the server beyond the name
/// (PostgreSQL: its oid). A drop checks both, so that lancet removes only
/// the very database this run created, never one that merely has the name.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct OwnedDatabase {
    pub name: String,
    /// `None` for embedded databases that vanish with their connection, and
    /// in a ledger's record of an intent to create (a run killed between
    /// CREATE and learning the oid): then the unpredictable name and the
    /// owner are the proof.
    pub identity: Option<String>,
}

/// A database a provider just created, and the connection to it.
pub struct CreatedDatabase {
    pub conn: Box<dyn Connection>,
    pub owned: OwnedDatabase,
}

/// Why a provider would not create or drop a database. Carried in an
/// `anyhow` chain; the runner looks for it with `downcast_ref`.
#[derive(Debug, thiserror::Error)]
pub enum DatabaseError {
    /// CREATE found the name taken. lancet never replaces a database: it
    /// picks another name.
    #[error("a database named {0} exists already")]
    NameTaken(String),
    /// CREATE succeeded but the new database cannot be used (no connection
    /// slot left for it, say). Carried as the context of the cause, so
    /// that the caller records the database as its own and drops it later
    /// instead of leaving it unknown on the server.
    #[error("database {} was created but cannot be used", .0.name)]
    CreatedUnusable(OwnedDatabase),
    /// DROP refused: the database is not the one this run created (another
    /// oid), or the role does not own it. Never retried.
    #[error("not dropping database {name}: {why}")]
    NotOurs { name: String, why: String },
}

impl DatabaseId {
    /// The prefix of every database lancet creates; it drops nothing else.
    pub const PREFIX: &'static str = "lancet_";

    pub fn name(&self) -> String {
        format!(
            "{}{}_{}_{}",
            Self::PREFIX,
            self.run,
            self.thread,
            self.index
        )
    }
}
