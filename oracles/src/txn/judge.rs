//! What the model concludes about a schedule's reads and its end: which
//! anomaly a wrong read is, whether the final rows are what the committed
//! transactions make, and under SERIALIZABLE whether some serial order
//! explains them.

use super::anomaly::AnomalyKind;
use super::model::{show, Model, Reads, Status};
use std::collections::BTreeMap;

impl Model<'_> {
    /// Names what a wrong read saw.
    pub(super) fn classify_read(
        &self,
        session: usize,
        expected: &[(i64, i64)],
        actual: &[(i64, i64)],
    ) -> AnomalyKind {
        let uncommitted = |k: i64, v: Option<i64>| {
            (0..self.txns.len()).any(|t| {
                t != session
                    && self.txns[t].status != Status::Committed
                    && self.txns[t]
                        .writes
                        .get(&k)
                        .is_some_and(|w| w.map(|x| x.v) == v)
            })
        };
        let exp: BTreeMap<i64, i64> = expected.iter().copied().collect();
        let act: BTreeMap<i64, i64> = actual.iter().copied().collect();
        for (&k, &v) in &act {
            match exp.get(&k) {
                Some(&e) if e == v => {}
                _ if uncommitted(k, Some(v)) => return AnomalyKind::DirtyRead,
                None => return AnomalyKind::Phantom,
                Some(_) if self.txns[session].writes.contains_key(&k) => {
                    return AnomalyKind::LostOwnWrite
                }
                Some(_) => return AnomalyKind::NonRepeatableRead,
            }
        }
        for &k in exp.keys() {
            if !act.contains_key(&k) {
                if uncommitted(k, None) {
                    return AnomalyKind::DirtyRead;
                }
                return AnomalyKind::Phantom;
            }
        }
        AnomalyKind::WrongRead
    }

    /// After the schedule: the final rows the DBMS shows against the
    /// model's, and for serializable levels a serial order that explains
    /// the committed transactions.
    pub fn end(&mut self, final_rows: &[(i64, i64)]) {
        let last = self.schedule.steps.len().saturating_sub(1);
        let mut actual = final_rows.to_vec();
        actual.sort();
        {
            let open = &self.uncertain_committed;
            let expected: Vec<(i64, i64)> = self
                .committed
                .iter()
                .filter(|(k, _)| !open.contains(k))
                .map(|(&k, v)| (k, v.v))
                .collect();
            let mut actual = actual.clone();
            actual.retain(|(k, _)| !open.contains(k));
            if actual != expected {
                // A committed write that the final rows do not show.
                let shown: BTreeMap<i64, i64> = actual.iter().copied().collect();
                let lost = self.committed.iter().any(|(k, ver)| {
                    ver.writer.is_some() && shown.get(k).is_some_and(|&v| v != ver.v)
                });
                let kind = if lost {
                    AnomalyKind::LostUpdate
                } else {
                    AnomalyKind::WrongFinalState
                };
                self.end_anomaly(
                    kind,
                    last,
                    format!(
                        "the committed rows are {} where the committed transactions make {}",
                        show(&actual),
                        show(&expected)
                    ),
                );
            }
        }
        // Only where every committed transaction is SERIALIZABLE: a
        // level promises nothing about its transactions' order with
        // those of weaker ones.
        let committed: Vec<usize> = self.commit_order.clone();
        let checked = committed.iter().all(|&s| self.rules_of(s).serializable)
            && (0..self.schedule.sessions).any(|s| self.rules_of(s).serializable);
        if checked
            && !self.serial_unknown
            && !super::serial::explained(
                self.schedule,
                &self.initial,
                &committed,
                &self.reads_of(),
                &actual,
            )
        {
            self.end_anomaly(
                AnomalyKind::NotSerializable,
                last,
                format!(
                    "no serial order of the committed sessions {} gives their reads and the final rows {}",
                    committed.iter().map(|s| (s + 1).to_string()).collect::<Vec<_>>().join(", "),
                    show(&actual)
                ),
            );
        }
    }

    /// An anomaly of the rows after the schedule.
    fn end_anomaly(&mut self, kind: AnomalyKind, step: usize, detail: String) {
        self.anomalies.push(super::anomaly::Anomaly {
            kind,
            step,
            detail,
            at_end: true,
            deviation: None,
        });
    }

    fn reads_of(&self) -> Vec<Reads> {
        self.txns.iter().map(|t| t.reads.clone()).collect()
    }
}
