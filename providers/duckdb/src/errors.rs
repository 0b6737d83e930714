//! DuckDB's error types, as codes for expected-error rules: the C API's
//! `duckdb_error_type` (DuckDB's `ExceptionType`) by name, so that a rule
//! says `code = "CONVERSION"` rather than matching message text. Each
//! message starts with the same type as DuckDB spells it (`Conversion
//! Error: ...`), which names the type where the library has no
//! `duckdb_result_error_type` (before 1.1).

use lancet_core::{DbError, FailureKind};

/// `duckdb_error_type`, by value.
const TYPES: &[&str] = &[
    "INVALID",
    "OUT_OF_RANGE",
    "CONVERSION",
    "UNKNOWN_TYPE",
    "DECIMAL",
    "MISMATCH_TYPE",
    "DIVIDE_BY_ZERO",
    "OBJECT_SIZE",
    "INVALID_TYPE",
    "SERIALIZATION",
    "TRANSACTION",
    "NOT_IMPLEMENTED",
    "EXPRESSION",
    "CATALOG",
    "PARSER",
    "PLANNER",
    "SCHEDULER",
    "EXECUTOR",
    "CONSTRAINT",
    "INDEX",
    "STAT",
    "CONNECTION",
    "SYNTAX",
    "SETTINGS",
    "BINDER",
    "NETWORK",
    "OPTIMIZER",
    "NULL_POINTER",
    "IO",
    "INTERRUPT",
    "FATAL",
    "INTERNAL",
    "INVALID_INPUT",
    "OUT_OF_MEMORY",
    "PERMISSION",
    "PARAMETER_NOT_RESOLVED",
    "PARAMETER_NOT_ALLOWED",
    "DEPENDENCY",
    "HTTP",
    "MISSING_EXTENSION",
    "AUTOLOAD",
    "SEQUENCE",
    "INVALID_CONFIGURATION",
];

/// The name of error type `value`; `TYPE_<n>` for one this table lacks.
pub fn type_name(value: i32) -> String {
    usize::try_from(value)
        .ok()
        .and_then(|i| TYPES.get(i))
        .map_or_else(|| format!("TYPE_{value}"), |n| (*n).to_string())
}

/// The type a message names in its `<Type> Error:` prefix (`Out of Range
/// Error: ...` is `OUT_OF_RANGE`), if it is one of the known types.
pub fn type_of_message(message: &str) -> Option<String> {
    let (head, _) = message.split_once(" Error:")?;
    let name = head.trim().to_ascii_uppercase().replace([' ', '-'], "_");
    TYPES.contains(&name.as_str()).then_some(name)
}

/// The [`DbError`] of a failed statement: its type (from the C API where
/// the library has it, else from the message) and message. An interrupt
/// is the watchdog's doing: the statement ran out of time.
pub fn error(type_value: Option<i32>, message: String) -> DbError {
    let code = match type_value {
        Some(v) if v > 0 => Some(type_name(v)),
        _ => type_of_message(&message),
    };
    let kind = if code.as_deref() == Some("INTERRUPT") {
        FailureKind::Timeout
    } else {
        FailureKind::Statement
    };
    DbError {
        kind,
        code,
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_are_named_by_value_and_by_message() {
        assert_eq!(type_name(2), "CONVERSION");
        assert_eq!(type_name(24), "BINDER");
        assert_eq!(type_name(31), "INTERNAL");
        assert_eq!(type_name(99), "TYPE_99");
        assert_eq!(
            type_of_message("Out of Range Error: Overflow in addition").as_deref(),
            Some("OUT_OF_RANGE")
        );
        assert_eq!(
            type_of_message("INTERNAL Error: Attempted to access index").as_deref(),
            Some("INTERNAL")
        );
        assert_eq!(type_of_message("no prefix"), None);
        assert_eq!(
            error(Some(29), "INTERRUPT Error: Interrupted!".into()).kind,
            FailureKind::Timeout
        );
    }
}
