//! lancet's PostgreSQL provider.
//!
//! lancet creates its own databases on the server (`lancet_<run>_<thread>_<n>`,
//! from template0 with a fixed encoding and the "C" locale, so results do not
//! depend on the server's locale) and drops only databases whose names carry
//! that prefix.
//!
//! Built to be extended: Citus is PostgreSQL plus table kinds (distributed,
//! reference, local), colocation, its own errors and knobs. A [`Flavor`]
//! says what an extension changes: it is called after each CREATE TABLE
//! (where Citus distributes the table), switches generator features off
//! ([`Features`]), and adds expected errors and knobs. Connection, types,
//! expressions, queries and schemas are shared, not copied.

pub mod connection;
pub mod expr;
pub mod knobs;
pub mod populate;
pub mod pqs;
pub mod query;
pub mod schema;
pub mod types;
pub mod url;

use anyhow::{bail, Context};
use connection::PgConnection;
use lancet_core::{
    Connection, CreatedDatabase, DatabaseId, Dialect, ExecError, ExpectedErrors, Knob, KnobSetting,
    OwnedDatabase, Provider, QueryGenerator, Rng, Schema, Session,
};
use postgres::NoTls;
use schema::PgTable;
use std::time::Duration;
pub use url::ServerUrl;

/// The expected errors of generated PostgreSQL SQL (by SQLSTATE).
const EXPECTED_ERRORS: &str = include_str!("../../../configs/expected-errors/postgres.toml");

/// Which generator features an extension supports.
#[derive(Clone, Copy, Debug)]
pub struct Features {
    pub inheritance: bool,
    pub partitioning: bool,
    pub views: bool,
}

impl Default for Features {
    fn default() -> Self {
        Features {
            inheritance: true,
            partitioning: true,
            views: true,
        }
    }
}

/// What a PostgreSQL extension (Citus) changes; plain PostgreSQL is
/// [`Vanilla`].
pub trait Flavor: Send + Sync {
    /// The `--dbms` name.
    fn name(&self) -> &'static str;
    fn features(&self) -> Features {
        Features::default()
    }
    /// Runs after a table was created (Citus: `create_distributed_table`).
    fn after_create_table(
        &self,
        _rng: &mut Rng,
        _session: &mut Session,
        _table: &PgTable,
    ) -> Result<(), ExecError> {
        Ok(())
    }
    /// Statements run in each new database before anything else
    /// (`CREATE EXTENSION citus`).
    fn database_setup(&self) -> Vec<String> {
        Vec::new()
    }
    /// Expected-error rules (TOML) added to PostgreSQL's.
    fn expected_errors(&self) -> Option<&'static str> {
        None
    }
    /// Knobs added to PostgreSQL's planner switches.
    fn knobs(&self) -> Vec<Knob> {
        Vec::new()
    }
}

/// Plain PostgreSQL.
pub struct Vanilla;

impl Flavor for Vanilla {
    fn name(&self) -> &'static str {
        "postgres"
    }
}

pub struct PostgresProvider {
    url: ServerUrl,
    expected: ExpectedErrors,
    time_limit: Duration,
    flavor: Box<dyn Flavor>,
    version: String,
}

/// Only names lancet made may be created or dropped.
fn checked_name(id: &DatabaseId) -> anyhow::Result<String> {
    let name = id.name();
    ensure_ours(&name)?;
    Ok(name)
}

/// Refuses any database name that does not carry lancet's prefix.
pub fn ensure_ours(name: &str) -> anyhow::Result<()> {
    if !name.starts_with(DatabaseId::PREFIX) {
        bail!("refusing to touch database '{name}': lancet only creates and drops databases named {}*", DatabaseId::PREFIX);
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        bail!("refusing an unusual database name '{name}'");
    }
    Ok(())
}

impl PostgresProvider {
    /// Parses and checks the URL: connects to the database it names, checks
    /// that the server answers and that the role may create databases.
    /// Errors never contain the password.
    pub fn connect(url: &str) -> anyhow::Result<PostgresProvider> {
        Self::connect_flavor(url, Box::new(Vanilla))
    }

    /// As [`PostgresProvider::connect`], for an extension of PostgreSQL.
    pub fn connect_flavor(url: &str, flavor: Box<dyn Flavor>) -> anyhow::Result<PostgresProvider> {
        let url = ServerUrl::parse(url)?;
        let shown = url.redacted().to_string();
        let mut client = url
            .config_for(&url.maintenance_database())
            .connect(NoTls)
            .map_err(|e| {
                anyhow::anyhow!(
                    "cannot connect to {shown}: {}",
                    connection::map_error(&e).message
                )
            })?;
        let version = client
            .query_one("SELECT version()", &[])
            .and_then(|r| r.try_get::<_, String>(0))
            .with_context(|| format!("cannot read the server version of {shown}"))?;
        let may_create: bool = client
            .query_one(
                "SELECT rolcreatedb OR rolsuper FROM pg_roles WHERE rolname = current_user",
                &[],
            )
            .and_then(|r| r.try_get(0))
            .with_context(|| format!("cannot read the privileges of the role on {shown}"))?;
        if !may_create {
            bail!(
                "role '{}' on {shown} may not create databases; lancet needs CREATEDB \
                 (ALTER ROLE {} CREATEDB) to make its own lancet_* databases",
                url.user(),
                url.user()
            );
        }
        let mut expected =
            ExpectedErrors::from_toml(EXPECTED_ERRORS, "configs/expected-errors/postgres.toml")?;
        if let Some(extra) = flavor.expected_errors() {
            expected.extend(ExpectedErrors::from_toml(extra, flavor.name())?);
        }
        let version = version.split(" on ").next().unwrap_or(&version).to_string();
        Ok(PostgresProvider {
            url,
            expected,
            time_limit: Duration::from_secs(2),
            flavor,
            version,
        })
    }

    pub fn with_expected_errors(mut self, extra: ExpectedErrors) -> Self {
        self.expected.extend(extra);
        self
    }

    /// The per-statement time limit (server-side `statement_timeout`, and a
    /// client-side cancel shortly after).
    pub fn with_time_limit(mut self, limit: Duration) -> Self {
        self.time_limit = limit;
        self
    }

    /// The URL with any password replaced by `***`.
    pub fn redacted_url(&self) -> String {
        self.url.redacted().to_string()
    }

    /// A connection to the maintenance database, for CREATE/DROP DATABASE.
    fn admin(&self) -> anyhow::Result<postgres::Client> {
        self.url
            .config_for(&self.url.maintenance_database())
            .connect(NoTls)
            .map_err(|e| {
                // The DbError stays in the chain: the runner retries while
                // it says the connection is lost (a restarting server).
                anyhow::Error::new(connection::map_error(&e))
                    .context(format!("cannot connect to {}", self.url.redacted()))
            })
    }

    /// Runs one statement on the maintenance database.
    fn admin_execute(&self, sql: &str, what: &str) -> anyhow::Result<()> {
        self.admin()?.batch_execute(sql).map_err(|e| {
            anyhow::Error::new(connection::map_error(&e))
                .context(format!("cannot {what} on {}", self.url.redacted()))
        })
    }
}

impl Provider for PostgresProvider {
    fn name(&self) -> &'static str {
        self.flavor.name()
    }

    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn version(&self) -> anyhow::Result<String> {
        Ok(self.version.clone())
    }

    fn expected_errors(&self) -> &ExpectedErrors {
        &self.expected
    }

    fn create_database(&self, id: &DatabaseId) -> anyhow::Result<CreatedDatabase> {
        let name = checked_name(id)?;
        self.admin_execute(
            &format!("CREATE DATABASE \"{name}\" TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'"),
            &format!("create database {name}"),
        )?;
        let mut conn =
            PgConnection::open(&self.url.config_for(&name), self.time_limit).map_err(|e| {
                anyhow::Error::new(e).context(format!("cannot connect to database {name}"))
            })?;
        for stmt in self.flavor.database_setup() {
            conn.execute(&stmt)
                .map_err(|e| anyhow::anyhow!("cannot prepare database {name}: {e}"))?;
        }
        Ok(CreatedDatabase {
            conn: Box::new(conn),
            owned: OwnedDatabase {
                name,
                identity: None,
            },
        })
    }

    fn drop_database(&self, db: &OwnedDatabase) -> anyhow::Result<bool> {
        let name = db.name.clone();
        ensure_ours(&name)?;
        self.admin_execute(
            &format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"),
            &format!("drop database {name}"),
        )?;
        Ok(true)
    }

    fn populate(&self, rng: &mut Rng, session: &mut Session) -> Result<Schema, ExecError> {
        Ok(populate::populate(rng, session, &*self.flavor)?.to_core())
    }

    fn query_generator<'s>(&self, schema: &'s Schema) -> Box<dyn QueryGenerator + 's> {
        Box::new(query::PgQueryGenerator::new(schema::PgSchema::from_core(
            schema,
        )))
    }

    fn client_command(&self) -> String {
        format!(
            "createdb -h {host} -p {port} -U {user} lancet_repro && psql -X -h {host} -p {port} -U {user} -d lancet_repro -f {{file}}",
            host = self.url.host_port().rsplit_once(':').map_or("localhost".to_string(), |(h, _)| h.to_string()),
            port = self.url.host_port().rsplit_once(':').map_or("5432".to_string(), |(_, p)| p.to_string()),
            user = self.url.user(),
        )
    }

    fn knobs(&self) -> Vec<Knob> {
        let mut k = knobs::knobs();
        k.extend(self.flavor.knobs());
        k
    }

    fn knob_commands(&self, setting: &KnobSetting) -> Vec<String> {
        knobs::commands(setting)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_lancet_names_are_touched() {
        assert!(super::ensure_ours("lancet_x_0_1").is_ok());
        assert!(super::ensure_ours("postgres").is_err());
        assert!(super::ensure_ours("keepme").is_err());
        assert!(super::ensure_ours("lancet_x\"; DROP DATABASE y").is_err());
    }
}
