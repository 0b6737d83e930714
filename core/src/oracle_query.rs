//! One query of an oracle's check and the context it runs in: below the
//! oracle trait, so that planted faults and the check executor take it
//! without the oracle's seam.

use crate::ast::Query;
use crate::dialect::Dialect;
use crate::knobs::KnobSetting;
use crate::print::ToSql;
use serde::{Deserialize, Serialize};

/// Where one query of a check runs: the optimizer configuration it runs
/// under and the tables it reads. Recorded with findings; reproducers
/// render it with the DBMS client's own commands.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueryContext {
    /// The knobs turned off for this query (none: the DBMS's defaults).
    /// The check executor applies it before the query and restores the
    /// defaults after the check.
    #[serde(default, skip_serializing_if = "KnobSetting::is_default")]
    pub knobs: KnobSetting,
    /// Which copy of the tables the query reads. The oracle writes the
    /// query over that copy itself; this says so in reports.
    #[serde(default, skip_serializing_if = "TableSet::is_primary")]
    pub tables: TableSet,
}

/// A database's tables, or their twins: identical rows in another
/// placement or storage (Citus: distributed tables and plain local copies).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TableSet {
    #[default]
    Primary,
    Twins,
}

impl TableSet {
    fn is_primary(&self) -> bool {
        *self == TableSet::Primary
    }
}

impl QueryContext {
    pub fn is_default(&self) -> bool {
        *self == QueryContext::default()
    }
}

/// Opens the transaction of a query with rolled-back statements: the
/// spelling SQLite, PostgreSQL, MySQL and DuckDB all take.
pub const BEGIN: &str = "BEGIN";
/// Ends it, undoing its statements.
pub const ROLLBACK: &str = "ROLLBACK";

/// One query of an oracle's check, with its role in the relation.
#[derive(Clone, Debug, PartialEq)]
pub struct OracleQuery {
    /// `original`, `partitioned`, ...: used in reports.
    pub role: String,
    pub query: Query,
    pub context: QueryContext,
    /// Set for a statement that stores the query's rows in a temporary
    /// table of this name instead of returning them (the stepwise
    /// oracle's reference evaluates each step alone). It yields no result
    /// to compare; a session materializes a name once and keeps it.
    pub materialize: Option<String>,
    /// Statements run before the query in a transaction that is rolled
    /// back after it (`BEGIN; <statements>; <query>; ROLLBACK`): the
    /// query reads what they did, and the database is left as it was (the
    /// DQE oracle's UPDATE and DELETE). An error of one of them that the
    /// provider expects of its kind skips the check (DML fails where a
    /// query does not by documented rules: constraints, strict modes);
    /// any other error, a lost connection or a hang is a finding.
    pub rolled_back: Vec<crate::dml::Dml>,
    /// With [`OracleQuery::materialize`]: the statements that build that
    /// table (a twin: [`crate::TwinBuild`]), run verbatim in place of the
    /// CREATE TEMPORARY TABLE, once per session whatever the knobs.
    /// `query` is then the table the twin copies, for reports.
    pub builds: Vec<String>,
}

impl OracleQuery {
    /// A query run in the default context.
    pub fn new(role: &str, query: Query) -> OracleQuery {
        OracleQuery {
            role: role.to_string(),
            query,
            context: QueryContext::default(),
            materialize: None,
            rolled_back: Vec::new(),
            builds: Vec::new(),
        }
    }

    /// `query`, run after `statements` in a transaction rolled back after
    /// it (see [`OracleQuery::rolled_back`]).
    pub fn after_rolled_back(
        role: &str,
        statements: Vec<crate::dml::Dml>,
        query: Query,
    ) -> OracleQuery {
        OracleQuery {
            rolled_back: statements,
            ..OracleQuery::new(role, query)
        }
    }

    /// A statement that stores `query`'s rows in temporary table `name`.
    pub fn materialized(name: &str, query: Query) -> OracleQuery {
        OracleQuery {
            role: format!("materialize {name}"),
            materialize: Some(name.to_string()),
            ..OracleQuery::new("", query)
        }
    }

    /// The statements that build `build.twin` from `source` (the table it
    /// copies): a twin, made once per session ([`crate::TwinBuild`]).
    pub fn built(build: &crate::twin_recipe::TwinBuild, source: Query) -> OracleQuery {
        OracleQuery {
            role: format!("build {}", build.twin),
            materialize: Some(build.twin.clone()),
            builds: build.statements.clone(),
            ..OracleQuery::new("", source)
        }
    }

    /// The SQL it runs: the query, or the statement that materializes it
    /// (`CREATE TEMPORARY TABLE`, which SQLite, PostgreSQL and MySQL all
    /// read the same way), or the transaction around it that is rolled
    /// back, as a DBMS's client runs it (its statements separated by
    /// semicolons).
    pub fn sql(&self, dialect: Dialect) -> String {
        if !self.builds.is_empty() {
            return self.builds.join(";\n");
        }
        let q = self.query.to_sql(dialect);
        match &self.materialize {
            Some(name) => format!("CREATE TEMPORARY TABLE {name} AS {q}"),
            None if self.rolled_back.is_empty() => q,
            None => {
                let mut out = format!("{BEGIN};\n");
                for s in self.statements_sql(dialect) {
                    out.push_str(&s);
                    out.push_str(";\n");
                }
                format!("{out}{q};\n{ROLLBACK}")
            }
        }
    }

    /// The text of [`OracleQuery::rolled_back`]'s statements.
    pub fn statements_sql(&self, dialect: Dialect) -> Vec<String> {
        self.rolled_back.iter().map(|s| s.to_sql(dialect)).collect()
    }

    pub fn with_context(mut self, context: QueryContext) -> OracleQuery {
        self.context = context;
        self
    }
}
