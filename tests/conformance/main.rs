//! The provider conformance suite: the promises lancet makes for every
//! DBMS, written once (`promises.rs`) and run on each (`subjects.rs`):
//! a clean run of every oracle reports only what the DBMS's own client
//! shows and leaves a foreign database alone; a killed session is a crash
//! finding and the run goes on; a stopped one is a hang finding within
//! the bound; every planted fault is caught; one seed regenerates the
//! same databases; `cleanup` drops only what lancet made; no password is
//! shown; expected errors are keyed by statement kind.
//!
//! A new DBMS adds a `Subject` and one `conformance!` line. The suite
//! runs the real binary, so it lives here rather than in the provider's
//! crate (which cannot build lancet). Servers are throwaway ones from
//! lancet-testkit, one per test, stopped even when the test fails.

#[path = "../common/mod.rs"]
mod common;
mod promises;
mod subjects;

/// One test per promise for the subject `$start` makes (`None`: the DBMS
/// is not installed here, and the test says so and passes outside CI).
macro_rules! conformance {
    ($dbms:ident, $start:expr) => {
        mod $dbms {
            use crate::promises;

            fn run(promise: fn(&dyn promises::Subject)) {
                if let Some(subject) = $start {
                    promise(&subject);
                }
            }

            #[test]
            fn a_clean_run_reports_only_what_the_client_shows_and_touches_nothing_else() {
                run(promises::clean_run);
            }

            #[test]
            fn a_killed_session_is_a_crash_finding_and_the_run_goes_on() {
                run(promises::killed_session_is_a_crash_finding);
            }

            #[test]
            fn a_stopped_session_is_a_hang_finding_within_the_bound() {
                run(promises::stopped_session_is_a_hang_finding);
            }

            #[test]
            fn selftest_catches_every_planted_fault() {
                run(promises::selftest_catches_every_planted_fault);
            }

            #[test]
            fn one_seed_regenerates_the_same_databases() {
                run(promises::one_seed_regenerates_the_same_databases);
            }

            #[test]
            fn cleanup_drops_only_its_own() {
                run(promises::cleanup_drops_only_its_own);
            }

            #[test]
            fn the_run_line_runs_twice_and_counts_rows_as_the_client() {
                run(promises::the_run_line_runs_twice);
            }

            #[test]
            fn expected_errors_are_keyed_by_statement_kind() {
                run(promises::expected_errors_are_keyed_by_statement_kind);
            }
        }
    };
}

conformance!(sqlite, Some(crate::subjects::Sqlite));
conformance!(duckdb, crate::subjects::DuckDb::start());
conformance!(postgres, crate::subjects::Postgres::start());
conformance!(mariadb, crate::subjects::MariaDb::start());
conformance!(citus_14, crate::subjects::Citus::start(18));
conformance!(citus_13_2, crate::subjects::Citus::start(15));
