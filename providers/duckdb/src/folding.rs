//! Constant folding's literals (the coddtest oracle) in DuckDB.
//!
//! An expression has a static type, which `typeof` names with its
//! parameters (`DECIMAL(18,3)`), so the literal that stands for a value is
//! `CAST('text' AS type)` with the value's own VARCHAR form, which the
//! types below read back exactly (floats print their shortest exact
//! form). Text takes a collation from a column (`VARCHAR COLLATE
//! NOCASE`) that `typeof` does not show, so text is folded only from an
//! expression over no column at all, which has none.

use lancet_core::{Expr, TypeName, Value};
use lancet_server::folded::{prefixed_text, typed_literal};

/// Types whose VARCHAR form reads back as the same value of the same type
/// (`DECIMAL(p,s)` is matched by its prefix).
const EXACT_TYPES: &[&str] = &[
    "BOOLEAN",
    "TINYINT",
    "SMALLINT",
    "INTEGER",
    "BIGINT",
    "HUGEINT",
    "UTINYINT",
    "USMALLINT",
    "UINTEGER",
    "UBIGINT",
    "FLOAT",
    "DOUBLE",
    "VARCHAR",
    "DATE",
];

/// Marks a probe of an expression that reads some column.
const READS_COLUMNS: &str = "reads columns";

/// `typeof(e)`, `'v' || CAST(e AS VARCHAR)` (the prefix keeps the text
/// from being read as a number), and whether `e` reads a column.
pub fn literal_probe(constant: &Expr) -> Option<Vec<Expr>> {
    let varchar = Expr::Cast {
        expr: Box::new(constant.clone()),
        ty: TypeName("VARCHAR".into()),
    };
    let reads = constant.may_read_columns();
    Some(vec![
        Expr::func("typeof", vec![constant.clone()]),
        prefixed_text(varchar),
        Expr::lit(Value::Text(if reads { READS_COLUMNS } else { "" }.into())),
    ])
}

/// `CAST('text' AS type)`, or a typed NULL.
pub fn literal_of(probe: &[Value]) -> Option<Expr> {
    let [Value::Text(ty), value, Value::Text(reads)] = probe else {
        return None;
    };
    let exact =
        EXACT_TYPES.contains(&ty.as_str()) || (ty.starts_with("DECIMAL(") && ty.ends_with(')'));
    if !exact || (ty == "VARCHAR" && reads == READS_COLUMNS) {
        return None;
    }
    typed_literal(ty, value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_are_cast_to_the_type_and_text_only_without_columns() {
        let t = |s: &str| Value::Text(s.into());
        let typed = |ty: &str, v: &str| typed_literal(ty, &t(&format!("v{v}")));
        assert_eq!(
            literal_of(&[t("DECIMAL(18,3)"), t("v1.500"), t("")]),
            typed("DECIMAL(18,3)", "1.500")
        );
        assert_eq!(
            literal_of(&[t("VARCHAR"), t("vab"), t("")]),
            typed("VARCHAR", "ab")
        );
        assert_eq!(
            literal_of(&[t("VARCHAR"), t("vab"), t(READS_COLUMNS)]),
            None
        );
        assert!(literal_of(&[t("BIGINT"), Value::Null, t(READS_COLUMNS)]).is_some());
        assert_eq!(literal_of(&[t("INTEGER[]"), t("v[1]"), t("")]), None);
        assert_eq!(literal_of(&[t("\"NULL\""), Value::Null, t("")]), None);
    }
}
