//! lancet's PostgreSQL provider.
//!
//! lancet creates its own databases on the server (`lancet_<run>_<thread>_<n>`,
//! from template0 with a fixed encoding and the "C" locale, so results do not
//! depend on the server's locale). It never drops anything before creating
//! (a taken name is [`DatabaseError::NameTaken`]) and drops only a database
//! it can prove it created: the `lancet_` prefix, the oid it recorded at
//! creation, and the role it connects as for owner.
//!
//! Built to be extended: Citus is PostgreSQL plus table kinds (distributed,
//! reference, local), colocation, its own errors and knobs. A [`Flavor`]
//! says what an extension changes: it is called after each CREATE TABLE
//! (where Citus distributes the table), switches generator features off
//! ([`Features`]), and adds expected errors and knobs. Connection, types,
//! expressions, queries and schemas are shared, not copied.

pub mod connection;
pub mod database;
pub mod dialect;
pub mod expr;
pub mod knobs;
pub mod populate;
pub mod pqs;
pub mod query;
pub mod schema;
pub mod types;
pub mod url;

use anyhow::bail;
use connection::PgConnection;
use lancet_core::{
    Connection, CreatedDatabase, DatabaseError, DatabaseId, DbError, Dialect, ExecError,
    ExpectedErrors, GeneratedDatabase, Knob, KnobSetting, OwnedDatabase, Provider, Rng, Session,
};
use schema::PgTable;
use std::time::Duration;
pub use url::ServerUrl;

/// The expected errors of generated PostgreSQL SQL (by SQLSTATE).
const EXPECTED_ERRORS: &str = include_str!("../expected-errors.toml");

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

/// The time limit of lancet's own statements on the maintenance database
/// (CREATE and DROP DATABASE, lookups); CREATE DATABASE from template0
/// takes 0.1 to 1 s, a plain DROP waits up to 5 s for other sessions.
pub const ADMIN_LIMIT: Duration = Duration::from_secs(30);

/// A database as the server knows it: its oid and its owner, and the role
/// lancet is connected as.
struct Found {
    oid: String,
    owner: String,
    current: String,
}

/// The SQLSTATE of a DbError in `e`.
fn sqlstate(e: &DbError) -> Option<&str> {
    e.code.as_deref()
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
        let shown = url.display_name();
        let mut admin = admin(&url)?;
        let version = admin
            .query_text("SELECT version()", &[])
            .map_err(|e| {
                anyhow::Error::new(e).context(format!("cannot read the server version of {shown}"))
            })?
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next().flatten())
            .unwrap_or_default();
        let may_create = admin
            .query_text(
                "SELECT (rolcreatedb OR rolsuper)::text FROM pg_roles WHERE rolname = current_user",
                &[],
            )
            .map_err(|e| {
                anyhow::Error::new(e)
                    .context(format!("cannot read the privileges of the role on {shown}"))
            })?
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next().flatten());
        if may_create.as_deref() != Some("true") {
            bail!(
                "role '{}' on {shown} may not create databases; lancet needs CREATEDB \
                 (ALTER ROLE {} CREATEDB) to make its own lancet_* databases",
                url.user(),
                url.user()
            );
        }
        let mut expected =
            ExpectedErrors::from_toml(EXPECTED_ERRORS, "providers/postgres/expected-errors.toml")?;
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

    /// The server as `user@host:port/database` (never a password).
    pub fn display_name(&self) -> String {
        self.url.display_name()
    }

    /// Why `name` must not be dropped, if it is not the database this run
    /// created: it must still have the oid lancet recorded and belong to
    /// the role lancet is connected as. `Ok(None)` if it no longer exists.
    fn check_ours(
        &self,
        admin: &mut PgConnection,
        db: &OwnedDatabase,
    ) -> anyhow::Result<Option<()>> {
        let Some(found) = self.find(admin, &db.name)? else {
            return Ok(None);
        };
        let not_ours = |why: String| {
            anyhow::Error::new(DatabaseError::NotOurs {
                name: db.name.clone(),
                why,
            })
        };
        match &db.identity {
            // A run killed between CREATE and learning the oid recorded
            // only its intent to create this name. The name carries the
            // run's random token, which no one else can know: if it exists
            // and the role owns it, it is that run's database.
            None if found.owner != found.current => Err(not_ours(format!(
                "it belongs to role '{}', not to '{}' (and lancet has no record of its oid)",
                found.owner, found.current
            ))),
            None => Ok(Some(())),
            Some(oid) if *oid != found.oid => Err(not_ours(format!(
                "it has oid {}, not the oid {oid} of the database this run created: \
                 someone re-created the name",
                found.oid
            ))),
            Some(_) if found.owner != found.current => Err(not_ours(format!(
                "it belongs to role '{}', not to '{}'",
                found.owner, found.current
            ))),
            Some(_) => Ok(Some(())),
        }
    }

    /// The oid and owner of database `name`, if it exists.
    fn find(&self, admin: &mut PgConnection, name: &str) -> anyhow::Result<Option<Found>> {
        let rows = admin
            .query_text(
                "SELECT oid::text, pg_get_userbyid(datdba)::text, current_user::text \
                 FROM pg_database WHERE datname = $1",
                &[name],
            )
            .map_err(|e| {
                anyhow::Error::new(e).context(format!(
                    "cannot look up database {name} on {}",
                    self.url.display_name()
                ))
            })?;
        Ok(rows.into_iter().next().map(|r| {
            let mut r = r.into_iter().map(Option::unwrap_or_default);
            Found {
                oid: r.next().unwrap_or_default(),
                owner: r.next().unwrap_or_default(),
                current: r.next().unwrap_or_default(),
            }
        }))
    }

    /// Connects to a database this run just created and prepares it.
    fn open_created(&self, name: &str) -> anyhow::Result<PgConnection> {
        let mut conn =
            PgConnection::open(&self.url.config_for(name), self.time_limit).map_err(|e| {
                anyhow::Error::new(e).context(format!("cannot connect to database {name}"))
            })?;
        for stmt in self.flavor.database_setup() {
            conn.execute(&stmt).map_err(|e| {
                anyhow::Error::new(e).context(format!("cannot prepare database {name}"))
            })?;
        }
        Ok(conn)
    }

    /// Drops `name` after checking (again) that it is ours; `force` adds
    /// `WITH (FORCE)`, which ends the other sessions in it. `Ok(false)` if
    /// it no longer exists.
    fn drop_checked(
        &self,
        admin: &mut PgConnection,
        db: &OwnedDatabase,
        force: bool,
    ) -> Result<bool, anyhow::Error> {
        // The check and the DROP are two round trips: in between, someone
        // could drop the database and create another under its name. That
        // window of one round trip is accepted; PostgreSQL offers no DROP
        // by oid.
        if self.check_ours(admin, db)?.is_none() {
            return Ok(false);
        }
        let sql = format!(
            "DROP DATABASE \"{}\"{}",
            db.name,
            if force { " WITH (FORCE)" } else { "" }
        );
        match admin.execute(&sql) {
            Ok(()) => Ok(true),
            Err(e) if sqlstate(&e) == Some("3D000") => Ok(false),
            Err(e) => Err(anyhow::Error::new(e)),
        }
    }
}

/// A connection to the maintenance database the URL names, for lancet's
/// own statements.
fn admin(url: &ServerUrl) -> anyhow::Result<PgConnection> {
    PgConnection::open(&url.config_for(&url.maintenance_database()), ADMIN_LIMIT).map_err(|e| {
        // The DbError stays in the chain: the runner retries while it
        // says the connection is lost (a restarting server).
        anyhow::Error::new(e).context(format!("cannot connect to {}", url.display_name()))
    })
}

impl Provider for PostgresProvider {
    fn name(&self) -> &'static str {
        self.flavor.name()
    }

    fn dialect(&self) -> Dialect {
        dialect::DIALECT
    }

    fn version(&self) -> anyhow::Result<String> {
        Ok(self.version.clone())
    }

    fn expected_errors(&self) -> &ExpectedErrors {
        &self.expected
    }

    fn create_database(&self, id: &DatabaseId) -> anyhow::Result<CreatedDatabase> {
        let name = checked_name(id)?;
        let shown = self.url.display_name();
        let mut admin = admin(&self.url)?;
        // Nothing is dropped first: a taken name is the caller's to change.
        let create = format!(
            "CREATE DATABASE \"{name}\" TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'"
        );
        if let Err(e) = admin.execute(&create) {
            if sqlstate(&e) == Some("42P04") {
                return Err(anyhow::Error::new(DatabaseError::NameTaken(name))
                    .context(format!("cannot create a database on {shown}")));
            }
            return Err(
                anyhow::Error::new(e).context(format!("cannot create database {name} on {shown}"))
            );
        }
        let found = self.find(&mut admin, &name)?;
        let oid = match found {
            Some(f) if f.owner == f.current => f.oid,
            Some(f) => bail!(
                "database {name} on {shown} belongs to role '{}' right after lancet created it \
                 as '{}'; lancet leaves it alone",
                f.owner,
                f.current
            ),
            None => bail!("database {name} on {shown} vanished right after lancet created it"),
        };
        drop(admin);
        let owned = OwnedDatabase {
            name: name.clone(),
            identity: Some(oid),
        };
        match self.open_created(&name) {
            Ok(conn) => Ok(CreatedDatabase {
                conn: Box::new(conn),
                owned,
            }),
            // The caller records it as its own and drops it (later, if the
            // server is full now); the cause stays in the chain, so that a
            // transient one is waited out.
            Err(e) => Err(e.context(DatabaseError::CreatedUnusable(owned))),
        }
    }

    fn drop_database(&self, db: &OwnedDatabase) -> anyhow::Result<bool> {
        ensure_ours(&db.name)?;
        let shown = self.url.display_name();
        let mut admin = admin(&self.url)?;
        // A plain DROP first: it waits for (and stops) autovacuum workers
        // itself and fails with 55006 while other sessions are connected.
        let dropped = match self.drop_checked(&mut admin, db, false) {
            Err(e)
                if e.downcast_ref::<DbError>()
                    .is_some_and(|d| sqlstate(d) == Some("55006")) =>
            {
                // WITH (FORCE) ends those sessions; a role that is neither
                // superuser nor member of pg_signal_backend may not end a
                // superuser's session or an autovacuum worker (42501). The
                // error goes back to the caller, who retries later.
                self.drop_checked(&mut admin, db, true)
            }
            other => other,
        };
        dropped.map_err(|e| {
            if e.downcast_ref::<DatabaseError>().is_some() {
                e
            } else {
                e.context(format!("cannot drop database {} on {shown}", db.name))
            }
        })
    }

    fn server(&self) -> Option<String> {
        Some(self.url.server())
    }

    fn populate(
        &self,
        rng: &mut Rng,
        session: &mut Session,
    ) -> Result<Box<dyn GeneratedDatabase>, ExecError> {
        let model = populate::populate(rng, session, &*self.flavor)?;
        Ok(Box::new(database::PgDatabase::new(model)))
    }

    fn client_command(&self) -> String {
        format!(
            "createdb -h {host} -p {port} -U {user} lancet_repro && psql -X -h {host} -p {port} -U {user} -d lancet_repro -f {{file}}",
            host = self.url.host(),
            port = self.url.port(),
            user = self.url.user(),
        )
    }

    fn knobs(&self) -> Vec<Knob> {
        let mut k = knobs::knobs();
        k.extend(self.flavor.knobs());
        k
    }

    fn knob_commands(&self, from: &KnobSetting, to: &KnobSetting) -> Vec<String> {
        knobs::commands(from, to)
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
