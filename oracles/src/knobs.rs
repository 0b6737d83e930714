//! Knob differential (after DOT): a query returns the same rows, as a
//! multiset, under the DBMS's default optimizer configuration and with
//! some of its documented knobs turned off.
//!
//! Plan-guided: before a configuration runs, its plan is read (the
//! dialect's EXPLAIN, reduced to a signature of steps); only
//! configurations whose plan differs from the default's and from each
//! other's run, and a query none of whose configurations changes the plan
//! is not run at all. Every plan read counts towards the database's plan
//! coverage. Where the dialect reads no plans, configurations run
//! unguided.
//!
//! Localization is the reducer's: a case shrinks by turning knobs back
//! on, one at a time, while the result still differs, so a reduced case
//! names the smallest set of knobs whose change alone flips the result.
//!
//! Results must be determined by the query alone: no LIMIT, no float
//! sums; DISTINCT, GROUP BY keys, MIN and MAX use the generator's exact
//! forms (an arbitrary one of several equal values would differ by plan).

use crate::partition::{exact_groups, item, multiset_verdict, some_columns, verdict_from_diff};
use lancet_core::compare::multiset_diff;
use lancet_core::fault::{Fault, FaultedQuery, FaultedResult, PlantedFault};
use lancet_core::{
    Case, CaseError, CasePolicy, DerivedForm, Expr, FromClause, GenerateContext, ItemPolicy, Knob,
    KnobSetting, Oracle, OracleQuery, Query, QueryContext, Row, Select, SelectItem, SetOperator,
    TableFactor, Verdict,
};
use rand::seq::IndexedRandom;
use rand::Rng as _;

pub struct Knobs;

/// What the knob oracles (knobs, perf) draw beside their query: the
/// optimizer configurations to run it under, in order, the first the
/// reference.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Settings {
    pub settings: Vec<KnobSetting>,
}

impl lancet_core::OracleInputs for Settings {
    const KIND: &'static str = "settings";
    const WHAT: &'static str = "optimizer settings";
}

const RELATION: &str =
    "RS(Q under the default configuration) = RS(Q with knobs changed), as multisets";

/// At most this many configurations besides the defaults run per check.
const MAX_CONFIGURATIONS: usize = 2;
/// Configurations drawn (and their plans read) to find those that differ.
const CANDIDATES: usize = 4;

/// The name of a configuration in reports.
fn role(setting: &KnobSetting) -> String {
    if setting.is_default() {
        "defaults".to_string()
    } else {
        format!("knobs: {}", setting.describe())
    }
}

/// The case's query, to run under `setting`.
pub(crate) fn query_under(case: &Case, setting: &KnobSetting, role: String) -> OracleQuery {
    OracleQuery::new(&role, Query::select(case.query.clone())).with_context(QueryContext {
        knobs: setting.clone(),
        ..QueryContext::default()
    })
}

/// A random configuration: one knob off most often, a few, or all.
pub(crate) fn draw_setting(rng: &mut lancet_core::Rng, knobs: &[Knob]) -> KnobSetting {
    let n = match rng.random_range(0..100) {
        0..50 => 1,
        50..85 => rng.random_range(2..=3),
        _ => knobs.len(),
    }
    .min(knobs.len());
    let mut chosen = rand::seq::index::sample(rng, knobs.len(), n).into_vec();
    // In the provider's order, so equal sets compare equal.
    chosen.sort_unstable();
    let changes = chosen
        .into_iter()
        .filter_map(|i| knobs[i].changes().choose(rng).cloned())
        .collect();
    KnobSetting { changes }
}

/// A case of oracle `oracle`: a query from [`Knobs::query`] and the
/// defaults with up to `alternatives` configurations that change its plan.
pub(crate) fn plan_guided_case(
    oracle: &str,
    cx: &mut GenerateContext<'_>,
    alternatives: usize,
) -> Option<Case> {
    if cx.knobs.is_empty() {
        return None;
    }
    let select = Knobs.query(cx)?;
    let settings = plan_guided_settings(cx, &Query::select(select.clone()), alternatives)?;
    Some(Case::new(oracle, select).and_inputs(Settings { settings }))
}

/// The defaults and up to `alternatives` configurations whose plans for
/// `query` differ from the defaults' and from each other's, drawn from a
/// few candidates whose plans are read in one go; every plan read counts
/// towards plan coverage. `None` if no configuration changes the plan.
/// Where plans cannot be read (the dialect has no EXPLAIN, or it fails:
/// the query itself will say why), one drawn configuration, unguided.
fn plan_guided_settings(
    cx: &mut GenerateContext<'_>,
    query: &Query,
    alternatives: usize,
) -> Option<Vec<KnobSetting>> {
    let mut candidates = vec![KnobSetting::defaults()];
    for _ in 0..CANDIDATES {
        let setting = draw_setting(cx.rng, cx.knobs);
        if !candidates.contains(&setting) {
            candidates.push(setting);
        }
    }
    let plans = cx.data.plans(query, &candidates);
    for plan in plans.iter().flatten() {
        cx.plans.record(plan);
    }
    pick_by_plan(candidates, &plans, alternatives)
}

/// [`plan_guided_settings`]' choice among `candidates` (the defaults
/// first) with their `plans`. A configuration whose plan could not be
/// read while the defaults' could is kept where there is room after the
/// differing ones: EXPLAIN failed under it, maybe with an error that is
/// a bug (an INTERNAL error of the planner), and its query running under
/// it is what reports that error, which would otherwise be lost.
fn pick_by_plan(
    mut candidates: Vec<KnobSetting>,
    plans: &[Option<String>],
    alternatives: usize,
) -> Option<Vec<KnobSetting>> {
    if plans.first().is_none_or(|p| p.is_none()) {
        candidates.truncate(2);
        return Some(candidates);
    }
    let mut seen: Vec<&String> = Vec::new();
    let mut settings = Vec::new();
    let mut unread = None;
    for (setting, plan) in candidates.into_iter().zip(plans) {
        match plan {
            None => {
                unread.get_or_insert(setting);
            }
            Some(plan) if !seen.contains(&plan) && settings.len() <= alternatives => {
                seen.push(plan);
                settings.push(setting);
            }
            Some(_) => {}
        }
    }
    if let Some(setting) = unread.filter(|_| settings.len() <= alternatives) {
        settings.push(setting);
    }
    (settings.len() >= 2).then_some(settings)
}

impl Knobs {
    /// The query of a check: a select list, joins and subqueries as the
    /// generator makes them, an optional WHERE, and DISTINCT, GROUP BY,
    /// aggregates or a set operation (read as a derived table) in a share
    /// of them.
    pub(crate) fn query(&self, cx: &mut GenerateContext<'_>) -> Option<Select> {
        let rng = &mut *cx.rng;
        let generator = &mut *cx.generator;
        let (from, scope) = generator.from_clause(rng);
        if scope.columns.is_empty() {
            return None;
        }
        let selection = rng
            .random_bool(0.7)
            .then(|| generator.predicate(rng, &scope));
        let mut select = Select {
            from: Some(from),
            selection,
            ..Select::default()
        };
        let columns = some_columns(rng, &scope, 3);
        match rng.random_range(0..100) {
            // Plain rows, sometimes with a computed column.
            0..50 => {
                let mut items: Vec<Expr> = columns;
                if rng.random_bool(0.4) {
                    items.push(generator.expression(rng, &scope));
                }
                select.items = items.into_iter().map(item).collect();
            }
            50..63 => {
                select.distinct = true;
                select.items = columns
                    .into_iter()
                    .map(|c| item(generator.with_exact_equality(c)))
                    .collect();
            }
            // Groups: exact keys, a count, and MIN or MAX of a column.
            63..80 => {
                (select.items, select.group_by) = exact_groups(rng, generator, &scope, columns)?;
            }
            // A set operation of two filters of the same rows, read as a
            // derived table (exact forms: UNION, INTERSECT and EXCEPT keep
            // one of equal values).
            90..100 => {
                let from = select.from.take()?;
                let arm = |generator: &mut dyn lancet_core::QueryGenerator,
                           rng: &mut lancet_core::Rng| Select {
                    items: columns
                        .iter()
                        .enumerate()
                        .map(|(i, c)| SelectItem::Expr {
                            expr: generator.with_exact_equality(c.clone()),
                            alias: Some(format!("c{i}")),
                        })
                        .collect(),
                    from: Some(from.clone()),
                    selection: Some(generator.predicate(rng, &scope)),
                    ..Select::default()
                };
                let arms = vec![arm(generator, rng), arm(generator, rng)];
                let op = *[
                    SetOperator::Union,
                    SetOperator::UnionAll,
                    SetOperator::Intersect,
                    SetOperator::Except,
                ]
                .choose(rng)?;
                select.selection = None;
                select.from = Some(FromClause {
                    first: TableFactor::Derived {
                        query: Box::new(Query::set_operation(op, arms)),
                        alias: "u".into(),
                        lateral: false,
                        form: DerivedForm::Subquery,
                    },
                    joins: vec![],
                });
                select.items = (0..columns.len())
                    .map(|i| item(Expr::column(Some("u"), &format!("c{i}"))))
                    .collect();
            }
            // One row of aggregates over everything.
            _ => {
                let c = scope.columns.choose(rng)?.expr.clone();
                let name = *["MIN", "MAX"].choose(rng)?;
                let arg = generator.aggregate_argument(rng, &scope, name, c.clone());
                select.items = vec![
                    item(Expr::CountStar),
                    item(Expr::func("COUNT", vec![c])),
                    item(Expr::func(name, vec![generator.with_exact_equality(arg)])),
                ];
            }
        }
        Some(select)
    }
}

impl Oracle for Knobs {
    fn name(&self) -> &'static str {
        "knobs"
    }

    fn description(&self) -> &'static str {
        "knob differential: a query returns the same rows under the default optimizer configuration and with knobs turned off (plan-guided)"
    }

    fn generate(&self, cx: &mut GenerateContext<'_>) -> Option<Case> {
        plan_guided_case(self.name(), cx, MAX_CONFIGURATIONS)
    }

    fn queries(&self, case: &Case) -> Result<Vec<OracleQuery>, CaseError> {
        case.check_oracle(self.name())?;
        let inputs = case.inputs::<Settings>()?;
        let settings = &inputs.settings;
        if settings.len() < 2 {
            return Err(case.unfit("fewer than two configurations"));
        }
        Ok(settings
            .iter()
            .map(|s| query_under(case, s, role(s)))
            .collect())
    }

    /// The relation names no knobs (the queries' roles do), so that the
    /// reducer keeps it while it turns knobs back on.
    fn compare(&self, _case: &Case, results: &[Vec<Row>]) -> Result<Verdict, CaseError> {
        let Some(first) = results.first() else {
            return multiset_verdict(RELATION, results);
        };
        for other in results.iter().skip(1) {
            let diff = multiset_diff(first, other);
            if !diff.is_empty() {
                let pair = [first.clone(), other.clone()];
                return Ok(verdict_from_diff(RELATION, &pair, diff));
            }
        }
        Ok(Verdict::Agree {
            nonempty: !first.is_empty(),
        })
    }

    /// The query shrinks like TLP's (its select list only where it is
    /// plain rows: DISTINCT and GROUP BY lists are the oracle's); the
    /// configurations shrink by dropping one, or by turning one knob of
    /// one back on: localization.
    fn shrink(&self, case: &Case) -> Vec<Case> {
        let items = if case.query.distinct || !case.query.group_by.is_empty() {
            ItemPolicy::Fixed
        } else {
            ItemPolicy::Free
        };
        let mut out = lancet_core::shrink::case_variants(case, &CasePolicy::with_items(items));
        let Ok(inputs) = case.inputs::<Settings>() else {
            return out;
        };
        let settings = &inputs.settings;
        let with = |settings: Vec<KnobSetting>| case.with_inputs(Settings { settings });
        if settings.len() > 2 {
            for i in 1..settings.len() {
                let mut fewer = settings.to_vec();
                fewer.remove(i);
                out.push(with(fewer));
            }
        }
        for (i, s) in settings.iter().enumerate().skip(1) {
            if s.changes.len() < 2 {
                continue;
            }
            for k in 0..s.changes.len() {
                let mut fewer = settings.to_vec();
                fewer[i].changes.remove(k);
                out.push(with(fewer));
            }
        }
        out
    }

    fn planted_fault(&self) -> Fault {
        std::sync::Arc::new(DropRowUnderDefaultKnobs { period: 5 })
    }

    fn all_off_is_no_witness(&self) -> Option<&'static str> {
        Some(KNOBS_OFF_IS_NO_WITNESS)
    }
}

/// Why every optimization off is no witness for the knob differential
/// (and the performance oracle, which runs its queries).
pub(crate) const KNOBS_OFF_IS_NO_WITNESS: &str =
    "with every optimization off each side runs under the same switches, those its knobs side \
     turned off among them, so the relation holds there even when both sides are wrong";

/// Drops the first row of one query in `period` while every knob is on: a
/// fault of an optimization, which turning off any knob hides (what
/// root-cause localization looks for).
#[derive(Debug)]
pub struct DropRowUnderDefaultKnobs {
    pub period: u64,
}

impl PlantedFault for DropRowUnderDefaultKnobs {
    fn name(&self) -> &'static str {
        "drop-row-under-default-knobs"
    }
    fn perturb(&self, q: &FaultedQuery<'_>, r: &mut FaultedResult<'_>) {
        if !r.rows.is_empty() && !q.knobs_off() && q.hit(self.period) {
            r.rows.remove(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lancet_core::Value;

    fn case(settings: Vec<KnobSetting>) -> Case {
        Case::new("knobs", Select::default()).and_inputs(Settings { settings })
    }

    #[test]
    fn each_configuration_is_compared_with_the_defaults() {
        let c = case(vec![
            KnobSetting::defaults(),
            KnobSetting::with(&["a"]),
            KnobSetting::with(&["b", "c"]),
        ]);
        let queries = Knobs.queries(&c).expect("builds");
        assert_eq!(queries.len(), 3);
        assert_eq!(queries[2].context.knobs.changes, vec!["b", "c"]);
        let row = |v| vec![Value::Integer(v)];
        let same = vec![
            vec![row(1), row(2)],
            vec![row(2), row(1)],
            vec![row(1), row(2)],
        ];
        assert!(matches!(
            Knobs.compare(&c, &same),
            Ok(Verdict::Agree { nonempty: true })
        ));
        let third_differs = vec![vec![row(1)], vec![row(1)], vec![row(1), row(1)]];
        match Knobs.compare(&c, &third_differs) {
            Ok(Verdict::Disagree(d)) => assert_eq!(d.row_counts, vec![1, 2]),
            other => panic!("expected a disagreement, got {other:?}"),
        }
    }

    #[test]
    fn shrinking_turns_knobs_back_on_one_at_a_time() {
        let c = case(vec![
            KnobSetting::defaults(),
            KnobSetting::with(&["a", "b"]),
        ]);
        let settings: Vec<Vec<KnobSetting>> = Knobs
            .shrink(&c)
            .into_iter()
            .filter_map(|v| v.inputs::<Settings>().ok().map(|s| s.settings.clone()))
            .collect();
        assert!(settings.contains(&vec![KnobSetting::defaults(), KnobSetting::with(&["b"])]));
        assert!(settings.contains(&vec![KnobSetting::defaults(), KnobSetting::with(&["a"])]));
    }
}

#[cfg(test)]
mod plan_choice_tests {
    use super::*;

    fn off(knob: &str) -> KnobSetting {
        KnobSetting {
            changes: vec![knob.to_string()],
        }
    }

    fn plan(p: &str) -> Option<String> {
        Some(p.to_string())
    }

    #[test]
    fn configurations_run_where_their_plan_differs_or_could_not_be_read() {
        let candidates = vec![KnobSetting::defaults(), off("a"), off("b"), off("c")];
        // b's plan is a's: only a runs beside the defaults.
        let plans = [plan("p0"), plan("p1"), plan("p1"), plan("p0")];
        assert_eq!(
            pick_by_plan(candidates.clone(), &plans, 2),
            Some(vec![KnobSetting::defaults(), off("a")])
        );
        // Nothing changes the plan: no check.
        let same = [plan("p0"), plan("p0"), plan("p0"), plan("p0")];
        assert_eq!(pick_by_plan(candidates.clone(), &same, 2), None);
        // EXPLAIN failed under b: b runs, so its query reports the error.
        let failed = [plan("p0"), plan("p0"), None, plan("p0")];
        assert_eq!(
            pick_by_plan(candidates.clone(), &failed, 2),
            Some(vec![KnobSetting::defaults(), off("b")])
        );
        // ... after the configurations that change the plan, where there is room.
        let both = [plan("p0"), plan("p1"), None, plan("p2")];
        assert_eq!(
            pick_by_plan(candidates.clone(), &both, 1),
            Some(vec![KnobSetting::defaults(), off("a")])
        );
        assert_eq!(
            pick_by_plan(candidates.clone(), &both, 3),
            Some(vec![KnobSetting::defaults(), off("a"), off("c"), off("b")])
        );
        // No plan for the defaults: one drawn configuration, unguided.
        let none = [None, plan("p1"), None, None];
        assert_eq!(
            pick_by_plan(candidates, &none, 2),
            Some(vec![KnobSetting::defaults(), off("a")])
        );
    }
}
