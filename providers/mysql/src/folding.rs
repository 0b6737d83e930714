//! Constant folding's literals (the coddtest oracle) in MySQL and MariaDB.
//!
//! MySQL has no function that names an expression's type, so a literal
//! stands only for a value whose kind the result protocol and
//! `COLLATION()` tell exactly: integers and decimals (collation `binary`)
//! as numeric literals, and strings whose collation and coercibility are
//! a literal's (the connection's collation, coercibility 4: derived from
//! literals only) as string literals, checked byte for byte with `HEX()`.
//! Not folded: floats (a FLOAT prints rounded to 6 digits, and DOUBLE
//! text differs between servers), NULL (its type decides the type of
//! `COALESCE` and `CASE` around it), dates and times (read as text, but
//! a date is no string), and any expression that reads a column (a
//! column's BIT, YEAR or unsigned type, or its collation, would not
//! carry over). Nor any expression with a division: MySQL and MariaDB
//! carry a decimal quotient on with more digits than the scale it prints
//! (`div_precision_increment`), so `(10.000 / 1.5) / 1.5` and the same
//! over the printed `6.666666666666666666666666666666667` differ in
//! their last digits (two false coddtest findings in a MariaDB soak).

use lancet_core::{BinaryOp, Expr, Value};

/// `e`, `COLLATION(e)`, `COERCIBILITY(e)`, `COLLATION('')` (the
/// connection's, a literal's) and `HEX(e)`; `None` for an expression that
/// may read a column.
pub fn literal_probe(constant: &Expr) -> Option<Vec<Expr>> {
    let divides = |e: &Expr| {
        matches!(
            e,
            Expr::Binary {
                op: BinaryOp::Div,
                ..
            }
        )
    };
    if constant.may_read_columns() || constant.any(&divides) {
        return None;
    }
    let of = |name: &str, e: &Expr| Expr::func(name, vec![e.clone()]);
    Some(vec![
        constant.clone(),
        of("COLLATION", constant),
        of("COERCIBILITY", constant),
        of("COLLATION", &Expr::lit(Value::Text(String::new()))),
        of("HEX", constant),
    ])
}

/// A numeric literal of an integer or decimal, or a string literal.
pub fn literal_of(probe: &[Value]) -> Option<Expr> {
    let [value, Value::Text(collation), coercibility, Value::Text(literals), Value::Text(hex)] =
        probe
    else {
        return None;
    };
    let literal = match value {
        Value::Integer(i) if collation == "binary" && *i != i64::MIN => Value::Integer(*i),
        Value::Decimal(d) if collation == "binary" => Value::Decimal(d.clone()),
        Value::Text(t)
            if collation == literals
                && *coercibility == Value::Integer(4)
                && hex_of(t.as_bytes()) == *hex =>
        {
            Value::Text(t.clone())
        }
        _ => return None,
    };
    Some(Expr::Literal(literal))
}

fn hex_of(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02X}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_literal_strings_fold_and_nothing_else() {
        let t = |s: &str| Value::Text(s.into());
        let conn = "utf8mb4_general_ci";
        let probe = |v: Value, coll: &str, coer: i64, hex: &str| {
            literal_of(&[v, t(coll), Value::Integer(coer), t(conn), t(hex)])
        };
        assert_eq!(
            probe(Value::Integer(-3), "binary", 5, "FFFFFFFFFFFFFFFD"),
            Some(Expr::int(-3))
        );
        assert_eq!(
            probe(Value::Decimal("0.3333".into()), "binary", 5, ""),
            Some(Expr::Literal(Value::Decimal("0.3333".into())))
        );
        assert_eq!(
            probe(t("ab"), conn, 4, "6162"),
            Some(Expr::Literal(t("ab")))
        );
        // A date reads as text, under collation binary.
        assert_eq!(
            probe(t("2020-01-01"), "binary", 5, "323032302D30312D3031"),
            None
        );
        assert_eq!(probe(t("ab"), "utf8mb4_bin", 2, "6162"), None);
        assert_eq!(probe(Value::Real(1.5), "binary", 5, ""), None);
        assert_eq!(probe(Value::Null, "binary", 6, ""), None);
        assert!(literal_probe(&Expr::column(None, "c0")).is_none());
        // A quotient carries more digits than it prints.
        let quotient = Expr::binary(
            BinaryOp::Div,
            Expr::Literal(Value::Decimal("10.000".into())),
            Expr::Literal(Value::Decimal("1.5".into())),
        );
        assert!(literal_probe(&quotient).is_none());
        assert!(literal_probe(&Expr::binary(BinaryOp::Add, quotient, Expr::int(1))).is_none());
    }
}
