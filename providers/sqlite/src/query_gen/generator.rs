//! The [`QueryGenerator`] oracles draw from on one populated SQLite
//! database: FROM clauses under the cost model, predicates and
//! expressions, PQS's pivot rows.

use super::*;
use crate::functions;
use crate::pqs;

/// The [`QueryGenerator`] oracles use on a populated SQLite database.
pub struct SqliteQueryGenerator<'s> {
    builder: QueryBuilder<'s>,
    db: &'s SqliteDatabase,
    version: i32,
    /// The columns of the last [`QueryGenerator::pivot_tables`], which
    /// [`QueryGenerator::pivot_predicate`] needs (its scope alone does not
    /// say which table an alias stands for).
    pivot: Option<pqs::PivotTables>,
    /// Whether PQS may run: only on the bundled library, the build its
    /// evaluator was validated against (a custom build of the same version
    /// may be compiled with options that change LIKE or substr).
    pqs: bool,
    /// Whether the last FROM clause was one of the heavy share (see
    /// [`HEAVY_SHARE`]): its predicates may then have subqueries whatever
    /// its size.
    heavy: bool,
    /// FROM clauses whose checks saw rows, with their cost (`last_rows`,
    /// `heavy`), drawn again for [`REUSED_SHARE`] of the checks.
    productive: ProductivePool<ProductiveFrom>,
}

/// A FROM clause kept for reuse, with what its predicates depend on.
#[derive(Clone, Debug)]
struct ProductiveFrom {
    from: FromClause,
    scope: Scope,
    rows: u64,
    heavy: bool,
}

/// The share of FROM clauses drawn from those that saw rows (see
/// [`lancet_core::feedback`]).
pub const REUSED_SHARE: f64 = 0.6;

impl<'s> SqliteQueryGenerator<'s> {
    /// A generator over `db` for SQLite `version` (`sqlite3_libversion_number()`).
    pub fn new(db: &'s SqliteDatabase, version: i32) -> SqliteQueryGenerator<'s> {
        SqliteQueryGenerator {
            builder: QueryBuilder::new(db, version),
            db,
            version,
            pivot: None,
            pqs: true,
            heavy: false,
            productive: ProductivePool::default(),
        }
    }

    /// A generator for a library other than the bundled one: no PQS.
    pub fn without_pqs(mut self) -> Self {
        self.pqs = false;
        self
    }
}

impl QueryGenerator for SqliteQueryGenerator<'_> {
    fn from_clause(&mut self, rng: &mut Rng) -> (FromClause, Scope) {
        if let Some(kept) = self.productive.draw(rng, REUSED_SHARE) {
            self.heavy = kept.heavy;
            self.builder.last_rows = kept.rows;
            return (kept.from, kept.scope);
        }
        self.heavy = rng.random_bool(HEAVY_SHARE);
        let (from, cols) = self.builder.from_clause(
            rng,
            FromOptions {
                max_factors: 3,
                index_hints: true,
                derived_tables: true,
                right_joins: true,
                views: true,
                max_rows: if self.heavy { HEAVY_ROWS } else { LIGHT_ROWS },
            },
        );
        let scope = Scope {
            columns: cols.into_iter().map(|c| c.scope).collect(),
        };
        self.productive.generated(ProductiveFrom {
            from: from.clone(),
            scope: scope.clone(),
            rows: self.builder.last_rows,
            heavy: self.heavy,
        });
        (from, scope)
    }

    fn check_ended(&mut self, saw_rows: bool) {
        self.productive.check_ended(saw_rows);
    }

    fn predicate(&mut self, rng: &mut Rng, scope: &Scope) -> Expr {
        let depth = rng.random_range(1..=3);
        let subqueries = if self.heavy || self.builder.last_rows <= SUBQUERY_ROWS {
            rng.random_range(0..=2)
        } else {
            0
        };
        let p = self
            .builder
            .exprs
            .predicate(rng, &scope.columns, depth, subqueries);
        // Random predicates are FALSE or NULL on every row of a small
        // table about half the time; a share joined by OR with a plain
        // comparison against a value from the data see rows more often.
        if rng.random_bool(WIDENED_SHARE) {
            let wide = self.builder.exprs.predicate(rng, &scope.columns, 0, 0);
            Expr::binary(BinaryOp::Or, p, wide)
        } else {
            p
        }
    }

    fn expression(&mut self, rng: &mut Rng, scope: &Scope) -> Expr {
        let depth = rng.random_range(0..=3);
        let subqueries = u32::from(rng.random_bool(0.3));
        self.builder
            .exprs
            .expression(rng, &scope.columns, depth, subqueries)
    }

    fn is_aggregate(&self, name: &str) -> bool {
        functions::is_aggregate(name)
    }

    /// `expr COLLATE BINARY`: equal texts are then identical. What equality
    /// still joins (integer 1 and real 1.0, 0.0 and -0.0) the result
    /// comparison treats as equal too.
    fn with_exact_equality(&self, expr: Expr) -> Expr {
        Expr::Collate {
            expr: Box::new(expr),
            collation: "BINARY".into(),
        }
    }

    fn pivot_tables(&mut self, rng: &mut Rng) -> Option<(FromClause, Scope)> {
        if !self.pqs {
            return None;
        }
        let (from, tables) = pqs::pivot_tables(rng, self.db)?;
        let scope = tables.scope.clone();
        self.pivot = Some(tables);
        Some((from, scope))
    }

    fn pivot_predicate(
        &mut self,
        rng: &mut Rng,
        scope: &Scope,
        pivot: &[Value],
    ) -> Option<(Expr, Truth)> {
        let tables = self.pivot.as_ref()?;
        pqs::pivot_predicate(rng, tables, scope, pivot, self.version)
    }

    fn twin_recipes(&self) -> Vec<String> {
        crate::twins::recipes(self.db)
    }

    fn twin_build(&self, recipe: &str, table: &str) -> Option<lancet_core::TwinBuild> {
        crate::twins::build(self.db, recipe, table)
    }

    /// `expr COLLATE BINARY` and `typeof(expr)`: binary-equal values of one
    /// storage class are identical (integer 8 and real 8.0 are not).
    fn exact_group_keys(&self, expr: Expr) -> Vec<Expr> {
        let typed = Expr::func("typeof", vec![expr.clone()]);
        vec![self.with_exact_equality(expr), typed]
    }

    fn literal_probe(&self, constant: &Expr) -> Option<Vec<Expr>> {
        crate::folding::literal_probe(constant)
    }

    fn literal_of(&self, probe: &[Value]) -> Option<Expr> {
        crate::folding::literal_of(probe)
    }
}

/// A generated database and what its queries depend on besides: the
/// SQLite version, and whether PQS may run on this library.
pub struct Generated {
    pub database: SqliteDatabase,
    pub version: i32,
    pub pqs: bool,
}

impl GeneratedDatabase for Generated {
    fn schema(&self) -> &Schema {
        &self.database.schema
    }

    fn query_generator(&self) -> Box<dyn QueryGenerator + '_> {
        let generator = SqliteQueryGenerator::new(&self.database, self.version);
        if self.pqs {
            Box::new(generator)
        } else {
            Box::new(generator.without_pqs())
        }
    }
}
