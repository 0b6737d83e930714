//! Flood control's counts in the findings index: places taken by findings
//! being written, and what a reduced finding's signature already holds.

use super::Index;
use std::path::Path;

impl Index {
    /// Takes a place for a finding of `sig` about to be written, if fewer
    /// than `limit` are indexed or being written; `false` if the flood
    /// limit is reached. [`Index::release`] gives it back.
    pub fn reserve(&mut self, sig: &str, limit: u64) -> bool {
        let busy = self.in_flight.get(sig).copied().unwrap_or(0);
        if self.count(sig) + busy >= limit {
            return false;
        }
        *self.in_flight.entry(sig.to_string()).or_default() += 1;
        true
    }

    /// Gives back a place [`Index::reserve`] took (the finding is indexed
    /// now, or was not confirmed).
    pub fn release(&mut self, sig: &str) {
        if let Some(n) = self.in_flight.get_mut(sig) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.in_flight.remove(sig);
            }
        }
    }

    /// How many findings of `sig` there are besides the one written at
    /// `unreduced`, which stays counted under its unreduced signature until
    /// its reduction is filed: when reduction keeps the signature, that
    /// finding must not count against itself.
    pub fn count_besides(&self, sig: &str, unreduced: &Path) -> u64 {
        let own = self
            .provisional
            .get(unreduced)
            .is_some_and(|old| old == sig);
        self.count(sig).saturating_sub(u64::from(own))
    }

    /// How many findings of `sig` are filed reduced.
    pub fn reduced_count(&self, sig: &str) -> u64 {
        self.entries.get(sig).map_or(0, |e| {
            e.findings
                .iter()
                .filter(|p| !self.provisional.contains_key(*p))
                .count() as u64
        })
    }

    /// Flood control after reduction: the finding written at `unreduced`
    /// reduced to signature `sig`, which is past the limit. Its provisional
    /// entry goes; it is counted under `sig` as not written (the caller
    /// deletes its files).
    pub fn flood_reduced(&mut self, sig: &str, unreduced: &Path) -> anyhow::Result<()> {
        self.drop_provisional(unreduced);
        self.add_not_written(sig)
    }
}
