//! Expected-error rules: parsed from TOML, matched on the error code, the
//! statement kind and, where given, the exact message or its prefix.

use lancet_core::ast::StatementKind;
use lancet_core::connection::{DbError, FailureKind};
use lancet_core::expected_errors::ExpectedErrors;

const RULES: &str = r#"
[[expected]]
statements = ["insert", "update"]
code = "SQLITE_CONSTRAINT_UNIQUE"
why = "generated rows may repeat a key"

[[expected]]
statements = ["query"]
code = "SQLITE_ERROR"
message = "integer overflow"
why = "SUM over generated integers may overflow"

[[expected]]
statements = ["create-index"]
code = "SQLITE_ERROR"
message_prefix = "no such collation sequence: "
why = "collations are chosen without checking"

[[expected]]
statements = []
code = "SQLITE_FULL"
why = "any statement may fill the disk in a small test database"

[[expected]]
code = "SQLITE_BUSY"
why = "statements defaults to every kind"
"#;

fn rules() -> ExpectedErrors {
    ExpectedErrors::from_toml(RULES, "test-rules.toml").expect("valid rules")
}

fn err(code: &str, message: &str) -> DbError {
    DbError::statement(Some(code.to_string()), message)
}

#[test]
fn parses_rules() {
    let e = rules();
    assert_eq!(e.rules.len(), 5);
    let r = &e.rules[0];
    assert_eq!(
        r.statements,
        vec![StatementKind::Insert, StatementKind::Update]
    );
    assert_eq!(r.code, "SQLITE_CONSTRAINT_UNIQUE");
    assert_eq!(r.message, None);
    assert_eq!(r.message_prefix, None);
    assert_eq!(r.why, "generated rows may repeat a key");
    assert_eq!(e.rules[1].message.as_deref(), Some("integer overflow"));
    assert_eq!(
        e.rules[2].message_prefix.as_deref(),
        Some("no such collation sequence: ")
    );
    assert!(e.rules[3].statements.is_empty());
    assert!(e.rules[4].statements.is_empty());
}

#[test]
fn every_statement_kind_has_a_toml_name() {
    for kind in StatementKind::ALL {
        let text = format!(
            "[[expected]]\nstatements = [\"{}\"]\ncode = \"X\"\nwhy = \"w\"\n",
            kind.name()
        );
        let e = ExpectedErrors::from_toml(&text, "kinds.toml").unwrap();
        assert_eq!(e.rules[0].statements, vec![kind]);
    }
}

#[test]
fn empty_file_expects_nothing() {
    let e = ExpectedErrors::from_toml("", "empty.toml").unwrap();
    assert!(e.rules.is_empty());
    assert!(!e.is_expected(StatementKind::Query, &err("SQLITE_ERROR", "x")));
    assert!(!ExpectedErrors::default().is_expected(StatementKind::Query, &err("X", "")));
}

#[test]
fn matches_by_code_and_kind() {
    let e = rules();
    let unique = err(
        "SQLITE_CONSTRAINT_UNIQUE",
        "UNIQUE constraint failed: t0.c0",
    );
    assert!(e.is_expected(StatementKind::Insert, &unique));
    assert!(e.is_expected(StatementKind::Update, &unique));
    // Not declared for these kinds.
    assert!(!e.is_expected(StatementKind::Delete, &unique));
    assert!(!e.is_expected(StatementKind::Query, &unique));
    assert!(!e.is_expected(StatementKind::CreateIndex, &unique));
    // Codes match exactly: not by prefix, case or a neighbouring code.
    for code in [
        "SQLITE_CONSTRAINT",
        "SQLITE_CONSTRAINT_UNIQUE_X",
        "sqlite_constraint_unique",
        "SQLITE_CONSTRAINT_PRIMARYKEY",
        " SQLITE_CONSTRAINT_UNIQUE",
    ] {
        assert!(
            !e.is_expected(
                StatementKind::Insert,
                &err(code, "UNIQUE constraint failed")
            ),
            "{code}"
        );
    }
    // An error without a code matches no rule.
    let no_code = DbError::statement(None, "UNIQUE constraint failed: t0.c0");
    assert!(!e.is_expected(StatementKind::Insert, &no_code));
    // The matching rule is reported, for statistics and messages.
    let rule = e.matching_rule(StatementKind::Insert, &unique).unwrap();
    assert_eq!(rule.why, "generated rows may repeat a key");
}

#[test]
fn exact_message() {
    let e = rules();
    assert!(e.is_expected(
        StatementKind::Query,
        &err("SQLITE_ERROR", "integer overflow")
    ));
    // Exact means exact: no prefix, suffix, substring or case folding.
    for message in [
        "integer overflow!",
        "integer overflo",
        "Integer overflow",
        " integer overflow",
        "error: integer overflow",
        "",
    ] {
        assert!(
            !e.is_expected(StatementKind::Query, &err("SQLITE_ERROR", message)),
            "{message:?}"
        );
    }
    // The code must match as well as the message.
    assert!(!e.is_expected(
        StatementKind::Query,
        &err("SQLITE_RANGE", "integer overflow")
    ));
    // And the kind.
    assert!(!e.is_expected(
        StatementKind::Insert,
        &err("SQLITE_ERROR", "integer overflow")
    ));
}

#[test]
fn message_prefix() {
    let e = rules();
    let ok = err("SQLITE_ERROR", "no such collation sequence: FOO");
    assert!(e.is_expected(StatementKind::CreateIndex, &ok));
    // The prefix alone is a message that starts with the prefix.
    let bare = err("SQLITE_ERROR", "no such collation sequence: ");
    assert!(e.is_expected(StatementKind::CreateIndex, &bare));
    // A prefix is not a substring.
    let inside = err("SQLITE_ERROR", "error: no such collation sequence: FOO");
    assert!(!e.is_expected(StatementKind::CreateIndex, &inside));
    let short = err("SQLITE_ERROR", "no such collation sequence");
    assert!(!e.is_expected(StatementKind::CreateIndex, &short));
    assert!(!e.is_expected(StatementKind::CreateTable, &ok));
    // A generic code with another message is not expected.
    let other = err("SQLITE_ERROR", "no such table: t9");
    for kind in StatementKind::ALL {
        assert!(!e.is_expected(kind, &other), "{kind:?}");
    }
}

#[test]
fn empty_statement_list_matches_every_kind() {
    let e = rules();
    for kind in StatementKind::ALL {
        assert!(
            e.is_expected(kind, &err("SQLITE_FULL", "database or disk is full")),
            "{kind:?}"
        );
        assert!(
            e.is_expected(kind, &err("SQLITE_BUSY", "database is locked")),
            "{kind:?}"
        );
    }
}

#[test]
fn lost_connections_and_timeouts_are_never_expected() {
    let e = rules();
    for failure in [FailureKind::ConnectionLost, FailureKind::Timeout] {
        for (code, message) in [
            ("SQLITE_FULL", "database or disk is full"),
            (
                "SQLITE_CONSTRAINT_UNIQUE",
                "UNIQUE constraint failed: t0.c0",
            ),
            ("SQLITE_ERROR", "integer overflow"),
        ] {
            let error = DbError {
                kind: failure,
                code: Some(code.to_string()),
                message: message.to_string(),
            };
            for kind in StatementKind::ALL {
                assert!(
                    e.matching_rule(kind, &error).is_none(),
                    "{failure:?} {code} {kind:?}"
                );
            }
        }
    }
}

#[test]
fn first_matching_rule_wins_and_extend_adds_rules() {
    let mut e = rules();
    let locked = err("SQLITE_LOCKED", "database table is locked");
    assert!(!e.is_expected(StatementKind::Query, &locked));
    let user = ExpectedErrors::from_toml(
        r#"
[[expected]]
statements = ["query"]
code = "SQLITE_LOCKED"
why = "a user's addition"

[[expected]]
code = "SQLITE_FULL"
why = "shadowed by the built-in rule"
"#,
        "user.toml",
    )
    .unwrap();
    e.extend(user);
    assert_eq!(e.rules.len(), 7);
    assert!(e.is_expected(StatementKind::Query, &locked));
    assert!(!e.is_expected(StatementKind::Insert, &locked));
    let full = err("SQLITE_FULL", "database or disk is full");
    assert_eq!(
        e.matching_rule(StatementKind::Insert, &full).unwrap().why,
        "any statement may fill the disk in a small test database"
    );
}

/// The error's whole text, causes included.
fn error_text(result: anyhow::Result<ExpectedErrors>) -> String {
    match result {
        Ok(e) => panic!("accepted: {e:?}"),
        Err(e) => format!("{e:#}"),
    }
}

#[test]
fn malformed_files_are_rejected_with_their_origin() {
    let cases = [
        // Unknown field in a rule.
        (
            "unknown-field.toml",
            "[[expected]]\ncode = \"X\"\nwhy = \"w\"\nmesage = \"typo\"\n",
            "mesage",
        ),
        // Unknown top-level key.
        (
            "unknown-top.toml",
            "[[expectd]]\ncode = \"X\"\nwhy = \"w\"\n",
            "expectd",
        ),
        // Wrong types.
        (
            "wrong-type.toml",
            "[[expected]]\ncode = 1\nwhy = \"w\"\n",
            "code",
        ),
        (
            "wrong-statements.toml",
            "[[expected]]\nstatements = \"query\"\ncode = \"X\"\nwhy = \"w\"\n",
            "statements",
        ),
        // A statement kind that does not exist.
        (
            "unknown-kind.toml",
            "[[expected]]\nstatements = [\"select\"]\ncode = \"X\"\nwhy = \"w\"\n",
            "select",
        ),
        // Missing required fields.
        ("no-why.toml", "[[expected]]\ncode = \"X\"\n", "why"),
        ("no-code.toml", "[[expected]]\nwhy = \"w\"\n", "code"),
        // Not TOML at all.
        ("garbage.toml", "[[expected]\ncode = ", "expected"),
        // Both kinds of message.
        (
            "both-messages.toml",
            "[[expected]]\ncode = \"X\"\nwhy = \"w\"\n\n[[expected]]\ncode = \"X\"\nmessage = \"a\"\nmessage_prefix = \"a\"\nwhy = \"w\"\n",
            "rule 2 has both message and message_prefix",
        ),
        // An empty code would match nothing useful.
        (
            "empty-code.toml",
            "[[expected]]\ncode = \" \"\nwhy = \"w\"\n",
            "rule 1 has an empty code",
        ),
    ];
    for (origin, text, detail) in cases {
        let message = error_text(ExpectedErrors::from_toml(text, origin));
        assert!(message.contains(origin), "{origin}: {message}");
        assert!(message.contains(detail), "{origin}: {message}");
    }
}
