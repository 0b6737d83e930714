//! The transform oracle on embedded SQLite: its chains use every kind of
//! step the dialect allows, in every relation, and their checks run
//! without unexpected errors. Prints the share of each step (figures for
//! README).

use lancet_core::rng::database_rng;
use lancet_core::{
    run_check, CheckOutcome, DatabaseId, GenerateContext, Oracle, PlanCoverage, Provider, Session,
};
use lancet_oracles::transform::rewrite::{apply_chain, Containment};
use lancet_oracles::transform::Transform;
use lancet_sqlite::dialect::DIALECT;
use lancet_sqlite::SqliteProvider;
use std::collections::BTreeMap;

/// A populated in-memory database: its session, RNG and model.
fn database<'p>(
    provider: &'p SqliteProvider,
    run: &str,
    seed: u64,
    k: u64,
) -> Option<(
    Session<'p>,
    lancet_core::Rng,
    Box<dyn lancet_core::GeneratedDatabase>,
)> {
    let id = DatabaseId {
        run: run.into(),
        thread: 0,
        index: k,
    };
    let conn = provider
        .create_database(&id)
        .expect("an in-memory database")
        .conn;
    let mut session = Session::new(conn, DIALECT, provider.expected_errors());
    let mut rng = database_rng(seed, 0, k);
    let generated = provider.populate(&mut rng, &mut session).ok()?;
    Some((session, rng, generated))
}

#[test]
fn chains_cover_every_step_and_relation_and_run_cleanly() {
    let provider = SqliteProvider::new().expect("the bundled SQLite");
    let mut steps: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut relations: BTreeMap<String, usize> = BTreeMap::new();
    let (mut cases, mut nonempty, mut agreed, mut lengths) = (0usize, 0usize, 0usize, 0usize);
    let mut disagreements = Vec::new();
    for k in 0..40u64 {
        let Some((mut session, mut rng, generated)) = database(&provider, "transform", 0x7a11, k)
        else {
            continue;
        };
        let mut generator = generated.query_generator();
        for _ in 0..100 {
            let Some(case) = Transform.generate(&mut GenerateContext {
                rng: &mut rng,
                generator: &mut *generator,
                data: &mut session,
                knobs: &[],
                plans: &mut PlanCoverage::default(),
                schema: generated.schema(),
                dialect: DIALECT,
                memo: &mut Default::default(),
            }) else {
                continue;
            };
            cases += 1;
            let inputs = case
                .inputs::<lancet_oracles::transform::Chain>()
                .expect("a transform case has steps");
            let chain = &inputs.steps;
            lengths += chain.len();
            for s in chain {
                *steps.entry(s.name()).or_default() += 1;
            }
            let (_, relation) = apply_chain(&case.query, chain).expect("its own chain applies");
            *relations.entry(relation.describe()).or_default() += 1;
            match run_check(&mut session, &Transform, &case).expect("runs its own case") {
                CheckOutcome::Agreed { nonempty: n, .. } => {
                    agreed += 1;
                    nonempty += usize::from(n);
                }
                CheckOutcome::Disagreed { queries, .. } => disagreements.push(queries),
                CheckOutcome::Skipped(_) => {}
                CheckOutcome::Failed(e) => panic!("unexpected error: {e}"),
            }
        }
    }
    let total: usize = steps.values().sum();
    eprintln!("{cases} cases, {:.2} steps per chain, {agreed} agreed ({nonempty} non-empty), {} disagreed", lengths as f64 / cases as f64, disagreements.len());
    for (name, n) in &steps {
        eprintln!("  {name:<22} {:5.1}%", 100.0 * *n as f64 / total as f64);
    }
    for (r, n) in &relations {
        eprintln!("  {r}: {n}");
    }
    for name in [
        "swap-join-operands",
        "on-to-where-comma",
        "on-to-where-cross",
        "split-on",
        "self-join-left",
        "self-join-inner",
        "double-negation",
        "de-morgan",
        "case-wrap",
        "idempotence",
        "add-conjunct",
        "add-exists",
        "outer-to-inner",
        "inner-to-left",
        "drop-conjunct",
        "add-disjunct",
        "drop-join-condition",
        "rename-aliases",
        "wrap-derived",
        "wrap-cte",
        "self-union-all",
        "self-union",
        "self-intersect",
        "except-filtered",
    ] {
        assert!(steps.contains_key(name), "no chain used {name}: {steps:?}");
    }
    // SQLite declares neither: no STRAIGHT_JOIN, and INT columns may hold text.
    assert!(!steps.contains_key("straight-join") && !steps.contains_key("add-zero"));
    for c in [
        Containment::Equal,
        Containment::Subset,
        Containment::Superset,
    ] {
        let word = match c {
            Containment::Equal => " = ",
            Containment::Subset => " ⊆ ",
            Containment::Superset => " ⊇ ",
        };
        assert!(
            relations.keys().any(|r| r.contains(word)),
            "no chain in relation {word}: {relations:?}"
        );
    }
    assert!(
        nonempty * 100 >= agreed * 50,
        "{nonempty} of {agreed} checks saw rows"
    );
    // Bundled SQLite has real bugs a run may meet (README); a handful of
    // disagreements in 4,000 checks is a bug, many would be the oracle's.
    assert!(disagreements.len() <= 5, "{disagreements:#?}");
}

#[test]
fn stepwise_queries_deepen_mostly_over_steps_with_rows_and_run_cleanly() {
    use lancet_oracles::stepwise::Stepwise;
    let provider = SqliteProvider::new().expect("the bundled SQLite");
    let (mut cases, mut agreed, mut nonempty, mut materialized) = (0usize, 0usize, 0usize, 0usize);
    let mut figures = Vec::new();
    let mut disagreements = Vec::new();
    for k in 0..12u64 {
        let Some((mut session, mut rng, generated)) = database(&provider, "stepwise", 0x57e9, k)
        else {
            continue;
        };
        let mut generator = generated.query_generator();
        let mut memo = lancet_core::OracleMemo::default();
        for _ in 0..60 {
            let Some(case) = Stepwise.generate(&mut GenerateContext {
                rng: &mut rng,
                generator: &mut *generator,
                data: &mut session,
                knobs: &[],
                plans: &mut PlanCoverage::default(),
                schema: generated.schema(),
                dialect: DIALECT,
                memo: &mut memo,
            }) else {
                continue;
            };
            cases += 1;
            let inputs = case
                .inputs::<lancet_oracles::stepwise::Steps>()
                .expect("a stepwise case has steps");
            materialized += inputs.steps.len();
            match run_check(&mut session, &Stepwise, &case).expect("runs its own case") {
                CheckOutcome::Agreed { nonempty: n, .. } => {
                    agreed += 1;
                    nonempty += usize::from(n);
                }
                CheckOutcome::Disagreed { queries, .. } => disagreements.push(queries),
                CheckOutcome::Skipped(_) => {}
                CheckOutcome::Failed(e) => panic!("unexpected error: {e}"),
            }
        }
        figures.push(Stepwise::figures(&mut memo));
    }
    let steps: usize = figures.iter().map(|f| f.steps).sum();
    let with_rows: usize = figures.iter().map(|f| f.nonempty).sum();
    let depth: usize = figures.iter().map(|f| f.depth_sum).sum();
    let deepest = figures.iter().map(|f| f.max_depth).max().unwrap_or(0);
    eprintln!(
        "{cases} cases, {agreed} agreed ({nonempty} non-empty), {} disagreed; {:.2} materialized steps per check; \
         {steps} steps kept, {with_rows} with rows, mean depth {:.2}, deepest {deepest}",
        disagreements.len(),
        materialized as f64 / cases.max(1) as f64,
        depth as f64 / steps.max(1) as f64
    );
    assert!(cases >= 300, "{cases} cases");
    assert!(deepest >= 4, "no step deeper than {deepest}");
    assert!(
        with_rows * 100 >= steps * 80,
        "{with_rows} of {steps} steps have rows"
    );
    assert!(materialized >= cases, "checks read few materialized steps");
    assert!(disagreements.is_empty(), "{disagreements:#?}");
}
