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
            builds: Vec::new(),
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
    /// read the same way).
    pub fn sql(&self, dialect: Dialect) -> String {
        if !self.builds.is_empty() {
            return self.builds.join(";\n");
        }
        let q = self.query.to_sql(dialect);
        match &self.materialize {
            Some(name) => format!("CREATE TEMPORARY TABLE {name} AS {q}"),
            None => q,
        }
    }

    pub fn with_context(mut self, context: QueryContext) -> OracleQuery {
        self.context = context;
        self
    }
}
