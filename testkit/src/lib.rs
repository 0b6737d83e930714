//! Test support: a throwaway PostgreSQL server for lancet's tests.
//!
//! [`PgServer::start`] runs `initdb` into a fresh temporary directory and
//! starts `postgres` on 127.0.0.1 on a free port, as the `postgres` user
//! when the tests run as root (the server refuses root). Dropping the value
//! stops the server and removes the directory, also when a test panics.

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
}

/// Where the PostgreSQL 15 programs are: `LANCET_PG_BINDIR`, Debian's
/// versioned directory, or `pg_config --bindir`.
pub fn bindir() -> anyhow::Result<PathBuf> {
    if let Ok(dir) = std::env::var("LANCET_PG_BINDIR") {
        return Ok(PathBuf::from(dir));
    }
    for v in ["15", "16", "17", "14"] {
        let dir = PathBuf::from(format!("/usr/lib/postgresql/{v}/bin"));
        if dir.join("initdb").exists() {
            return Ok(dir);
        }
    }
    if let Ok(out) = Command::new("pg_config").arg("--bindir").output() {
        let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        if dir.join("initdb").exists() {
            return Ok(dir);
        }
    }
    bail!(
        "PostgreSQL's server programs (initdb, pg_ctl) were not found; install them \
         (`apt-get install postgresql`, which tests/run.sh does) or set LANCET_PG_BINDIR"
    )
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
    /// Starts a fresh server; fails with what went wrong (and the server log).
    pub fn start() -> anyhow::Result<PgServer> {
        let bindir = bindir()?;
        let run_as = is_root().then(|| "postgres".to_string());
        let base = std::env::temp_dir().join(format!(
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
        let out = server.run(
            "initdb",
            &[
                "-D",
                path(&data),
                "-A",
                "trust",
                "-U",
                "postgres",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
            ],
        )?;
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
        let opts = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off \
             -c full_page_writes=off -c max_connections=60 -c shared_buffers=64MB",
            self.port,
            self.dir.display()
        );
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

    /// `postgres://postgres@127.0.0.1:PORT/postgres`.
    pub fn url(&self) -> String {
        self.url_for("postgres", "postgres")
    }

    /// A URL for another role or database on this server.
    pub fn url_for(&self, user: &str, database: &str) -> String {
        format!("postgres://{user}@127.0.0.1:{}/{database}", self.port)
    }

    /// Runs SQL with `psql` as the superuser and returns its unaligned output.
    pub fn psql(&self, database: &str, sql: &str) -> anyhow::Result<String> {
        let out = Command::new(self.bindir.join("psql"))
            .args(["-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1"])
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
