//! `lancet cleanup`: drops what killed runs' ledgers list.

use crate::CleanupArgs;
use lancet::registry::{self, ProviderOptions};
use std::process::ExitCode;

pub fn cleanup(args: CleanupArgs) -> anyhow::Result<ExitCode> {
    let provider = registry::provider(
        &args.dbms,
        &ProviderOptions {
            url: args.url.clone(),
            ..ProviderOptions::default()
        },
    )?;
    let (report, live) = lancet::cleanup::cleanup(&*provider, &args.out)?;
    for dir in &live {
        println!("skipped {}: its run is still alive", dir.display());
    }
    let mut failed = 0;
    for c in &report {
        use lancet::cleanup::Outcome;
        match &c.outcome {
            Outcome::Dropped => println!("dropped {} (run {})", c.name, c.run_dir.display()),
            Outcome::Gone => println!("gone {} (run {})", c.name, c.run_dir.display()),
            Outcome::Refused(why) => println!("refused {}: {why}", c.name),
            Outcome::Failed(why) => {
                failed += 1;
                println!("failed {}: {why}", c.name);
            }
        }
    }
    println!(
        "lancet cleanup: {} database(s) listed by dead runs' ledgers under {}; {failed} could not be dropped",
        report.len(),
        args.out.display()
    );
    Ok(if failed > 0 {
        ExitCode::from(3)
    } else {
        ExitCode::SUCCESS
    })
}
