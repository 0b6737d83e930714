//! The invariants on hand-fed runs, the rounds the generator draws at
//! each level's rules, the planted fault, reduction's candidates and a
//! finding's files.

use super::invariant::{judge, Invariant};
use super::planted::StressFault;
use super::record::{endings, session_statements, signature_of, tail, RoundOrigin, StressFinding};
use super::round::{read_then_write, Round, Stmt, Txn, Workload, MAX_SESSIONS};
use super::run::{Ending, RoundRun, TotalSeen, TxnLog};
use crate::txn::tests::{innodb_rr, pg_rc, pg_rr, rules};
use lancet_core::txn::{IsolationLevel, LevelRules, ReadView, WriteRule};

/// InnoDB's READ UNCOMMITTED: dirty reads.
fn innodb_ru() -> LevelRules {
    LevelRules {
        read_view: ReadView::Uncommitted,
        level: IsolationLevel::ReadUncommitted,
        ..innodb_rr()
    }
}

fn transfer(from: i64, to: i64, amount: i64) -> Vec<Stmt> {
    vec![
        Stmt::Add {
            key: from,
            delta: -amount,
        },
        Stmt::Add {
            key: to,
            delta: amount,
        },
    ]
}

/// A bank of two accounts of 100 and one session's transactions.
fn bank(level: IsolationLevel, txns: Vec<Txn>) -> Round {
    Round {
        workload: Workload::Bank,
        level,
        mode: None,
        settings: Vec::new(),
        index_v: false,
        placement: None,
        rows: vec![(1, 100), (2, 100)],
        sessions: vec![txns],
    }
}

/// A counter at 0 and one session of `n` transactions, each adding 1
/// to it and committing.
fn txn_counters(n: usize) -> Round {
    Round {
        workload: Workload::Counters,
        rows: vec![(1, 0)],
        sessions: vec![(0..n)
            .map(|_| Txn {
                stmts: vec![Stmt::Add { key: 1, delta: 1 }],
                commit: true,
            })
            .collect()],
        ..bank(IsolationLevel::ReadCommitted, Vec::new())
    }
}

fn log(index: usize, ending: Ending, totals: Vec<TotalSeen>) -> TxnLog {
    TxnLog {
        session: 0,
        index,
        statements: vec![("BEGIN".into(), "ok".into())],
        ending,
        totals,
        began_ms: index as u64,
        ended_ms: index as u64 + 1,
    }
}

fn ran(logs: Vec<TxnLog>, final_rows: &[(i64, i64)]) -> RoundRun {
    RoundRun {
        logs: vec![logs],
        final_rows: final_rows.to_vec(),
        ..RoundRun::default()
    }
}

fn kinds(round: &Round, rules: &LevelRules, run: &RoundRun) -> Vec<Invariant> {
    judge(round, rules, run)
        .iter()
        .map(|v| v.invariant)
        .collect()
}

#[test]
fn committed_transfers_and_only_they_move_money() {
    let round = bank(
        IsolationLevel::ReadCommitted,
        vec![
            Txn {
                stmts: transfer(1, 2, 10),
                commit: true,
            },
            Txn {
                stmts: transfer(2, 1, 5),
                commit: false,
            },
            Txn {
                stmts: transfer(2, 1, 7),
                commit: true,
            },
        ],
    );
    let logs = || {
        vec![
            log(0, Ending::Committed, Vec::new()),
            log(1, Ending::RolledBack, Vec::new()),
            log(
                2,
                Ending::Conflict(lancet_core::txn::Conflict::Deadlock),
                Vec::new(),
            ),
        ]
    };
    let clean = ran(logs(), &[(1, 90), (2, 110)]);
    assert!(kinds(&round, &pg_rc(), &clean).is_empty());
    // The rolled-back transfer applied: balances wrong, total right.
    let rolled_back_applied = ran(logs(), &[(1, 95), (2, 105)]);
    assert_eq!(
        kinds(&round, &pg_rc(), &rolled_back_applied),
        vec![Invariant::Balance, Invariant::Balance]
    );
    // Half a transfer: the total is wrong first.
    let half = ran(logs(), &[(1, 90), (2, 100)]);
    assert_eq!(
        kinds(&round, &pg_rc(), &half),
        vec![Invariant::BankTotal, Invariant::Balance]
    );
    let v = &judge(&round, &pg_rc(), &half)[0];
    assert_eq!((v.expected, v.actual), (200, Some(190)));
}

#[test]
fn a_commit_of_unknown_outcome_leaves_its_rows_open_but_not_the_total() {
    let round = Round {
        workload: Workload::Counters,
        rows: vec![(1, 0), (2, 0)],
        ..bank(
            IsolationLevel::ReadCommitted,
            vec![
                Txn {
                    stmts: vec![Stmt::Add { key: 1, delta: 1 }],
                    commit: true,
                },
                Txn {
                    stmts: vec![Stmt::Add { key: 2, delta: 1 }],
                    commit: true,
                },
            ],
        )
    };
    let logs = vec![
        log(0, Ending::Unknown, Vec::new()),
        log(1, Ending::Committed, Vec::new()),
    ];
    // Counter 1 may be 0 or 1; counter 2 must be 1.
    assert!(kinds(&round, &pg_rc(), &ran(logs.clone(), &[(1, 0), (2, 1)])).is_empty());
    assert!(kinds(&round, &pg_rc(), &ran(logs.clone(), &[(1, 1), (2, 1)])).is_empty());
    let lost = judge(&round, &pg_rc(), &ran(logs, &[(1, 1), (2, 0)]));
    assert_eq!(lost.len(), 1);
    assert_eq!(lost[0].invariant, Invariant::Counter);
    assert_eq!((lost[0].key, lost[0].expected), (Some(2), 1));
    // The bank's total holds whatever an unknown COMMIT did.
    let bank_round = bank(
        IsolationLevel::ReadCommitted,
        vec![Txn {
            stmts: transfer(1, 2, 10),
            commit: true,
        }],
    );
    let unknown = vec![log(0, Ending::Unknown, Vec::new())];
    assert!(kinds(
        &bank_round,
        &pg_rc(),
        &ran(unknown.clone(), &[(1, 90), (2, 110)])
    )
    .is_empty());
    assert_eq!(
        kinds(&bank_round, &pg_rc(), &ran(unknown, &[(1, 90), (2, 100)])),
        vec![Invariant::BankTotal]
    );
}

#[test]
fn reads_of_the_total_are_checked_where_the_level_reads_committed_rows() {
    let mut stmts = vec![Stmt::ReadSum];
    stmts.extend(transfer(1, 2, 10));
    stmts.push(Stmt::ReadAll);
    let round = |level| {
        bank(
            level,
            vec![Txn {
                stmts: stmts.clone(),
                commit: true,
            }],
        )
    };
    let seen = |first, last| {
        vec![
            TotalSeen {
                stmt: 0,
                total: first,
                rows: None,
            },
            TotalSeen {
                stmt: 3,
                total: last,
                rows: Some(2),
            },
        ]
    };
    let run = |first, last| {
        ran(
            vec![log(0, Ending::Committed, seen(first, last))],
            &[(1, 90), (2, 110)],
        )
    };
    let rc = round(IsolationLevel::ReadCommitted);
    assert!(kinds(&rc, &pg_rc(), &run(200, 200)).is_empty());
    assert_eq!(
        kinds(&rc, &pg_rc(), &run(190, 200)),
        vec![Invariant::ReadTotal]
    );
    assert_eq!(
        kinds(&rc, &pg_rc(), &run(200, 210)),
        vec![Invariant::ReadTotal]
    );
    // InnoDB's REPEATABLE READ writes newer rows than its snapshot: a
    // read after them mixes the two and is not checked; one before is.
    let rr = round(IsolationLevel::RepeatableRead);
    assert!(kinds(&rr, &innodb_rr(), &run(200, 210)).is_empty());
    assert_eq!(
        kinds(&rr, &innodb_rr(), &run(190, 200)),
        vec![Invariant::ReadTotal]
    );
    // Dirty reads see other transfers half done.
    let ru = round(IsolationLevel::ReadUncommitted);
    assert!(kinds(&ru, &innodb_ru(), &run(190, 210)).is_empty());
    // A table spread over nodes is read with a snapshot per node.
    let placed = Round {
        placement: Some("distributed".into()),
        ..rc
    };
    assert!(kinds(&placed, &pg_rc(), &run(190, 210)).is_empty());
}

#[test]
fn rounds_hold_only_what_their_level_keeps() {
    let levels = [
        pg_rc(),
        innodb_rr(),
        innodb_ru(),
        LevelRules {
            read_view: ReadView::LockingLatest,
            ..rules(
                IsolationLevel::Serializable,
                ReadView::Begin,
                WriteRule::NewestRows,
            )
        },
        pg_rr(),
    ];
    let mut in_key_order = 0;
    for (i, r) in levels.iter().enumerate() {
        let mut rng = lancet_core::rng::database_rng(7, 0, i as u64);
        for _ in 0..50 {
            let round = Round::generate(&mut rng, r, Vec::new(), &[]);
            // Some rounds write each transaction's rows by key (no
            // deadlocks among writers).
            let sorted = round.sessions.iter().flatten().all(|t| {
                let keys: Vec<i64> = t
                    .stmts
                    .iter()
                    .filter_map(|s| s.delta())
                    .map(|d| d.0)
                    .collect();
                keys.windows(2).all(|w| w[0] <= w[1])
            });
            in_key_order += usize::from(sorted);
            assert!((2..=MAX_SESSIONS).contains(&round.sessions.len()));
            assert_eq!(round.level, r.level);
            let stmts: Vec<Stmt> = round
                .sessions
                .iter()
                .flatten()
                .flat_map(|t| t.stmts.clone())
                .collect();
            if !read_then_write(r) {
                assert!(
                    !stmts.iter().any(|s| matches!(s, Stmt::ReadThenSet { .. })),
                    "{:?} loses updates",
                    r.level
                );
            }
            if r.read_view == ReadView::Uncommitted || round.workload == Workload::Counters {
                assert!(!stmts.iter().any(|s| s.reads_total()));
            }
            if round.workload == Workload::Bank {
                // Every transfer moves money between two accounts.
                for t in round.sessions.iter().flatten() {
                    let sum: i64 = t.stmts.iter().filter_map(|s| s.delta()).map(|d| d.1).sum();
                    assert_eq!(sum, 0);
                }
            }
        }
    }
    assert!((50..200).contains(&in_key_order), "{in_key_order} of 250");
}

#[test]
fn the_planted_fault_drops_the_last_write_of_session_one_commits() {
    let mut stmts = transfer(1, 2, 5);
    stmts.push(Stmt::ReadSum);
    let txn = Txn {
        stmts,
        commit: true,
    };
    let f = StressFault::DroppedWrite;
    assert_eq!(f.dropped_write(0, &txn), Some(1));
    assert_eq!(f.dropped_write(1, &txn), None);
    let rolled_back = Txn {
        commit: false,
        ..txn
    };
    assert_eq!(f.dropped_write(0, &rolled_back), None);
    // What it leaves, a half-applied transfer, is a finding.
    let round = bank(
        IsolationLevel::ReadCommitted,
        vec![Txn {
            stmts: transfer(1, 2, 5),
            commit: true,
        }],
    );
    let run = ran(
        vec![log(0, Ending::Committed, Vec::new())],
        &[(1, 95), (2, 100)],
    );
    let violations = judge(&round, &pg_rc(), &run);
    assert_eq!(
        signature_of(&round, &violations, None, &[]).as_deref(),
        Some("bank-total@READ COMMITTED")
    );
}

#[test]
fn candidates_are_smaller_and_keep_a_session() {
    let mut rng = lancet_core::rng::database_rng(1, 0, 0);
    let round = Round::generate(&mut rng, &pg_rc(), Vec::new(), &[]);
    let candidates = round.candidates();
    assert!(!candidates.is_empty());
    for c in &candidates {
        assert!(c.size() < round.size());
        assert!(!c.sessions.is_empty());
    }
    let txn = |delta| Txn {
        stmts: vec![Stmt::Add { key: 1, delta }],
        commit: true,
    };
    // A few transactions: each is dropped in turn.
    let few = Round {
        sessions: vec![vec![txn(1), txn(2), txn(3)]],
        ..round.clone()
    };
    let without: Vec<Vec<Txn>> = few
        .candidates()
        .into_iter()
        .filter(|c| c.transactions() == 2)
        .map(|c| c.sessions[0].clone())
        .collect();
    assert!(without.contains(&vec![txn(1), txn(3)]), "{without:?}");
    let one = Round {
        sessions: vec![vec![txn(1)]],
        ..round
    };
    assert!(one.candidates().is_empty());
}

#[test]
fn a_finding_names_its_level_invariant_and_transactions_in_its_files() {
    let round = bank(
        IsolationLevel::ReadCommitted,
        vec![Txn {
            stmts: transfer(1, 2, 5),
            commit: true,
        }],
    );
    let mut l = log(0, Ending::Committed, Vec::new());
    l.statements.push((
        "UPDATE lancet_stress SET v = v + 5 WHERE k = 2".into(),
        "not sent (planted fault), taken as ok".into(),
    ));
    let run = ran(vec![l], &[(1, 95), (2, 100)]);
    let violations = judge(&round, &pg_rc(), &run);
    let signature = signature_of(&round, &violations, None, &[]).unwrap();
    let finding = StressFinding {
        made: crate::maker::Maker {
            oracle: super::NAME.into(),
            dbms: "test".into(),
            version: "1".into(),
            lancet: "0".into(),
        },
        signature: signature.clone(),
        rules: pg_rc(),
        violations,
        error: None,
        round,
        endings: endings(&run),
        tail: tail(&run),
        session_statements: session_statements(&run),
        final_rows: run.final_rows.clone(),
        origin: RoundOrigin {
            seed: 1,
            thread: 0,
            database: 0,
            round: 3,
        },
        repeated: (0, 2),
        fault: None,
        reduced_from: None,
        create_table: vec![
            "CREATE TABLE lancet_stress (k integer PRIMARY KEY, v integer NOT NULL)".into(),
        ],
        client_command: "psql".into(),
    };
    let record = serde_json::to_string(&finding).unwrap();
    let facts = super::files::facts(&super::files::parse(&record).unwrap());
    assert_eq!(facts.signature, "bank-total@READ COMMITTED");
    assert_eq!(facts.kind, "logic");
    assert!(facts.relation.contains("total"), "{}", facts.relation);
    let id = super::record::file_id(3, &signature);
    assert_eq!(id, "txn-stress-0003-bank-total-read-committed");
    let files = super::files::files(&super::files::parse(&record).unwrap(), &id).unwrap();
    let file = |name: &str| {
        let (_, text) = files.directory.iter().find(|(n, _)| n == name).unwrap();
        text.clone()
    };
    let text = file("transactions.txt");
    assert!(text.contains("not reproduced on rerun: a race"), "{text}");
    assert!(text.contains("expected 200, actual 195"), "{text}");
    let session = file("session-1.sql");
    assert!(
        session.contains("-- UPDATE lancet_stress SET v = v + 5 WHERE k = 2 (not sent"),
        "{session}"
    );
    assert!(files
        .script
        .contains("INSERT INTO lancet_stress (k, v) VALUES (1, 100), (2, 100)"));
}

mod sessions;
