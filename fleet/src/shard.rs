//! Shards: one campaign split over many processes or machines (a
//! Kubernetes Indexed Job, a CI matrix), each run with `--shard I/N`.
//!
//! A campaign's databases are numbered by (thread, database); shard `I` of
//! `N` runs the campaign threads `I, I+N, I+2N, ...`, so two shards of one
//! seed never generate the same database, whatever thread counts they run
//! with. A finding records its campaign thread, so `--seed S --thread T
//! --database K` regenerates it without naming the shard.

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Which part of a campaign a run is: index `index` of `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

/// The environment variable Kubernetes sets in each pod of an Indexed Job.
pub const K8S_INDEX_VAR: &str = "JOB_COMPLETION_INDEX";

impl Shard {
    /// The whole campaign (a run without `--shard`).
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    pub fn new(index: u32, count: u32) -> anyhow::Result<Shard> {
        if count == 0 {
            bail!("a campaign has at least 1 shard, not 0");
        }
        if index >= count {
            bail!(
                "shard index {index} is out of range: shards of {count} are numbered 0 to {}",
                count - 1
            );
        }
        Ok(Shard { index, count })
    }

    /// Parses `I/N` (0-based index, as Kubernetes numbers pods).
    pub fn parse(text: &str) -> anyhow::Result<Shard> {
        let (i, n) = text
            .split_once('/')
            .with_context(|| format!("--shard takes I/N (for example 0/4), not '{text}'"))?;
        let index = i
            .trim()
            .parse()
            .with_context(|| format!("--shard {text}: '{i}' is not a shard index"))?;
        let count = n
            .trim()
            .parse()
            .with_context(|| format!("--shard {text}: '{n}' is not a shard count"))?;
        Shard::new(index, count)
    }

    /// The shard of a pod of a Kubernetes Indexed Job with `count`
    /// completions: its index is in `JOB_COMPLETION_INDEX`.
    pub fn from_k8s(count: u32, index_var: Option<&str>) -> anyhow::Result<Shard> {
        let Some(value) = index_var else {
            bail!(
                "--shard-count needs {K8S_INDEX_VAR}, which Kubernetes sets in each pod of an \
                 Indexed Job; elsewhere give --shard I/N"
            );
        };
        let index = value
            .trim()
            .parse()
            .with_context(|| format!("{K8S_INDEX_VAR}={value:?} is not a shard index"))?;
        Shard::new(index, count)
    }

    /// Whether this is a part of a campaign rather than all of it.
    pub fn is_part(self) -> bool {
        self.count > 1
    }

    /// The campaign thread that this shard's worker `local` runs.
    pub fn campaign_thread(self, local: u32) -> u32 {
        local * self.count + self.index
    }

    /// Whether campaign thread `thread` belongs to this shard.
    pub fn owns_thread(self, thread: u32) -> bool {
        thread % self.count == self.index
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn shards_partition_the_campaign_threads() {
        // Shards with different thread counts still never share a thread.
        let mut seen = BTreeSet::new();
        for (index, threads) in [(0, 3), (1, 1), (2, 8), (3, 2)] {
            let shard = Shard::new(index, 4).unwrap();
            for t in 0..threads {
                let thread = shard.campaign_thread(t);
                assert!(shard.owns_thread(thread));
                assert!(seen.insert(thread), "thread {thread} generated twice");
            }
        }
        assert_eq!(Shard::WHOLE.campaign_thread(5), 5);
    }

    #[test]
    fn bad_shards_are_refused() {
        assert_eq!(Shard::parse("2/4").unwrap(), Shard { index: 2, count: 4 });
        for bad in ["4/4", "1/0", "x/2", "3", "-1/2"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
        assert!(Shard::from_k8s(4, None).is_err());
        assert!(Shard::from_k8s(4, Some("7")).is_err());
        assert_eq!(Shard::from_k8s(4, Some("3")).unwrap().index, 3);
    }
}
