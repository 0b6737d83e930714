//! Root-cause hints for logic findings: the optimizer knobs that, each
//! turned off alone, make the disagreement vanish. Findings with different
//! signatures whose disagreement the same knob hides are likely one bug in
//! that optimization, and the index lists them as a group.

use crate::findings::{Finding, FindingKind};
use crate::replay::{replay_with_knobs_off, Replayed};
use lancet_core::{KnobSetting, Session};
use lancet_databases::databases::{Databases, Purpose};

/// Whether the finding's check disagrees on a fresh database with the
/// knobs of `off` turned off for each query (`None`: it cannot be run),
/// replayed the one way findings are replayed.
fn disagrees(finding: &Finding, session: &mut Session, off: &KnobSetting) -> Option<bool> {
    match replay_with_knobs_off(finding, session, off).ok()? {
        Replayed::StillFails { .. } => Some(true),
        Replayed::Passes(_) => Some(false),
    }
}

/// The provider's knobs that, each off alone, make `finding`'s
/// disagreement vanish, in the provider's order. Empty for other kinds of
/// findings, where no knob does, and where the finding does not show
/// again with every knob on.
pub fn knobs_that_hide(finding: &Finding, databases: &Databases) -> Vec<String> {
    hiding_knobs(finding, databases, usize::MAX)
}

/// The first knob (in the provider's order) that hides `finding`, if any:
/// what the reducer keeps hiding it, so that a reduced case is the same
/// bug, not another one that the same relation also shows.
pub fn first_knob_that_hides(finding: &Finding, databases: &Databases) -> Option<String> {
    hiding_knobs(finding, databases, 1).pop()
}

fn hiding_knobs(finding: &Finding, databases: &Databases, at_most: usize) -> Vec<String> {
    if finding.kind != FindingKind::Logic {
        return Vec::new();
    }
    let run = |off: &KnobSetting| {
        let mut scratch = databases
            .create_reusable(Purpose::Reduce, 0, databases.next_index())
            .ok()?;
        disagrees(finding, scratch.session(), off)
    };
    if run(&KnobSetting::default()) != Some(true) {
        return Vec::new();
    }
    databases
        .provider()
        .knobs()
        .iter()
        .flat_map(|k| k.changes())
        .filter(|c| run(&KnobSetting::with(&[c.as_str()])) == Some(false))
        .take(at_most)
        .collect()
}

/// For a knob differential finding whose case compares the defaults with
/// one configuration (as the reducer leaves it, having turned knobs back
/// on one at a time while the result still differed): the knobs that
/// configuration turns off, the smallest set whose change alone flips the
/// result. Empty for other findings.
pub fn knobs_that_flip(finding: &Finding) -> Vec<String> {
    let Some(case) = &finding.case else {
        return Vec::new();
    };
    let Ok(inputs) = case.inputs::<lancet_oracles::knobs::Settings>() else {
        return Vec::new();
    };
    match &inputs.settings[..] {
        [defaults, changed] if defaults.is_default() => changed.changes.clone(),
        _ => Vec::new(),
    }
}
