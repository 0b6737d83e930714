//! lancet's core model: the SQL syntax tree and its printer (with the
//! dialect rules each provider supplies), values and result comparison,
//! schemas, and the traits between providers (one per DBMS), oracles (one
//! per test relation) and the runner. Oracles are of two kinds, one list
//! ([`AnyOracle`]): query oracles ([`Oracle`], queries on the session a
//! database's population opened, run by [`run_check`]) and oracles that
//! open sessions of their own ([`SessionsOracle`], the transaction
//! schedules, on the provider's capability [`txn::Transactions`]).
//!
//! Dependencies point one way: providers and oracles depend on this crate,
//! never on each other; the `lancet` binary wires them together.
//!
//! May not touch: any DBMS, process, file or thread. This crate depends on
//! no other lancet crate and names no DBMS; running things, keeping
//! findings and talking to servers are the crates above it.
//!
//! How statements are built, one rule for every provider:
//! - **Queries** are [`ast`] trees printed per dialect: oracles build,
//!   partition, rewrite and shrink them, so they must not belong to any DBMS.
//! - **DDL and DML** are the provider's: it builds them as it likes and runs
//!   them through [`Session::execute_sql`] with a [`ast::StatementKind`],
//!   which is what expected-error rules are keyed by. PostgreSQL formats
//!   text; SQLite builds syntax trees of its own (`lancet_sqlite::statements`)
//!   and prints them through [`print::Printer`]'s small public API.
//! - **Knob settings** are not statements: [`Connection::set_knobs`] applies
//!   them, and [`Provider::knob_commands`] renders them for reproducers.

pub mod any_oracle;
pub mod ast;
pub mod case;
pub mod check;
pub mod compare;
pub mod connection;
pub mod database;
pub mod dialect;
pub mod dml;
pub mod expected_errors;
pub mod fault;
pub mod feature;
pub mod feedback;
pub mod knobs;
pub mod oracle;
pub mod oracle_query;
pub mod patterns;
pub mod plans;
pub mod print;
pub mod provider;
pub mod rng;
pub mod schema;
pub mod session;
pub mod sessions_oracle;
pub mod shrink;
pub mod twin_recipe;
pub mod txn;
pub mod value;

pub use any_oracle::AnyOracle;
pub use ast::*;
pub use case::{Case, CaseError, CasePolicy, Inputs, ItemPolicy, OracleInputs};
pub use check::{run_check, run_check_with_knobs_off, CheckOutcome, RanQuery};
pub use connection::{Connection, DbError, FailureKind};
pub use dialect::{Dialect, SqlDialect};
pub use dml::Dml;
pub use expected_errors::ExpectedErrors;
pub use feedback::ProductivePool;
pub use knobs::{Knob, KnobSetting};
pub use oracle::{
    Disagreement, GenerateContext, Oracle, OracleMemo, OracleQuery, QueryContext, TableSet, Verdict,
};
pub use plans::PlanCoverage;
pub use print::ToSql;
pub use provider::{
    CreatedDatabase, DatabaseError, DatabaseId, Feature, GeneratedDatabase, OwnedDatabase,
    Provider, QueryGenerator, Scope, ScopeColumn, Truth, TwinBuild, TWIN_SCHEMA,
};
pub use rng::Rng;
pub use schema::Schema;
pub use session::{statement_shape, DataReader, ExecError, Loss, Session, ShapeTimes};
pub use sessions_oracle::{
    FindingFiles, PreparedSessions, Reduction, SessionsDatabase, SessionsFacts, SessionsOracle,
    SessionsRun, ShownAgain,
};
pub use twin_recipe::{DeclaredKnob, DeclaredRecipe};
pub use value::{Row, Value};
