//! Each oracle builds exactly the queries docs/oracles.md defines, and compares
//! results with the right relation (sets, multisets, values).

use lancet_core::{
    BinaryOp, Case, Expr, FromClause, Oracle, Row, Select, SelectItem, ToSql, Value, Verdict,
};
use lancet_oracles::pqs::{PivotRow, Pqs};
use lancet_oracles::{norec::NoRec, tlp_aggregate::TlpAggregate};
use lancet_oracles::{tlp_distinct::TlpDistinct, tlp_group_by::TlpGroupBy, tlp_having::TlpHaving};
use lancet_testkit::standard::STANDARD;

fn from() -> Option<FromClause> {
    Some(FromClause::table("t0", None))
}

fn c(name: &str) -> Expr {
    Expr::column(None, name)
}

fn item(e: Expr) -> SelectItem {
    SelectItem::Expr {
        expr: e,
        alias: None,
    }
}

/// A case with the predicate `c1 > 0`, for whichever oracle [`sql`] hands
/// it to.
fn case(query: Select) -> Case {
    Case::with_predicate_of("", query, Expr::binary(BinaryOp::Gt, c("c1"), Expr::int(0)))
}

/// The queries `oracle` builds from `case`, drawn as if by that oracle.
fn sql(oracle: &dyn Oracle, case: &Case) -> Vec<String> {
    let mut case = case.clone();
    case.oracle = oracle.name().to_string();
    oracle
        .queries(&case)
        .expect("the oracle builds queries from its case")
        .iter()
        .map(|q| q.query.to_sql(STANDARD))
        .collect()
}

fn compare(oracle: &dyn Oracle, case: &Case, results: &[Vec<Row>]) -> Verdict {
    oracle
        .compare(case, results)
        .expect("the oracle compares results of its queries")
}

fn rows(values: &[i64]) -> Vec<Row> {
    values.iter().map(|v| vec![Value::Integer(*v)]).collect()
}

#[test]
fn tlp_distinct_unions_the_partitions_and_compares_sets() {
    let k = case(Select {
        distinct: true,
        items: vec![item(c("c0"))],
        from: from(),
        ..Select::default()
    });
    assert_eq!(
        sql(&TlpDistinct, &k),
        vec![
            "SELECT DISTINCT c0 FROM t0".to_string(),
            "SELECT DISTINCT c0 FROM t0 WHERE c1 > 0 UNION SELECT DISTINCT c0 FROM t0 WHERE NOT (c1 > 0) \
             UNION SELECT DISTINCT c0 FROM t0 WHERE (c1 > 0) IS NULL"
                .to_string()
        ]
    );
    // Sets: duplicates do not matter, a missing value does.
    assert!(matches!(
        compare(&TlpDistinct, &k, &[rows(&[1, 2]), rows(&[2, 1, 1])]),
        Verdict::Agree { .. }
    ));
    assert!(matches!(
        compare(&TlpDistinct, &k, &[rows(&[1, 2]), rows(&[2])]),
        Verdict::Disagree(_)
    ));
}

#[test]
fn tlp_group_by_groups_each_partition() {
    let k = case(Select {
        items: vec![item(c("c0"))],
        from: from(),
        group_by: vec![c("c0")],
        ..Select::default()
    });
    assert_eq!(
        sql(&TlpGroupBy, &k)[1],
        "SELECT c0 FROM t0 WHERE c1 > 0 GROUP BY c0 UNION SELECT c0 FROM t0 WHERE NOT (c1 > 0) GROUP BY c0 \
         UNION SELECT c0 FROM t0 WHERE (c1 > 0) IS NULL GROUP BY c0"
    );
}

#[test]
fn tlp_having_partitions_on_having_and_compares_multisets() {
    let k = case(Select {
        items: vec![item(c("c0")), item(Expr::CountStar)],
        from: from(),
        group_by: vec![c("c0")],
        ..Select::default()
    });
    assert_eq!(
        sql(&TlpHaving, &k)[1],
        "SELECT c0, COUNT(*) FROM t0 GROUP BY c0 HAVING c1 > 0 UNION ALL SELECT c0, COUNT(*) FROM t0 GROUP BY c0 HAVING NOT (c1 > 0) \
         UNION ALL SELECT c0, COUNT(*) FROM t0 GROUP BY c0 HAVING (c1 > 0) IS NULL"
    );
    assert!(matches!(
        compare(&TlpHaving, &k, &[rows(&[1, 1]), rows(&[1])]),
        Verdict::Disagree(_)
    ));
}

fn aggregate_case(f: &str) -> Case {
    case(Select {
        items: vec![item(Expr::func(f, vec![c("c0")]))],
        from: from(),
        ..Select::default()
    })
}

#[test]
fn tlp_aggregate_recombines_each_aggregate() {
    let q = |f: &str| sql(&TlpAggregate, &aggregate_case(f));
    let parts = |items: &str| {
        format!(
            "SELECT {items} FROM t0 WHERE c1 > 0 UNION ALL SELECT {items} FROM t0 WHERE NOT (c1 > 0) \
             UNION ALL SELECT {items} FROM t0 WHERE (c1 > 0) IS NULL"
        )
    };
    assert_eq!(
        q("MIN")[1],
        format!(
            "SELECT MIN(lancet_parts.m) FROM ({}) AS lancet_parts",
            parts("MIN(c0) AS m")
        )
    );
    assert_eq!(
        q("COUNT")[1],
        format!(
            "SELECT SUM(lancet_parts.c) FROM ({}) AS lancet_parts",
            parts("COUNT(c0) AS c")
        )
    );
    assert_eq!(
        q("AVG")[1],
        format!(
            "SELECT SUM(lancet_parts.s), SUM(lancet_parts.c) FROM ({}) AS lancet_parts",
            parts("SUM(c0) AS s, COUNT(c0) AS c")
        )
    );
    assert_eq!(
        q("SUM").len(),
        3,
        "SUM also queries the magnitude of its summands"
    );
    assert_eq!(q("SUM")[2], "SELECT SUM(ABS(c0 + 0.0)) FROM t0");
}

// Long because: a table of aggregate cases and their verdicts.
#[test]
fn tlp_aggregate_compares_integers_exactly_and_float_sums_with_a_magnitude_tolerance() {
    let one = |v: Value| vec![vec![v]];
    let sum = aggregate_case("SUM");
    // Integer sums: exact.
    assert!(matches!(
        compare(
            &TlpAggregate,
            &sum,
            &[
                one(Value::Integer(10)),
                one(Value::Integer(11)),
                one(Value::Real(11.0))
            ]
        ),
        Verdict::Disagree(_)
    ));
    // Float sums: 1e16 + 1 - 1e16 is 1 or 0 depending on the order; the
    // magnitude (2e16) makes that a rounding difference.
    assert!(matches!(
        compare(
            &TlpAggregate,
            &sum,
            &[
                one(Value::Real(0.0)),
                one(Value::Real(1.0)),
                one(Value::Real(2e16))
            ]
        ),
        Verdict::Agree { .. }
    ));
    // But not a difference of one part in a thousand.
    assert!(matches!(
        compare(
            &TlpAggregate,
            &sum,
            &[
                one(Value::Real(1000.0)),
                one(Value::Real(1001.0)),
                one(Value::Real(1000.0))
            ]
        ),
        Verdict::Disagree(_)
    ));
    // Single-precision sums (PostgreSQL's SUM(real)) round at about 1e-7
    // per addition: seen on PostgreSQL 15, the same 4 rows summed in two
    // orders.
    assert!(matches!(
        compare(
            &TlpAggregate,
            &sum,
            &[
                one(Value::Real(270000100000.0)),
                one(Value::Real(270000050000.0)),
                one(Value::Real(270000100000.0))
            ]
        ),
        Verdict::Agree { .. }
    ));
    // AVG(real) is a double, but its recombination sums the partitions in
    // single precision (seen on PostgreSQL 15: 3 x 1e10 over 9 rows).
    let avg = aggregate_case("AVG");
    assert!(matches!(
        compare(
            &TlpAggregate,
            &avg,
            &[
                one(Value::Real(3333333333.3333335)),
                vec![vec![Value::Real(30000001000.0), Value::Integer(9)]],
                one(Value::Real(30000000000.0))
            ]
        ),
        Verdict::Agree { .. }
    ));
    // A single-precision sum that is whole prints as an integer (seen on
    // PostgreSQL 18: AVG of five reals 0.2 is 0.2000000029802322, the
    // partitions' SUM(real) is 1).
    assert!(matches!(
        compare(
            &TlpAggregate,
            &avg,
            &[
                one(Value::Real(0.20000000298023224)),
                vec![vec![Value::Integer(1), Value::Integer(5)]],
                one(Value::Real(1.0000000149011612))
            ]
        ),
        Verdict::Agree { .. }
    ));
    // An AVG whose partitions sum integers a single-precision sum would
    // not give keeps the tight tolerance.
    assert!(matches!(
        compare(
            &TlpAggregate,
            &avg,
            &[
                one(Value::Real(333333.0)),
                vec![vec![Value::Integer(1000001), Value::Integer(3)]],
                one(Value::Real(1000001.0))
            ]
        ),
        Verdict::Disagree(_)
    ));
    // Double sums keep the tight tolerance: one part in ten million is a bug.
    assert!(matches!(
        compare(
            &TlpAggregate,
            &sum,
            &[
                one(Value::Real(0.1 + 0.2)),
                one(Value::Real(0.30000003)),
                one(Value::Real(0.3))
            ]
        ),
        Verdict::Disagree(_)
    ));
    // AVG: (sum of SUMs) / (sum of COUNTs), computed by lancet.
    let avg = aggregate_case("AVG");
    assert!(matches!(
        compare(
            &TlpAggregate,
            &avg,
            &[
                one(Value::Real(2.5)),
                vec![vec![Value::Integer(10), Value::Integer(4)]],
                one(Value::Real(10.0))
            ]
        ),
        Verdict::Agree { .. }
    ));
    // MIN over an empty table is NULL on both sides.
    let min = aggregate_case("MIN");
    assert!(matches!(
        compare(&TlpAggregate, &min, &[one(Value::Null), one(Value::Null)]),
        Verdict::Agree { nonempty: false }
    ));
}

#[test]
fn norec_counts_with_and_without_the_optimizer() {
    let k = Case::with_predicate_of(
        "norec",
        Select {
            from: from(),
            ..Select::default()
        },
        c("c0"),
    );
    assert_eq!(
        sql(&NoRec, &k),
        vec![
            "SELECT COUNT(*) FROM t0 WHERE c0".to_string(),
            "SELECT SUM(CASE WHEN c0 THEN 1 ELSE 0 END) FROM t0".to_string()
        ]
    );
}

#[test]
fn pqs_requires_the_pivot_row_in_the_result() {
    let pivot = vec![Value::Integer(1), Value::Text("a".into())];
    let k = Case::with_predicate_of(
        "pqs",
        Select {
            items: vec![item(c("c0")), item(c("c1"))],
            from: from(),
            ..Select::default()
        },
        c("c0"),
    )
    .and_inputs(PivotRow {
        pivot: pivot.clone(),
    });
    let other = vec![Value::Integer(2), Value::Text("a".into())];
    let all = vec![other.clone(), pivot.clone()];
    assert_eq!(sql(&Pqs, &k).len(), 2, "the pivot query and all rows");
    assert!(matches!(
        compare(&Pqs, &k, &[all.clone(), all.clone()]),
        Verdict::Agree { .. }
    ));
    let Verdict::Disagree(d) = compare(&Pqs, &k, &[vec![other.clone()], all]) else {
        panic!("a missing pivot is a finding")
    };
    assert_eq!(d.diff.only_in_second, vec![(pivot, 1)]);
    // A pivot row that is not in the tables at all proves nothing.
    assert!(matches!(
        compare(&Pqs, &k, &[vec![other.clone()], vec![other]]),
        Verdict::Agree { .. }
    ));
}
