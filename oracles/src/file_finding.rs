//! How a sessions oracle files one finding, the same for the transaction
//! oracle's schedules and the stress oracle's rounds: past the run's
//! flood limit it is only counted; else its case runs again to say how
//! often it shows, its record is written at once, and then its reduced
//! form beside it.

use lancet_core::SessionsDatabase;

/// Files a finding of `signature`: `confirmed` runs its case again and
/// gives its record (JSON), written at once while the signature is
/// reserved; then `reduced` gives the record of a smaller case, if it
/// finds one (or reduction is off), written beside it. `bench` is what
/// both run the case on.
pub(crate) fn file_finding<B>(
    db: &mut dyn SessionsDatabase,
    bench: &mut B,
    signature: &str,
    confirmed: impl FnOnce(&mut dyn SessionsDatabase, &mut B) -> anyhow::Result<String>,
    reduced: impl FnOnce(&mut dyn SessionsDatabase, &mut B) -> anyhow::Result<Option<String>>,
) -> anyhow::Result<()> {
    if !db.reserve(signature) {
        return Ok(());
    }
    let filed = confirmed(db, bench).and_then(|record| db.file(&record));
    db.release(signature);
    let id = filed?;
    if let Some(record) = reduced(db, bench)? {
        db.file_reduced(&id, &record)?;
    }
    Ok(())
}
