//! The DBMS's settings as the transaction oracle's knobs: which values a
//! run draws (per schedule for a session's knob, per database for a
//! database's), the rules each combination of values gives
//! (`Transactions::levels_under`), the statements that put them in force,
//! and the part of them a finding's signature names.

use lancet_core::txn::{IsolationLevel, KnobScope, LevelRules, Settings, Transactions, TxnKnob};
use lancet_core::Rng;
use rand::Rng as _;

/// A run's knobs, with the levels' rules under every combination of
/// their values.
pub(crate) struct Knobs {
    knobs: Vec<TxnKnob>,
    /// Each combination of values (and the empty one: the server's
    /// settings as they are, for records written before knobs) with the
    /// rules of the levels the run checks.
    sets: Vec<(Settings, Vec<LevelRules>)>,
}

/// At most this many combinations are prepared: a DBMS with more knobs
/// would need its rules computed on demand.
const MAX_COMBINATIONS: usize = 256;

impl Knobs {
    /// The knobs of `tx`, and the rules of `levels` (all where empty)
    /// under each combination of their values.
    pub(crate) fn prepare(
        tx: &dyn Transactions,
        levels: &[IsolationLevel],
    ) -> anyhow::Result<Knobs> {
        let knobs = tx.knobs();
        let keep = |rules: Vec<LevelRules>| -> Vec<LevelRules> {
            rules
                .into_iter()
                .filter(|r| levels.is_empty() || levels.contains(&r.level))
                .collect()
        };
        let mut combinations = vec![Settings::new()];
        for knob in &knobs {
            combinations = combinations
                .into_iter()
                .flat_map(|c| {
                    knob.values.iter().map(move |v| {
                        let mut c = c.clone();
                        c.insert(knob.name.clone(), v.clone());
                        c
                    })
                })
                .collect();
            anyhow::ensure!(
                combinations.len() <= MAX_COMBINATIONS,
                "the DBMS has more than {MAX_COMBINATIONS} combinations of transaction settings"
            );
        }
        let mut sets = vec![(Settings::new(), keep(tx.levels()))];
        if !knobs.is_empty() {
            for c in combinations {
                let rules = keep(tx.levels_under(&c));
                sets.push((c, rules));
            }
        }
        Ok(Knobs { knobs, sets })
    }

    /// The levels and modes a schedule may draw (the same under every
    /// setting).
    pub(crate) fn levels(&self) -> Vec<(IsolationLevel, Option<String>)> {
        self.sets[0]
            .1
            .iter()
            .map(|r| (r.level, r.mode.clone()))
            .collect()
    }

    /// The rules under `settings`, where the run prepared them.
    pub(crate) fn rules_under(&self, settings: &Settings) -> Option<&[LevelRules]> {
        self.sets
            .iter()
            .find(|(s, _)| s == settings)
            .map(|(_, r)| r.as_slice())
    }

    fn of_scope(&self, scope: KnobScope) -> impl Iterator<Item = &TxnKnob> {
        self.knobs.iter().filter(move |k| k.scope == scope)
    }

    /// A value for each knob of `scope`, drawn from `rng`.
    pub(crate) fn draw(&self, rng: &mut Rng, scope: KnobScope) -> Settings {
        self.of_scope(scope)
            .map(|k| {
                let v = &k.values[rng.random_range(0..k.values.len())];
                (k.name.clone(), v.clone())
            })
            .collect()
    }

    /// The database's part of `settings`, each database knob that they
    /// do not name at its first value (a record written before knobs).
    pub(crate) fn database_part(&self, settings: &Settings) -> Settings {
        self.of_scope(KnobScope::Database)
            .map(|k| {
                let v = settings
                    .get(&k.name)
                    .cloned()
                    .unwrap_or_else(|| k.values[0].clone());
                (k.name.clone(), v)
            })
            .collect()
    }

    /// The statements that put the knobs of `scope` named in `settings`
    /// in force on a session.
    pub(crate) fn sql(
        &self,
        tx: &dyn Transactions,
        settings: &Settings,
        scope: KnobScope,
    ) -> Vec<String> {
        self.of_scope(scope)
            .filter_map(|k| settings.get(&k.name).map(|v| tx.setting_sql(&k.name, v)))
            .collect()
    }

    /// What a signature names of `settings`: the values of the knobs that
    /// change the rules, ` [innodb_snapshot_isolation=ON]`, or nothing.
    pub(crate) fn signature_part(settings: &Settings, knobs: &[TxnKnob]) -> String {
        let named: Settings = settings
            .iter()
            .filter(|(name, _)| knobs.iter().any(|k| &k.name == *name && k.changes_rules))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if named.is_empty() {
            String::new()
        } else {
            format!(" [{}]", lancet_core::txn::settings_label(&named))
        }
    }

    /// The run's knobs.
    pub(crate) fn knobs(&self) -> &[TxnKnob] {
        &self.knobs
    }
}
