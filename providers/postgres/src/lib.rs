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
//!
//! Owns everything PostgreSQL- and Citus-specific, and the parsing of a
//! server URL (which the findings store reuses for its own server);
//! depends on lancet-core and lancet-engine only. May not touch: the
//! oracles (its tests use them), another provider, the runner, findings or
//! the store.

pub mod citus;
pub mod connection;
pub mod database;
pub mod description;
pub mod dialect;
pub mod expr;
pub mod flavor;
pub mod folding;
pub mod knobs;
pub mod nodes;
pub mod populate;
pub mod pqs;
pub mod query;
pub mod recipes;
pub mod schema;
pub mod server;
pub mod txn;
pub mod types;

use anyhow::bail;
use connection::PgConnection;
pub use flavor::{Features, Flavor, Vanilla};
use lancet_core::{
    Connection, CreatedDatabase, DatabaseError, DatabaseId, Dialect, ExecError, ExpectedErrors,
    GeneratedDatabase, Knob, KnobSetting, OwnedDatabase, Provider, Rng, Session, StatementKind,
    TWIN_SCHEMA,
};
pub use lancet_postgres_url::ServerUrl;
pub use server::{ServerProfile, VersionFeatures};
use std::time::Duration;

/// The expected errors of generated PostgreSQL SQL (by SQLSTATE).
const EXPECTED_ERRORS: &str = include_str!("../expected-errors.toml");

pub struct PostgresProvider {
    url: ServerUrl,
    expected: ExpectedErrors,
    time_limit: Duration,
    flavor: Box<dyn Flavor>,
    version: String,
    /// The server's major and planner settings, read at start-up: the
    /// knobs, and the features the generator may use.
    server: ServerProfile,
    /// One database set-up at a time: registering Citus workers rewrites
    /// the role on every worker, and two at once fail with "tuple
    /// concurrently updated".
    setup_lock: std::sync::Mutex<()>,
    /// A twin recipe declared for an extension (campaign file): its setup
    /// runs first in every database, its settings are knobs.
    declared: Option<lancet_core::DeclaredRecipe>,
    /// The extensions a database has once created and set up (PostgreSQL's
    /// plpgsql; Citus and what it brings), read from the first one: a
    /// reset drops any other, which a setup statement created (a declared
    /// recipe's `CREATE EXTENSION`), so that a reset database is a fresh
    /// one. Unread, databases are not reset but made anew.
    fresh_extensions: std::sync::OnceLock<Vec<String>>,
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

pub use nodes::ADMIN_LIMIT;
use nodes::{admin, NodeOids};

impl PostgresProvider {
    /// Parses and checks the URL: connects to the database it names, checks
    /// that the server answers and that the role may create databases.
    /// Errors never contain the password.
    pub fn connect(url: &str) -> anyhow::Result<PostgresProvider> {
        Self::connect_flavor(url, Box::new(Vanilla))
    }

    /// As [`PostgresProvider::connect`], for an extension of PostgreSQL.
    pub fn connect_flavor(
        url: &str,
        mut flavor: Box<dyn Flavor>,
    ) -> anyhow::Result<PostgresProvider> {
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
        let server = ServerProfile::read(&mut admin, &shown)?;
        if let Some(report) = server.planner.report() {
            log::warn!("{shown} (PostgreSQL {}): {report}", server.major);
        }
        flavor.connect(&mut admin, &url)?;
        let mut expected =
            ExpectedErrors::from_toml(EXPECTED_ERRORS, "providers/postgres/expected-errors.toml")?;
        if let Some((extra, source)) = flavor.expected_errors() {
            expected.extend(ExpectedErrors::from_toml(extra, source)?);
        }
        let version = version.split(" on ").next().unwrap_or(&version).to_string();
        Ok(PostgresProvider {
            url,
            expected,
            time_limit: Duration::from_secs(2),
            flavor,
            version,
            server,
            setup_lock: std::sync::Mutex::new(()),
            declared: None,
            fresh_extensions: std::sync::OnceLock::new(),
        })
    }

    /// Offers `recipe` (an extension's, from a campaign file) to the twins
    /// oracle: its setup runs first in every database, and its settings
    /// join the knobs.
    pub fn with_declared_recipe(mut self, recipe: lancet_core::DeclaredRecipe) -> Self {
        self.declared = Some(recipe);
        self
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

    /// What lancet read of the server at start-up.
    pub fn server_profile(&self) -> &ServerProfile {
        &self.server
    }

    /// The server as `user@host:port/database` (never a password).
    pub fn display_name(&self) -> String {
        self.url.display_name()
    }

    /// Prepares a database this run just created on another node.
    fn prepare_node(&self, node: &ServerUrl, name: &str) -> anyhow::Result<()> {
        let setup = self.flavor.node_setup();
        if setup.is_empty() {
            return Ok(());
        }
        let mut conn = PgConnection::open(&node.config_for(name), ADMIN_LIMIT).map_err(|e| {
            anyhow::Error::new(e).context(format!(
                "cannot connect to database {name} on {}",
                node.display_name()
            ))
        })?;
        for stmt in setup {
            conn.execute(&stmt).map_err(|e| {
                anyhow::Error::new(e).context(format!(
                    "cannot prepare database {name} on {}",
                    node.display_name()
                ))
            })?;
        }
        Ok(())
    }

    /// Connects to a database this run just created and prepares it.
    /// The connection generated SQL runs on.
    fn open_generated(&self, name: &str) -> Result<PgConnection, lancet_core::DbError> {
        let mut conn = PgConnection::open(&self.url.config_for(name), self.time_limit)?;
        conn.fail_on_warnings(self.flavor.failing_warnings());
        Ok(conn)
    }

    fn open_created(&self, name: &str) -> anyhow::Result<PgConnection> {
        let setup = self.flavor.database_setup();
        if !setup.is_empty() {
            // Setup (registering Citus workers) may take longer than a
            // generated statement is given.
            let mut conn =
                PgConnection::open(&self.url.config_for(name), ADMIN_LIMIT).map_err(|e| {
                    anyhow::Error::new(e).context(format!("cannot connect to database {name}"))
                })?;
            let _one_at_a_time = self.setup_lock.lock().unwrap_or_else(|e| e.into_inner());
            for stmt in setup {
                run_setup_statement(&mut conn, &stmt).map_err(|e| {
                    anyhow::Error::new(e).context(format!("cannot prepare database {name}"))
                })?;
            }
        }
        let mut conn = self.open_generated(name).map_err(|e| {
            anyhow::Error::new(e).context(format!("cannot connect to database {name}"))
        })?;
        if self.fresh_extensions.get().is_none() {
            if let Ok(rows) = conn.query_text("SELECT extname::text FROM pg_extension", &[]) {
                let names = rows.into_iter().flatten().flatten().collect();
                let _ = self.fresh_extensions.set(names);
            }
        }
        Ok(conn)
    }
}

/// Drops every extension of the database but `kept` (those a fresh one
/// has), with what depends on it: a setup statement created it, and a
/// reset database must not keep it for the next candidate, which may have
/// lost that statement (a reduction would then keep a setup that fails on
/// a fresh database).
fn drop_extensions_but(kept: &[String]) -> String {
    let kept: Vec<String> = kept
        .iter()
        .map(|e| format!("'{}'", e.replace('\'', "''")))
        .collect();
    format!(
        "DO $$DECLARE r record; BEGIN \
         FOR r IN SELECT extname FROM pg_extension WHERE extname::text <> ALL (ARRAY[{}]::text[]) \
         LOOP EXECUTE format('DROP EXTENSION IF EXISTS %I CASCADE', r.extname); \
         END LOOP; END$$",
        kept.join(", ")
    )
}

/// Drops every relation of schema `public` that no extension owns (the
/// public schema itself stays: Citus keeps views in it, and dropping it
/// fails on Citus local tables with XX000 "cache lookup failed for
/// pg_dist_local_group"). Names, not oids: a CASCADE may have dropped a
/// later one already.
const DROP_GENERATED_RELATIONS: &str = "DO $$DECLARE r record; BEGIN \
    FOR r IN SELECT format('%I.%I', n.nspname, c.relname) AS rel, c.relkind \
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
      WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'v', 'm') AND NOT c.relispartition \
        AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass \
          AND d.objid = c.oid AND d.deptype = 'e') \
    LOOP EXECUTE format(CASE r.relkind WHEN 'v' THEN 'DROP VIEW IF EXISTS %s CASCADE' \
      WHEN 'm' THEN 'DROP MATERIALIZED VIEW IF EXISTS %s CASCADE' \
      ELSE 'DROP TABLE IF EXISTS %s CASCADE' END, r.rel); \
    END LOOP; END$$";

/// Runs one statement of a database's set-up, again after a short wait
/// when it fails: another process setting up a database on the same
/// cluster at the same moment makes the statement fail once (the
/// statements are idempotent).
fn run_setup_statement(conn: &mut PgConnection, stmt: &str) -> Result<(), lancet_core::DbError> {
    const ATTEMPTS: u32 = 5;
    let mut attempt = 0;
    loop {
        match conn.execute(stmt) {
            Ok(()) => return Ok(()),
            Err(e) if attempt + 1 < ATTEMPTS && e.kind == lancet_core::FailureKind::Statement => {
                log::debug!(
                    "set-up statement {stmt} failed ({}); trying again",
                    e.message
                );
                std::thread::sleep(Duration::from_millis(100 << attempt));
                attempt += 1;
            }
            Err(e) => return Err(e),
        }
    }
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
        // The other nodes first (Citus: a coordinator registers workers
        // that have the database already). Nothing is dropped first: a
        // taken name anywhere is the caller's to change.
        let mut made: Vec<(ServerUrl, String)> = Vec::new();
        for node in self.flavor.other_nodes() {
            let oid = match nodes::create_on(&node, &name) {
                Ok(oid) => oid,
                Err(e) => {
                    nodes::undo(&name, &made);
                    return Err(e);
                }
            };
            made.push((node.clone(), oid));
            if let Err(e) = self.prepare_node(&node, &name) {
                nodes::undo(&name, &made);
                return Err(e);
            }
        }
        let oid = match nodes::create_on(&self.url, &name) {
            Ok(oid) => oid,
            Err(e) => {
                nodes::undo(&name, &made);
                return Err(e);
            }
        };
        let owned = OwnedDatabase {
            name: name.clone(),
            identity: Some(
                NodeOids {
                    main: Some(oid),
                    others: made
                        .iter()
                        .map(|(n, o)| (n.host_port(), o.clone()))
                        .collect(),
                }
                .render(),
            ),
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
        let oids = NodeOids::parse(db.identity.as_deref());
        // The URL's server first: a Citus coordinator's database holds the
        // metadata that points at the workers' copies.
        let force = self.flavor.drop_with_force();
        let started = std::time::Instant::now();
        let mut dropped = nodes::drop_on(&self.url, &db.name, oids.main.as_deref(), force)?;
        log::debug!(
            "dropped {} on {} in {:?}",
            db.name,
            self.url.host_port(),
            started.elapsed()
        );
        for node in self.flavor.other_nodes() {
            let started = std::time::Instant::now();
            dropped |= nodes::drop_on(&node, &db.name, oids.on(&node.host_port()), force)?;
            log::debug!(
                "dropped {} on {} in {:?}",
                db.name,
                node.host_port(),
                started.elapsed()
            );
        }
        Ok(dropped)
    }

    fn reset_database(&self, db: &OwnedDatabase) -> anyhow::Result<Option<Box<dyn Connection>>> {
        ensure_ours(&db.name)?;
        let Some(fresh_extensions) = self.fresh_extensions.get() else {
            return Ok(None);
        };
        let config = self.url.config_for(&db.name);
        let cannot = |e: lancet_core::DbError| {
            anyhow::Error::new(e).context(format!("cannot empty database {}", db.name))
        };
        // Everything lancet generates is a relation of these two schemas
        // or hangs on one (indexes, statistics; Citus drops shards with
        // their tables); settings are the session's, and the session is new.
        let mut admin = PgConnection::open(&config, ADMIN_LIMIT).map_err(cannot)?;
        for stmt in [
            format!("DROP SCHEMA IF EXISTS {TWIN_SCHEMA} CASCADE"),
            DROP_GENERATED_RELATIONS.to_string(),
            drop_extensions_but(fresh_extensions),
        ] {
            admin.execute(&stmt).map_err(cannot)?;
        }
        drop(admin);
        let conn = self.open_generated(&db.name).map_err(cannot)?;
        Ok(Some(Box::new(conn)))
    }

    fn is_derived_statement(&self, sql: &str) -> bool {
        self.flavor.keeps_twins() && sql.contains(TWIN_SCHEMA)
    }

    fn derived_statements(&self, base: &[String]) -> Vec<String> {
        if self.flavor.keeps_twins() {
            populate::twin_statements(base)
        } else {
            Vec::new()
        }
    }

    fn server(&self) -> Option<String> {
        Some(self.url.server())
    }

    fn populate(
        &self,
        rng: &mut Rng,
        session: &mut Session,
    ) -> Result<Box<dyn GeneratedDatabase>, ExecError> {
        if let Some(recipe) = &self.declared {
            for sql in &recipe.setup {
                session.execute_sql(StatementKind::Setting, sql.clone())?;
            }
        }
        let mut model = populate::populate(rng, session, &*self.flavor, &self.server)?;
        model.declared = self.declared.clone();
        Ok(Box::new(database::PgDatabase::new(model)))
    }

    /// 57P02 (`crash_shutdown`): the postmaster ended this backend because
    /// another one crashed.
    fn lost_to_another_crash(&self, error: &lancet_core::DbError) -> bool {
        error.code.as_deref() == Some("57P02")
    }

    fn transactions(&self) -> Option<&dyn lancet_core::txn::Transactions> {
        Some(self)
    }

    fn client_command(&self) -> String {
        if let Some(command) = self.flavor.client_command(&self.url) {
            return command;
        }
        // One psql call (the password asked once at most, kept for `\c`)
        // that drops and makes its own scratch database first, so it runs
        // twice in a row, on the server PGHOST, PGPORT and PGUSER name.
        format!(
            "psql -X -d {db} -c 'DROP DATABASE IF EXISTS lancet_repro' -c 'CREATE DATABASE lancet_repro' -c '\\c lancet_repro' -f {{file}}",
            db = self.url.maintenance_database(),
        )
    }

    fn features(&self) -> Vec<lancet_core::Feature> {
        let mut f = vec![lancet_core::Feature::PivotRows];
        if self.flavor.keeps_twins() {
            f.push(lancet_core::Feature::TwinTables);
        }
        f
    }

    fn knobs(&self) -> Vec<Knob> {
        let mut k = self.server.planner.knobs.clone();
        k.extend(self.flavor.knobs());
        if let Some(recipe) = &self.declared {
            k.extend(recipe.knobs());
        }
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
