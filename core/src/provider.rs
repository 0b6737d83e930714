//! The interface a DBMS provider implements. Oracles see only
//! [`QueryGenerator`]; the runner sees [`Provider`]. Adding a DBMS means
//! implementing these two traits and its [`SqlDialect`](crate::SqlDialect)
//! rules, and no oracle changes.

use crate::ast::{Expr, FromClause, TypeName};
pub use crate::database::{CreatedDatabase, DatabaseError, DatabaseId, OwnedDatabase};
use crate::dialect::Dialect;
use crate::expected_errors::ExpectedErrors;
pub use crate::feature::Feature;
use crate::rng::Rng;
use crate::schema::Schema;
use crate::session::{ExecError, Session};
pub use crate::twin_recipe::{TwinBuild, TWIN_SCHEMA};
use crate::value::Value;

/// The truth value of a predicate on one row, in three-valued logic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Truth {
    True,
    False,
    Null,
}

/// A column an oracle may use in select lists and predicates, written as
/// it must be referenced in this FROM clause.
#[derive(Clone, Debug, PartialEq)]
pub struct ScopeColumn {
    pub expr: Expr,
    pub ty: Option<TypeName>,
}

/// The columns a FROM clause brings into scope.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Scope {
    pub columns: Vec<ScopeColumn>,
}

impl Scope {
    /// Every column of `relation`, as `qualifier.column` with its declared
    /// type: the scope of `FROM relation AS qualifier`.
    pub fn of_relation(relation: &crate::schema::Relation, qualifier: &str) -> Scope {
        Scope {
            columns: relation
                .columns
                .iter()
                .map(|c| ScopeColumn {
                    expr: Expr::column(Some(qualifier), &c.name),
                    ty: c.ty.clone(),
                })
                .collect(),
        }
    }
}

/// Generates query parts over one database's schema. Every method draws
/// only from `rng` and what earlier checks saw, so a database's queries
/// are a function of its seed and the DBMS's answers.
pub trait QueryGenerator {
    /// A FROM clause over the database's tables and views, possibly with
    /// joins and derived tables, and the columns it brings into scope.
    #[allow(clippy::wrong_self_convention)]
    fn from_clause(&mut self, rng: &mut Rng) -> (FromClause, Scope);
    /// The check that used the last FROM clause ended; `saw_rows` if it
    /// looked at rows (see [`crate::feedback`]). The runner calls it after
    /// every check, so generators may prefer what produced rows.
    fn check_ended(&mut self, _saw_rows: bool) {}
    /// An expression to use as a predicate (any type the dialect accepts in WHERE).
    fn predicate(&mut self, rng: &mut Rng, scope: &Scope) -> Expr;
    /// A predicate for the WHERE of an UPDATE or DELETE of `table` over
    /// `scope` (its columns): [`QueryGenerator::predicate`] by default. A
    /// provider narrows it where the DBMS refuses in a modification what
    /// it answers in a query (Citus: no subqueries in modifications of
    /// plain and reference tables), so an oracle that runs DML (dqe) tests
    /// the DBMS and not those known bugs again.
    fn modification_predicate(&mut self, rng: &mut Rng, scope: &Scope, _table: &str) -> Expr {
        self.predicate(rng, scope)
    }
    /// An expression to select.
    fn expression(&mut self, rng: &mut Rng, scope: &Scope) -> Expr;
    /// Whether `name` is an aggregate function in this dialect.
    fn is_aggregate(&self, name: &str) -> bool;

    /// Wraps `expr` so that values comparing equal are identical, for
    /// DISTINCT, GROUP BY, MIN and MAX, which return an arbitrary one of
    /// several equal values (SQLite: `'a'` and `'A'` under NOCASE). SQLite
    /// adds `COLLATE BINARY`; dialects whose equality is exact keep `expr`.
    fn with_exact_equality(&self, expr: Expr) -> Expr {
        expr
    }

    /// The GROUP BY keys that make the rows of a group hold identical
    /// values of `expr`, not merely equal ones: a HAVING predicate sees the
    /// value of an arbitrary row of its group. The first key is `expr` as
    /// the query selects it. SQLite adds `typeof(expr)` (1 and 1.0 are one
    /// group but render differently).
    fn exact_group_keys(&self, expr: Expr) -> Vec<Expr> {
        vec![self.with_exact_equality(expr)]
    }

    /// PQS: a FROM clause of plain base tables joined by commas, each
    /// aliased, with the scope listing every column as `alias.column` in
    /// factor order. `None` if the provider does not support PQS.
    fn pivot_tables(&mut self, _rng: &mut Rng) -> Option<(FromClause, Scope)> {
        None
    }

    /// PQS: an expression over `scope` and its truth value on the pivot
    /// row (`pivot[i]` is the value of `scope.columns[i]`), computed by the
    /// provider's own evaluator with the DBMS's semantics. `None` where the
    /// evaluator is not sure: the oracle then generates nothing.
    fn pivot_predicate(
        &mut self,
        _rng: &mut Rng,
        _scope: &Scope,
        _pivot: &[Value],
    ) -> Option<(Expr, Truth)> {
        None
    }

    /// The argument of the aggregate `function` (upper case: MIN, MAX, SUM,
    /// AVG, COUNT, TOTAL) that an oracle builds over `scope`: `proposed`
    /// (a column or expression the oracle drew) if the dialect accepts it
    /// there, else one of a type it accepts (PostgreSQL has no SUM(text),
    /// AVG(date) or MIN(boolean)). The default keeps `proposed` and draws
    /// nothing from `rng`, so a dialect that accepts anything generates
    /// exactly what it did before this hook existed.
    fn aggregate_argument(
        &mut self,
        _rng: &mut Rng,
        _scope: &Scope,
        _function: &str,
        proposed: Expr,
    ) -> Expr {
        proposed
    }

    /// Each table and its twin: a copy with the same rows, written by the
    /// same statements, in another placement or storage (Citus: a
    /// distributed table and a plain local copy). Empty when the database
    /// keeps no twins; the dist-vs-local oracle then does not apply.
    fn twin_tables(&self) -> Vec<(String, String)> {
        Vec::new()
    }

    /// Constant folding (the coddtest oracle; any oracle that writes a
    /// value back into a query may use it): the select items of an
    /// auxiliary query, `SELECT items`, that read `constant`'s value
    /// together with what decides how to write it as a literal of this
    /// dialect (its type, collation, exact text). `None` where no literal
    /// can stand for `constant` in every position (SQLite: an expression
    /// with affinity). The default folds nothing.
    fn literal_probe(&self, _constant: &Expr) -> Option<Vec<Expr>> {
        None
    }

    /// The literal that stands for the value one row of
    /// [`QueryGenerator::literal_probe`]'s query read: of the same type,
    /// NULL-ness, collation and affinity, so that any query reads it as
    /// it read the expression. `None` where no literal is exact (a float
    /// that would not read back bit for bit, a type without one).
    fn literal_of(&self, _probe: &[Value]) -> Option<Expr> {
        None
    }

    /// Whether ROLLBACK undoes an UPDATE or DELETE of `table` (MySQL's
    /// MyISAM, MEMORY and Aria tables keep the change): an oracle that
    /// runs DML in a transaction it rolls back (dqe) draws only such
    /// tables, or it would change the database under later checks.
    fn rolls_back_dml(&self, _table: &str) -> bool {
        true
    }

    /// The twin recipes this database offers: ways to build a copy of a
    /// table with the same rows in another physical design (its indexes
    /// dropped, partitioned, another storage), for the twins oracle. Empty
    /// by default: the oracle then draws no case.
    fn twin_recipes(&self) -> Vec<String> {
        Vec::new()
    }

    /// The statements that build `table`'s twin by `recipe` (one of
    /// [`QueryGenerator::twin_recipes`]), filled with the table's rows;
    /// `None` where the recipe does not apply to that table (SQLite's
    /// WITHOUT ROWID needs a primary key). Draws nothing: a recipe is a
    /// function of the table.
    fn twin_build(&self, _recipe: &str, _table: &str) -> Option<TwinBuild> {
        None
    }

    /// The settings that concern `recipe`'s twins (an extension's, which a
    /// campaign file declares): the twins oracle runs both queries of some
    /// checks under a configuration of them. None by default.
    fn twin_knobs(&self, _recipe: &str) -> Vec<crate::knobs::Knob> {
        Vec::new()
    }
}

/// What a provider generated in one database. The provider keeps its own
/// model of it (SQLite: partial indexes and WITHOUT ROWID tables;
/// PostgreSQL: which tables take inserts, inheritance, partitions; Citus:
/// placements), and the rest of lancet sees it only through this trait.
pub trait GeneratedDatabase: Send {
    /// The tables, views, columns and indexes, in the model every provider
    /// shares: for deduplication, the reducer and tests.
    fn schema(&self) -> &Schema;
    /// A query generator over this database. Several may exist at once
    /// (one per oracle check, say); each draws only from the RNG it is given.
    fn query_generator(&self) -> Box<dyn QueryGenerator + '_>;
}

/// A DBMS that lancet can test.
pub trait Provider: Send + Sync {
    /// The `--dbms` name.
    fn name(&self) -> &'static str;
    /// How this DBMS spells SQL where dialects differ: the rules the
    /// printer follows for it.
    fn dialect(&self) -> Dialect;
    /// The DBMS version actually in use, for summaries and findings.
    fn version(&self) -> anyhow::Result<String>;
    fn expected_errors(&self) -> &ExpectedErrors;
    /// Creates a fresh, empty database named `id` and connects to it. It
    /// never drops or replaces anything first: a taken name is a
    /// [`DatabaseError::NameTaken`] error, and the caller picks another.
    fn create_database(&self, id: &DatabaseId) -> anyhow::Result<CreatedDatabase>;
    /// Removes a database this run created, after checking that it is still
    /// that database (its identity) and that the role owns it (else
    /// [`DatabaseError::NotOurs`]). `Ok(false)` if it no longer exists.
    /// Nothing to do for in-memory databases.
    fn drop_database(&self, db: &OwnedDatabase) -> anyhow::Result<bool>;
    /// Whether `sql`, a statement of a finding's setup, is one the provider
    /// derives from the others (Citus: a twin table's copy of a
    /// statement). A reducer simplifies the others and derives these anew
    /// for every candidate ([`Provider::derived_statements`]), so that a
    /// copy never drifts from what it copies.
    fn is_derived_statement(&self, _sql: &str) -> bool {
        false
    }
    /// The derived statements for a setup of underived ones, to run after
    /// them.
    fn derived_statements(&self, _base: &[String]) -> Vec<String> {
        Vec::new()
    }
    /// Empties a database this run created and used, so that it can serve
    /// as a fresh one again, and connects to it; `Ok(None)` if the
    /// provider cannot (then a new database is made). Reduction tries
    /// hundreds of candidates, and creating a database on every node of a
    /// cluster for each costs more than the candidate itself.
    fn reset_database(
        &self,
        _db: &OwnedDatabase,
    ) -> anyhow::Result<Option<Box<dyn crate::Connection>>> {
        Ok(None)
    }
    /// Where this provider's databases live, for ledgers and messages:
    /// `user@host:port` for a server (never a password), `None` for an
    /// embedded DBMS whose databases vanish with the process.
    fn server(&self) -> Option<String> {
        None
    }
    /// Fills a fresh database with a random schema and data through
    /// `session`, and returns the provider's model of what it made.
    fn populate(
        &self,
        rng: &mut Rng,
        session: &mut Session,
    ) -> Result<Box<dyn GeneratedDatabase>, ExecError>;
    /// How a user runs a reproducer with the DBMS's own client; `{file}`
    /// stands for the reproducer's path.
    fn client_command(&self) -> String;
    /// The optimizer knobs this DBMS documents (none by default).
    /// The [`Feature`]s this provider's databases offer.
    fn features(&self) -> Vec<Feature> {
        Vec::new()
    }
    fn knobs(&self) -> Vec<crate::knobs::Knob> {
        Vec::new()
    }
    /// The configuration with every optimization off that the DBMS
    /// accepts, to tell which side of a disagreement is wrong: by default
    /// every switch of [`Provider::knobs`] off, settings at their defaults.
    /// A DBMS that refuses some combination leaves out what it needs on.
    fn every_optimization_off(&self) -> crate::knobs::KnobSetting {
        crate::knobs::KnobSetting {
            changes: self
                .knobs()
                .into_iter()
                .filter(|k| k.values.is_empty())
                .map(|k| k.name)
                .collect(),
        }
    }
    /// How a reproducer changes the optimizer configuration from `from` to
    /// `to` with the DBMS's own client: lines to put before the next query
    /// (SQLite: `.testctrl optimizations 0x..`, PostgreSQL: `SET
    /// enable_hashjoin = off;` and `RESET ...;`). Covers every knob of
    /// [`Provider::knobs`], a flavor's included.
    fn knob_commands(
        &self,
        _from: &crate::knobs::KnobSetting,
        _to: &crate::knobs::KnobSetting,
    ) -> Vec<String> {
        Vec::new()
    }
    /// Comment lines for a reproducer's header (`--`, `#`): SQL comment syntax.
    fn comment_prefix(&self) -> &'static str {
        "--"
    }
    /// Whether a lost connection says that another session crashed the
    /// server (PostgreSQL ends every other backend with SQLSTATE 57P02
    /// when one crashes): such a loss is the crash's collateral, counted
    /// with it and kept apart, not a finding of its own.
    fn lost_to_another_crash(&self, _error: &crate::connection::DbError) -> bool {
        false
    }
    /// Its transactions, for the transaction oracle: more sessions on one
    /// database and the rules of each isolation level. `None` where lancet
    /// does not model them.
    fn transactions(&self) -> Option<&dyn crate::txn::Transactions> {
        None
    }
}
