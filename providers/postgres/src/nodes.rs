//! lancet's databases on one server or several (a Citus coordinator and its
//! workers): creating one under a name, and dropping it only where it is
//! still the very database this run created.
//!
//! A database is identified on each server by its oid. With several
//! servers, the identity lancet records is `OID;HOST:PORT=OID;...`: the oid
//! on the URL's server first, then one per other node.

use crate::connection::PgConnection;
use anyhow::bail;
use lancet_core::{Connection, DatabaseError, DbError};
use lancet_postgres_url::ServerUrl;

/// The time limit of lancet's own statements on the maintenance database
/// (CREATE and DROP DATABASE, lookups); CREATE DATABASE from template0
/// takes 0.1 to 1 s, a plain DROP waits up to 5 s for other sessions.
pub const ADMIN_LIMIT: std::time::Duration = std::time::Duration::from_secs(30);

/// A database as the server knows it: its oid and its owner, and the role
/// lancet is connected as.
struct Found {
    oid: String,
    owner: String,
    current: String,
}

/// The SQLSTATE of a DbError.
pub fn sqlstate(e: &DbError) -> Option<&str> {
    e.code.as_deref()
}

/// A connection to the maintenance database a URL names, for lancet's own
/// statements.
pub fn admin(url: &ServerUrl) -> anyhow::Result<PgConnection> {
    PgConnection::open(&url.config_for(&url.maintenance_database()), ADMIN_LIMIT).map_err(|e| {
        // The DbError stays in the chain: the runner retries while it
        // says the connection is lost (a restarting server).
        anyhow::Error::new(e).context(format!("cannot connect to {}", url.display_name()))
    })
}

/// The oids of one lancet database on each server it was created on.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeOids {
    /// On the URL's server.
    pub main: Option<String>,
    /// `(host:port, oid)` on the other nodes.
    pub others: Vec<(String, String)>,
}

impl NodeOids {
    /// Reads a recorded identity (`None`: only the intent to create was
    /// recorded, the oids are not known).
    pub fn parse(identity: Option<&str>) -> NodeOids {
        let Some(identity) = identity else {
            return NodeOids::default();
        };
        let mut parts = identity.split(';');
        let main = parts.next().filter(|s| !s.is_empty()).map(str::to_string);
        let others = parts
            .filter_map(|p| p.split_once('='))
            .map(|(node, oid)| (node.to_string(), oid.to_string()))
            .collect();
        NodeOids { main, others }
    }

    pub fn render(&self) -> String {
        let mut s = self.main.clone().unwrap_or_default();
        for (node, oid) in &self.others {
            s.push_str(&format!(";{node}={oid}"));
        }
        s
    }

    /// The oid recorded on node `host_port`.
    pub fn on(&self, host_port: &str) -> Option<&str> {
        self.others
            .iter()
            .find(|(n, _)| n == host_port)
            .map(|(_, o)| o.as_str())
    }
}

/// The oid and owner of database `name`, if it exists.
fn find(admin: &mut PgConnection, url: &ServerUrl, name: &str) -> anyhow::Result<Option<Found>> {
    let rows = admin
        .query_text(
            "SELECT oid::text, pg_get_userbyid(datdba)::text, current_user::text \
             FROM pg_database WHERE datname = $1",
            &[name],
        )
        .map_err(|e| {
            anyhow::Error::new(e).context(format!(
                "cannot look up database {name} on {}",
                url.display_name()
            ))
        })?;
    Ok(rows.into_iter().next().map(|r| {
        let mut r = r.into_iter().map(Option::unwrap_or_default);
        Found {
            oid: r.next().unwrap_or_default(),
            owner: r.next().unwrap_or_default(),
            current: r.next().unwrap_or_default(),
        }
    }))
}

/// Creates database `name` on the server `url` names and returns its oid.
/// A taken name is [`DatabaseError::NameTaken`]: nothing is dropped first.
pub fn create_on(url: &ServerUrl, name: &str) -> anyhow::Result<String> {
    let shown = url.display_name();
    let mut admin = admin(url)?;
    let create = format!(
        "CREATE DATABASE \"{name}\" TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'"
    );
    if let Err(e) = admin.execute(&create) {
        if sqlstate(&e) == Some("42P04") {
            return Err(
                anyhow::Error::new(DatabaseError::NameTaken(name.to_string()))
                    .context(format!("cannot create a database on {shown}")),
            );
        }
        return Err(
            anyhow::Error::new(e).context(format!("cannot create database {name} on {shown}"))
        );
    }
    match find(&mut admin, url, name)? {
        Some(f) if f.owner == f.current => {
            // Every session on it, Citus's own connections to the workers
            // included, plans without JIT compilation: generated queries
            // over small unanalyzed tables cost enough to be compiled, at
            // 25-125 ms a query (the session settings turn it off too).
            // A server without JIT (before PostgreSQL 11) refuses: harmless.
            if let Err(e) = admin.execute(&format!("ALTER DATABASE \"{name}\" SET jit = off")) {
                log::debug!("cannot turn JIT off for {name} on {shown}: {e}");
            }
            Ok(f.oid)
        }
        Some(f) => bail!(
            "database {name} on {shown} belongs to role '{}' right after lancet created it \
             as '{}'; lancet leaves it alone",
            f.owner,
            f.current
        ),
        None => bail!("database {name} on {shown} vanished right after lancet created it"),
    }
}

/// Why `name` must not be dropped from `url`'s server, if it is not the
/// database this run created there: it must still have the oid lancet
/// recorded (`oid`) and belong to the role lancet is connected as.
/// `Ok(false)` if it no longer exists.
fn check_ours(
    admin: &mut PgConnection,
    url: &ServerUrl,
    name: &str,
    oid: Option<&str>,
) -> anyhow::Result<bool> {
    let Some(found) = find(admin, url, name)? else {
        return Ok(false);
    };
    let not_ours = |why: String| {
        anyhow::Error::new(DatabaseError::NotOurs {
            name: name.to_string(),
            why,
        })
    };
    match oid {
        // A run killed between CREATE and learning the oid recorded only
        // its intent to create this name. The name carries the run's
        // random token, which no one else can know: if it exists and the
        // role owns it, it is that run's database.
        None if found.owner != found.current => Err(not_ours(format!(
            "on {} it belongs to role '{}', not to '{}' (and lancet has no record of its oid)",
            url.host_port(),
            found.owner,
            found.current
        ))),
        None => Ok(true),
        Some(oid) if oid != found.oid => Err(not_ours(format!(
            "on {} it has oid {}, not the oid {oid} of the database this run created: \
             someone re-created the name",
            url.host_port(),
            found.oid
        ))),
        Some(_) if found.owner != found.current => Err(not_ours(format!(
            "on {} it belongs to role '{}', not to '{}'",
            url.host_port(),
            found.owner,
            found.current
        ))),
        Some(_) => Ok(true),
    }
}

/// Drops `name` from `url`'s server after checking (again) that it is
/// ours. A plain DROP first: it waits for (and stops) autovacuum workers
/// itself and fails with 55006 while other sessions are connected; then
/// `WITH (FORCE)`, which ends those sessions (a Citus maintenance daemon
/// holds one on every node). A role that may not end another role's
/// session gets 42501, which goes back to the caller, who retries later.
/// `Ok(false)` if it no longer exists.
///
/// `force_first` skips the plain DROP where a session is known to stay
/// (Citus's maintenance daemon): the plain one would wait 5 s in vain.
pub fn drop_on(
    url: &ServerUrl,
    name: &str,
    oid: Option<&str>,
    force_first: bool,
) -> anyhow::Result<bool> {
    crate::ensure_ours(name)?;
    let mut admin = admin(url)?;
    let in_use = |r: &anyhow::Result<bool>| {
        r.as_ref().err().is_some_and(|e| {
            e.downcast_ref::<DbError>()
                .is_some_and(|d| sqlstate(d) == Some("55006"))
        })
    };
    let mut dropped = drop_checked(&mut admin, url, name, oid, force_first);
    if in_use(&dropped) {
        dropped = drop_checked(&mut admin, url, name, oid, true);
    }
    // Still in use: a transaction prepared in it for two-phase commit,
    // left by a session that died between PREPARE and COMMIT (Citus,
    // after a backend was killed). It is this run's, in this run's
    // database: roll it back, then drop.
    if in_use(&dropped) && roll_back_prepared(&mut admin, url, name)? > 0 {
        dropped = drop_checked(&mut admin, url, name, oid, true);
    }
    dropped.map_err(|e| {
        if e.downcast_ref::<DatabaseError>().is_some() {
            e
        } else {
            e.context(format!(
                "cannot drop database {name} on {}",
                url.display_name()
            ))
        }
    })
}

/// Rolls back the transactions prepared in database `name` (ours: the
/// caller checked), connected to it, as PostgreSQL requires; how many.
fn roll_back_prepared(
    admin: &mut PgConnection,
    url: &ServerUrl,
    name: &str,
) -> anyhow::Result<usize> {
    let gids = admin
        .query(&format!(
            "SELECT gid FROM pg_prepared_xacts WHERE database = '{}'",
            name.replace('\'', "''")
        ))
        .map_err(anyhow::Error::new)?;
    if gids.is_empty() {
        return Ok(0);
    }
    let mut inside = PgConnection::open(&url.config_for(name), ADMIN_LIMIT)
        .map_err(anyhow::Error::new)
        .map_err(|e| {
            e.context(format!(
                "cannot connect to {name} to roll back its prepared transactions"
            ))
        })?;
    for row in &gids {
        let Some(lancet_core::Value::Text(gid)) = row.first() else {
            continue;
        };
        inside
            .execute(&format!("ROLLBACK PREPARED '{}'", gid.replace('\'', "''")))
            .map_err(anyhow::Error::new)?;
    }
    Ok(gids.len())
}

fn drop_checked(
    admin: &mut PgConnection,
    url: &ServerUrl,
    name: &str,
    oid: Option<&str>,
    force: bool,
) -> anyhow::Result<bool> {
    // The check and the DROP are two round trips: in between, someone
    // could drop the database and create another under its name. That
    // window of one round trip is accepted; PostgreSQL offers no DROP by
    // oid.
    if !check_ours(admin, url, name, oid)? {
        return Ok(false);
    }
    let sql = format!(
        "DROP DATABASE \"{name}\"{}",
        if force { " WITH (FORCE)" } else { "" }
    );
    match admin.execute(&sql) {
        Ok(()) => Ok(true),
        Err(e) if sqlstate(&e) == Some("3D000") => Ok(false),
        Err(e) => Err(anyhow::Error::new(e)),
    }
}

/// Drops what a failed creation left on some nodes; failures are only
/// logged (the names carry the run's token and `lancet cleanup` finds
/// them through the ledger's intent line).
pub fn undo(name: &str, made: &[(ServerUrl, String)]) {
    for (node, oid) in made {
        if let Err(e) = drop_on(node, name, Some(oid), true) {
            log::warn!(
                "cannot drop {name} on {} after a failed creation: {e:#}",
                node.host_port()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identities_round_trip() {
        let ids = NodeOids {
            main: Some("16384".into()),
            others: vec![
                ("127.0.0.1:5433".into(), "17000".into()),
                ("127.0.0.1:5434".into(), "17001".into()),
            ],
        };
        let text = ids.render();
        assert_eq!(text, "16384;127.0.0.1:5433=17000;127.0.0.1:5434=17001");
        assert_eq!(NodeOids::parse(Some(&text)), ids);
        assert_eq!(ids.on("127.0.0.1:5434"), Some("17001"));
        // A plain PostgreSQL identity is the oid alone.
        assert_eq!(NodeOids::parse(Some("42")).main.as_deref(), Some("42"));
        assert_eq!(NodeOids::parse(None), NodeOids::default());
    }
}
