//! Documented deviations, watched: beside the model of the level's
//! documented rules, the driver feeds a model per deviation of those
//! rules (`LevelRules::deviations`) whose sessions follow the standard's
//! rules instead. An anomaly such a model sees and the documented one
//! does not is the deviation at work in this schedule: counted in the
//! summary, and a finding of its own kind under `--txn-strict`.

use super::super::anomaly::Anomaly;
use super::super::model::{Model, Outcome};
use super::super::schedule::Schedule;
use lancet_core::txn::LevelRules;
use serde::{Deserialize, Serialize};

/// A deviation a schedule met: its name, and what the standard's rules
/// say of the step where it showed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeviationMet {
    pub name: String,
    pub anomaly: Anomaly,
}

/// The models of the standard's rules, one per deviation.
pub(super) struct Standards<'a> {
    models: Vec<(String, Model<'a>)>,
}

impl<'a> Standards<'a> {
    /// A model per deviation that some session's rules have; its
    /// sessions follow the rules without that deviation.
    pub(super) fn new(schedule: &'a Schedule, rules: &[&'a LevelRules]) -> Standards<'a> {
        let mut names: Vec<&str> = Vec::new();
        for r in rules {
            for d in &r.deviations {
                if !names.contains(&d.name.as_str()) {
                    names.push(&d.name);
                }
            }
        }
        let models = names
            .into_iter()
            .map(|name| {
                let standard: Vec<&'a LevelRules> = rules
                    .iter()
                    .map(|r| {
                        r.deviations
                            .iter()
                            .find(|d| d.name == name)
                            .map_or(*r, |d| &*d.standard)
                    })
                    .collect();
                (name.to_string(), Model::mixed(schedule, standard))
            })
            .collect();
        Standards { models }
    }

    pub(super) fn start(&mut self, step: usize) {
        for (_, m) in &mut self.models {
            m.start(step);
        }
    }

    pub(super) fn finish(&mut self, step: usize, outcome: &Outcome, late: bool) {
        for (_, m) in &mut self.models {
            m.finish(step, outcome.clone(), late);
        }
    }

    pub(super) fn end(&mut self, final_rows: &[(i64, i64)]) {
        for (_, m) in &mut self.models {
            m.end(final_rows);
        }
    }

    /// The deviations met: for each, the first anomaly its standard's
    /// model saw that the documented rules' model (`documented`) did not.
    pub(super) fn met(&self, documented: &[Anomaly]) -> Vec<DeviationMet> {
        self.models
            .iter()
            .filter_map(|(name, m)| {
                m.anomalies
                    .iter()
                    .find(|a| {
                        !documented
                            .iter()
                            .any(|d| d.kind == a.kind && d.step == a.step)
                    })
                    .map(|a| DeviationMet {
                        name: name.clone(),
                        anomaly: a.clone(),
                    })
            })
            .collect()
    }
}
