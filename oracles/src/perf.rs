//! Performance (after GraphGenie and AMOEBA): a query under the default
//! optimizer configuration and under another configuration whose plan
//! differs must return the same rows, and the default plan may not take
//! far longer: when the median time under the defaults exceeds the other
//! by more than [`FACTOR`] and by more than [`FLOOR`], the optimizer
//! passed over a far better plan, a performance finding. (The other
//! direction is what turning an optimization off is expected to cost.)
//!
//! Noise is beaten by repetition: the two configurations run
//! alternately, [`RUNS`] times each, and their medians are compared (a
//! pause of the machine hits one run, not the median). The finding is
//! then confirmed by timing the pair again on a fresh database. Results
//! that differ are a logic finding, as for the knob differential.

use crate::knobs::{plan_guided_case, query_under, Settings};
use crate::partition::{multiset_verdict, verdict_from_diff};
use lancet_core::compare::{multiset_diff, RowDiff};
use lancet_core::oracle::Timing;
use lancet_core::{
    Case, CaseError, Disagreement, GenerateContext, KnobSetting, Oracle, OracleQuery, Row, Verdict,
};
use std::time::Duration;

pub struct Perf;

/// How much slower the slow plan must be.
pub const FACTOR: f64 = 10.0;
/// And by how much at least, so that microsecond noise is not a finding.
pub const FLOOR: Duration = Duration::from_millis(100);
/// Runs of each configuration; the median is compared.
pub const RUNS: usize = 3;

const RELATION: &str =
    "time(Q under the defaults) < 10 x time(Q with knobs changed) + 100 ms, medians of 3 runs";

fn role(setting: &KnobSetting, run: usize) -> String {
    let what = if setting.is_default() {
        "defaults".to_string()
    } else {
        format!("knobs: {}", setting.describe())
    };
    format!("{what}, run {}", run + 1)
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times.get(times.len() / 2).copied().unwrap_or_default()
}

impl Oracle for Perf {
    fn name(&self) -> &'static str {
        "perf"
    }

    fn description(&self) -> &'static str {
        "performance: a query under the default configuration is not 10x (and 100 ms) slower than with knobs off that change its plan (medians of 3 runs)"
    }

    fn generate(&self, cx: &mut GenerateContext<'_>) -> Option<Case> {
        plan_guided_case(self.name(), cx, 1)
    }

    /// The two configurations alternately, [`RUNS`] times each.
    fn queries(&self, case: &Case) -> Result<Vec<OracleQuery>, CaseError> {
        case.check_oracle(self.name())?;
        let inputs = case.inputs::<Settings>()?;
        let [a, b] = &inputs.settings[..] else {
            return Err(case.unfit("the performance oracle compares two configurations"));
        };
        let mut out = Vec::with_capacity(2 * RUNS);
        for run in 0..RUNS {
            for s in [a, b] {
                out.push(query_under(case, s, role(s, run)));
            }
        }
        Ok(out)
    }

    /// Without times (a replay that does not time), only the rows are compared.
    fn compare(&self, _case: &Case, results: &[Vec<Row>]) -> Result<Verdict, CaseError> {
        let [a, b, ..] = results else {
            return multiset_verdict(RELATION, results);
        };
        let diff = multiset_diff(a, b);
        if diff.is_empty() {
            return Ok(Verdict::Agree {
                nonempty: !a.is_empty(),
            });
        }
        Ok(verdict_from_diff(
            "RS(Q under the default configuration) = RS(Q with knobs changed), as multisets",
            results,
            diff,
        ))
    }

    fn compare_timed(
        &self,
        case: &Case,
        results: &[Vec<Row>],
        times: &[Duration],
    ) -> Result<Verdict, CaseError> {
        let rows = self.compare(case, results)?;
        if !matches!(rows, Verdict::Agree { .. }) || times.len() < 2 * RUNS {
            return Ok(rows);
        }
        let of = |side: usize| median(times.iter().skip(side).step_by(2).copied().collect());
        let (ta, tb) = (of(0), of(1));
        // Only the defaults being slow is a bug: turning an optimization
        // off is expected to cost time, but a plan the optimizer passed
        // over that is ten times faster means it chose badly.
        let (slow, fast) = (ta, tb);
        let slow_ms = slow.as_secs_f64() * 1e3;
        let fast_ms = fast.as_secs_f64() * 1e3;
        if slow < fast + FLOOR || slow_ms < FACTOR * fast_ms {
            return Ok(rows);
        }
        let inputs = case.inputs::<Settings>()?;
        let settings = &inputs.settings;
        let name = |s: &KnobSetting| role(s, 0).trim_end_matches(", run 1").to_string();
        Ok(Verdict::Disagree(Disagreement {
            relation: RELATION.to_string(),
            row_counts: results.iter().map(Vec::len).collect(),
            diff: RowDiff::default(),
            timing: Some(Timing {
                medians_ms: vec![
                    (name(&settings[0]), ta.as_secs_f64() * 1e3),
                    (name(&settings[1]), tb.as_secs_f64() * 1e3),
                ],
                runs: RUNS,
            }),
        }))
    }

    fn planted_fault(&self) -> lancet_core::fault::Fault {
        std::sync::Arc::new(SlowUnderDefaultKnobs { period: 3 })
    }

    fn all_off_is_no_witness(&self) -> Option<&'static str> {
        Some(crate::knobs::KNOBS_OFF_IS_NO_WITNESS)
    }
}

/// How much slower [`SlowUnderDefaultKnobs`] makes a query.
pub const PLANTED_DELAY: Duration = Duration::from_millis(200);

/// Makes one query in `period` take [`PLANTED_DELAY`] longer while every
/// knob is on: a default plan that is slow but right, which only the
/// performance oracle sees.
#[derive(Debug)]
pub struct SlowUnderDefaultKnobs {
    pub period: u64,
}

impl lancet_core::fault::PlantedFault for SlowUnderDefaultKnobs {
    fn name(&self) -> &'static str {
        "sleep-under-default-knobs"
    }
    fn perturb(
        &self,
        q: &lancet_core::fault::FaultedQuery<'_>,
        r: &mut lancet_core::fault::FaultedResult<'_>,
    ) {
        if !q.knobs_off() && q.hit(self.period) {
            *r.time += PLANTED_DELAY;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lancet_core::{Select, Value};

    fn case() -> Case {
        Case::new("perf", Select::default()).and_inputs(Settings {
            settings: vec![KnobSetting::defaults(), KnobSetting::with(&["a"])],
        })
    }

    fn ms(v: &[u64]) -> Vec<Duration> {
        v.iter().map(|&m| Duration::from_millis(m)).collect()
    }

    #[test]
    fn a_slow_median_is_a_finding_and_noise_is_not() {
        let c = case();
        assert_eq!(Perf.queries(&c).expect("builds").len(), 2 * RUNS);
        let rows = vec![vec![vec![Value::Integer(1)]]; 2 * RUNS];
        // One pause in one run of the fast side: the medians stay close.
        let noisy = ms(&[2, 3, 900, 2, 3, 3]);
        assert!(matches!(
            Perf.compare_timed(&c, &rows, &noisy),
            Ok(Verdict::Agree { .. })
        ));
        // Ten times slower but by less than the floor.
        let tiny = ms(&[1, 20, 1, 20, 1, 20]);
        assert!(matches!(
            Perf.compare_timed(&c, &rows, &tiny),
            Ok(Verdict::Agree { .. })
        ));
        // Knobs off being slow is what turning optimizations off costs.
        let knobs_off_slow = ms(&[2, 400, 3, 390, 2, 410]);
        assert!(matches!(
            Perf.compare_timed(&c, &rows, &knobs_off_slow),
            Ok(Verdict::Agree { .. })
        ));
        let defaults_slow = ms(&[400, 2, 390, 3, 410, 2]);
        match Perf.compare_timed(&c, &rows, &defaults_slow) {
            Ok(Verdict::Disagree(d)) => {
                let t = d.timing.expect("a timing");
                assert_eq!(t.medians_ms[0].0, "defaults");
                assert!((t.medians_ms[0].1 - 400.0).abs() < 1e-6);
            }
            other => panic!("expected a performance finding, got {other:?}"),
        }
    }
}
