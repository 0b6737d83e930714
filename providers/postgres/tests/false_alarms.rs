//! Latent false alarms on a correct PostgreSQL, and their fixes: equal
//! values that print differently (`'a'` and `'a  '` as bpchar, `-0` and `0`)
//! where DISTINCT, GROUP BY, MIN and MAX may return either and a HAVING
//! predicate sees one row of its group; and aggregates over argument types
//! PostgreSQL rejects. Each test starts its own throwaway server.
//!
//! Just over 600 lines on purpose: each latent false alarm is a test with
//! its own server and its fix's check, sharing the generator helpers.

use lancet_core::rng::database_rng;
use lancet_core::schema::RelationKind;
use lancet_core::{
    run_check, Case, CheckOutcome, Connection, DatabaseId, ExecError, Expr, FromClause,
    GenerateContext, GeneratedDatabase, Oracle, Provider, QueryGenerator, Row, Select, SelectItem,
    Session, TableFactor, ToSql, TypeName, Value, Verdict,
};
use lancet_oracles::tlp_aggregate::TlpAggregate;
use lancet_oracles::tlp_distinct::TlpDistinct;
use lancet_oracles::tlp_group_by::TlpGroupBy;
use lancet_oracles::tlp_having::TlpHaving;
use lancet_postgres::database::PgDatabase;
use lancet_postgres::dialect::DIALECT;
use lancet_postgres::schema::{PgSchema, PgTable, Placement};
use lancet_postgres::types::PgType;
use lancet_postgres::PostgresProvider;
use lancet_testkit::PgServer;

/// A server, the provider on it, and one fresh lancet database. Fields drop
/// in order: the connection before the server stops.
struct Db {
    conn: Box<dyn Connection>,
    provider: PostgresProvider,
    _pg: PgServer,
}

fn database_id(index: u64) -> DatabaseId {
    DatabaseId {
        run: "falsealarms".into(),
        thread: 0,
        index,
    }
}

impl Db {
    /// A database with `setup` run in it.
    fn start(setup: &str) -> Db {
        let pg = PgServer::start().expect("starting a throwaway PostgreSQL");
        let provider = PostgresProvider::connect(&pg.url()).expect("connecting");
        let mut conn = provider.create_database(&database_id(0)).unwrap().conn;
        if !setup.is_empty() {
            conn.execute(setup).unwrap();
        }
        Db {
            conn,
            provider,
            _pg: pg,
        }
    }

    fn rows(&mut self, sql: &str) -> Vec<Row> {
        self.conn
            .query(sql)
            .unwrap_or_else(|e| panic!("{sql}: {e:?}"))
    }

    /// The results of an oracle's queries for `case`.
    fn run(&mut self, oracle: &dyn Oracle, case: &Case) -> Vec<Vec<Row>> {
        oracle
            .queries(case)
            .expect("the oracle builds queries from its case")
            .iter()
            .map(|q| self.rows(&q.query.to_sql(DIALECT)))
            .collect()
    }
}

/// A core schema of relations given as (name, kind, [(column, type)]).
/// A relation of a hand-made schema: name, kind, and (column, type) pairs.
type RelationSpec<'a> = (&'a str, RelationKind, &'a [(&'a str, &'a str)]);

fn schema(relations: &[RelationSpec]) -> PgDatabase {
    PgDatabase::new(PgSchema {
        relations: relations
            .iter()
            .map(|(name, kind, columns)| PgTable {
                name: name.to_string(),
                kind: *kind,
                columns: columns
                    .iter()
                    .map(|(c, ty)| (c.to_string(), PgType::from_name(ty)))
                    .collect(),
                insertable: vec![],
                primary_key: None,
                writable: *kind == RelationKind::Table,
                inheritable: false,
                placement: Placement::Plain,
                twin: None,
                facts: Default::default(),
            })
            .collect(),
        ..PgSchema::default()
    })
}

/// `FROM name AS a0`
fn from(name: &str) -> FromClause {
    FromClause {
        first: TableFactor::Table {
            name: name.into(),
            alias: Some("a0".into()),
            indexed_by: None,
        },
        joins: vec![],
    }
}

fn item(expr: Expr) -> SelectItem {
    SelectItem::Expr { expr, alias: None }
}

fn col(name: &str) -> Expr {
    Expr::column(Some("a0"), name)
}

fn text(s: &str) -> Value {
    Value::Text(s.into())
}

fn agrees(verdict: &Verdict) -> bool {
    matches!(verdict, Verdict::Agree { nonempty: true })
}

/// Loads the generator's knowledge of the columns of `a0`: with one
/// relation in the schema, every FROM clause starts with it as `a0`.
fn generator_over<'s>(_db: &Db, schema: &'s PgDatabase) -> Box<dyn QueryGenerator + 's> {
    let mut generator = schema.query_generator();
    generator.from_clause(&mut database_rng(1, 0, 0));
    generator
}

/// (a) MIN(COALESCE(c0, 'a')) over a char(3) column: COALESCE of a char(3)
/// and an unknown literal is an unconstrained bpchar, so the literal stays
/// `'a'` while the column's value is `'a  '`. They are equal, and MIN keeps
/// the first it sees: `'a  '` over the table, `'a'` recombined from the
/// partitions. Under the generator's exact equality (a cast to text) both
/// are `'a'`.
#[test]
fn min_over_an_unpadded_char_agrees_under_exact_equality() {
    let mut db = Db::start("CREATE TABLE t0 (c0 char(3)); INSERT INTO t0 VALUES ('a'), (NULL);");
    let schema = schema(&[("t0", RelationKind::Table, &[("c0", "char(3)")])]);
    let generator = generator_over(&db, &schema);
    let argument = Expr::func("COALESCE", vec![col("c0"), Expr::lit(text("a"))]);
    let case = |aggregate: &str, argument: Expr, selection: Option<Expr>| {
        Case::with_predicate_of(
            "tlp-aggregate",
            Select {
                items: vec![item(Expr::func(aggregate, vec![argument]))],
                from: Some(from("t0")),
                selection,
                ..Select::default()
            },
            Expr::is_null(col("c0")),
        )
    };

    // The shape lancet built before: a disagreement on a correct server.
    let raw = case("MIN", argument.clone(), None);
    let results = db.run(&TlpAggregate, &raw);
    assert_eq!(results[0], vec![vec![text("a  ")]], "MIN over the table");
    assert_eq!(results[1], vec![vec![text("a")]], "MIN of the partitions");
    assert!(matches!(
        TlpAggregate.compare(&raw, &results).unwrap(),
        Verdict::Disagree(_)
    ));

    // The exact form: equal values are identical.
    let exact = generator.with_exact_equality(argument.clone());
    assert_ne!(exact, argument);
    for aggregate in ["MIN", "MAX"] {
        let fixed = case(aggregate, exact.clone(), None);
        let results = db.run(&TlpAggregate, &fixed);
        assert_eq!(results[0], vec![vec![text("a")]], "{aggregate}");
        assert!(
            agrees(&TlpAggregate.compare(&fixed, &results).unwrap()),
            "{aggregate}: {results:?}"
        );
    }

    // A stored char(n) column is left as it is (its values are all padded
    // to n: equal ones are identical), so MIN(bpchar) is still tested.
    assert_eq!(generator.with_exact_equality(col("c0")), col("c0"));

    // MIN over the cast still sees a lost row: partitions that (as a
    // buggy WHERE would) lost the row holding the minimum disagree.
    db.conn
        .execute("DELETE FROM t0; INSERT INTO t0 VALUES ('a'), ('b')")
        .unwrap();
    let fixed = case("MIN", exact.clone(), None);
    let lost = case(
        "MIN",
        exact,
        Some(Expr::binary(
            lancet_core::BinaryOp::NotEq,
            col("c0"),
            Expr::lit(text("a")),
        )),
    );
    let mut results = db.run(&TlpAggregate, &fixed);
    assert!(agrees(&TlpAggregate.compare(&fixed, &results).unwrap()));
    results[1] = db.run(&TlpAggregate, &lost).remove(1);
    assert_eq!(results[1], vec![vec![text("b")]]);
    assert!(matches!(
        TlpAggregate.compare(&fixed, &results).unwrap(),
        Verdict::Disagree(_)
    ));
}

/// (b) DISTINCT and GROUP BY over a view's bpchar column holding `'a'` and
/// `'a  '`: one value, printed as either. The view's columns are typed
/// text (as populate records them), but are not stored columns: the
/// generator casts them.
#[test]
fn distinct_and_group_by_over_an_unpadded_char_agree_under_exact_equality() {
    let mut db = Db::start(
        "CREATE TABLE t0 (c0 char(3)); INSERT INTO t0 VALUES ('a'), (NULL);
         CREATE VIEW v0 AS SELECT COALESCE(c0, 'a') AS c0, c0 AS c1 FROM t0;",
    );
    let schema = schema(&[("v0", RelationKind::View, &[("c0", "text"), ("c1", "text")])]);
    let generator = generator_over(&db, &schema);
    let distinct = |key: Expr| {
        Case::with_predicate_of(
            "tlp-distinct",
            Select {
                distinct: true,
                items: vec![item(key)],
                from: Some(from("v0")),
                ..Select::default()
            },
            Expr::is_null(col("c1")),
        )
    };
    let grouped = |key: Expr| {
        Case::with_predicate_of(
            "tlp-group-by",
            Select {
                items: vec![item(key.clone())],
                from: Some(from("v0")),
                group_by: vec![key],
                ..Select::default()
            },
            Expr::is_null(col("c1")),
        )
    };
    let exact = generator.with_exact_equality(col("c0"));
    assert_ne!(exact, col("c0"));
    for (oracle, make) in [
        (
            &TlpDistinct as &dyn Oracle,
            &distinct as &dyn Fn(Expr) -> Case,
        ),
        (&TlpGroupBy, &grouped),
    ] {
        let raw = make(col("c0"));
        let results = db.run(oracle, &raw);
        assert_eq!(results[0], vec![vec![text("a  ")]], "{}", oracle.name());
        assert_eq!(results[1], vec![vec![text("a")]], "{}", oracle.name());
        assert!(matches!(
            oracle.compare(&raw, &results),
            Ok(Verdict::Disagree(_))
        ));

        let fixed = make(exact.clone());
        let results = db.run(oracle, &fixed);
        assert_eq!(results[0], vec![vec![text("a")]], "{}", oracle.name());
        assert!(
            agrees(&oracle.compare(&fixed, &results).unwrap()),
            "{}: {results:?}",
            oracle.name()
        );
    }
}

/// (c) A float group holding -0 and 0 with `HAVING CAST(c0 AS text) = '0'`:
/// PostgreSQL evaluates a HAVING without aggregates as a WHERE, so each
/// partition counts a part of the group. Grouped also by the key's text,
/// -0 and 0 are two groups, and the predicate sees one value per group.
/// The same for numerics of different scales (1.0 and 1.00).
#[test]
fn having_over_minus_zero_and_zero_agrees_with_exact_group_keys() {
    let mut db = Db::start(
        "CREATE TABLE t0 (c0 double precision, c1 numeric);
         INSERT INTO t0 VALUES ('-0', 1.0), ('0', 1.00);",
    );
    let schema = schema(&[(
        "t0",
        RelationKind::Table,
        &[("c0", "double precision"), ("c1", "numeric")],
    )]);
    let generator = generator_over(&db, &schema);
    for (column, shown) in [("c0", "0"), ("c1", "1.0")] {
        let key = col(column);
        let case = |group_by: Vec<Expr>| {
            Case::with_predicate_of(
                "tlp-having",
                Select {
                    items: vec![item(key.clone()), item(Expr::CountStar)],
                    from: Some(from("t0")),
                    group_by,
                    ..Select::default()
                },
                Expr::binary(
                    lancet_core::BinaryOp::Eq,
                    Expr::Cast {
                        expr: Box::new(key.clone()),
                        ty: TypeName("text".into()),
                    },
                    Expr::lit(text(shown)),
                ),
            )
        };
        let raw = case(vec![key.clone()]);
        let results = db.run(&TlpHaving, &raw);
        assert_eq!(results[0].len(), 1, "{column}: one group");
        assert_eq!(results[1].len(), 2, "{column}: the predicate split it");
        assert!(matches!(
            TlpHaving.compare(&raw, &results),
            Ok(Verdict::Disagree(_))
        ));

        let keys = generator.exact_group_keys(key.clone());
        assert_eq!(keys[0], key, "the HAVING predicate reads the key itself");
        assert!(keys.len() > 1, "{column}: {keys:?}");
        let fixed = case(keys);
        let results = db.run(&TlpHaving, &fixed);
        assert_eq!(results[0].len(), 2, "{column}: two exact groups");
        assert!(
            agrees(&TlpHaving.compare(&fixed, &results).unwrap()),
            "{column}: {results:?}"
        );
    }
}

/// Whether `error` is PostgreSQL refusing an aggregate over its argument's
/// type (`function sum(text) does not exist`).
fn is_aggregate_type_error(error: &lancet_core::DbError) -> bool {
    let m = error.message.to_ascii_lowercase();
    matches!(error.code.as_deref(), Some("42883" | "42725"))
        && ["sum(", "avg(", "min(", "max("]
            .iter()
            .any(|f| m.contains(&format!("function {f}")))
}

/// What a series of checks found.
#[derive(Default, Debug)]
struct Tally {
    checks: usize,
    queries: usize,
    disagreements: Vec<String>,
    unexpected: Vec<String>,
    aggregate_type_errors: Vec<String>,
}

/// Runs `checks` checks of `oracles` in turn, the way the runner does.
fn drive(
    session: &mut Session,
    generator: &mut dyn QueryGenerator,
    rng: &mut lancet_core::Rng,
    oracles: &[&dyn Oracle],
    checks: usize,
    tally: &mut Tally,
) {
    for n in 0..checks {
        let oracle = oracles[n % oracles.len()];
        let Some(case) = oracle.generate(&mut GenerateContext {
            rng: &mut *rng,
            generator: &mut *generator,
            data: &mut *session,
            knobs: &[],
            plans: &mut lancet_core::PlanCoverage::default(),
            schema: &lancet_core::Schema::default(),
            dialect: DIALECT,
            memo: &mut Default::default(),
        }) else {
            continue;
        };
        let sql: Vec<String> = oracle
            .queries(&case)
            .expect("the oracle builds queries from its own case")
            .iter()
            .map(|q| q.query.to_sql(DIALECT))
            .collect();
        let outcome = run_check(session, oracle, &case).expect("the oracle runs its own case");
        let failed = match outcome {
            CheckOutcome::Agreed { queries, .. } => {
                tally.queries += queries.len();
                tally.checks += 1;
                None
            }
            CheckOutcome::Disagreed {
                disagreement: d,
                queries,
            } => {
                tally.queries += queries.len();
                tally.checks += 1;
                tally.disagreements.push(format!(
                    "{}: {:?}\n{}",
                    oracle.name(),
                    d.diff,
                    sql.join("\n")
                ));
                None
            }
            CheckOutcome::Skipped(error) => Some(error),
            CheckOutcome::Failed(e) => {
                tally.unexpected.push(e.to_string());
                match e {
                    ExecError::Expected(error)
                    | ExecError::Unexpected { error, .. }
                    | ExecError::Lost { error, .. } => Some(error),
                }
            }
        };
        if let Some(error) = failed {
            if is_aggregate_type_error(&error) {
                tally
                    .aggregate_type_errors
                    .push(format!("{}: {}", sql.join("; "), error.message));
            }
        }
    }
}

/// Populates fresh databases on `provider` and drives `oracles` on each.
fn drive_populated(
    provider: &PostgresProvider,
    seeds: std::ops::Range<u64>,
    oracles: &[&dyn Oracle],
    checks: usize,
    tally: &mut Tally,
) {
    for seed in seeds {
        let conn = provider
            .create_database(&database_id(100 + seed))
            .unwrap()
            .conn;
        let mut session = Session::new(conn, DIALECT, provider.expected_errors());
        let mut rng = database_rng(seed, 0, 0);
        let generated = provider.populate(&mut rng, &mut session).unwrap();
        let mut generator = generated.query_generator();
        drive(
            &mut session,
            &mut *generator,
            &mut rng,
            oracles,
            checks,
            tally,
        );
    }
}

/// The PostgreSQL generator gives SUM, AVG, MIN and MAX only arguments of
/// types PostgreSQL has them for: no `sum(text)`, `avg(date)`,
/// `min(boolean)`, `max(bytea)` over thousands of aggregate queries.
#[test]
fn aggregate_arguments_are_of_types_postgres_accepts() {
    let db = Db::start("");
    let mut tally = Tally::default();
    drive_populated(
        &db.provider,
        0..8,
        &[&TlpAggregate, &TlpAggregate, &TlpHaving],
        300,
        &mut tally,
    );
    eprintln!(
        "{} checks, {} queries, {} unexpected errors",
        tally.checks,
        tally.queries,
        tally.unexpected.len()
    );
    assert!(tally.queries >= 3000, "{tally:?}");
    assert!(
        tally.aggregate_type_errors.is_empty(),
        "{} aggregate type errors, e.g. {:?}",
        tally.aggregate_type_errors.len(),
        &tally.aggregate_type_errors[..tally.aggregate_type_errors.len().min(5)]
    );
    assert!(tally.unexpected.is_empty(), "{:?}", tally.unexpected);
    assert!(tally.disagreements.is_empty(), "{:?}", tally.disagreements);
}

/// A database full of equal values that print differently: char(n) with
/// and without trailing blanks, views of unpadded bpchar (plain and
/// DISTINCT ON, as populate makes them), -0 and 0, NaN, numerics of
/// several scales.
const EQUAL_BUT_DIFFERENT: &str = "
CREATE TABLE t0 (c0 char(3), c1 char(1), c2 text, c3 double precision, c4 numeric(6,2));
CREATE TABLE t1 (c0 char(2), c1 varchar(4), c2 real, c3 numeric);
INSERT INTO t0 VALUES ('a', 'a', 'a', '-0', 1), ('a  ', ' ', 'a  ', '0', 1.5),
  (NULL, NULL, NULL, NULL, NULL), ('', 'b', '', 'NaN', -0.00), (' a', 'a', ' a', '-1.5', 2),
  ('b', NULL, 'b ', '0', 1.50), ('a', 'a', 'A', '-0', 0), ('a ', '', 'a ', '1e300', 2.25);
INSERT INTO t1 VALUES ('a', 'a', '-0', 1.0), ('a ', 'a ', '0', 1.00), (NULL, NULL, NULL, NULL),
  ('b', 'b', '1.5', 1.5), ('', '', '-0', 0.0), (' ', ' ', 'NaN', -0), ('a', 'a  ', '0', 1);
CREATE INDEX ON t0 (c0);
CREATE INDEX ON t0 (c3 DESC NULLS FIRST);
CREATE INDEX ON t1 USING hash (c0);
CREATE INDEX ON t1 (c3);
CREATE VIEW v0 AS SELECT COALESCE(a0.c0, 'a') AS c0, CASE WHEN a0.c3 > 0 THEN a0.c1 ELSE 'b' END AS c1,
  a0.c3 AS c2 FROM t0 AS a0;
CREATE VIEW v1 AS SELECT DISTINCT ON (COALESCE(a0.c0, 'a'), CAST(COALESCE(a0.c0, 'a') AS text),
  a0.c3, CAST(a0.c3 AS text)) COALESCE(a0.c0, 'a') AS c0, a0.c3 AS c1 FROM t0 AS a0;
CREATE VIEW v2 AS SELECT a0.c3 + 1 AS c0, NULLIF(a0.c0, 'b') AS c1, a0.c2 * 1.0 AS c2,
  GREATEST(a0.c0, 'a') AS c3 FROM t1 AS a0;
ANALYZE;
";

/// A clean run: thousands of checks of the four oracles that deduplicate
/// or group, on databases full of equal values that print differently
/// (under two planner settings), and on populated ones, find nothing.
#[test]
fn a_clean_run_over_equal_but_different_values_finds_nothing() {
    let db = Db::start("");
    let relations: &[RelationSpec] = &[
        (
            "t0",
            RelationKind::Table,
            &[
                ("c0", "char(3)"),
                ("c1", "char(1)"),
                ("c2", "text"),
                ("c3", "double precision"),
                ("c4", "numeric(6,2)"),
            ],
        ),
        (
            "t1",
            RelationKind::Table,
            &[
                ("c0", "char(2)"),
                ("c1", "varchar(4)"),
                ("c2", "real"),
                ("c3", "numeric"),
            ],
        ),
        (
            "v0",
            RelationKind::View,
            &[("c0", "text"), ("c1", "text"), ("c2", "double precision")],
        ),
        (
            "v1",
            RelationKind::View,
            &[("c0", "text"), ("c1", "double precision")],
        ),
        (
            "v2",
            RelationKind::View,
            &[
                ("c0", "numeric"),
                ("c1", "text"),
                ("c2", "double precision"),
                ("c3", "text"),
            ],
        ),
    ];
    let schema = schema(relations);
    let oracles: [&dyn Oracle; 4] = [&TlpDistinct, &TlpGroupBy, &TlpHaving, &TlpAggregate];
    let mut tally = Tally::default();
    for (index, setting) in [
        (1, ""),
        (2, "SET enable_hashagg = off; SET enable_seqscan = off;"),
    ] {
        let mut conn = db
            .provider
            .create_database(&database_id(index))
            .unwrap()
            .conn;
        conn.execute(EQUAL_BUT_DIFFERENT).unwrap();
        if !setting.is_empty() {
            conn.execute(setting).unwrap();
        }
        let mut session = Session::new(conn, DIALECT, db.provider.expected_errors());
        let mut generator = schema.query_generator();
        let mut rng = database_rng(index, 0, 0);
        drive(
            &mut session,
            &mut *generator,
            &mut rng,
            &oracles,
            500,
            &mut tally,
        );
    }
    drive_populated(&db.provider, 20..23, &oracles, 150, &mut tally);
    eprintln!(
        "{} checks, {} queries, {} unexpected errors",
        tally.checks,
        tally.queries,
        tally.unexpected.len()
    );
    assert!(tally.checks >= 1000, "{tally:?}");
    assert!(
        tally.disagreements.is_empty(),
        "{} disagreements, e.g. {}",
        tally.disagreements.len(),
        tally.disagreements[0]
    );
    assert!(tally.unexpected.is_empty(), "{:?}", tally.unexpected);
}
