use super::*;
use lancet_testkit::standard::STANDARD;

fn case(marker: Option<&str>) -> Case {
    let select = Select {
        items: vec![
            item(Expr::column(Some("t0"), "c0")),
            item(Expr::column(Some("t0"), "c1")),
        ],
        from: Some(FromClause::table("t0", None)),
        ..Select::default()
    };
    Case::with_predicate_of("dqe", select, Expr::column(Some("t0"), "c0")).and_inputs(Marker {
        column: marker.map(str::to_string),
    })
}

fn row(a: Value, b: i64) -> Row {
    vec![a, Value::Integer(b)]
}

#[test]
fn builds_select_delete_and_update_with_one_predicate() {
    let qs = Dqe.queries(&case(Some("c1"))).unwrap();
    let sql: Vec<String> = qs.iter().map(|q| q.sql(STANDARD)).collect();
    assert_eq!(sql[0], "SELECT t0.c0, t0.c1 FROM t0");
    assert_eq!(sql[1], "SELECT t0.c0, t0.c1 FROM t0 WHERE t0.c0");
    assert_eq!(
        sql[2],
        "BEGIN;\nDELETE FROM t0 WHERE t0.c0;\nSELECT t0.c0, t0.c1 FROM t0;\nROLLBACK"
    );
    assert_eq!(
        sql[3],
        "BEGIN;\nUPDATE t0 SET c1 = NULL WHERE t0.c0;\nSELECT t0.c1 FROM t0;\nROLLBACK"
    );
    assert_eq!(Dqe.queries(&case(None)).unwrap().len(), 3);
}

#[test]
fn sees_a_row_deleted_or_updated_that_the_select_did_not_match() {
    let c = case(Some("c1"));
    let (a, b) = (row(Value::Integer(1), 1), row(Value::Integer(0), 2));
    let marks = |v: &[Value]| -> Vec<Row> { v.iter().map(|x| vec![x.clone()]).collect() };
    let agree = Dqe
        .compare(
            &c,
            &[
                vec![a.clone(), b.clone()],
                vec![a.clone()],
                vec![b.clone()],
                marks(&[Value::Null, Value::Integer(2)]),
            ],
        )
        .unwrap();
    assert_eq!(agree, Verdict::Agree { nonempty: true });
    // The DELETE removed both rows.
    let deleted_both = Dqe
        .compare(
            &c,
            &[vec![a.clone(), b.clone()], vec![a.clone()], vec![], vec![]],
        )
        .unwrap();
    assert!(
        matches!(deleted_both, Verdict::Disagree(d) if d.relation == relation::DELETE_RELATION)
    );
    // The UPDATE marked both rows.
    let updated_both = Dqe
        .compare(
            &c,
            &[
                vec![a.clone(), b.clone()],
                vec![a],
                vec![b],
                marks(&[Value::Null, Value::Null]),
            ],
        )
        .unwrap();
    assert!(
        matches!(updated_both, Verdict::Disagree(d) if d.relation == relation::UPDATE_RELATION)
    );
}

#[test]
fn a_marker_already_null_holds_the_relation() {
    let c = case(Some("c0"));
    let a = row(Value::Null, 1);
    let got = Dqe
        .compare(
            &c,
            &[vec![a.clone()], vec![a], vec![], vec![vec![Value::Null]]],
        )
        .unwrap();
    assert_eq!(got, Verdict::Agree { nonempty: true });
}

#[test]
fn shrinking_keeps_the_table_and_marker() {
    let c = case(Some("c1"));
    for variant in Dqe.shrink(&c) {
        assert!(Dqe.queries(&variant).is_ok());
    }
}
