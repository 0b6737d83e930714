//! Query plans reduced to signatures of their steps, and how many distinct
//! plans a database's checks ran (plan coverage).
//!
//! A signature keeps what kind of step runs over what (`SEARCH a1 USING
//! INDEX i0`, `Hash Join`, `Seq Scan on t0 a0`) and the nesting, and drops
//! costs, row estimates, conditions and constants: two queries that differ
//! only in a constant share a plan. The knob differential runs only the
//! configurations whose signature differs from the default's; the count of
//! distinct signatures says how much of the planner the checks reached.

use crate::value::{Row, Value};
use std::collections::HashSet;

/// The signature of a plan from the rows of the dialect's EXPLAIN: the
/// last column of each row, one step per line. Detail lines (`Filter:
/// ...`, `Hash Cond: ...`, Citus's `Task Count: 4`) and parenthesized
/// parts are dropped; indentation (PostgreSQL's nesting) is kept.
pub fn plan_signature(rows: &[Row]) -> String {
    let mut out = String::new();
    for row in rows {
        let Some(Value::Text(text)) = row.last() else {
            continue;
        };
        for line in text.lines() {
            let trimmed = line.trim_start();
            let is_detail = !trimmed.starts_with("->")
                && trimmed
                    .split_once(": ")
                    .is_some_and(|(head, _)| !head.contains('('));
            if is_detail || trimmed.is_empty() {
                continue;
            }
            let indent = line.len() - trimmed.len();
            let step = trimmed.split(" (").next().unwrap_or(trimmed).trim_end();
            out.push_str(&" ".repeat(indent));
            push_without_ids(&mut out, step);
            out.push('\n');
        }
    }
    out
}

/// Appends `step` with each run of 3 or more digits, and each run before
/// a `_`, replaced by `#`: an identifier drawn anew for every execution
/// (Citus's `Distributed Subplan 12781_1` or `5_1`, its shards' `t0_102008`)
/// would make every run of one plan look new. Other short numbers (`i0`,
/// `SubPlan 2`) name an index or a subplan's place and are kept.
fn push_without_ids(out: &mut String, step: &str) {
    let mut digits = String::new();
    // Whether the run of digits continues a name (`t0_`, `i12`).
    let mut in_name = false;
    let mut previous: Option<char> = None;
    for c in step.chars().chain(std::iter::once('\0')) {
        if c.is_ascii_digit() {
            if digits.is_empty() {
                in_name = previous.is_some_and(|p| p.is_ascii_alphabetic() || p == '_');
            }
            digits.push(c);
        } else {
            if !digits.is_empty() {
                let id = digits.len() >= 3 || (!in_name && c == '_');
                out.push_str(if id { "#" } else { &digits });
                digits.clear();
            }
            if c != '\0' {
                out.push(c);
            }
        }
        previous = Some(c);
    }
}

/// The distinct plans one database's checks have run.
#[derive(Debug, Default)]
pub struct PlanCoverage {
    seen: HashSet<String>,
    /// Distinct plans first seen since the last [`PlanCoverage::take_new`].
    new: u64,
}

impl PlanCoverage {
    /// Records a plan that ran; whether it is new to this database.
    pub fn record(&mut self, signature: &str) -> bool {
        if self.seen.contains(signature) {
            return false;
        }
        self.seen.insert(signature.to_string());
        self.new += 1;
        true
    }

    /// How many distinct plans were first seen since the last call.
    pub fn take_new(&mut self) -> u64 {
        std::mem::take(&mut self.new)
    }

    pub fn distinct(&self) -> usize {
        self.seen.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> Row {
        vec![Value::Integer(2), Value::Integer(0), Value::Text(s.into())]
    }

    #[test]
    fn signatures_keep_steps_and_drop_details_and_constants() {
        let sqlite = vec![text("SEARCH a1 USING INDEX i0 (c0=?)"), text("SCAN a0")];
        assert_eq!(
            plan_signature(&sqlite),
            "SEARCH a1 USING INDEX i0\nSCAN a0\n"
        );
        let pg = |constant: &str| {
            vec![
                vec![Value::Text("Hash Join".into())],
                vec![Value::Text("  Hash Cond: (a0.c0 = a1.c0)".into())],
                vec![Value::Text("  ->  Seq Scan on t0 a0".into())],
                vec![Value::Text(format!("        Filter: (c1 > {constant})"))],
                vec![Value::Text("  ->  Hash".into())],
            ]
        };
        assert_eq!(
            plan_signature(&pg("5")),
            "Hash Join\n  ->  Seq Scan on t0 a0\n  ->  Hash\n"
        );
        assert_eq!(plan_signature(&pg("5")), plan_signature(&pg("'x'")));
    }

    #[test]
    fn identifiers_of_one_execution_do_not_make_a_plan_new() {
        let citus = |id: &str| {
            vec![vec![Value::Text(format!(
                "Custom Scan (Citus Adaptive)\n  ->  Distributed Subplan {id}_1\n  ->  SubPlan 2\n  ->  Index Scan using i12 on t0_102008 a0"
            ))]]
        };
        assert_eq!(
            plan_signature(&citus("12781")),
            plan_signature(&citus("17335"))
        );
        assert_eq!(plan_signature(&citus("5")), plan_signature(&citus("17335")));
        assert!(plan_signature(&citus("12781")).contains("SubPlan 2"));
        assert!(plan_signature(&citus("12781")).contains("using i12 on t0_# a0"));
    }

    #[test]
    fn coverage_counts_each_plan_once() {
        let mut c = PlanCoverage::default();
        assert!(c.record("SCAN a0\n"));
        assert!(!c.record("SCAN a0\n"));
        assert!(c.record("SEARCH a0 USING INDEX i0\n"));
        assert_eq!(c.take_new(), 2);
        assert_eq!(c.take_new(), 0);
        assert_eq!(c.distinct(), 2);
    }
}
