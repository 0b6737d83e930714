//! The printer cases every dialect runs, with each dialect's text side by
//! side: `pick(t, sqlite, postgres, mysql)`, or a guard where only some
//! dialects have the construct. A dialect runs them all through
//! [`crate::printer_suite`] in the crate that supplies it; a new dialect
//! adds its text wherever the cases list them per dialect (a case that
//! lacks it fails and says so).
//!
//! The cases are split by construct: [`literals`], [`expressions`] (operators
//! and predicates) and [`queries`].

mod expressions;
mod literals;
mod queries;

use super::Tested;
use expressions::*;
use literals::*;
use queries::*;

/// This dialect's text of a case that spells it per dialect.
#[track_caller]
fn pick<'a>(t: &Tested, sqlite: &'a str, postgres: &'a str, mysql: &'a str) -> &'a str {
    t.of(&[("sqlite", sqlite), ("postgres", postgres), ("mysql", mysql)])
}

/// A case: the checks of one construct, for the dialect it is given.
pub type Case = fn(&Tested);

crate::__printer_cases!(__printer_case_table());

/// Runs the case named `name` for `t`.
#[track_caller]
pub fn run(t: &Tested, name: &str) {
    match CASES.iter().find(|(n, _)| *n == name) {
        Some((_, case)) => case(t),
        None => panic!("no printer case named {name}"),
    }
}

/// Defines one `#[test]` per case of [`printer::suite`](crate::printer::suite),
/// each running it for `$tested` (an expression giving a
/// [`Tested`](crate::printer::Tested)).
#[macro_export]
macro_rules! printer_suite {
    ($tested:expr) => {
        $crate::__printer_cases!(__printer_case_tests($tested));
    };
}

/// The one list of the cases, handed to the macro `$then` (with `$arg`):
/// it makes both [`CASES`] here and the tests of [`crate::printer_suite`],
/// and a case left out of it is dead code, which the lints reject.
#[doc(hidden)]
#[macro_export]
macro_rules! __printer_cases {
    ($then:ident ($($arg:tt)*)) => {
        $crate::$then!(
            ($($arg)*)
            null_and_boolean_literals,
            integer_literals,
            real_literals,
            real_literals_round_trip_through_their_text,
            text_literals,
            blob_literals,
            decimal_literals,
            column_refs,
            unary_operators,
            binary_operators,
            precedence_sensitive_nesting,
            collate,
            is_null_and_is_bool,
            like_and_glob,
            between_and_symmetric,
            in_list,
            subqueries,
            case_both_forms,
            cast,
            functions,
            select_clauses,
            joins,
            natural_is_never_dropped,
            comma_join_keeps_the_tree_left_deep,
            table_aliases_and_derived_tables,
            common_table_expressions,
            window_calls,
            set_operations,
            intersect_over_union_keeps_its_meaning,
            order_by_limit_offset,
            offset_without_limit,
            subquery_keeps_its_order_and_limit,
            sqlparser_gaps,
            random_trees_keep_their_shape_in_sqlparser,
        );
    };
}

/// [`CASES`], from the list of cases.
#[doc(hidden)]
#[macro_export]
macro_rules! __printer_case_table {
    (() $($case:ident,)*) => {
        /// Every case, by name: what [`crate::printer_suite`] runs.
        pub const CASES: &[(&str, Case)] = &[$((stringify!($case), $case)),*];
    };
}

/// The tests of [`crate::printer_suite`], from the list of cases.
#[doc(hidden)]
#[macro_export]
macro_rules! __printer_case_tests {
    (($tested:expr) $($case:ident,)*) => {
        $(
            #[test]
            fn $case() {
                $crate::printer::suite::run(&$tested, stringify!($case));
            }
        )*
    };
}
