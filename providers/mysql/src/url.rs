//! The server's URL, `mysql://USER[:PASSWORD]@HOST[:PORT]/DATABASE`:
//! parsed once, checked before any thread starts, and never shown as
//! given. Messages name the server as `user@host:port`; errors say what is
//! wrong with a URL, never what it was (it may hold a password).

use anyhow::{anyhow, bail};

/// What a URL must look like, for errors.
const EXPECTED: &str = "expected mysql://USER:PASSWORD@HOST:PORT/DATABASE";

/// A parsed server URL.
#[derive(Clone)]
pub struct ServerUrl {
    user: String,
    password: Option<String>,
    host: String,
    port: u16,
    database: Option<String>,
}

fn invalid(reason: &str) -> anyhow::Error {
    anyhow!("the --url is not a valid MySQL URL: {reason}; {EXPECTED}")
}

/// Decodes `%XX` escapes (a password may hold `@` or `:`).
fn percent_decode(s: &str) -> anyhow::Result<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s
                .get(i + 1..i + 3)
                .ok_or_else(|| invalid("a %-escape is cut short"))?;
            out.push(u8::from_str_radix(hex, 16).map_err(|_| invalid("a %-escape is not hex"))?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| invalid("a %-escape is not UTF-8"))
}

impl ServerUrl {
    /// Parses a `mysql://` (or `mariadb://`) URL. The error never contains
    /// the URL.
    pub fn parse(url: &str) -> anyhow::Result<ServerUrl> {
        let rest = url
            .strip_prefix("mysql://")
            .or_else(|| url.strip_prefix("mariadb://"))
            .ok_or_else(|| invalid("it does not start with mysql://"))?;
        if rest.contains('?') {
            bail!(invalid("lancet takes no URL parameters"));
        }
        let (authority, database) = match rest.split_once('/') {
            Some((a, d)) => (a, (!d.is_empty()).then(|| d.to_string())),
            None => (rest, None),
        };
        let (userinfo, hostport) = authority
            .rsplit_once('@')
            .ok_or_else(|| invalid("it names no user (USER@HOST)"))?;
        let (user, password) = match userinfo.split_once(':') {
            Some((u, p)) => (percent_decode(u)?, Some(percent_decode(p)?)),
            None => (percent_decode(userinfo)?, None),
        };
        if user.is_empty() {
            bail!(invalid("the user is empty"));
        }
        let (host, port) = match hostport.rsplit_once(':') {
            Some((h, p)) => (
                h.to_string(),
                p.parse::<u16>()
                    .map_err(|_| invalid("the port is not a number from 1 to 65535"))?,
            ),
            None => (hostport.to_string(), 3306),
        };
        if host.is_empty() {
            bail!(invalid("the host is empty"));
        }
        if let Some(d) = &database {
            if !d.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                bail!(invalid(
                    "the database name has characters other than letters, digits and _"
                ));
            }
        }
        Ok(ServerUrl {
            user,
            password,
            host,
            port,
            database,
        })
    }

    pub fn user(&self) -> &str {
        &self.user
    }

    pub fn host(&self) -> &str {
        &self.host
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The database the URL names, where lancet connects to create its own.
    pub fn database(&self) -> Option<&str> {
        self.database.as_deref()
    }

    /// `user@host:port`, for messages and ledgers: never the password.
    pub fn server(&self) -> String {
        format!("{}@{}:{}", self.user, self.host, self.port)
    }

    /// Driver options for `database` (the URL's own if `None`).
    pub fn opts_for(&self, database: Option<&str>) -> mysql::OptsBuilder {
        mysql::OptsBuilder::new()
            .ip_or_hostname(Some(self.host.clone()))
            .tcp_port(self.port)
            .user(Some(self.user.clone()))
            .pass(self.password.clone())
            .db_name(database.or(self.database.as_deref()).map(str::to_string))
            .prefer_socket(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse_and_errors_hide_them() {
        let u = ServerUrl::parse("mysql://lancet:p%40ss@127.0.0.1:3307/test").unwrap();
        assert_eq!(u.server(), "lancet@127.0.0.1:3307");
        assert_eq!(u.password.as_deref(), Some("p@ss"));
        assert_eq!(u.database(), Some("test"));
        assert_eq!(ServerUrl::parse("mysql://root@db").unwrap().port(), 3306);
        for bad in [
            "postgres://u:s3cret@h/d",
            "mysql://s3cret@h:99999/d",
            "mysql://:s3cret@h/d",
            "mysql://u:s3cret@h/d?x=1",
            "mysql://u:s3cret@/d",
        ] {
            let e = ServerUrl::parse(bad).err().unwrap().to_string();
            assert!(!e.contains("s3cret"), "{e}");
            assert!(e.contains("not a valid MySQL URL"), "{e}");
        }
    }
}
