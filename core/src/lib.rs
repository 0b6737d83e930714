//! lancet's core model: the SQL syntax tree and its printer (with the
//! dialect rules each provider supplies), values and result comparison, schemas, and the traits between providers
//! (one per DBMS), oracles (one per test relation) and the runner.
//!
//! Dependencies point one way: providers and oracles depend on this crate,
//! never on each other; the `lancet` binary wires them together.

pub mod ast;
pub mod compare;
pub mod connection;
pub mod dialect;
pub mod expected_errors;
pub mod fault;
pub mod knobs;
pub mod oracle;
pub mod print;
pub mod provider;
pub mod rng;
pub mod schema;
pub mod session;
pub mod shrink;
pub mod value;

pub use ast::*;
pub use connection::{Connection, DbError, FailureKind};
pub use dialect::{Dialect, SqlDialect};
pub use expected_errors::ExpectedErrors;
pub use knobs::{Knob, KnobSetting};
pub use oracle::{Case, DataReader, Disagreement, Oracle, OracleQuery, Verdict};
pub use print::ToSql;
pub use provider::{
    CreatedDatabase, DatabaseError, DatabaseId, OwnedDatabase, Provider, QueryGenerator, Scope,
    ScopeColumn, Truth,
};
pub use rng::Rng;
pub use schema::Schema;
pub use session::{ExecError, Session};
pub use value::{Row, Value};
