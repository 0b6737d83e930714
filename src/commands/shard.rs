//! `--shard I/N` (or `--shard-count` in a Kubernetes Indexed Job): which
//! part of a campaign a run is, checked against the other options; every
//! campaign command reads it here.

use crate::FuzzArgs;
use lancet::shard::Shard;

/// The shard this run is (`--shard`, or `--shard-count` in a Kubernetes
/// Indexed Job), checked against the other options.
pub(super) fn shard_of(args: &FuzzArgs) -> anyhow::Result<Shard> {
    let shard = match (&args.shard, args.shard_count) {
        (Some(text), _) => Shard::parse(text)?,
        (None, Some(count)) => Shard::from_k8s(
            count,
            std::env::var(lancet::shard::K8S_INDEX_VAR).ok().as_deref(),
        )?,
        (None, None) => Shard::WHOLE,
    };
    if !shard.is_part() {
        return Ok(shard);
    }
    if args.seed.is_none() {
        anyhow::bail!(
            "a sharded campaign needs --seed, the same on every shard: shards split one \
             campaign's databases between them"
        );
    }
    if let Some(thread) = args.thread {
        if !shard.owns_thread(thread) {
            anyhow::bail!(
                "thread {thread} is run by shard {}/{}, not {shard} (a finding's thread is the \
                 campaign's; --thread without --shard regenerates it)",
                thread % shard.count,
                shard.count
            );
        }
    }
    Ok(shard)
}

/// The campaign threads a shard's workers run, for the start-up line.
pub(super) fn shard_threads(shard: Shard, threads: u32) -> String {
    let mut list: Vec<String> = (0..threads.min(4))
        .map(|t| shard.campaign_thread(t).to_string())
        .collect();
    if threads > 4 {
        list.push("...".into());
    }
    list.join(", ")
}
