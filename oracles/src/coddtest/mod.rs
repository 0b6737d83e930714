//! CODDTest (Zhang and Rigger, SIGMOD 2025): constant folding through an
//! auxiliary query. A query holds a subexpression whose value is the same
//! on every row: an expression that reads no column, or an uncorrelated
//! scalar subquery. An auxiliary query reads its value, the provider
//! writes that value as a literal of the same type, NULL-ness, collation
//! and affinity ([`lancet_core::QueryGenerator::literal_of`]), and the
//! query with the literal in place of the subexpression must return the
//! same multiset of rows. Where the provider cannot write an exact
//! literal, nothing is folded.

pub mod constants;
pub mod fault;
pub mod propagation;
pub mod subquery;

use crate::partition::multiset_verdict;
use crate::tlp_where::base_select;
use lancet_core::fault::Fault;
use lancet_core::{
    Case, CaseError, CasePolicy, Expr, GenerateContext, Oracle, OracleQuery, Query, Row, Scope,
    Select, SelectItem, Value, Verdict,
};
use rand::seq::IndexedRandom;
use rand::Rng as _;

pub struct CoddTest;

/// The relation, as reports state it.
const RELATION: &str = "RS(original) = RS(original with a constant subexpression folded to the literal of the value its auxiliary query read), as multisets of whole rows";

/// What the oracle draws beside its query: the constant it folds, the
/// auxiliary query's items and the row they read, and the literal.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Fold {
    /// The subexpression folded, everywhere it occurs in the query.
    pub constant: Expr,
    /// `SELECT probe`: the auxiliary query, as the provider wrote it.
    pub probe: Vec<Expr>,
    /// The row it read when the case was drawn. The check runs it again:
    /// where it reads another row (a reduced setup), the literal no longer
    /// stands for the constant and the relation says nothing.
    pub read: Vec<Value>,
    /// The literal that replaces the constant.
    pub literal: Expr,
    /// Constant propagation: the WHERE conjunct `c = literal` that makes
    /// column `c` (the constant) a constant of the rows that pass; the
    /// auxiliary query then reads `c` wherever it holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub equality: Option<Expr>,
}

impl lancet_core::OracleInputs for Fold {
    const KIND: &'static str = "fold";
    const WHAT: &'static str = "a folded constant";
}

impl CoddTest {
    /// A base query with a constant in it: a column-free expression or
    /// predicate drawn over an empty scope, or an uncorrelated scalar or
    /// EXISTS subquery (returned as the constant to fold: a subquery is
    /// never [`constants::is_foldable`], since it reads columns of its
    /// own).
    fn base(&self, cx: &mut GenerateContext<'_>) -> Option<(Select, Option<Expr>)> {
        let rng = &mut *cx.rng;
        let generator = &mut *cx.generator;
        let (mut s, scope) = base_select(rng, generator)?;
        let mut drawn = None;
        match rng.random_range(0..3) {
            0 => {
                let scalar = subquery::draw(rng, generator, cx.schema)?;
                drawn = Some(scalar.expr.clone());
                subquery::place(rng, &mut s, &scope, scalar);
            }
            1 => {
                let empty = Scope::default();
                let p = generator.predicate(rng, &empty);
                subquery::add_condition(rng, &mut s, p);
            }
            _ => {
                let empty = Scope::default();
                let e = generator.expression(rng, &empty);
                s.items.push(SelectItem::Expr {
                    expr: e,
                    alias: None,
                });
            }
        }
        Some((s, drawn))
    }
}

impl CoddTest {
    /// Constant propagation: `c = L` added to a base query's WHERE, with
    /// `L` the literal of a value `c` holds, and `c` replaced by `L`
    /// elsewhere, where `c` holds one exact value on every row where the
    /// equality is true (see [`propagation`]).
    fn propagation(&self, cx: &mut GenerateContext<'_>) -> Option<Case> {
        let (s, scope) = base_select(cx.rng, cx.generator)?;
        let column = scope
            .columns
            .iter()
            .filter(|c| matches!(c.expr, Expr::Column(_)))
            .collect::<Vec<_>>()
            .choose(cx.rng)?
            .expr
            .clone();
        let probe = cx.generator.literal_probe(&column)?;
        let not_null = Expr::IsNull {
            expr: Box::new(column.clone()),
            negated: true,
        };
        let values = cx
            .data
            .fetch(&propagation::auxiliary(&s, &not_null, &probe))
            .ok()?;
        let literal = cx.generator.literal_of(values.choose(cx.rng)?)?;
        let (with_eq, eq) = propagation::with_equality(&s, &column, &literal);
        let rows = cx
            .data
            .fetch(&propagation::auxiliary(&with_eq, &eq, &probe))
            .ok()?;
        let [read] = rows.as_slice() else {
            return None;
        };
        Some(Case::new(self.name(), with_eq).and_inputs(Fold {
            constant: column,
            probe,
            read: read.clone(),
            literal,
            equality: Some(eq),
        }))
    }
}

impl Oracle for CoddTest {
    fn name(&self) -> &'static str {
        "coddtest"
    }

    fn description(&self) -> &'static str {
        "constant folding (CODDTest): a query equals itself with a constant subexpression (column-free, or an uncorrelated scalar subquery) replaced by the literal of the value an auxiliary query read"
    }

    fn generate(&self, cx: &mut GenerateContext<'_>) -> Option<Case> {
        if cx.rng.random_bool(0.25) {
            return self.propagation(cx);
        }
        let (s, drawn) = self.base(cx)?;
        let constant = match drawn {
            Some(subquery) => subquery,
            None => {
                let generator = &*cx.generator;
                let is_aggregate = |n: &str| generator.is_aggregate(n);
                let candidates = constants::foldable(&s, &is_aggregate);
                candidates.choose(cx.rng)?.clone()
            }
        };
        let probe = cx.generator.literal_probe(&constant)?;
        let aux = auxiliary(&probe);
        let rows = cx.data.fetch(&aux).ok()?;
        let [read] = rows.as_slice() else {
            return None;
        };
        let literal = cx.generator.literal_of(read)?;
        Some(Case::new(self.name(), s).and_inputs(Fold {
            constant,
            probe,
            read: read.clone(),
            literal,
            equality: None,
        }))
    }

    fn queries(&self, case: &Case) -> Result<Vec<OracleQuery>, CaseError> {
        case.check_oracle(self.name())?;
        let fold = case.inputs::<Fold>()?;
        let (folded, aux) = match &fold.equality {
            None => (
                constants::fold(&case.query, &fold.constant, &fold.literal).0,
                auxiliary(&fold.probe),
            ),
            Some(eq) => (
                propagation::propagate(&case.query, eq, &fold.constant, &fold.literal),
                propagation::auxiliary(&case.query, eq, &fold.probe),
            ),
        };
        Ok(vec![
            OracleQuery::new("original", Query::select(case.query.clone())),
            OracleQuery::new("folded", Query::select(folded)),
            OracleQuery::new("auxiliary", aux),
        ])
    }

    fn compare(&self, case: &Case, results: &[Vec<Row>]) -> Result<Verdict, CaseError> {
        let fold = case.inputs::<Fold>()?;
        let [original, _, aux, ..] = results else {
            return Err(case.unfit("fewer than three results"));
        };
        if aux.as_slice() != std::slice::from_ref(&fold.read) {
            // The constant has another value now: the literal does not
            // stand for it, and the relation says nothing.
            return Ok(Verdict::Agree {
                nonempty: !original.is_empty(),
            });
        }
        multiset_verdict(RELATION, results)
    }

    /// The query shrinks like TLP's, select list and joins included; the
    /// fold is kept. Every candidate still holds the constant or not: the
    /// folded query replaces what is left of it, so the relation holds
    /// by construction (with no occurrence left, both queries are one).
    fn shrink_policy(&self) -> Option<CasePolicy> {
        Some(CasePolicy {
            predicate: false,
            ..CasePolicy::ALL
        })
    }

    fn planted_fault(&self) -> Fault {
        std::sync::Arc::new(fault::DropRowBesideScalarSubquery { period: 2 })
    }
}

/// `SELECT probe...`: the auxiliary query, over no table.
fn auxiliary(probe: &[Expr]) -> Query {
    Query::select(probe_select(probe))
}

/// `SELECT probe...`, the select list of every auxiliary query.
fn probe_select(probe: &[Expr]) -> Select {
    Select {
        items: probe
            .iter()
            .map(|e| SelectItem::Expr {
                expr: e.clone(),
                alias: None,
            })
            .collect(),
        ..Select::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lancet_core::ToSql;
    use lancet_testkit::standard::STANDARD;

    fn case() -> Case {
        let (s, sum) = constants::example();
        Case::new("coddtest", s).and_inputs(Fold {
            constant: sum.clone(),
            probe: vec![sum],
            read: vec![Value::Integer(3)],
            literal: Expr::int(3),
            equality: None,
        })
    }

    #[test]
    fn builds_original_folded_and_auxiliary() {
        let qs = CoddTest.queries(&case()).unwrap();
        let sql: Vec<String> = qs.iter().map(|q| q.query.to_sql(STANDARD)).collect();
        assert_eq!(
            sql,
            [
                "SELECT * FROM t0 WHERE c0 < (1 + 2)",
                "SELECT * FROM t0 WHERE c0 < 3",
                "SELECT 1 + 2",
            ]
        );
    }

    #[test]
    fn a_changed_constant_says_nothing() {
        let c = case();
        let row = |i: i64| vec![Value::Integer(i)];
        let differ = [vec![row(1)], vec![], vec![row(3)]];
        assert!(matches!(
            CoddTest.compare(&c, &differ).unwrap(),
            Verdict::Disagree(_)
        ));
        let moved = [vec![row(1)], vec![], vec![row(4)]];
        assert!(matches!(
            CoddTest.compare(&c, &moved).unwrap(),
            Verdict::Agree { .. }
        ));
    }
}
