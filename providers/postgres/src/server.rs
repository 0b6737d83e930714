//! What lancet learns of a PostgreSQL server at start-up and the generator
//! then follows: its major version, which decides the features added since
//! PostgreSQL 15 that are generated ([`VersionFeatures`]), and its planner
//! settings, which are the knobs ([`PlannerSettings`]).
//!
//! Generation depends on the major only, never on the minor release, so a
//! seed regenerates the same database on every server of one major.

use crate::connection::PgConnection;
use crate::knobs::{PlannerSettings, SettingRow, SETTINGS_QUERY};
use anyhow::Context;

/// A server as lancet found it.
#[derive(Clone, Debug)]
pub struct ServerProfile {
    /// `server_version_num / 10000`: 15, 16, 17, 18, ...
    pub major: u32,
    pub planner: PlannerSettings,
}

impl ServerProfile {
    /// Reads the version and the planner settings over `admin`; `shown`
    /// names the server in errors.
    pub fn read(admin: &mut PgConnection, shown: &str) -> anyhow::Result<ServerProfile> {
        let number = admin
            .query_text("SELECT current_setting('server_version_num')", &[])
            .map_err(anyhow::Error::new)
            .and_then(|rows| {
                let text = rows
                    .into_iter()
                    .next()
                    .and_then(|r| r.into_iter().next().flatten())
                    .unwrap_or_default();
                text.parse::<u32>()
                    .with_context(|| format!("server_version_num is '{text}'"))
            })
            .with_context(|| format!("cannot read the server version of {shown}"))?;
        let rows = admin
            .query_text(SETTINGS_QUERY, &[])
            .map_err(|e| {
                anyhow::Error::new(e)
                    .context(format!("cannot read the planner settings of {shown}"))
            })?
            .into_iter()
            .map(|r| {
                let mut r = r.into_iter().map(Option::unwrap_or_default);
                let mut next = || r.next().unwrap_or_default();
                SettingRow {
                    name: next(),
                    vartype: next(),
                    boot_val: next(),
                    category: next(),
                    short_desc: next(),
                }
            })
            .collect();
        Ok(ServerProfile {
            major: number / 10000,
            planner: PlannerSettings::from_rows(rows),
        })
    }

    /// A PostgreSQL 15 server with its settings, for tests and tools that
    /// have no server to ask.
    pub fn postgres_15() -> ServerProfile {
        let knobs = crate::knobs::knobs();
        let switches = knobs
            .iter()
            .filter(|k| k.values.is_empty())
            .map(|k| k.name.clone())
            .collect();
        ServerProfile {
            major: 15,
            planner: PlannerSettings {
                knobs,
                switches,
                ..PlannerSettings::default()
            },
        }
    }

    pub fn features(&self) -> VersionFeatures {
        VersionFeatures::of_major(self.major)
    }
}

/// Generator features that follow the server's major version. Each names
/// the release that brought it and the planner or executor code it aims
/// at; the generator never writes what the server's release lacks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VersionFeatures {
    /// 18: `GENERATED ALWAYS AS (...) VIRTUAL` columns, computed when read
    /// (expanded by the planner into every query that reads them; never in
    /// an index, a unique constraint or extended statistics).
    pub virtual_generated_columns: bool,
    /// 18: `casefold(text)`, `reverse(bytea)`; 16: `IS JSON` predicates.
    pub functions_since_15: bool,
    /// The major itself, for rules finer than a feature.
    pub major: u32,
}

impl VersionFeatures {
    pub fn of_major(major: u32) -> VersionFeatures {
        VersionFeatures {
            virtual_generated_columns: major >= 18,
            functions_since_15: major >= 16,
            major,
        }
    }
}
