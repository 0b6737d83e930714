//! A CI gate's known open bugs (`--known DIR`), replayed before a run of
//! either kind (query oracles or an oracle with sessions of its own), so that both
//! campaign commands take them the same way.

use lancet::databases::Databases;

/// Replays the known bugs before the run, through the run's databases and
/// planted fault (`own_fault`, that of an oracle with sessions of its
/// own), and says what
/// it found.
pub(super) fn replay_known(
    known: Vec<lancet::known::KnownBug>,
    databases: &Databases,
    dir: Option<&std::path::Path>,
    own_fault: Option<&str>,
) -> anyhow::Result<lancet::known::KnownBugs> {
    let Some(dir) = dir else {
        return Ok(lancet::known::KnownBugs::default());
    };
    let known = lancet::known::KnownBugs::replay(known, databases, own_fault)?;
    let (open, fixed) = known.counts();
    eprintln!(
        "lancet: known bugs in {}: {open} still open, {fixed} fixed",
        dir.display()
    );
    Ok(known)
}
