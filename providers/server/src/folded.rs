//! Constant folding's literals in a typed DBMS (the coddtest oracle):
//! the value read as its own text output behind a prefix, and written
//! back as `CAST('text' AS type)`, which a DBMS with static types reads
//! as the same value of the same type where the type's text output reads
//! back exactly (each provider lists such types).

use lancet_core::{BinaryOp, Expr, TypeName, Value};

/// What goes before a value read as text: a connection that reads numbers
/// out of result text would turn `'1.50'` into the float 1.5.
pub const TEXT_PREFIX: &str = "v";

/// `'v' || text` (see [`TEXT_PREFIX`]).
pub fn prefixed_text(text: Expr) -> Expr {
    Expr::binary(
        BinaryOp::Concat,
        Expr::lit(Value::Text(TEXT_PREFIX.into())),
        text,
    )
}

/// The text of a value read through [`prefixed_text`]; `None` for NULL or
/// anything else.
pub fn unprefixed(prefixed: &Value) -> Option<&str> {
    match prefixed {
        Value::Text(t) => t.strip_prefix(TEXT_PREFIX),
        _ => None,
    }
}

/// `CAST('text' AS ty)` for a value read through [`prefixed_text`], or a
/// NULL of `ty` (the prefixed text of NULL is NULL).
pub fn typed_literal(ty: &str, prefixed: &Value) -> Option<Expr> {
    let literal = match prefixed {
        Value::Null => Value::Null,
        other => Value::Text(unprefixed(other)?.to_string()),
    };
    Some(Expr::Cast {
        expr: Box::new(Expr::Literal(literal)),
        ty: TypeName(ty.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prefix_is_dropped_and_null_stays_typed() {
        let t = |s: &str| Value::Text(s.into());
        let cast = |v: Value| Expr::Cast {
            expr: Box::new(Expr::Literal(v)),
            ty: TypeName("numeric".into()),
        };
        assert_eq!(typed_literal("numeric", &t("v1.50")), Some(cast(t("1.50"))));
        assert_eq!(
            typed_literal("numeric", &Value::Null),
            Some(cast(Value::Null))
        );
        assert_eq!(typed_literal("numeric", &t("1.50")), None);
        assert_eq!(typed_literal("numeric", &Value::Real(1.5)), None);
    }
}
