//! Constant folding's literals (the coddtest oracle): which constant
//! expressions a literal may replace in SQLite, and the literal of a value.
//!
//! SQLite has no static types: a value has a storage class, and an
//! expression may have an affinity and a collation, which change how it
//! compares (<https://sqlite.org/datatype3.html>, sections 4.2 and 7.1). A
//! literal has neither, so a literal stands only for an expression that
//! has neither: not a column, a CAST, a unary `+` over one of those, or a
//! scalar subquery whose first result is one of those
//! (`sqlite3ExprAffinity`); and nothing with a COLLATE inside, whose
//! collation travels up through operators (`sqlite3ExprCollSeq`).

use lancet_core::{Expr, SelectItem, SetExpr, UnaryOp, Value};

/// The auxiliary query's items for `constant`: its value, its storage
/// class and its bytes in hex (text read through the connection could
/// have lost bytes that are not UTF-8). `None` where the expression has an
/// affinity or a collation.
pub fn literal_probe(constant: &Expr) -> Option<Vec<Expr>> {
    if has_affinity(constant) || constant.any(&|e| matches!(e, Expr::Collate { .. })) {
        return None;
    }
    Some(vec![
        constant.clone(),
        Expr::func("typeof", vec![constant.clone()]),
        Expr::func("hex", vec![constant.clone()]),
    ])
}

/// The literal of the value the probe read. Reals only where SQLite's
/// text-to-float conversion is exact in every release (a dyadic fraction
/// with few digits: older releases round some decimals in two steps);
/// never `-0.0` (SQLite prints it as `0.0`) or the smallest integer
/// (written `-9223372036854775808`, SQLite reads a real).
pub fn literal_of(probe: &[Value]) -> Option<Expr> {
    let [value, Value::Text(class), Value::Text(hex), ..] = probe else {
        // A NULL value: typeof is 'null' and hex(NULL) is ''.
        return match probe {
            [Value::Null, Value::Text(class), ..] if class == "null" => {
                Some(Expr::Literal(Value::Null))
            }
            _ => None,
        };
    };
    let literal = match (value, class.as_str()) {
        (Value::Null, "null") => Value::Null,
        (Value::Integer(i), "integer") if *i != i64::MIN => Value::Integer(*i),
        (Value::Real(r), "real") if exact_real(*r) => Value::Real(*r),
        (Value::Text(t), "text") if !t.contains('\0') && hex_of(t.as_bytes()) == *hex => {
            Value::Text(t.clone())
        }
        (Value::Blob(b), "blob") if hex_of(b) == *hex => Value::Blob(b.clone()),
        _ => return None,
    };
    Some(Expr::Literal(literal))
}

/// Whether `e` has an affinity: a column, a CAST, or one of those under
/// unary `+` or COLLATE, or as a scalar subquery's first result.
fn has_affinity(e: &Expr) -> bool {
    match e {
        Expr::Column(_) | Expr::Cast { .. } => true,
        Expr::Collate { expr, .. }
        | Expr::Unary {
            op: UnaryOp::Plus,
            expr,
        } => has_affinity(expr),
        Expr::Subquery(q) => match &q.body {
            SetExpr::Select(s) => match s.items.first() {
                Some(SelectItem::Expr { expr, .. }) => has_affinity(expr),
                _ => true,
            },
            // A compound's result column is the last SELECT's: keep out.
            SetExpr::SetOp { .. } => true,
        },
        _ => false,
    }
}

/// A float whose shortest decimal form SQLite reads back exactly in every
/// release: finite, not `-0.0`, a multiple of 1/1024 below 2^53, so that
/// the decimal digits and the power of ten are exact and so is their
/// quotient.
fn exact_real(r: f64) -> bool {
    let scaled = r * 1024.0;
    r.is_finite()
        && !(r == 0.0 && r.is_sign_negative())
        && r.abs() < 9_007_199_254_740_992.0 / 1024.0
        && scaled.fract() == 0.0
}

fn hex_of(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02X}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use lancet_core::{BinaryOp, Query, Select, TypeName};

    #[test]
    fn expressions_with_affinity_or_collation_are_not_folded() {
        let cast = Expr::Cast {
            expr: Box::new(Expr::int(1)),
            ty: TypeName("TEXT".into()),
        };
        assert!(literal_probe(&cast).is_none());
        let plus = Expr::unary(UnaryOp::Plus, cast.clone());
        assert!(literal_probe(&plus).is_none());
        let collated = Expr::binary(
            BinaryOp::Concat,
            Expr::Collate {
                expr: Box::new(Expr::lit(Value::Text("a".into()))),
                collation: "NOCASE".into(),
            },
            Expr::lit(Value::Text("b".into())),
        );
        assert!(literal_probe(&collated).is_none());
        let sub = |item: Expr| {
            Expr::Subquery(Box::new(Query::select(Select {
                items: vec![SelectItem::Expr {
                    expr: item,
                    alias: None,
                }],
                ..Select::default()
            })))
        };
        assert!(literal_probe(&sub(Expr::column(Some("s0"), "c0"))).is_none());
        let max = Expr::func("max", vec![Expr::column(Some("s0"), "c0")]);
        assert_eq!(literal_probe(&sub(max)).map(|p| p.len()), Some(3));
        let sum = Expr::binary(BinaryOp::Add, Expr::int(1), Expr::int(2));
        assert_eq!(literal_probe(&sum).map(|p| p.len()), Some(3));
    }

    #[test]
    fn literals_keep_the_storage_class_or_are_refused() {
        let t = |s: &str| Value::Text(s.into());
        assert_eq!(
            literal_of(&[Value::Integer(3), t("integer"), t("33")]),
            Some(Expr::int(3))
        );
        assert_eq!(
            literal_of(&[Value::Real(1.5), t("real"), t("312E35")]),
            Some(Expr::Literal(Value::Real(1.5)))
        );
        assert_eq!(literal_of(&[Value::Real(0.1), t("real"), t("")]), None);
        assert_eq!(literal_of(&[Value::Real(-0.0), t("real"), t("")]), None);
        assert_eq!(
            literal_of(&[t("a'b"), t("text"), t("612762")]),
            Some(Expr::Literal(t("a'b")))
        );
        // Bytes that were not UTF-8 came back changed: refused.
        assert_eq!(literal_of(&[t("\u{fffd}"), t("text"), t("FF")]), None);
        assert_eq!(
            literal_of(&[Value::Null, t("null"), t("")]),
            Some(Expr::Literal(Value::Null))
        );
        assert_eq!(
            literal_of(&[Value::Integer(i64::MIN), t("integer"), t("")]),
            None
        );
    }
}
