//! lancet's MySQL and MariaDB provider (`--dbms mysql`): one server, named
//! by a `mysql://` URL, on which lancet creates a database per generated
//! database and drops only those it created.
//!
//! MySQL has no database owners, so a database proves it is lancet's by
//! a marker: a table `lancet_identity` holding a token drawn when the
//! database was created, recorded with it in the run's ledger. A drop
//! checks the token first; a database that merely has a lancet name is
//! never dropped.
//!
//! Owns everything MySQL- and MariaDB-specific; depends on lancet-core and
//! lancet-engine only. May not touch: the oracles, another provider, the
//! runner, findings or the store.

pub mod connection;
pub mod database;
pub mod description;
pub mod dialect;
pub mod expr;
pub mod folding;
pub mod knobs;
pub mod populate;
pub mod pqs;
pub mod query;
pub mod schema;
pub mod twins;
pub mod txn;
pub mod types;
pub mod url;

use anyhow::{bail, Context};
use connection::MySqlConnection;
use lancet_core::{
    Connection, CreatedDatabase, DatabaseError, DatabaseId, Dialect, ExecError, ExpectedErrors,
    GeneratedDatabase, Knob, KnobSetting, OwnedDatabase, Provider, Rng, Session, StatementKind,
};
use std::time::Duration;
use url::ServerUrl;

/// The built-in expected-error rules, by error number.
const EXPECTED_ERRORS: &str = include_str!("../../../configs/expected-errors/mysql.toml");

/// The marker table that proves a database is lancet's.
pub const IDENTITY_TABLE: &str = "lancet_identity";

/// Which server the URL reaches: they share the protocol and most of the
/// dialect, and differ in engines, time limits and optimizer flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServerKind {
    MariaDb,
    MySql,
}

impl ServerKind {
    pub fn name(self) -> &'static str {
        match self {
            ServerKind::MariaDb => "MariaDB",
            ServerKind::MySql => "MySQL",
        }
    }

    /// The server's own command-line client.
    pub fn client(self) -> &'static str {
        match self {
            ServerKind::MariaDb => "mariadb",
            ServerKind::MySql => "mysql",
        }
    }
}

pub struct MySqlProvider {
    url: ServerUrl,
    kind: ServerKind,
    version: String,
    knobs: Vec<Knob>,
    expected: ExpectedErrors,
    time_limit: Duration,
}

/// Refuses any name lancet did not make.
pub fn ensure_ours(name: &str) -> anyhow::Result<()> {
    let ok = name.starts_with(DatabaseId::PREFIX)
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !ok {
        bail!("refusing to touch database '{name}': not a name lancet makes");
    }
    Ok(())
}

/// A fresh token for a database's marker, from the operating system's
/// randomness (never the run's seed: nobody may predict it).
fn identity_token() -> anyhow::Result<String> {
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes))
        .context("cannot read /dev/urandom for a database's identity token")?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

impl MySqlProvider {
    /// Connects once to check the URL, the server and the role's right to
    /// create and drop databases, with errors that say which is wrong.
    pub fn connect(url: &str) -> anyhow::Result<MySqlProvider> {
        let url = ServerUrl::parse(url)?;
        let time_limit = Duration::from_secs(2);
        // The kind is not known before the first answer: MariaDB's limit
        // setting fails on MySQL and the other way round, so probe plainly.
        let opts = url
            .opts_for(None)
            .tcp_connect_timeout(Some(connection::CONNECT_LIMIT))
            .read_timeout(Some(Duration::from_secs(20)));
        let mut conn = mysql::Conn::new(opts).map_err(|e| {
            let why = match &e {
                mysql::Error::MySqlError(m) => {
                    format!("the server refused: [{}] {}", m.code, m.message)
                }
                mysql::Error::IoError(io) => format!("cannot reach it: {io}"),
                other => format!("cannot connect: {other}"),
            };
            anyhow::anyhow!("cannot connect to the MySQL server {}: {why}", url.server())
        })?;
        use mysql::prelude::Queryable;
        let (version, switch): (String, String) = conn
            .query_first("SELECT VERSION(), @@optimizer_switch")
            .context("cannot read the server's version")?
            .context("the server returned no version")?;
        let kind = if version.contains("MariaDB") {
            ServerKind::MariaDb
        } else {
            ServerKind::MySql
        };
        let may_create: Option<i64> = conn
            .query_first(
                "SELECT COUNT(*) FROM information_schema.USER_PRIVILEGES \
                 WHERE PRIVILEGE_TYPE IN ('CREATE', 'DROP') \
                 AND GRANTEE = CONCAT('''', REPLACE(CURRENT_USER(), '@', '''@'''), '''')",
            )
            .context("cannot read the role's privileges")?;
        let on_lancet: Option<i64> = conn
            .query_first(
                "SELECT COUNT(*) FROM information_schema.SCHEMA_PRIVILEGES \
                 WHERE PRIVILEGE_TYPE IN ('CREATE', 'DROP') AND TABLE_SCHEMA LIKE 'lancet%' \
                 AND GRANTEE = CONCAT('''', REPLACE(CURRENT_USER(), '@', '''@'''), '''')",
            )
            .context("cannot read the role's privileges")?;
        if may_create.unwrap_or(0) < 2 && on_lancet.unwrap_or(0) < 2 {
            bail!(
                "the role {} may not create and drop databases on {}; lancet needs \
                 GRANT ALL ON `lancet\\_%`.* TO that role (or CREATE and DROP on *.*)",
                url.user(),
                url.server()
            );
        }
        let mut variables = Vec::new();
        for (name, _, _) in knobs::VARIABLES {
            if conn.query_drop(format!("SELECT @@{name}")).is_ok() {
                variables.push(*name);
            }
        }
        let mut expected =
            ExpectedErrors::from_toml(EXPECTED_ERRORS, "configs/expected-errors/mysql.toml")?;
        expected.rules.retain(|r| !r.code.is_empty());
        Ok(MySqlProvider {
            knobs: knobs::list(&switch, &variables),
            url,
            kind,
            version,
            expected,
            time_limit,
        })
    }

    /// Adds a user's expected-error rules to the built-in ones.
    pub fn with_expected_errors(mut self, extra: ExpectedErrors) -> Self {
        self.expected.extend(extra);
        self
    }

    pub fn with_time_limit(mut self, limit: Duration) -> Self {
        self.time_limit = limit;
        self
    }

    pub fn kind(&self) -> ServerKind {
        self.kind
    }

    fn admin(&self) -> anyhow::Result<MySqlConnection> {
        MySqlConnection::open(&self.url, None, self.kind, Duration::from_secs(30))
            .map_err(anyhow::Error::new)
            .with_context(|| format!("cannot connect to {}", self.url.server()))
    }

    /// The token in a database's marker, `None` if it has none or does not exist.
    fn identity_of(admin: &mut MySqlConnection, name: &str) -> anyhow::Result<Option<String>> {
        let exists = admin.query_text(&format!(
            "SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = '{name}' \
             AND TABLE_NAME = '{IDENTITY_TABLE}'"
        ))?;
        if exists.is_empty() {
            return Ok(None);
        }
        let rows = admin.query_text(&format!("SELECT token FROM {name}.{IDENTITY_TABLE}"))?;
        Ok(rows
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next().flatten()))
    }
}

impl Provider for MySqlProvider {
    fn name(&self) -> &'static str {
        "mysql"
    }

    fn dialect(&self) -> Dialect {
        dialect::DIALECT
    }

    fn version(&self) -> anyhow::Result<String> {
        Ok(format!("{} {}", self.kind.name(), self.version))
    }

    fn expected_errors(&self) -> &ExpectedErrors {
        &self.expected
    }

    fn create_database(&self, id: &DatabaseId) -> anyhow::Result<CreatedDatabase> {
        let name = id.name();
        ensure_ours(&name)?;
        let mut admin = self.admin()?;
        if let Err(e) = admin.execute(&format!("CREATE DATABASE {name} CHARACTER SET utf8mb4")) {
            if e.code.as_deref() == Some("1007") {
                return Err(DatabaseError::NameTaken(name).into());
            }
            return Err(anyhow::Error::new(e).context(format!("cannot create database {name}")));
        }
        let token = identity_token()?;
        let owned = OwnedDatabase {
            name: name.clone(),
            identity: Some(token.clone()),
        };
        let marked = admin
            .execute(&format!(
                "CREATE TABLE {name}.{IDENTITY_TABLE} (token VARCHAR(64)) ENGINE=MyISAM"
            ))
            .and_then(|()| {
                admin.execute(&format!(
                    "INSERT INTO {name}.{IDENTITY_TABLE} VALUES ('{token}')"
                ))
            });
        if let Err(e) = marked {
            return Err(anyhow::Error::new(e).context(DatabaseError::CreatedUnusable(owned)));
        }
        match MySqlConnection::open(&self.url, Some(&name), self.kind, self.time_limit) {
            Ok(conn) => Ok(CreatedDatabase {
                conn: Box::new(conn),
                owned,
            }),
            Err(e) => Err(anyhow::Error::new(e).context(DatabaseError::CreatedUnusable(owned))),
        }
    }

    fn drop_database(&self, db: &OwnedDatabase) -> anyhow::Result<bool> {
        ensure_ours(&db.name)?;
        let mut admin = self.admin()?;
        let exists = admin.query_text(&format!(
            "SELECT 1 FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = '{}'",
            db.name
        ))?;
        if exists.is_empty() {
            return Ok(false);
        }
        let found = Self::identity_of(&mut admin, &db.name)?;
        match (&db.identity, &found) {
            (Some(expected), Some(found)) if expected == found => {}
            // A ledger's intent to create, written before the token was:
            // the unpredictable name proves it, and the marker must be one.
            (None, Some(_)) => {}
            _ => {
                return Err(DatabaseError::NotOurs {
                    name: db.name.clone(),
                    why: "its lancet_identity marker is missing or holds another token".into(),
                }
                .into())
            }
        }
        admin
            .execute(&format!("DROP DATABASE {}", db.name))
            .map_err(anyhow::Error::new)
            .with_context(|| format!("cannot drop database {}", db.name))?;
        Ok(true)
    }

    fn server(&self) -> Option<String> {
        Some(self.url.server())
    }

    fn populate(
        &self,
        rng: &mut Rng,
        session: &mut Session,
    ) -> Result<Box<dyn GeneratedDatabase>, ExecError> {
        // The settings go into the log, so that a reproducer runs under
        // the same SQL mode (see `connection::database_settings`).
        for s in connection::database_settings(self.kind) {
            session.execute_sql(StatementKind::Setting, s)?;
        }
        let model = populate::populate(rng, session, self.kind)?;
        Ok(Box::new(database::MyDatabase::new(model)))
    }

    /// One client call that drops and makes its own scratch database first
    /// (so it runs twice in a row), on the server the client's own
    /// settings name (`MYSQL_HOST`, `MYSQL_TCP_PORT`, option files; add
    /// `-p` to be asked for a password once), never the tester's.
    fn client_command(&self) -> String {
        format!(
            "(echo 'DROP DATABASE IF EXISTS lancet_repro; CREATE DATABASE lancet_repro; USE lancet_repro;'; cat {{file}}) | {}",
            self.kind.client()
        )
    }

    fn transactions(&self) -> Option<&dyn lancet_core::txn::Transactions> {
        Some(self)
    }

    fn knobs(&self) -> Vec<Knob> {
        self.knobs.clone()
    }

    /// Every `optimizer_switch` flag off but `in_to_exists`: one of it and
    /// `materialization` must stay on (both servers refuse otherwise), and
    /// it is the plain strategy, rewriting `IN` to a correlated `EXISTS`.
    fn every_optimization_off(&self) -> KnobSetting {
        KnobSetting {
            changes: self
                .knobs
                .iter()
                .filter(|k| k.values.is_empty() && k.name != "in_to_exists")
                .map(|k| k.name.clone())
                .collect(),
        }
    }

    fn features(&self) -> Vec<lancet_core::Feature> {
        vec![lancet_core::Feature::PivotRows]
    }

    fn knob_commands(&self, from: &KnobSetting, to: &KnobSetting) -> Vec<String> {
        knobs::commands(from, to, self.kind).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_lancet_names_are_touched() {
        assert!(ensure_ours("lancet_abc_0_1").is_ok());
        for bad in ["mysql", "lancetx", "lancet_a; DROP", "LANCET_A"] {
            assert!(ensure_ours(bad).is_err(), "{bad}");
        }
    }
}
