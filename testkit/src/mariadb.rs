//! A throwaway MariaDB server for tests, the MariaDB twin of [`crate::PgServer`].
//!
//! [`MariaDbServer::start`] runs `mariadb-install-db` into a fresh temporary
//! directory and starts `mariadbd` on 127.0.0.1 on a free port, as the
//! `mysql` user (Debian's `mariadb-server` creates it) when the tests run as
//! root: `mariadbd` refuses to run as root unless told to, and a test server
//! has no business running as root anyway. The server is the leader of its
//! own process group, so one signal reaches everything it started, and a
//! Ctrl-C meant for the test run does not reach it before our cleanup does.
//! Dropping the value kills the server and removes the directory, also when
//! a test panics.
//!
//! Two accounts: `root`, without a password, which [`MariaDbServer::sql`]
//! uses through the server's Unix socket, and `lancet` (password
//! `lancet-pw`, all privileges), which [`MariaDbServer::url`] names, for the
//! code under test to connect over TCP as an ordinary client would.

use crate::{free_port, is_root, path, NEXT};
use anyhow::{bail, Context};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The account [`MariaDbServer::url`] names.
const USER: &str = "lancet";
/// Its password.
const PASSWORD: &str = "lancet-pw";
/// The database [`MariaDbServer::url`] names: a client needs one to connect
/// to, and `mariadb-install-db --skip-test-db` makes none.
const DATABASE: &str = "test";

/// How long a start may take before we give up; a start takes well under a
/// second on an idle machine, but tests run in parallel on small machines.
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// How long [`MariaDbServer::stop`] waits for a graceful shutdown (InnoDB
/// flushes its buffer pool) before it kills the server.
const STOP_TIMEOUT: Duration = Duration::from_secs(20);

/// A running throwaway MariaDB server.
pub struct MariaDbServer {
    dir: PathBuf,
    port: u16,
    /// The user the server runs as when we are root.
    run_as: Option<String>,
    mariadbd: PathBuf,
    client: PathBuf,
    /// The server process while it runs; behind a lock so that
    /// [`MariaDbServer::stop`] and [`MariaDbServer::start_again`] can take
    /// `&self` like the rest of the API.
    child: Mutex<Option<Child>>,
}

/// Where a MariaDB program is: Debian puts the server in /usr/sbin, which is
/// not on every user's PATH, so look there before PATH.
fn program(name: &str) -> Option<PathBuf> {
    let fixed = ["/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"]
        .into_iter()
        .map(PathBuf::from);
    let on_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default();
    fixed
        .chain(on_path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// The client, server and installer, or what to do about their absence.
fn programs() -> anyhow::Result<(PathBuf, PathBuf, PathBuf)> {
    let find = |name: &str, package: &str| {
        program(name).with_context(|| {
            format!(
                "{name} was not found; install MariaDB (`apt-get install {package}`, \
                 which tests/run.sh does)"
            )
        })
    };
    Ok((
        find("mariadbd", "mariadb-server")?,
        find("mariadb-install-db", "mariadb-server")?,
        find("mariadb", "mariadb-client")?,
    ))
}

/// Percent-encodes a URL's user or password, so that any password survives.
fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

impl MariaDbServer {
    /// Whether MariaDB's server and installer are here, so that tests can
    /// pass as SKIPPED where they are not (tests/run.sh installs them).
    pub fn available() -> bool {
        programs().is_ok()
    }

    /// Starts a fresh server with the `lancet` account and the `test`
    /// database; fails with what went wrong (and the server's log).
    pub fn start() -> anyhow::Result<MariaDbServer> {
        let (mariadbd, install_db, client) = programs()?;
        let run_as = is_root().then(|| "mysql".to_string());
        let dir = std::env::temp_dir().join(format!(
            "lancet-mariadb-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        // A temporary directory of its own: servers bootstrapping at once
        // in a shared /tmp collide on their temporary tables' names (seen:
        // "Could not remove temporary table", and mariadb-install-db fails).
        std::fs::create_dir_all(dir.join("tmp"))
            .with_context(|| format!("cannot create {}", dir.display()))?;
        // From here on, dropping `server` removes the directory.
        let mut server = MariaDbServer {
            dir,
            port: 0,
            run_as,
            mariadbd,
            client,
            child: Mutex::new(None),
        };
        // A Unix socket's path has room for 107 bytes; a long TMPDIR would
        // otherwise fail later with a less helpful message.
        if path(&server.socket()).len() > 100 {
            bail!(
                "the server's socket path {} is too long for a Unix socket; set TMPDIR to a \
                 shorter directory",
                server.socket().display()
            );
        }
        if let Some(user) = &server.run_as {
            let status = Command::new("chown")
                .arg("-R")
                .arg(user)
                .arg(&server.dir)
                .status()
                .context("chown of the server directory")?;
            if !status.success() {
                bail!(
                    "cannot give {} to user {user} (Debian's mariadb-server package creates it)",
                    server.dir.display()
                );
            }
        }
        // `normal`: root without a password (the default, `socket`, would
        // let only the OS user `mysql` in as root). The InnoDB sizes match
        // the server's, so that its first start does not resize the redo log.
        let mut install = Command::new(&install_db);
        install
            .arg("--no-defaults")
            .arg(format!("--datadir={}", path(&server.data())))
            .arg(format!("--tmpdir={}", path(&server.dir.join("tmp"))))
            .args([
                "--auth-root-authentication-method=normal",
                "--skip-test-db",
                "--innodb-log-file-size=16M",
                "--innodb-buffer-pool-size=64M",
            ]);
        if let Some(user) = &server.run_as {
            install.arg(format!("--user={user}"));
        }
        let out = install
            .current_dir(&server.dir)
            .stdin(Stdio::null())
            .output()
            .with_context(|| format!("cannot run {}", install_db.display()))?;
        if !out.status.success() {
            bail!(
                "mariadb-install-db failed: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        // A free port can be taken between our probe and the server's bind:
        // try a few.
        let mut last = None;
        for _ in 0..5 {
            server.port = free_port()?;
            match server.start_on_port() {
                Ok(()) => {
                    last = None;
                    break;
                }
                Err(e) => last = Some(e),
            }
        }
        if let Some(e) = last {
            return Err(e.context("the MariaDB test server did not start"));
        }
        // The server resolves no host names (--skip-name-resolve), so a TCP
        // client from 127.0.0.1 is `'lancet'@'127.0.0.1'`; `localhost` is
        // for clients of the socket.
        server
            .sql(&format!(
                "CREATE USER '{USER}'@'127.0.0.1' IDENTIFIED BY '{PASSWORD}'; \
                 GRANT ALL ON *.* TO '{USER}'@'127.0.0.1'; \
                 CREATE USER '{USER}'@'localhost' IDENTIFIED BY '{PASSWORD}'; \
                 GRANT ALL ON *.* TO '{USER}'@'localhost'; \
                 CREATE DATABASE {DATABASE};"
            ))
            .context("creating the test account and database")?;
        Ok(server)
    }

    /// Starts `mariadbd` on `self.port` and waits until it answers over TCP.
    fn start_on_port(&self) -> anyhow::Result<()> {
        let mut child = self.child();
        if child.is_some() {
            bail!("the MariaDB test server is already running");
        }
        // Whatever the server says before its error log is open (a bad
        // option) goes here, for `log`.
        let out = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join("mariadbd.out"))
            .context("creating the server's output file")?;
        let mut cmd = Command::new(&self.mariadbd);
        // --no-defaults first (the server insists): no /etc/mysql settings
        // leak in. The rest makes it quick to start and cheap to run, where
        // losing data in a crash does not matter: a small buffer pool and
        // redo log, no binary log, no doublewrite buffer, no flush per
        // commit. utf8mb4 is what Debian's packaged server uses (its
        // /etc/mysql config, which --no-defaults skips; the built-in default
        // is latin1). --skip-name-resolve: no DNS lookups per connection,
        // and account hosts are the client's address as written.
        cmd.arg("--no-defaults")
            .arg(format!("--datadir={}", path(&self.data())))
            .arg(format!("--port={}", self.port))
            .arg(format!("--socket={}", path(&self.socket())))
            .arg(format!("--tmpdir={}", path(&self.dir.join("tmp"))))
            .arg(format!(
                "--pid-file={}",
                path(&self.dir.join("mariadbd.pid"))
            ))
            .arg(format!("--log-error={}", path(&self.error_log())))
            .args([
                "--bind-address=127.0.0.1",
                "--skip-name-resolve",
                "--innodb-buffer-pool-size=64M",
                "--innodb-log-file-size=16M",
                "--innodb-flush-log-at-trx-commit=0",
                "--innodb-doublewrite=0",
                "--skip-log-bin",
                "--max-connections=100",
                "--character-set-server=utf8mb4",
                "--collation-server=utf8mb4_general_ci",
            ]);
        if let Some(user) = &self.run_as {
            // mariadbd switches to the user itself, right after it starts.
            cmd.arg(format!("--user={user}"));
        }
        let spawned = cmd
            .current_dir(&self.dir)
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(out.try_clone().context("duplicating a file handle")?)
            .stderr(out)
            .spawn()
            .with_context(|| format!("cannot run {}", self.mariadbd.display()))?;
        *child = Some(spawned);
        let started = Instant::now();
        loop {
            let running = child.as_mut().expect("just started");
            if let Some(status) = running.try_wait().context("waiting for mariadbd")? {
                *child = None;
                bail!(
                    "mariadbd exited ({status}) on port {}; its log:\n{}",
                    self.port,
                    self.log()
                );
            }
            // Ask for the socket: a server someone else runs on this port
            // answers too, with another.
            if let Ok(socket) = self.client_over_tcp("root", "", "SELECT @@socket") {
                if socket.trim() == path(&self.socket()) {
                    return Ok(());
                }
                kill_group(child.take().expect("just started"));
                bail!("port {} answers with another server", self.port);
            }
            if started.elapsed() > START_TIMEOUT {
                kill_group(child.take().expect("just started"));
                bail!(
                    "mariadbd did not accept connections within {START_TIMEOUT:?}; its log:\n{}",
                    self.log()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn child(&self) -> MutexGuard<'_, Option<Child>> {
        // A test that panicked while holding the lock leaves nothing half
        // done that matters: the Option is always whole.
        self.child.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The `mariadb` client in batch mode (tab-separated, no column names),
    /// reading no option files and no connection settings from the
    /// environment, so only the arguments decide where it goes.
    fn client(&self) -> Command {
        let mut cmd = Command::new(&self.client);
        cmd.arg("--no-defaults")
            .args(["-N", "-B", "--connect-timeout=5"])
            .arg("--default-character-set=utf8mb4")
            .env_remove("MYSQL_HOST")
            .env_remove("MYSQL_TCP_PORT")
            .env_remove("MYSQL_UNIX_PORT")
            .env_remove("MYSQL_PWD")
            .stdin(Stdio::null());
        cmd
    }

    fn client_over_tcp(&self, user: &str, password: &str, sql: &str) -> anyhow::Result<String> {
        let mut cmd = self.client();
        cmd.args(["-h", "127.0.0.1", "-P", &self.port.to_string(), "-u", user]);
        if !password.is_empty() {
            cmd.arg(format!("-p{password}"));
        }
        output(cmd.args(["-e", sql]))
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    fn socket(&self) -> PathBuf {
        self.dir.join("sock")
    }

    fn error_log(&self) -> PathBuf {
        self.dir.join("err.log")
    }

    /// `mysql://lancet:lancet-pw@127.0.0.1:PORT/test`: an account with all
    /// privileges, which may make its own databases.
    pub fn url(&self) -> String {
        self.url_for(USER, PASSWORD)
    }

    /// A URL for another account (made with [`MariaDbServer::sql`]) in the
    /// `test` database; the user and password are percent-encoded.
    pub fn url_for(&self, user: &str, password: &str) -> String {
        format!(
            "mysql://{}:{}@127.0.0.1:{}/{DATABASE}",
            encode(user),
            encode(password),
            self.port
        )
    }

    /// The server's error log (and whatever it printed before opening it),
    /// for failure messages.
    pub fn log(&self) -> String {
        let mut log = std::fs::read_to_string(self.error_log()).unwrap_or_default();
        let early = std::fs::read_to_string(self.dir.join("mariadbd.out")).unwrap_or_default();
        if !early.trim().is_empty() {
            log.push_str(&early);
        }
        log
    }

    /// Runs SQL (one statement or several, `;`-separated) as root through
    /// the server's socket with the `mariadb` client in batch mode: rows on
    /// lines, columns separated by tabs, no column names, the last newline
    /// removed.
    pub fn sql(&self, sql: &str) -> anyhow::Result<String> {
        let mut cmd = self.client();
        cmd.arg(format!("--socket={}", path(&self.socket())))
            .args(["-u", "root", "-e", sql]);
        output(&mut cmd)
    }

    /// The names of the databases whose name starts with `prefix` (compared
    /// byte for byte, where SQL's LIKE would take `_` for any character and
    /// ignore case), sorted.
    pub fn databases(&self, prefix: &str) -> anyhow::Result<Vec<String>> {
        let out = self.sql("SELECT SCHEMA_NAME FROM information_schema.SCHEMATA")?;
        let mut names: Vec<String> = out
            .lines()
            .filter(|l| l.starts_with(prefix))
            .map(str::to_string)
            .collect();
        names.sort();
        Ok(names)
    }

    /// Stops the server gracefully (SIGTERM, which makes mariadbd shut down
    /// as `mariadb-admin shutdown` would, needing no account), killing it
    /// after 20 s, until [`MariaDbServer::start_again`]. Stopping a stopped
    /// server does nothing.
    pub fn stop(&self) -> anyhow::Result<()> {
        let mut child = self.child();
        let Some(mut running) = child.take() else {
            return Ok(());
        };
        // A failure means it is gone already (and not yet waited for): the
        // wait below settles that.
        let _ = Command::new("kill")
            .args(["-TERM", &running.id().to_string()])
            .stderr(Stdio::null())
            .status()
            .context("cannot run kill")?;
        let started = Instant::now();
        while started.elapsed() < STOP_TIMEOUT {
            if running
                .try_wait()
                .context("waiting for mariadbd")?
                .is_some()
            {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        kill_group(running);
        bail!(
            "mariadbd did not shut down within {STOP_TIMEOUT:?} and was killed; its log:\n{}",
            self.log()
        )
    }

    /// Starts a stopped server again, on the same port and data.
    pub fn start_again(&self) -> anyhow::Result<()> {
        self.start_on_port()
    }
}

/// Runs a client and returns its output, or its error output as the error.
fn output(cmd: &mut Command) -> anyhow::Result<String> {
    let out = cmd.output().context("cannot run the mariadb client")?;
    if !out.status.success() {
        bail!(
            "the mariadb client failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    if text.ends_with('\n') {
        text.pop();
    }
    Ok(text)
}

/// Kills the server's whole process group and waits for the server. The
/// group goes first, while the server is not yet waited for: until then its
/// process id (the group's id) cannot be given to another process.
fn kill_group(mut child: Child) {
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", child.id())])
        .stderr(Stdio::null())
        .status();
    let _ = child.kill();
    let _ = child.wait();
}

impl Drop for MariaDbServer {
    /// Kills the server outright (its data is about to go) and removes the
    /// directory.
    fn drop(&mut self) {
        if let Some(child) = self.child().take() {
            kill_group(child);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
