//! twins: a physical-design differential (Radar, PVLDB'24, generalized).
//! A table and its twin, a copy with the same rows in another physical
//! design, must answer the same query alike:
//!
//! `RS(Q over the tables) = RS(Q over their twins)`, as multisets of whole
//! rows.
//!
//! The provider offers the designs as *recipes*
//! ([`lancet_core::QueryGenerator::twin_recipes`]): the table's indexes
//! dropped, partitioned against plain, WITHOUT ROWID against rowid, a
//! PostgreSQL extension's access method (a campaign file declares it), and
//! Citus's placements (`placement`: the plain twins a Citus database keeps
//! from the start; `dist-vs-local` is that recipe alone, under its own
//! name and records, see [`crate::dist_vs_local`]). One recipe
//! is drawn per check from the database's RNG, and only when this oracle
//! is drawn, so other oracles' draws are unchanged. Each twin the query
//! reads is built once per session by the statements the provider gives
//! ([`lancet_core::TwinBuild`]: create it, copy the table's rows into
//! it); they are part of the check, so every reproducer creates its twins
//! and a reduced setup keeps them. The query is the one `dist-vs-local`
//! draws ([`crate::twin_query`]).

use crate::knobs::draw_setting;
use crate::partition::multiset_verdict;
use crate::twin_query;
use lancet_core::fault::{Fault, FaultedQuery, FaultedResult, PlantedFault};
use lancet_core::{
    Case, CaseError, CasePolicy, FromClause, GenerateContext, ItemPolicy, KnobSetting, Oracle,
    OracleQuery, Query, Row, Select, SelectItem, TwinBuild, Verdict,
};
use rand::Rng as _;

pub struct Twins;

/// The recipe whose twins exist from the start (Citus's plain copies of
/// its distributed, reference and local tables): nothing to build.
pub const PLACEMENT: &str = "placement";

/// What twins draws beside its query: the recipe, each table the query
/// reads with its twin, and the statements that build those twins (none
/// for [`PLACEMENT`]).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TwinDesign {
    pub recipe: String,
    pub tables: Vec<(String, String)>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub builds: Vec<TwinBuild>,
    /// The recipe's own settings both queries run under (a declared
    /// extension's, drawn like the knobs oracle's); the defaults mostly.
    #[serde(default, skip_serializing_if = "KnobSetting::is_default")]
    pub settings: KnobSetting,
}

impl TwinDesign {
    /// The [`PLACEMENT`] design over `tables`: twins there from the start.
    pub fn placed(tables: Vec<(String, String)>) -> TwinDesign {
        TwinDesign {
            recipe: PLACEMENT.to_string(),
            tables,
            builds: Vec::new(),
            settings: KnobSetting::default(),
        }
    }
}

impl lancet_core::OracleInputs for TwinDesign {
    const KIND: &'static str = "twin-design";
    const WHAT: &'static str = "a twin recipe and its twins";
}

const RELATION: &str =
    "RS(Q over the tables) = RS(Q over their twins in another physical design), as multisets of whole rows";

impl Oracle for Twins {
    fn name(&self) -> &'static str {
        "twins"
    }

    fn description(&self) -> &'static str {
        "a query over the tables equals the same query over twins with the same rows in another physical design (no indexes, partitioned, WITHOUT ROWID, another storage engine, columnar, Citus placement)"
    }

    fn generate(&self, cx: &mut GenerateContext<'_>) -> Option<Case> {
        let (query, design) = draw(cx, None)?;
        Some(Case::new(self.name(), query).and_inputs(design))
    }

    fn shrink_policy(&self) -> Option<CasePolicy> {
        Some(CasePolicy {
            predicate: false,
            ..CasePolicy::with_items(ItemPolicy::Free)
        })
    }

    /// A twin is built from its table's definition as drawn (SQLite: the
    /// CREATE TABLE text itself): a reduced setup must keep that definition,
    /// or the twin would differ in more than its physical design.
    fn case_depends_on_schema(&self) -> bool {
        true
    }

    fn queries(&self, case: &Case) -> Result<Vec<OracleQuery>, CaseError> {
        case.check_oracle(self.name())?;
        let design = case.inputs::<TwinDesign>()?;
        Ok(queries(&case.query, &design))
    }

    fn compare(&self, _case: &Case, results: &[Vec<Row>]) -> Result<Verdict, CaseError> {
        multiset_verdict(RELATION, results)
    }

    /// A row lost only by queries that read no twin: a fault of the
    /// tables' physical design alone, which no other oracle sees.
    fn planted_fault(&self) -> Fault {
        std::sync::Arc::new(DropRowOffTwins { period: 3 })
    }
}

/// Draws a case's query and its twins: by `only` (a recipe the database
/// offers), or by a recipe drawn among all it offers. [`PLACEMENT`] alone
/// draws exactly what `dist-vs-local` always drew: the Citus twins, then
/// the query, nothing else from the RNG.
pub(crate) fn draw(
    cx: &mut GenerateContext<'_>,
    only: Option<&str>,
) -> Option<(Select, TwinDesign)> {
    let rng = &mut *cx.rng;
    let generator = &mut *cx.generator;
    let placed = generator.twin_tables();
    let recipe = match only {
        Some(PLACEMENT) if placed.is_empty() => return None,
        Some(recipe) => recipe.to_string(),
        None => {
            let mut recipes = generator.twin_recipes();
            if !placed.is_empty() {
                recipes.insert(0, PLACEMENT.to_string());
            }
            if recipes.is_empty() {
                return None;
            }
            recipes[rng.random_range(0..recipes.len())].clone()
        }
    };
    let query = twin_query::draw(rng, generator)?;
    if recipe == PLACEMENT {
        return Some((query, TwinDesign::placed(placed)));
    }
    let mut read = Query::select(query.clone()).table_names();
    read.sort();
    read.dedup();
    let builds: Vec<TwinBuild> = read
        .iter()
        .filter_map(|t| generator.twin_build(&recipe, t))
        .collect();
    if builds.is_empty() {
        return None;
    }
    let tables = builds
        .iter()
        .map(|b| (b.table.clone(), b.twin.clone()))
        .collect();
    let knobs = generator.twin_knobs(&recipe);
    let settings = if !knobs.is_empty() && rng.random_bool(0.5) {
        draw_setting(rng, &knobs)
    } else {
        KnobSetting::default()
    };
    let design = TwinDesign {
        recipe,
        tables,
        builds,
        settings,
    };
    Some((query, design))
}

/// A case's queries: the builds of its twins (none for [`PLACEMENT`]),
/// then the query over the tables and over their twins, both under the
/// recipe's settings.
pub(crate) fn queries(query: &Select, design: &TwinDesign) -> Vec<OracleQuery> {
    let mut out: Vec<OracleQuery> = design
        .builds
        .iter()
        .map(|b| OracleQuery::built(b, whole_table(&b.table)))
        .collect();
    out.extend(
        twin_query::queries(query, &design.tables)
            .into_iter()
            .map(|mut q| {
                q.context.knobs = design.settings.clone();
                q
            }),
    );
    out
}

/// Drops the first row of one query in `period` among those that read no
/// twin table ([`lancet_core::TWIN_SCHEMA`]): a fault of one execution path
/// only (Citus's distributed tables, or the physical design a twin does
/// not share), which only twins and `dist-vs-local` can see.
#[derive(Debug)]
pub struct DropRowOffTwins {
    pub period: u64,
}

impl PlantedFault for DropRowOffTwins {
    fn name(&self) -> &'static str {
        "drop-row-off-twins"
    }
    fn perturb(&self, q: &FaultedQuery<'_>, r: &mut FaultedResult<'_>) {
        // Citus's twins are `lancet_twin.t0`; built twins (the twins
        // oracle's recipes) `lancet_twin.t0_<recipe>` or, where there are no
        // schemas, `lancet_twin_t0_<recipe>`.
        let reads_twin = q
            .query
            .query
            .table_names()
            .iter()
            .any(|t| t.starts_with(lancet_core::TWIN_SCHEMA));
        if !r.rows.is_empty() && !reads_twin && q.hit(self.period) {
            r.rows.remove(0);
        }
    }
}

/// `SELECT * FROM table`: what a twin copies, for reports.
fn whole_table(table: &str) -> Query {
    Query::select(Select {
        items: vec![SelectItem::Wildcard],
        from: Some(FromClause::table(table, None)),
        ..Select::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::partition::item;
    use lancet_core::{Expr, TableSet, ToSql, Value};
    use lancet_testkit::standard::STANDARD;

    fn case() -> Case {
        Case::new(
            "twins",
            Select {
                items: vec![item(Expr::column(Some("a0"), "c0"))],
                from: Some(FromClause::table("t0", Some("a0"))),
                ..Select::default()
            },
        )
        .and_inputs(TwinDesign {
            recipe: "no-indexes".into(),
            tables: vec![("t0".into(), "lancet_twin_t0_no_indexes".into())],
            builds: vec![TwinBuild {
                table: "t0".into(),
                twin: "lancet_twin_t0_no_indexes".into(),
                statements: vec![
                    "CREATE TABLE lancet_twin_t0_no_indexes (c0 INT)".into(),
                    "INSERT INTO lancet_twin_t0_no_indexes SELECT * FROM t0".into(),
                ],
            }],
            settings: KnobSetting::default(),
        })
    }

    #[test]
    fn builds_the_twins_first_then_reads_the_tables_and_the_twins() {
        let qs = Twins.queries(&case()).unwrap();
        assert_eq!(qs.len(), 3);
        assert_eq!(
            qs[0].materialize.as_deref(),
            Some("lancet_twin_t0_no_indexes")
        );
        assert_eq!(
            qs[0].sql(STANDARD),
            "CREATE TABLE lancet_twin_t0_no_indexes (c0 INT);\nINSERT INTO lancet_twin_t0_no_indexes SELECT * FROM t0"
        );
        assert_eq!(qs[1].query.to_sql(STANDARD), "SELECT a0.c0 FROM t0 AS a0");
        assert_eq!(
            qs[2].query.to_sql(STANDARD),
            "SELECT a0.c0 FROM lancet_twin_t0_no_indexes AS a0"
        );
        assert_eq!(qs[2].context.tables, TableSet::Twins);
    }

    #[test]
    fn a_case_of_another_oracle_is_refused() {
        let mut c = case();
        c.inputs = lancet_core::Inputs::none();
        assert!(Twins.queries(&c).is_err());
    }

    #[test]
    fn compares_whole_rows_as_multisets() {
        let r = |a: i64| vec![Value::Integer(a)];
        let v = Twins.compare(&case(), &[vec![r(1)], vec![]]).unwrap();
        assert!(matches!(v, Verdict::Disagree(_)));
    }
}
