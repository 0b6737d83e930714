//! The throwaway MariaDB server: it starts, answers root through its socket
//! and `lancet` over TCP with the URL's password, stops and starts again on
//! the same port, and leaves nothing behind.

use lancet_testkit::MariaDbServer;
use std::process::{Command, Stdio};
use std::time::Instant;

/// `user`, `password` and port of a `mysql://user:password@127.0.0.1:PORT/db` URL.
fn parts(url: &str) -> (String, String, u16) {
    let rest = url.strip_prefix("mysql://").expect("a mysql:// URL");
    let (userinfo, rest) = rest.split_once('@').expect("user and password");
    let (user, password) = userinfo.split_once(':').expect("a password");
    let hostport = rest.split('/').next().unwrap();
    let port = hostport
        .strip_prefix("127.0.0.1:")
        .expect("on 127.0.0.1")
        .parse()
        .unwrap();
    (user.to_string(), password.to_string(), port)
}

/// `SELECT 1` with the `mariadb` client over TCP, as the URL's account.
fn select_one(url: &str) -> Result<String, String> {
    let (user, password, port) = parts(url);
    let out = Command::new("mariadb")
        .args(["--no-defaults", "-N", "-B", "-h", "127.0.0.1"])
        .args(["-P", &port.to_string(), "-u", &user])
        .arg(format!("-p{password}"))
        .args(["-e", "SELECT 1"])
        .stdin(Stdio::null())
        .output()
        .expect("the mariadb client runs");
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

#[test]
fn starts_answers_restarts_and_cleans_up() {
    if !MariaDbServer::available() {
        eprintln!("SKIPPED: MariaDB is not installed (tests/run.sh installs it)");
        return;
    }
    let started = Instant::now();
    let server = MariaDbServer::start().expect("the server starts");
    eprintln!("MariaDbServer::start took {:?}", started.elapsed());
    let dir = server.dir().to_path_buf();
    assert!(dir.exists());

    let version = server.sql("SELECT VERSION()").unwrap();
    assert!(version.contains("MariaDB"), "{version}\n{}", server.log());
    assert_eq!(server.databases("mysql").unwrap(), vec!["mysql"]);
    assert_eq!(server.databases("test").unwrap(), vec!["test"]);
    // Byte-for-byte prefixes: `_` is no wildcard.
    server
        .sql("CREATE DATABASE lancet_a; CREATE DATABASE lancetxb")
        .unwrap();
    assert_eq!(server.databases("lancet_").unwrap(), vec!["lancet_a"]);
    let err = server.sql("SELECT * FROM mysql.no_such_table").unwrap_err();
    assert!(format!("{err:#}").contains("doesn't exist"), "{err:#}");

    let url = server.url();
    assert_eq!(
        url,
        format!("mysql://lancet:lancet-pw@127.0.0.1:{}/test", server.port())
    );
    assert_eq!(select_one(&url).unwrap(), "1");
    assert!(select_one(&server.url_for("lancet", "wrong")).is_err());

    server.stop().unwrap();
    assert!(select_one(&url).is_err(), "a stopped server answers");
    server.stop().unwrap();
    let again = Instant::now();
    server.start_again().unwrap();
    eprintln!("MariaDbServer::start_again took {:?}", again.elapsed());
    assert_eq!(select_one(&url).unwrap(), "1");
    assert_eq!(server.databases("lancet_").unwrap(), vec!["lancet_a"]);

    drop(server);
    assert!(!dir.exists(), "{} is left behind", dir.display());
}

#[test]
fn url_for_encodes_user_and_password() {
    if !MariaDbServer::available() {
        eprintln!("SKIPPED: MariaDB is not installed (tests/run.sh installs it)");
        return;
    }
    let server = MariaDbServer::start().expect("the server starts");
    server
        .sql("CREATE USER 'o''k'@'127.0.0.1' IDENTIFIED BY 'p@ss:w/rd'; GRANT ALL ON test.* TO 'o''k'@'127.0.0.1'")
        .unwrap();
    let url = server.url_for("o'k", "p@ss:w/rd");
    assert_eq!(
        url,
        format!(
            "mysql://o%27k:p%40ss%3Aw%2Frd@127.0.0.1:{}/test",
            server.port()
        )
    );
}

#[test]
fn a_panicking_test_leaves_no_server() {
    if !MariaDbServer::available() {
        eprintln!("SKIPPED: MariaDB is not installed (tests/run.sh installs it)");
        return;
    }
    let (tx, rx) = std::sync::mpsc::channel();
    let result = std::thread::spawn(move || {
        let server = MariaDbServer::start().expect("the server starts");
        tx.send((server.url(), server.dir().to_path_buf())).unwrap();
        panic!("a test fails with its server running");
    })
    .join();
    assert!(result.is_err());
    let (_, dir) = rx.recv().unwrap();
    // By its directory, which is in its arguments: its port may be another
    // test's server's by now.
    let ps = Command::new("ps").args(["-eo", "args"]).output().unwrap();
    let ps = String::from_utf8_lossy(&ps.stdout);
    let dir_arg = format!("{}/", dir.display());
    assert!(
        !ps.lines().any(|l| l.contains(&dir_arg)),
        "the server outlived the panic:\n{ps}"
    );
    assert!(!dir.exists(), "{} is left behind", dir.display());
}
