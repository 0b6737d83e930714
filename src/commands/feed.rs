//! A run's feed into the findings store (`--store`): opened before the
//! run, fed from the run directory while it goes on, and finished with a
//! last push; every campaign command uses it.

use lancet::fleet_findings::CampaignFindings;
use lancet::store::feed::Feeder;
use lancet::store::{OpenError, Store, StoreLocation};
use std::path::Path;
use std::time::Duration;

/// Starts feeding the findings store (`--store`, if given) from the run
/// directory while the run goes on; with the store's name, for the end.
pub(super) fn start_feeder(
    store: Option<(StoreLocation, Option<Store>)>,
    run_dir: &Path,
) -> anyhow::Result<Option<(String, Feeder)>> {
    Ok(match store {
        Some((location, open)) => Some((
            location.display(),
            Feeder::start(
                location,
                open,
                run_dir.to_path_buf(),
                &CAMPAIGN_FINDINGS,
                STORE_INTERVAL,
            )?,
        )),
        None => None,
    })
}

/// Ends the feeding of the store, with a last push that may retry a store
/// that is away for [`STORE_GRACE`], and says how it went; false if the
/// store does not have all of the run.
pub(super) fn finish_feeder(feeder: Option<(String, Feeder)>, run_dir: &Path) -> bool {
    let Some((name, feeder)) = feeder else {
        return true;
    };
    let outcome = feeder.finish(STORE_GRACE);
    if outcome.complete {
        eprintln!(
            "lancet: store {name}: the run is stored ({} finding(s))",
            outcome.findings
        );
        true
    } else {
        eprintln!(
            "lancet: error: the store {name} does not have all of this run: {}\n        \
             its findings are on disk; to store them: lancet push --store {name} {}",
            outcome.error.unwrap_or_default(),
            run_dir.display()
        );
        false
    }
}

/// How often the store is fed during a run.
/// The campaign's findings as the store reads them, of the DBMSs lancet
/// knows (a feeder's thread keeps it for the run).
pub(super) static CAMPAIGN_FINDINGS: CampaignFindings =
    CampaignFindings::new(&lancet::registry::CATALOG);

pub(super) const STORE_INTERVAL: Duration = Duration::from_secs(5);
/// How long the last push at the end of a run may retry a store that is away.
pub(super) const STORE_GRACE: Duration = Duration::from_secs(30);

/// Opens `--store` before the run: a malformed location or a store that
/// refuses lancet ends here (exit 2); one that does not answer yet is
/// retried by the feeder while the run goes on.
pub(super) fn open_store(
    text: Option<&str>,
) -> anyhow::Result<Option<(StoreLocation, Option<Store>)>> {
    let Some(text) = text else {
        return Ok(None);
    };
    let location = StoreLocation::parse(text)?;
    match Store::open(&location) {
        Ok(store) => Ok(Some((location, Some(store)))),
        Err(e @ OpenError::Unreachable { .. }) => {
            eprintln!(
                "lancet: warning: {e}; the run starts anyway and the store is retried (findings are on disk first)"
            );
            Ok(Some((location, None)))
        }
        Err(OpenError::Refused(e)) => Err(e),
    }
}
