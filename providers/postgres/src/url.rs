//! The server URL: parsed once, checked before any thread starts, and
//! printed only with its password hidden.

use anyhow::{bail, Context};
use postgres::config::Host;
use postgres::Config;

/// A parsed `postgres://user[:password]@host[:port]/database` URL.
#[derive(Clone)]
pub struct ServerUrl {
    config: Config,
    redacted: String,
}

impl ServerUrl {
    pub fn parse(url: &str) -> anyhow::Result<ServerUrl> {
        let redacted = redact(url);
        if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
            bail!("'{redacted}' is not a PostgreSQL URL: it must look like postgres://user@host:port/database");
        }
        let mut config: Config = url
            .parse()
            .with_context(|| format!("'{redacted}' is not a valid PostgreSQL URL"))?;
        if config.get_hosts().is_empty() {
            bail!("'{redacted}' names no host");
        }
        if config.get_user().is_none() {
            bail!("'{redacted}' names no user (postgres://USER@host:port/database)");
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(std::time::Duration::from_secs(10));
        }
        config.application_name("lancet");
        Ok(ServerUrl { config, redacted })
    }

    /// The URL as given, with any password replaced by `***`.
    pub fn redacted(&self) -> &str {
        &self.redacted
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

    /// `host:port`, for messages and reproducers.
    pub fn host_port(&self) -> String {
        let host = match self.config.get_hosts().first() {
            Some(Host::Tcp(h)) => h.clone(),
            Some(Host::Unix(p)) => p.display().to_string(),
            None => String::new(),
        };
        let port = self.config.get_ports().first().copied().unwrap_or(5432);
        format!("{host}:{port}")
    }

    pub fn user(&self) -> String {
        self.config.get_user().unwrap_or_default().to_string()
    }
}

/// Hides the password of a URL (`postgres://u:secret@h/d` → `postgres://u:***@h/d`).
pub fn redact(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_string();
    };
    let rest = &url[scheme_end + 3..];
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    let Some(at) = authority.rfind('@') else {
        return url.to_string();
    };
    let userinfo = &authority[..at];
    match userinfo.find(':') {
        Some(colon) => format!(
            "{}://{}:***{}",
            &url[..scheme_end],
            &userinfo[..colon],
            &rest[at..]
        ),
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_hidden() {
        assert_eq!(
            redact("postgres://u:s3cret@127.0.0.1:5432/db"),
            "postgres://u:***@127.0.0.1:5432/db"
        );
        assert_eq!(redact("postgres://u@h/db"), "postgres://u@h/db");
        let e = ServerUrl::parse("mysql://u:s3cret@h/db").err().unwrap();
        assert!(!format!("{e:#}").contains("s3cret"));
        assert!(ServerUrl::parse("postgres://u@127.0.0.1:1/x").is_ok());
    }
}
