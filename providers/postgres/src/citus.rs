//! Citus: PostgreSQL with tables spread over worker nodes. A [`Flavor`] of
//! the PostgreSQL provider; everything else (connection, types,
//! expressions, queries) is PostgreSQL's.
//!
//! Each lancet database exists on the coordinator and on every worker,
//! each with the extension; the coordinator's copy registers the workers.
//! Every generated table is placed at random: hash-distributed (2 to 8
//! shards, several co-location groups), a reference table, a Citus local
//! table, or plain. The DDL respects what Citus requires (unique keys
//! include the distribution column; no NULL distribution values; the
//! distribution column is never updated), so that checks test Citus's
//! planner and executor rather than its error messages. Each table also
//! gets a plain twin (see [`lancet_core::TWIN_SCHEMA`]) for the
//! dist-vs-local oracle.

use crate::connection::PgConnection;
use crate::nodes::admin;
use crate::schema::{PgSchema, PgTable, Placement};
use crate::types::PgType;
use crate::{Features, Flavor};
use anyhow::{bail, Context};
use lancet_core::{ExecError, Knob, Rng, Session, StatementKind, TWIN_SCHEMA};
use lancet_postgres_url::ServerUrl;
use rand::seq::IndexedRandom;
use rand::Rng as _;

mod knobs;
use knobs::{known_knobs, read_knobs};

/// The transaction oracle's table on Citus, one of two placements: sharded
/// by `k` over the workers (a write of several rows spans shards and
/// commits with two-phase commit), or a reference table, a copy on every
/// node (every write commits on all of them, and its UPDATEs and DELETEs
/// serialize on the coordinator).
const DISTRIBUTED: &str = "distributed";
const REFERENCE: &str = "reference";

/// Citus's expected errors: its documented refusals, by SQLSTATE and,
/// where Citus uses one code for many things (0A000, XX000), the exact
/// message prefix.
const EXPECTED_ERRORS: &str = include_str!("../../../configs/expected-errors/citus.toml");

/// Where reproducers build their tables on a user's coordinator.
const REPRO_SCHEMA: &str = "lancet_repro";

/// A Citus cluster, as its coordinator describes it.
#[derive(Default)]
pub struct Citus {
    /// The coordinator's address as the URL gives it (workers reach it there).
    coordinator: Option<(String, u16)>,
    /// The active primary workers, with the URL's role and password.
    workers: Vec<ServerUrl>,
    /// The knobs of [`SWITCHES`] and [`SETTINGS`] this Citus has (read at
    /// start-up; a release may add or drop a setting).
    knobs: Vec<Knob>,
}

impl Citus {
    pub fn new() -> Citus {
        Citus::default()
    }
}

/// The first column of the first row of `sql`, as text.
fn one_value(admin: &mut PgConnection, sql: &str) -> anyhow::Result<Option<String>> {
    Ok(admin
        .query_text(sql, &[])?
        .into_iter()
        .next()
        .and_then(|r| r.into_iter().next().flatten()))
}

/// Citus 13.2 warns with this when a subplan's intermediate result is
/// missing, and goes on as if it were empty: the query's result is wrong
/// (the known bug of citusdata/citus#8312, met with other shapes).
const INTERMEDIATE_RESULT_LOST: &str = "Query could not find the intermediate result file";

impl Flavor for Citus {
    fn name(&self) -> &'static str {
        "citus"
    }

    fn features(&self) -> Features {
        Features {
            // Citus distributes no inheritance tree, and a plain parent
            // joined with a distributed table reads NULL for its columns
            // once it has a child (Citus 13.2; see README, Citus bugs):
            // generating them would report that one bug again and again.
            inheritance: false,
            // Citus 14.0.1 on PostgreSQL 18 reads a virtual generated
            // column of a distributed table as NULL through an outer join
            // (`SELECT a0.g FROM dist a0 FULL JOIN t a1 ON NULL` gives
            // NULL where the local table gives t; README, Citus bugs).
            virtual_generated_columns: false,
            ..Features::default()
        }
    }

    fn connect(&mut self, admin_conn: &mut PgConnection, url: &ServerUrl) -> anyhow::Result<()> {
        let shown = url.display_name();
        let superuser = one_value(
            admin_conn,
            "SELECT rolsuper::text FROM pg_roles WHERE rolname = current_user",
        )
        .with_context(|| format!("cannot read the privileges of the role on {shown}"))?;
        if superuser.as_deref() != Some("true") {
            bail!(
                "role '{}' on {shown} is not a superuser; lancet --dbms citus needs one: only a \
                 superuser may CREATE EXTENSION citus and register workers (citus_add_node) \
                 in the databases lancet creates",
                url.user()
            );
        }
        let version = one_value(
            admin_conn,
            "SELECT extversion FROM pg_extension WHERE extname = 'citus'",
        )
        .with_context(|| format!("cannot read the extensions of {shown}"))?;
        if version.is_none() {
            bail!(
                "{shown} is not a Citus coordinator: the citus extension is not installed in \
                 database '{}' (CREATE EXTENSION citus, and citus_add_node for each worker)",
                url.maintenance_database()
            );
        }
        let coordinator = one_value(admin_conn, "SELECT citus_is_coordinator()::text")
            .with_context(|| format!("cannot ask {shown} whether it is a Citus coordinator"))?;
        if coordinator.as_deref() != Some("true") {
            bail!(
                "{shown} is not a Citus coordinator (citus_is_coordinator() is false): give the \
                 coordinator's URL, not a worker's"
            );
        }
        let rows = admin_conn
            .query_text(
                "SELECT nodename, nodeport::text FROM pg_dist_node \
                 WHERE groupid <> 0 AND isactive AND noderole = 'primary' ORDER BY nodeid",
                &[],
            )
            .with_context(|| format!("cannot read the workers of {shown} (pg_dist_node)"))?;
        let mut workers = Vec::new();
        for row in rows {
            let mut row = row.into_iter().map(Option::unwrap_or_default);
            let host = row.next().unwrap_or_default();
            let port: u16 = row
                .next()
                .unwrap_or_default()
                .parse()
                .with_context(|| format!("{shown} lists worker {host} with a bad port"))?;
            workers.push(url.on_node(&host, port));
        }
        if workers.is_empty() {
            bail!(
                "the Citus coordinator {shown} has no active worker (pg_dist_node lists none); \
                 add one with SELECT citus_add_node('HOST', PORT)"
            );
        }
        for w in &workers {
            let mut conn = admin(w).with_context(|| {
                format!("the Citus worker {} (from {shown}'s pg_dist_node) is not reachable with the URL's role", w.host_port())
            })?;
            let available = one_value(
                &mut conn,
                "SELECT name::text FROM pg_available_extensions WHERE name = 'citus'",
            )
            .with_context(|| format!("cannot read the extensions of worker {}", w.host_port()))?;
            if available.is_none() {
                bail!(
                    "the Citus worker {} has no citus extension installed",
                    w.host_port()
                );
            }
        }
        let (knobs, unknown) = read_knobs(admin_conn)
            .with_context(|| format!("cannot read the Citus settings of {shown}"))?;
        if !unknown.is_empty() {
            log::warn!(
                "{shown} (Citus {}): Citus settings lancet does not know, left at their defaults: {}",
                version.as_deref().unwrap_or("?"),
                unknown.join(", ")
            );
        }
        self.knobs = knobs;
        self.coordinator = Some((url.host(), url.port()));
        self.workers = workers;
        Ok(())
    }

    fn other_nodes(&self) -> Vec<ServerUrl> {
        self.workers.clone()
    }

    fn node_setup(&self) -> Vec<String> {
        vec!["CREATE EXTENSION citus".into()]
    }

    fn database_setup(&self) -> Vec<String> {
        let mut v = vec!["CREATE EXTENSION IF NOT EXISTS citus".to_string()];
        if let Some((host, port)) = &self.coordinator {
            v.push(format!(
                "SELECT citus_set_coordinator_host('{}', {port})",
                host.replace('\'', "''")
            ));
        }
        for w in &self.workers {
            v.push(format!(
                "SELECT citus_add_node('{}', {})",
                w.host().replace('\'', "''"),
                w.port()
            ));
        }
        v
    }

    fn session_setup(&self) -> Vec<String> {
        // Joins on other columns than the distribution columns are
        // planned as repartition joins rather than refused.
        // Warnings come through: Citus warns when a result is wrong.
        vec![
            "SET citus.enable_repartition_joins = on".into(),
            "SET client_min_messages = warning".into(),
        ]
    }

    fn failing_warnings(&self) -> &'static [&'static str] {
        &[INTERMEDIATE_RESULT_LOST]
    }

    /// READ COMMITTED only: Citus documents no distributed snapshot, so a
    /// multi-shard read under REPEATABLE READ or SERIALIZABLE takes one
    /// snapshot per worker, and those levels' rules do not hold across
    /// shards by design.
    fn transaction_levels(&self) -> Vec<lancet_core::txn::IsolationLevel> {
        vec![lancet_core::txn::IsolationLevel::ReadCommitted]
    }

    /// READ COMMITTED as Citus runs it on a distributed table
    /// ([`crate::txn::citus_rules`]).
    fn transaction_rules(
        &self,
        level: lancet_core::txn::IsolationLevel,
    ) -> lancet_core::txn::LevelRules {
        crate::txn::citus_rules(level)
    }

    /// Over one key only: Citus runs `SELECT ... FOR UPDATE` on a
    /// distributed table in one shard only ("could not run distributed
    /// query with FOR UPDATE/SHARE commands" otherwise). Reference tables
    /// take any condition, but lancet does not know whether their locking
    /// reads wait for the coordinator's locks (then read the rows that
    /// match after it, as their writes do) or re-check rows on a worker.
    fn transaction_locking_reads(&self) -> lancet_core::txn::LockingReads {
        lancet_core::txn::LockingReads::KeyEquality
    }

    /// None: Citus's locking clauses, savepoints and subqueries over
    /// another distributed table go through the coordinator in ways the
    /// Citus documentation does not tie to PostgreSQL's rules.
    fn transaction_more_statements(&self) -> lancet_core::txn::MoreStatements {
        lancet_core::txn::MoreStatements::default()
    }

    /// The table is distributed by its key over the workers, so that
    /// transactions span shards on several nodes (two-phase commit).
    fn transaction_placements(&self) -> Vec<&'static str> {
        vec![DISTRIBUTED, REFERENCE]
    }

    fn shows_lock_waits(&self) -> bool {
        false
    }

    /// PostgreSQL's planner switches, and how a multi-shard write runs:
    /// over one connection per shard at once, or over one connection per
    /// worker in turn (Citus docs, `citus.multi_shard_modify_mode`).
    fn transaction_knobs(&self) -> Vec<lancet_core::txn::TxnKnob> {
        let mut knobs = crate::txn::planner_knobs();
        knobs.push(lancet_core::txn::TxnKnob::new(
            "citus.multi_shard_modify_mode",
            &["parallel", "sequential"],
            lancet_core::txn::KnobScope::Session,
            "whether a multi-shard UPDATE or DELETE opens a connection per shard at once or runs \
             over one connection per worker (Citus docs: citus.multi_shard_modify_mode)",
        ));
        knobs
    }

    fn transaction_wider_forms(&self) -> bool {
        false
    }

    fn transaction_table(&self, name: &str, placement: Option<&str>) -> Vec<String> {
        if placement == Some(REFERENCE) {
            vec![format!("SELECT create_reference_table('{name}')")]
        } else {
            vec![format!("SELECT create_distributed_table('{name}', 'k')")]
        }
    }

    fn place(
        &self,
        rng: &mut Rng,
        schema: &PgSchema,
        first_column: &str,
        partitioned: bool,
        inherits: bool,
    ) -> (Placement, Option<PgType>) {
        // Citus distributes neither inheritance parents nor children.
        if inherits {
            return (Placement::Plain, None);
        }
        let roll = rng.random_range(0..100);
        let distribute = if partitioned { roll < 75 } else { roll < 50 };
        if !distribute {
            let placement = match roll {
                _ if partitioned => Placement::Plain,
                50..72 => Placement::Reference,
                72..86 => Placement::CitusLocal,
                _ => Placement::Plain,
            };
            return (placement, None);
        }
        // Groups so far: their number, distribution column type and shards.
        let mut groups: Vec<(u32, PgType, u32)> = Vec::new();
        for t in &schema.relations {
            if let Placement::Distributed {
                column,
                colocation,
                shards,
            } = &t.placement
            {
                if groups.iter().any(|(g, _, _)| g == colocation) {
                    continue;
                }
                if let Some((_, ty)) = t.columns.iter().find(|(c, _)| c == column) {
                    groups.push((*colocation, ty.clone(), *shards));
                }
            }
        }
        // A partitioned table's key is an integer column.
        groups.retain(|(_, ty, _)| !partitioned || ty.name == "integer");
        let join = !groups.is_empty() && rng.random_bool(0.7);
        if join {
            if let Some((group, ty, shards)) = groups.choose(rng).cloned() {
                return (
                    Placement::Distributed {
                        column: first_column.to_string(),
                        colocation: group,
                        shards,
                    },
                    Some(ty),
                );
            }
        }
        let next = schema
            .relations
            .iter()
            .filter_map(|t| match t.placement {
                Placement::Distributed { colocation, .. } => Some(colocation + 1),
                _ => None,
            })
            .max()
            .unwrap_or(0);
        let shards = *[2, 3, 4, 8].choose(rng).unwrap_or(&4);
        // Mostly integers, so that later tables can join the group.
        let ty = if partitioned || rng.random_bool(0.6) {
            Some(PgType::from_name(if partitioned || rng.random_bool(0.7) {
                "integer"
            } else {
                "bigint"
            }))
        } else {
            None
        };
        (
            Placement::Distributed {
                column: first_column.to_string(),
                colocation: next,
                shards,
            },
            ty,
        )
    }

    fn after_create_table(
        &self,
        session: &mut Session,
        schema: &PgSchema,
        table: &PgTable,
    ) -> Result<Placement, ExecError> {
        let name = &table.name;
        let sql = match &table.placement {
            Placement::Plain => return Ok(Placement::Plain),
            Placement::Distributed {
                column,
                colocation,
                shards,
            } => {
                let mate = schema.relations.iter().find(|t| {
                    matches!(&t.placement, Placement::Distributed { colocation: g, .. } if g == colocation)
                        && !t.name.contains("_p")
                });
                match mate {
                    Some(m) => format!(
                        "SELECT create_distributed_table('{name}', '{column}', colocate_with => '{}')",
                        m.name
                    ),
                    None => format!(
                        "SELECT create_distributed_table('{name}', '{column}', shard_count => {shards}, colocate_with => 'none')"
                    ),
                }
            }
            Placement::Reference => format!("SELECT create_reference_table('{name}')"),
            Placement::CitusLocal => {
                format!("SELECT citus_add_local_table_to_metadata('{name}')")
            }
        };
        if session.execute_sql(StatementKind::CreateTable, sql)? {
            Ok(table.placement.clone())
        } else {
            Ok(Placement::Plain)
        }
    }

    fn drop_with_force(&self) -> bool {
        true
    }

    fn keeps_twins(&self) -> bool {
        true
    }

    fn expected_errors(&self) -> Option<(&'static str, &'static str)> {
        Some((EXPECTED_ERRORS, "configs/expected-errors/citus.toml"))
    }

    fn knobs(&self) -> Vec<Knob> {
        if self.knobs.is_empty() && self.workers.is_empty() {
            // Not connected (tools reading findings): every known knob.
            return known_knobs();
        }
        self.knobs.clone()
    }

    /// In a schema of their own in the database the URL names (which has
    /// Citus and its workers registered), dropped first and after.
    fn client_command(&self, url: &ServerUrl) -> Option<String> {
        // The server from PGHOST, PGPORT and PGUSER, not the tester's.
        let psql = format!("psql -X -d {}", url.maintenance_database());
        Some(format!(
            "{psql} -c 'DROP SCHEMA IF EXISTS {REPRO_SCHEMA}, {TWIN_SCHEMA} CASCADE' -c 'CREATE SCHEMA {REPRO_SCHEMA}' -c 'SET search_path TO {REPRO_SCHEMA}' -f {{file}}"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::EXPECTED_ERRORS;
    use lancet_core::{DbError, ExpectedErrors, StatementKind};

    /// Citus refuses an UPDATE or DELETE of a Citus local table whose
    /// subquery reads distributed tables (met by dqe on Citus 14.0.1):
    /// expected of those statements only, by its code and message prefix.
    #[test]
    fn a_local_table_modification_over_distributed_tables_is_expected_of_dml_only() {
        let rules = ExpectedErrors::from_toml(EXPECTED_ERRORS, "citus.toml").unwrap();
        let refusal = DbError::statement(
            Some("0A000".into()),
            "local table t0 cannot be joined with these distributed tables",
        );
        assert!(rules.is_expected(StatementKind::Delete, &refusal));
        assert!(rules.is_expected(StatementKind::Update, &refusal));
        assert!(!rules.is_expected(StatementKind::Query, &refusal));
        let internal = DbError::statement(Some("XX000".into()), refusal.message.clone());
        assert!(!rules.is_expected(StatementKind::Delete, &internal));
    }
}
