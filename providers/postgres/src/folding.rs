//! Constant folding's literals (the coddtest oracle) in PostgreSQL.
//!
//! An expression has a static type and, if its type is collatable, a
//! collation. An untyped literal is `unknown` and takes its type from its
//! context, so the literal that stands for a value is `CAST('text' AS
//! type)`: the type the expression had, read with `pg_typeof`, and the
//! value's own text output, which every type below reads back exactly
//! (floats print their shortest exact form with `extra_float_digits` 1,
//! which the session sets). Only types whose name names the type whole
//! (`character` without a length would be `character(1)`), and only the
//! default collation, which the literal has (`pg_collation_for` of the
//! text, which keeps an explicit collation).

use lancet_core::{Expr, TypeName, Value};
use lancet_server::folded::{prefixed_text, typed_literal};

/// Types whose text output reads back as the same value of the same type.
const EXACT_TYPES: &[&str] = &[
    "smallint",
    "integer",
    "bigint",
    "numeric",
    "real",
    "double precision",
    "text",
    "character varying",
    "boolean",
    "date",
    "bytea",
];

/// `pg_typeof(e)::text`, `pg_collation_for(e::text)` and `'v' || e::text`
/// (the prefix keeps the text from being read back as a number). The
/// collation is read through the cast to text, which keeps an explicit
/// one: PostgreSQL 15 refuses `pg_collation_for` of a type without
/// collations (42804 "collations are not supported by type boolean"), so
/// read directly it failed every probe of a number, boolean or date there.
pub fn literal_probe(constant: &Expr) -> Option<Vec<Expr>> {
    let text = |e: Expr| Expr::Cast {
        expr: Box::new(e),
        ty: TypeName("text".into()),
    };
    Some(vec![
        text(Expr::func("pg_typeof", vec![constant.clone()])),
        Expr::func("pg_collation_for", vec![text(constant.clone())]),
        prefixed_text(text(constant.clone())),
    ])
}

/// `CAST('text' AS type)`, or a typed NULL.
pub fn literal_of(probe: &[Value]) -> Option<Expr> {
    let [Value::Text(ty), collation, value] = probe else {
        return None;
    };
    if !EXACT_TYPES.contains(&ty.as_str()) {
        return None;
    }
    match collation {
        Value::Null => {}
        Value::Text(c) if c == "\"default\"" => {}
        _ => return None,
    }
    typed_literal(ty, value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_collation_is_read_of_the_text_which_every_type_has() {
        let probe = literal_probe(&Expr::Literal(Value::Integer(1))).unwrap();
        let Expr::Function { name, args, .. } = &probe[1] else {
            panic!("{probe:?}");
        };
        assert_eq!(name, "pg_collation_for");
        assert!(
            matches!(&args[..], [Expr::Cast { ty, .. }] if ty.0 == "text"),
            "{args:?}"
        );
    }

    #[test]
    fn literals_are_cast_to_the_type_and_refused_elsewhere() {
        let t = |s: &str| Value::Text(s.into());
        let typed = |ty: &str, v: &str| {
            Some(Expr::Cast {
                expr: Box::new(Expr::Literal(t(v))),
                ty: TypeName(ty.into()),
            })
        };
        assert_eq!(
            literal_of(&[t("numeric"), Value::Null, t("v1.50")]),
            typed("numeric", "1.50")
        );
        assert_eq!(
            literal_of(&[t("text"), t("\"default\""), t("vab")]),
            typed("text", "ab")
        );
        assert!(literal_of(&[t("integer"), Value::Null, Value::Null]).is_some());
        assert_eq!(literal_of(&[t("text"), t("\"C\""), t("vab")]), None);
        assert_eq!(
            literal_of(&[t("character"), t("\"default\""), t("va")]),
            None
        );
        assert_eq!(literal_of(&[t("unknown"), Value::Null, t("va")]), None);
    }
}
