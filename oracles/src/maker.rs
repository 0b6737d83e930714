//! Who made a sessions oracle's finding: the oracle, the DBMS with its
//! version, and lancet's version, the head of every such record (the
//! findings read the oracle's name from it, to know whose record it is).

use lancet_core::SessionsDatabase;
use serde::{Deserialize, Serialize};

/// The head of a sessions oracle's record, flattened into it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Maker {
    /// The oracle's `--oracle` name: tells its records from others'.
    pub oracle: String,
    pub dbms: String,
    pub version: String,
    pub lancet: String,
}

impl Maker {
    /// Oracle `oracle`'s finding on `db`'s DBMS.
    pub fn of(oracle: &str, db: &dyn SessionsDatabase) -> Maker {
        let provider = db.provider();
        Maker {
            oracle: oracle.to_string(),
            dbms: provider.name().to_string(),
            version: provider
                .version()
                .unwrap_or_else(|e| format!("unknown ({e})")),
            lancet: db.lancet_version().to_string(),
        }
    }

    /// A record of oracle `oracle` read from its JSON text (`what` names
    /// its kind in errors): another oracle's is refused.
    pub fn parse<T: serde::de::DeserializeOwned>(
        record: &str,
        oracle: &str,
        what: &str,
        maker: impl Fn(&T) -> &Maker,
    ) -> anyhow::Result<T> {
        let finding: T = serde_json::from_str(record)
            .map_err(|e| anyhow::anyhow!("not a {what} finding: {e}"))?;
        let made = &maker(&finding).oracle;
        anyhow::ensure!(
            made == oracle,
            "not a {what} finding (its oracle is {made})"
        );
        Ok(finding)
    }

    /// The DBMS with its version, as a finding's text shows it.
    pub fn dbms_line(&self) -> String {
        format!("DBMS: {} {}", self.dbms, self.version)
    }
}
