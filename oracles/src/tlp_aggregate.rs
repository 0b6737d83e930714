//! TLP-aggregate: an aggregate over `f [WHERE w]` equals the same aggregate
//! recombined from its three partitions on `p`: MIN of the partial MINs,
//! MAX of the MAXes, SUM of the SUMs (and TOTALs), the sum of the COUNTs,
//! and AVG as (sum of SUMs) / (sum of COUNTs). No DISTINCT inside
//! aggregates (not decomposable).
//!
//! MIN, MAX, COUNT and integer SUMs are compared exactly. A SUM, AVG or
//! TOTAL of floats depends on the order of summation, so it is compared
//! with a tolerance scaled by the sum of the magnitudes of the summands
//! (queried alongside): cancellation (`1e16 + 1 - 1e16`) can make the
//! result itself tiny while the rounding error is not.

use crate::partition::{base_where, item, where_partitions};
use lancet_core::compare::{values_equal, RowDiff};
use lancet_core::{
    Case, CaseError, Disagreement, Expr, GenerateContext, Oracle, OracleQuery, Query, Row, Select,
    SelectItem, SetOperator, TableFactor, Value, Verdict,
};
use lancet_core::{CasePolicy, ItemPolicy};
use rand::seq::IndexedRandom;
use rand::Rng as _;

pub struct TlpAggregate;

/// Relative rounding allowance against the sum of magnitudes, for sums in
/// double precision.
const TOLERANCE: f64 = 1e-9;

/// The same for sums in single precision (PostgreSQL's SUM(real) is a
/// real): each addition rounds at about 6e-8, so a reordered sum of a few
/// hundred values may differ by 1e-5 of the magnitudes.
const SINGLE_PRECISION_TOLERANCE: f64 = 1e-5;

/// Whether `x` reads like a single-precision value: a DBMS prints a `real`
/// with at most 9 significant digits, a double sum mostly with 15 to 17.
fn is_single_precision(x: f64) -> bool {
    let text = format!("{:e}", x.abs());
    let mantissa = text.split('e').next().unwrap_or("");
    x.is_finite() && mantissa.chars().filter(char::is_ascii_digit).count() <= 9
}

/// The aggregate of a case, from its select list.
fn aggregate_of(case: &Case) -> (String, Option<Expr>) {
    match case.query.items.first() {
        Some(SelectItem::Expr {
            expr: Expr::Function { name, args, .. },
            ..
        }) => (name.to_ascii_uppercase(), args.first().cloned()),
        _ => ("COUNT".to_string(), None),
    }
}

fn with_items(base: &Select, items: Vec<Expr>) -> Select {
    Select {
        items: items.into_iter().map(item).collect(),
        ..base.clone()
    }
}

/// `SELECT outer(x) ... FROM (part UNION ALL part UNION ALL part) AS lancet_parts`
fn recombine(parts: Vec<Select>, outer: Vec<Expr>) -> Query {
    Query::select(Select {
        items: outer.into_iter().map(item).collect(),
        from: Some(lancet_core::FromClause {
            first: TableFactor::Derived {
                query: Box::new(Query::set_operation(SetOperator::UnionAll, parts)),
                alias: "lancet_parts".into(),
                lateral: false,
                form: lancet_core::DerivedForm::Subquery,
            },
            joins: vec![],
        }),
        ..Select::default()
    })
}

fn col(name: &str) -> Expr {
    Expr::column(Some("lancet_parts"), name)
}

fn aliased(expr: Expr, alias: &str) -> SelectItem {
    SelectItem::Expr {
        expr,
        alias: Some(alias.into()),
    }
}

fn as_f64(v: &Value) -> Option<f64> {
    match v {
        Value::Integer(i) => Some(*i as f64),
        Value::Real(r) => Some(*r),
        Value::Decimal(d) => d.parse().ok(),
        _ => None,
    }
}

fn single(rows: &[Row]) -> Option<&[Value]> {
    match rows {
        [row] => Some(row.as_slice()),
        _ => None,
    }
}

impl Oracle for TlpAggregate {
    fn name(&self) -> &'static str {
        "tlp-aggregate"
    }

    fn description(&self) -> &'static str {
        "TLP on aggregates: MIN/MAX/SUM/COUNT/AVG(/TOTAL) recombined from the three partitions"
    }

    fn generate(&self, cx: &mut GenerateContext<'_>) -> Option<Case> {
        let rng = &mut *cx.rng;
        let generator = &mut *cx.generator;
        let (from, scope) = generator.from_clause(rng);
        let column = scope.columns.choose(rng)?.expr.clone();
        let argument = if rng.random_bool(0.3) {
            generator.expression(rng, &scope)
        } else {
            column
        };
        let mut names = vec!["MIN", "MAX", "SUM", "COUNT", "COUNT*", "AVG"];
        if generator.is_aggregate("total") {
            names.push("TOTAL");
        }
        let name = *names.choose(rng)?;
        // An argument of a type the dialect accepts for this aggregate.
        let argument = if name == "COUNT*" {
            argument
        } else {
            generator.aggregate_argument(rng, &scope, name, argument)
        };
        let aggregate = match name {
            "COUNT*" => Expr::CountStar,
            "MIN" | "MAX" => Expr::func(name, vec![generator.with_exact_equality(argument)]),
            _ => Expr::func(name, vec![argument]),
        };
        let selection = base_where(rng, generator, &scope);
        let predicate = generator.predicate(rng, &scope);
        Some(Case::with_predicate_of(
            self.name(),
            Select {
                items: vec![item(aggregate)],
                from: Some(from),
                selection,
                ..Select::default()
            },
            predicate,
        ))
    }

    fn shrink_policy(&self) -> Option<CasePolicy> {
        Some(CasePolicy::with_items(ItemPolicy::ArgumentsOnly))
    }

    fn queries(&self, case: &Case) -> Result<Vec<OracleQuery>, CaseError> {
        case.check_oracle(self.name())?;
        let p = case.predicate()?;
        let (name, arg) = aggregate_of(case);
        let base = &case.query;
        let partial = |items: Vec<SelectItem>| -> Vec<Select> {
            where_partitions(
                &Select {
                    items,
                    ..base.clone()
                },
                p,
            )
        };
        let original = OracleQuery::new("original", Query::select(base.clone()));
        let Some(x) = arg else {
            // COUNT(*): the sum of the partial counts.
            let parts = partial(vec![aliased(Expr::CountStar, "c")]);
            return Ok(vec![
                original,
                OracleQuery::new(
                    "partitioned",
                    recombine(parts, vec![Expr::func("SUM", vec![col("c")])]),
                ),
            ]);
        };
        let agg = |n: &str| Expr::func(n, vec![x.clone()]);
        let mut queries = vec![original];
        let partitioned = match name.as_str() {
            "MIN" | "MAX" => recombine(
                partial(vec![aliased(agg(&name), "m")]),
                vec![Expr::func(&name, vec![col("m")])],
            ),
            "COUNT" => recombine(
                partial(vec![aliased(agg("COUNT"), "c")]),
                vec![Expr::func("SUM", vec![col("c")])],
            ),
            "SUM" | "TOTAL" => recombine(
                partial(vec![aliased(agg(&name), "s")]),
                vec![Expr::func(&name, vec![col("s")])],
            ),
            // AVG: (sum of SUMs, sum of COUNTs), divided here.
            _ => recombine(
                partial(vec![aliased(agg("SUM"), "s"), aliased(agg("COUNT"), "c")]),
                vec![
                    Expr::func("SUM", vec![col("s")]),
                    Expr::func("SUM", vec![col("c")]),
                ],
            ),
        };
        queries.push(OracleQuery::new("partitioned", partitioned));
        if matches!(name.as_str(), "SUM" | "TOTAL" | "AVG") {
            // The sum of magnitudes bounds the rounding error of any order.
            let magnitude = Expr::func(
                "SUM",
                vec![Expr::func(
                    "ABS",
                    vec![Expr::binary(
                        lancet_core::BinaryOp::Add,
                        x.clone(),
                        Expr::lit(Value::Real(0.0)),
                    )],
                )],
            );
            queries.push(OracleQuery::new(
                "magnitude",
                Query::select(with_items(base, vec![magnitude])),
            ));
        }
        Ok(queries)
    }

    fn compare(&self, case: &Case, results: &[Vec<Row>]) -> Result<Verdict, CaseError> {
        let (name, _) = aggregate_of(case);
        let [first, second, ..] = results else {
            return Err(case.unfit("TLP-aggregate compares at least two results"));
        };
        let original = single(first).and_then(|r| r.first());
        let recombined: Option<Value> = match (name.as_str(), single(second)) {
            ("AVG", Some([s, c])) => match (as_f64(s), as_f64(c)) {
                (_, Some(0.0)) => Some(Value::Null),
                (Some(s), Some(c)) => Some(Value::Real(s / c)),
                _ if s.is_null() => Some(Value::Null),
                _ => None,
            },
            // SUM of partial counts over no partitions cannot be NULL: 3 rows.
            (_, Some([v])) => Some(v.clone()),
            _ => None,
        };
        let magnitude = results
            .get(2)
            .and_then(|r| single(r))
            .and_then(|r| r.first())
            .and_then(as_f64);
        let nonempty = original.is_some_and(|v| !v.is_null());
        let float_aggregate = matches!(name.as_str(), "SUM" | "TOTAL" | "AVG");
        if float_aggregate && magnitude.is_some_and(|m| !m.is_finite()) {
            // The summands' magnitudes overflow: whether a partial sum
            // reaches infinity (or inf - inf, which SQLite gives as NULL)
            // depends on the order of summation. Nothing to compare.
            return Ok(Verdict::Agree { nonempty });
        }
        if let (Some(a), Some(b)) = (original, recombined.as_ref()) {
            if values_equal(a, b) {
                return Ok(Verdict::Agree { nonempty });
            }
            let float_sum =
                float_aggregate && (matches!(a, Value::Real(_)) || matches!(b, Value::Real(_)));
            if let (true, Some(x), Some(y), Some(m)) = (float_sum, as_f64(a), as_f64(b), magnitude)
            {
                // Overflow to infinity depends on the order too.
                let overflowed = !(x.is_finite() && y.is_finite() && m.is_finite());
                // AVG is recombined from the partitions' SUMs: those may be
                // single precision even where AVG itself is a double.
                let summed = match (name.as_str(), single(second)) {
                    ("AVG", Some([Value::Real(s), _])) => is_single_precision(*s),
                    // A single-precision sum that is a whole number prints
                    // as one (seen on PostgreSQL 18: SUM(real) of five 0.2s
                    // is `1`, while AVG sums them in double precision,
                    // 0.2000000029): an integer sum earns the wider
                    // tolerance only where it is, within a few units in the
                    // last place, the single-precision rounding of the sum
                    // AVG implies. Other integer sums are exact.
                    ("AVG", Some([Value::Integer(s), Value::Integer(c)])) => {
                        let implied = (x * *c as f64) as f32;
                        let whole = *s as f32;
                        s.unsigned_abs() < 1 << 24
                            && (implied - whole).abs() <= 4.0 * f32::EPSILON * whole.abs().max(1.0)
                    }
                    ("AVG", _) => false,
                    _ => is_single_precision(x) && is_single_precision(y),
                };
                let tolerance = if summed {
                    SINGLE_PRECISION_TOLERANCE
                } else {
                    TOLERANCE
                };
                if overflowed || (x - y).abs() <= tolerance * m.max(f64::MIN_POSITIVE) {
                    return Ok(Verdict::Agree { nonempty });
                }
            }
        }
        Ok(Verdict::Disagree(Disagreement {
            relation: format!(
                "{name} over all rows = {} recombined from the partitions WHERE p, NOT p, p IS NULL",
                name
            ),
            row_counts: vec![first.len(), second.len()],
            diff: RowDiff {
                only_in_first: original.map(|v| (vec![v.clone()], 1)).into_iter().collect(),
                only_in_second: recombined.map(|v| (vec![v], 1)).into_iter().collect(),
                ..RowDiff::default()
            },
            timing: None,
        }))
    }
}
