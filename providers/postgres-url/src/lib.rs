//! A PostgreSQL connection string, shared by the PostgreSQL provider and
//! the findings store (`--store postgres://...`), so that neither shows a
//! password and the store needs no provider. It may not depend on any
//! lancet crate.
//!
//! The server's connection string: parsed once, checked before any thread
//! starts, and never shown as given. Messages name the server only as
//! `user@host:port/database` ([`ServerUrl::display_name`]); errors say what
//! is wrong with a string, never what it was, since it may hold a password
//! anywhere (`user:password@`, `?password=`, `password=`, or a password
//! typed where something else belonged).

use anyhow::anyhow;
use std::time::Duration;
use tokio_postgres::config::Host;
use tokio_postgres::Config;

/// The longest a connection attempt may take as a whole (TCP connect,
/// authentication, start-up), unless the URL's `connect_timeout` is longer.
pub const CONNECT_LIMIT: Duration = Duration::from_secs(10);

/// A parsed `postgres://user[:password]@host[:port]/database` URL or libpq
/// `key=value` string.
#[derive(Clone)]
pub struct ServerUrl {
    config: Config,
}

/// What a connection string must look like, for errors.
const EXPECTED: &str = "expected postgres://USER@HOST:PORT/DATABASE or key=value pairs";

/// Options whose names the driver's errors may give back (they come from
/// the driver's own list, never from the input).
const OPTIONS: &[&str] = &[
    "sslmode",
    "host",
    "hostaddr",
    "port",
    "connect_timeout",
    "tcp_user_timeout",
    "keepalives",
    "keepalives_idle",
    "keepalives_interval",
    "keepalives_retries",
    "target_session_attrs",
    "channel_binding",
    "load_balance_hosts",
    "sslnegotiation",
];

fn invalid(option: &str, reason: &str) -> anyhow::Error {
    anyhow!("the {option} is not a valid PostgreSQL URL or connection string: {reason}; {EXPECTED}")
}

/// What is wrong with a string the driver would not parse, in lancet's
/// words: the driver's own message may quote the input (an unknown option's
/// name, an unexpected character), so only messages known to be free of it
/// are translated, and anything else becomes a generic reason.
fn parse_reason(e: &tokio_postgres::Error) -> String {
    let cause = std::error::Error::source(e)
        .map(|c| c.to_string())
        .unwrap_or_default();
    if let Some(rest) = cause.strip_prefix("invalid value for option `") {
        let option = rest.trim_end_matches('`');
        if OPTIONS.contains(&option) {
            return format!("the value of option {option} is invalid");
        }
    }
    let reason = if cause.starts_with("unknown option") {
        "it has an option the driver does not know (it knows host, hostaddr, port, user, \
         password, dbname, options, application_name, sslmode, connect_timeout, \
         target_session_attrs and the keepalive settings)"
    } else if cause.starts_with("unexpected character") {
        "a key=value pair is malformed"
    } else if cause.starts_with("unexpected EOF") {
        "a key has no value"
    } else if cause.starts_with("unterminated quoted") {
        "a quoted value is not terminated"
    } else if cause.starts_with("unterminated parameter") {
        "a URL parameter has no '='"
    } else {
        "it cannot be parsed (check its percent-encoding)"
    };
    reason.to_string()
}

impl ServerUrl {
    /// Parses a `postgres://` or `postgresql://` URL (the password in the
    /// user info or as `?password=`) or a libpq `key=value` string. The
    /// error never contains the string.
    pub fn parse(url: &str) -> anyhow::Result<ServerUrl> {
        ServerUrl::parse_option(url, "--url")
    }

    /// As [`ServerUrl::parse`], for the command-line option `option`
    /// (`--store`), which errors name.
    pub fn parse_option(url: &str, option: &str) -> anyhow::Result<ServerUrl> {
        let invalid = |reason: &str| invalid(option, reason);
        let trimmed = url.trim();
        let is_url = trimmed.starts_with("postgres://") || trimmed.starts_with("postgresql://");
        if !is_url {
            if trimmed.contains("://") {
                return Err(invalid(
                    "it is not a PostgreSQL URL (those start with postgres:// or postgresql://)",
                ));
            }
            if !trimmed.contains('=') {
                return Err(invalid(
                    "it is neither a postgres:// URL nor key=value pairs",
                ));
            }
        }
        let mut config: Config = trimmed.parse().map_err(|e| invalid(&parse_reason(&e)))?;
        if config.get_hosts().is_empty() && config.get_hostaddrs().is_empty() {
            return Err(invalid("it names no host"));
        }
        // A password with an unescaped '@' leaves part of itself in the
        // host; refuse it rather than show it as the server's name.
        let odd_host = config.get_hosts().iter().any(|h| match h {
            Host::Tcp(h) => h.is_empty() || h.contains(['@', ' ', '/', '\'']),
            Host::Unix(_) => false,
        });
        if odd_host {
            return Err(invalid(
                "its host is not a host name (an '@' in a password must be written %40)",
            ));
        }
        if config.get_user().unwrap_or("").is_empty() {
            return Err(invalid("it names no user"));
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_LIMIT);
        }
        config.application_name("lancet");
        Ok(ServerUrl { config })
    }

    /// `user@host:port/database`: how lancet names the server in messages
    /// (never with a password).
    pub fn display_name(&self) -> String {
        format!("{}/{}", self.server(), self.maintenance_database())
    }

    /// `user@host:port`.
    pub fn server(&self) -> String {
        format!("{}@{}:{}", self.user(), self.host(), self.port())
    }

    /// The database the URL names (where lancet connects to create its own).
    pub fn maintenance_database(&self) -> String {
        self.config
            .get_dbname()
            .map(str::to_string)
            .or_else(|| self.config.get_user().map(str::to_string))
            .unwrap_or_else(|| "postgres".into())
    }

    /// The connection settings for `database` on the same server.
    pub fn config_for(&self, database: &str) -> Config {
        let mut c = self.config.clone();
        c.dbname(database);
        c
    }

    /// The (first) host: a name, an address or a socket directory.
    pub fn host(&self) -> String {
        match self.config.get_hosts().first() {
            Some(Host::Tcp(h)) => h.clone(),
            Some(Host::Unix(p)) => p.display().to_string(),
            None => self
                .config
                .get_hostaddrs()
                .first()
                .map_or_else(String::new, |a| a.to_string()),
        }
    }

    pub fn port(&self) -> u16 {
        self.config.get_ports().first().copied().unwrap_or(5432)
    }

    /// `host:port`, for messages and reproducers.
    pub fn host_port(&self) -> String {
        format!("{}:{}", self.host(), self.port())
    }

    /// The same role and password on another server (a Citus worker, as
    /// the coordinator's metadata names it).
    pub fn on_node(&self, host: &str, port: u16) -> ServerUrl {
        let mut c = Config::new();
        if let Some(u) = self.config.get_user() {
            c.user(u);
        }
        if let Some(p) = self.config.get_password() {
            c.password(p);
        }
        if let Some(d) = self.config.get_dbname() {
            c.dbname(d);
        }
        if let Some(t) = self.config.get_connect_timeout() {
            c.connect_timeout(*t);
        }
        c.application_name("lancet");
        c.host(host);
        c.port(port);
        ServerUrl { config: c }
    }

    pub fn user(&self) -> String {
        self.config.get_user().unwrap_or_default().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "S3cr3tPW";

    fn error_of(url: &str) -> String {
        match ServerUrl::parse(url) {
            Ok(_) => String::new(),
            Err(e) => format!("{e:#} {e:?}"),
        }
    }

    #[test]
    fn good_strings_parse_and_show_no_password() {
        for url in [
            "postgres://u:S3cr3tPW@127.0.0.1:1/db",
            "postgresql://u@127.0.0.1:1/db?password=S3cr3tPW",
            "host=127.0.0.1 port=1 user=u password=S3cr3tPW dbname=db",
            "host=127.0.0.1 port=1 user=u password='S3cr3tPW' dbname=db",
        ] {
            let u = ServerUrl::parse(url).unwrap_or_else(|e| panic!("{e:#}"));
            assert_eq!(u.display_name(), "u@127.0.0.1:1/db");
            assert_eq!(u.server(), "u@127.0.0.1:1");
            assert_eq!(u.maintenance_database(), "db");
        }
        let u = ServerUrl::parse("postgres://u@h").unwrap();
        assert_eq!(u.display_name(), "u@h:5432/u");
    }

    #[test]
    fn bad_strings_are_errors_without_the_string() {
        for url in [
            "cdb:S3cr3tPW@garbage",
            "mysql://u:S3cr3tPW@h/db",
            "postgres://u:S3cr3tPW@127.0.0.1:port/db",
            "postgres://u:S3c@r3tPW@127.0.0.1:1/db",
            "postgres://:S3cr3tPW@127.0.0.1:1/db",
            "postgres://u:S3cr3tPW@/db",
            "postgres://u@127.0.0.1:1/db?password=S3cr3tPW&S3cr3tPW=1",
            "postgres://u@127.0.0.1:1/db?S3cr3tPW",
            "postgres://u@127.0.0.1:1/db?sslmode=S3cr3tPW",
            "postgres://u%ffS3cr3tPW@127.0.0.1:1/db",
            "host=127.0.0.1 user=u password S3cr3tPW",
            "host=127.0.0.1 user=u password=S3cr3t PW",
            "host=127.0.0.1 user=u S3cr3tPW=x",
            "host=127.0.0.1 user=u password='S3cr3tPW",
            "host=127.0.0.1 user=u password=",
            "user=u password=S3cr3tPW",
            "host=127.0.0.1 password=S3cr3tPW",
            "host=127.0.0.1 port=S3cr3tPW user=u",
            "S3cr3tPW",
            "",
        ] {
            let e = error_of(url);
            assert!(!e.is_empty(), "{url:?} was accepted");
            assert!(!e.contains(SECRET), "{url:?}: {e}");
            assert!(!e.contains("S3c"), "{url:?}: {e}");
            assert!(e.contains("expected postgres://"), "{url:?}: {e}");
        }
    }
}
