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

/// What DuckDB says (a FATAL error) of every statement on a database an
/// earlier INTERNAL or FATAL error invalidated.
const INVALIDATED: &str = "database has been invalidated because of a previous fatal error";

/// The [`DbError`] of a failed statement: its type (from the C API where
/// the library has it, else from the message) and message. An interrupt
/// is the watchdog's doing: the statement ran out of time. A database an
/// earlier error invalidated is gone, as a crashed server's is: every
/// later statement fails alike, so the error is a lost connection, which
/// ends the database (the error that invalidated it was the finding).
pub fn error(type_value: Option<i32>, message: String) -> DbError {
    let message = without_stack_trace(message);
    let code = match type_value {
        Some(v) if v > 0 => Some(type_name(v)),
        _ => type_of_message(&message),
    };
    let kind = match code.as_deref() {
        Some("INTERRUPT") => FailureKind::Timeout,
        _ if message.contains(INVALIDATED) => FailureKind::ConnectionLost,
        _ => FailureKind::Statement,
    };
    DbError {
        kind,
        code,
        message,
    }
}

/// The message without the stack trace that builds before 1.5 append to
/// INTERNAL errors (`Stack Trace:` and a line per frame, with addresses
/// that differ from one process to the next): with it, the same error
/// never reads as the same again (a finding would not confirm on a fresh
/// database, nor reduce). The sentence DuckDB puts after the trace stays.
fn without_stack_trace(message: String) -> String {
    let Some(start) = message.find("Stack Trace:") else {
        return message;
    };
    let head = message[..start].trim_end();
    let tail = message[start..]
        .rfind("\n\n")
        .map(|i| message[start + i..].trim())
        .filter(|t| !t.is_empty() && !t.starts_with('/'));
    match tail {
        Some(t) => format!("{head}\n\n{t}"),
        None => head.to_string(),
    }
}

/// `error`, and if it says that the database was invalidated, the
/// statement whose error did it: a check that reads the data for its case
/// (PQS's pivot row) drops its errors, and the loss shows at a later
/// statement, which did not cause it.
pub fn invalidated_by(mut error: DbError, fatal: Option<&str>) -> DbError {
    if let (FailureKind::ConnectionLost, Some(sql)) = (error.kind, fatal) {
        error
            .message
            .push_str(&format!("\n(the INTERNAL or FATAL error came from: {sql})"));
    }
    error
}

#[cfg(test)]
mod tests {
    #[test]
    fn stack_traces_are_dropped_from_messages() {
        let traced = "INTERNAL Error: Unsupported type\n\nStack Trace:\n\n\
                      /lib/libduckdb.so(f+0x56) [0x7f1877a83ef6]\n\
                      /lib/libduckdb.so(g+0x14) [0x7f1877a83f00]\n\n\
                      This error signals an assertion failure within DuckDB.";
        assert_eq!(
            without_stack_trace(traced.into()),
            "INTERNAL Error: Unsupported type\n\nThis error signals an assertion failure within DuckDB."
        );
        assert_eq!(
            without_stack_trace("Binder Error: x".into()),
            "Binder Error: x"
        );
    }

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

    /// The INTERNAL error is an error of its statement; what follows on
    /// the database it invalidated is a lost connection.
    #[test]
    fn an_invalidated_database_is_a_lost_connection() {
        let internal = error(
            Some(31),
            "INTERNAL Error: Attempted to access index 0".into(),
        );
        assert_eq!(internal.kind, FailureKind::Statement);
        assert_eq!(internal.code.as_deref(), Some("INTERNAL"));
        let after = error(
            Some(30),
            "FATAL Error: Failed: database has been invalidated because of a previous fatal \
             error. The database must be restarted prior to being used again.\n\
             Original error: \"Attempted to access index 0\""
                .into(),
        );
        assert_eq!(after.kind, FailureKind::ConnectionLost);
        assert_eq!(after.code.as_deref(), Some("FATAL"));
        let named = invalidated_by(after, Some("SELECT 1"));
        assert!(named.message.ends_with("came from: SELECT 1)"), "{named}");
        let internal = invalidated_by(internal, Some("SELECT 1"));
        assert!(!internal.message.contains("SELECT 1"), "{internal}");
        // A failed checkpoint invalidates one attached database, not this.
        let checkpoint = "IO Error: Checkpoint failed for database \"f\". The database has been \
                          invalidated. Original error: aborted";
        assert_eq!(
            error(Some(28), checkpoint.into()).kind,
            FailureKind::Statement
        );
    }
}
