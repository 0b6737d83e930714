//! What the PostgreSQL provider may touch, and how long a call may take:
//! it never replaces or drops a database it cannot prove it created, a
//! failed drop is an error (not a panic), a stopped backend is a hang
//! within a bound (not a freeze), and no error shows a password. Each test
//! starts its own throwaway server.

use lancet_core::{
    Connection, DatabaseError, DatabaseId, DbError, FailureKind, OwnedDatabase, Provider,
};
use lancet_postgres::connection::PgConnection;
use lancet_postgres::{PostgresProvider, ServerUrl};
use lancet_testkit::PgServer;
use std::process::Command;
use std::time::{Duration, Instant};

fn server() -> PgServer {
    PgServer::start().unwrap_or_else(|e| panic!("{e:#}"))
}

fn id(run: &str, index: u64) -> DatabaseId {
    DatabaseId {
        run: format!("{run}{}", std::process::id()),
        thread: 0,
        index,
    }
}

fn database_error(e: &anyhow::Error) -> Option<&DatabaseError> {
    e.chain().find_map(|c| c.downcast_ref::<DatabaseError>())
}

fn db_error(e: &anyhow::Error) -> Option<&DbError> {
    e.chain().find_map(|c| c.downcast_ref::<DbError>())
}

fn exists(pg: &PgServer, name: &str) -> bool {
    pg.psql(
        "postgres",
        &format!("SELECT count(*) FROM pg_database WHERE datname = '{name}'"),
    )
    .unwrap()
        == "1"
}

#[test]
fn a_foreign_database_with_our_name_is_name_taken_and_survives() {
    let pg = server();
    let name = id("taken", 0).name();
    pg.psql("postgres", "CREATE ROLE other LOGIN CREATEDB")
        .unwrap();
    pg.psql(
        "postgres",
        &format!("CREATE DATABASE \"{name}\" OWNER other"),
    )
    .unwrap();
    pg.psql(
        &name,
        "CREATE TABLE keep (a int); INSERT INTO keep VALUES (1)",
    )
    .unwrap();
    let provider = PostgresProvider::connect(&pg.url()).unwrap();
    assert_eq!(
        provider.server().as_deref(),
        Some(format!("postgres@127.0.0.1:{}", pg.port()).as_str())
    );
    let e = provider.create_database(&id("taken", 0)).err().unwrap();
    assert!(
        matches!(database_error(&e), Some(DatabaseError::NameTaken(n)) if *n == name),
        "{e:#}"
    );
    assert_eq!(pg.psql(&name, "SELECT count(*) FROM keep").unwrap(), "1");
    // Another name works, and carries its oid.
    let created = provider.create_database(&id("taken", 1)).unwrap();
    let oid = pg
        .psql(
            "postgres",
            &format!(
                "SELECT oid FROM pg_database WHERE datname = '{}'",
                created.owned.name
            ),
        )
        .unwrap();
    assert_eq!(created.owned.identity.as_deref(), Some(oid.as_str()));
    drop(created.conn);
    assert!(provider.drop_database(&created.owned).unwrap());
    assert!(!exists(&pg, &created.owned.name));
}

#[test]
fn drop_refuses_what_is_not_provably_ours() {
    let pg = server();
    pg.psql("postgres", "CREATE ROLE other LOGIN CREATEDB")
        .unwrap();
    let provider = PostgresProvider::connect(&pg.url()).unwrap();
    // Missing: nothing to do.
    let missing = OwnedDatabase {
        name: id("gone", 0).name(),
        identity: Some("1".into()),
    };
    assert!(!provider.drop_database(&missing).unwrap());
    // The name dropped and re-created by someone else: another oid.
    let first = provider.create_database(&id("reused", 0)).unwrap();
    drop(first.conn);
    let name = first.owned.name.clone();
    pg.psql("postgres", &format!("DROP DATABASE \"{name}\""))
        .unwrap();
    pg.psql("postgres", &format!("CREATE DATABASE \"{name}\""))
        .unwrap();
    let e = provider.drop_database(&first.owned).err().unwrap();
    assert!(
        matches!(database_error(&e), Some(DatabaseError::NotOurs { name: n, .. }) if *n == name),
        "{e:#}"
    );
    assert!(exists(&pg, &name));
    // Same oid, another owner.
    let second = provider.create_database(&id("owner", 0)).unwrap();
    drop(second.conn);
    pg.psql(
        "postgres",
        &format!("ALTER DATABASE \"{}\" OWNER TO other", second.owned.name),
    )
    .unwrap();
    let e = provider.drop_database(&second.owned).err().unwrap();
    assert!(
        matches!(database_error(&e), Some(DatabaseError::NotOurs { why, .. }) if why.contains("other")),
        "{e:#}"
    );
    assert!(exists(&pg, &second.owned.name));
    // No recorded oid (a run killed between CREATE and learning it): the
    // owner is the proof, so another role's database stays.
    let e = provider
        .drop_database(&OwnedDatabase {
            name: second.owned.name.clone(),
            identity: None,
        })
        .err()
        .unwrap();
    assert!(
        matches!(database_error(&e), Some(DatabaseError::NotOurs { .. })),
        "{e:#}"
    );
    assert!(exists(&pg, &second.owned.name));
    // Not lancet's name at all.
    assert!(provider
        .drop_database(&OwnedDatabase {
            name: "postgres".into(),
            identity: Some("5".into()),
        })
        .is_err());
    assert!(exists(&pg, "postgres"));
    // Ours: dropped once, then gone.
    let third = provider.create_database(&id("mine", 0)).unwrap();
    drop(third.conn);
    assert!(provider.drop_database(&third.owned).unwrap());
    assert!(!provider.drop_database(&third.owned).unwrap());
    // Ours without a recorded oid: the role owns it, so it is dropped.
    let fourth = provider.create_database(&id("intent", 0)).unwrap();
    drop(fourth.conn);
    let intent = OwnedDatabase {
        name: fourth.owned.name.clone(),
        identity: None,
    };
    assert!(provider.drop_database(&intent).unwrap());
}

#[test]
fn a_createdb_role_cannot_force_out_a_superuser_but_fails_cleanly() {
    let pg = server();
    pg.psql("postgres", "CREATE ROLE r LOGIN CREATEDB").unwrap();
    let provider = PostgresProvider::connect(&pg.url_for("r", "postgres")).unwrap();
    let created = provider.create_database(&id("force", 0)).unwrap();
    drop(created.conn);
    let name = created.owned.name.clone();
    // A superuser's session sits in the database.
    let superuser = ServerUrl::parse(&pg.url_for("postgres", &name)).unwrap();
    let mut sitting = PgConnection::open(&superuser.config_for(&name), Duration::from_secs(2))
        .unwrap_or_else(|e| panic!("{e}"));
    sitting.query("SELECT 1").unwrap();
    let start = Instant::now();
    let e = provider.drop_database(&created.owned).err().unwrap();
    let took = start.elapsed();
    let code = db_error(&e).and_then(|d| d.code.clone());
    assert!(matches!(code.as_deref(), Some("42501" | "55006")), "{e:#}");
    assert!(database_error(&e).is_none(), "{e:#}");
    assert!(took < Duration::from_secs(20), "{took:?}");
    assert!(exists(&pg, &name));
    eprintln!("the refused drop took {took:?}: {e:#}");
    // Once the session is gone, the drop works.
    drop(sitting);
    assert!(provider.drop_database(&created.owned).unwrap());
    assert!(!exists(&pg, &name));
}

/// Continues a stopped process when dropped, also when the test fails.
struct Continue(String);

impl Drop for Continue {
    fn drop(&mut self) {
        let _ = Command::new("kill").args(["-CONT", &self.0]).status();
    }
}

#[test]
fn a_stopped_backend_is_a_hang_within_bounds_not_a_freeze() {
    let pg = server();
    let limit = Duration::from_secs(1);
    let provider = PostgresProvider::connect(&pg.url())
        .unwrap()
        .with_time_limit(limit);
    let created = provider.create_database(&id("hang", 0)).unwrap();
    let mut conn = created.conn;
    let pid = match conn.query("SELECT pg_backend_pid()").unwrap()[0][0] {
        lancet_core::Value::Integer(p) => p.to_string(),
        ref v => panic!("{v:?}"),
    };
    let guard = Continue(pid.clone());
    assert!(Command::new("kill")
        .args(["-STOP", &pid])
        .status()
        .unwrap()
        .success());
    let start = Instant::now();
    let e = conn.query("SELECT 1").unwrap_err();
    let took = start.elapsed();
    assert_eq!(e.kind, FailureKind::Hang, "{e}");
    assert!(took >= limit, "{took:?}");
    assert!(took < limit + Duration::from_secs(8), "{took:?}");
    assert!(e.message.contains("lancet closed the connection"), "{e}");
    eprintln!("the hang was reported after {took:?}: {e}");
    let start = Instant::now();
    let e = conn.query("SELECT 1").unwrap_err();
    assert_eq!(e.kind, FailureKind::ConnectionLost, "{e}");
    let e = conn.execute("SELECT 1").unwrap_err();
    assert_eq!(e.kind, FailureKind::ConnectionLost, "{e}");
    assert!(start.elapsed() < Duration::from_millis(200));
    drop(guard);
    drop(conn);
    // The continued backend finds its socket closed and leaves; the
    // database can go.
    assert!(provider.drop_database(&created.owned).unwrap());
}

#[test]
fn a_slow_statement_is_still_a_timeout_and_the_connection_stays() {
    let pg = server();
    let provider = PostgresProvider::connect(&pg.url())
        .unwrap()
        .with_time_limit(Duration::from_secs(1));
    let created = provider.create_database(&id("slow", 0)).unwrap();
    let mut conn = created.conn;
    let start = Instant::now();
    let e = conn.query("SELECT pg_sleep(10)").unwrap_err();
    assert_eq!(
        (e.kind, e.code.as_deref()),
        (FailureKind::Timeout, Some("57014")),
        "{e}"
    );
    assert!(start.elapsed() < Duration::from_secs(3));
    assert_eq!(
        conn.query("SELECT 1").unwrap(),
        vec![vec![lancet_core::Value::Integer(1)]]
    );
    let e = conn.execute("SELEC 1").unwrap_err();
    assert_eq!(
        (e.kind, e.code.as_deref()),
        (FailureKind::Statement, Some("42601"))
    );
    // A terminated backend: lost, and every later call fails at once.
    pg.psql(
        "postgres",
        &format!(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{}'",
            created.owned.name
        ),
    )
    .unwrap();
    let e = conn.query("SELECT 1").unwrap_err();
    assert_eq!(e.kind, FailureKind::ConnectionLost, "{e}");
    let e = conn.query("SELECT 1").unwrap_err();
    assert_eq!(e.kind, FailureKind::ConnectionLost, "{e}");
    drop(conn);
    assert!(provider.drop_database(&created.owned).unwrap());
}

#[test]
fn a_restarting_server_is_a_lost_connection_to_retry() {
    let pg = server();
    let provider = PostgresProvider::connect(&pg.url()).unwrap();
    let created = provider.create_database(&id("restart", 0)).unwrap();
    let mut conn = created.conn;
    pg.restart().unwrap();
    let e = conn.query("SELECT 1").unwrap_err();
    assert_eq!(e.kind, FailureKind::ConnectionLost, "{e}");
    drop(conn);
    // The admin path works again once the server is back.
    assert!(provider.drop_database(&created.owned).unwrap());
}

#[test]
fn no_error_shows_a_password() {
    let secret = "S3cr3tPW";
    // Port 1 refuses connections: every good string fails at connect.
    for url in [
        "postgres://u:S3cr3tPW@127.0.0.1:1/db",
        "postgresql://u@127.0.0.1:1/db?password=S3cr3tPW",
        "host=127.0.0.1 port=1 user=u password=S3cr3tPW dbname=db",
        "cdb:S3cr3tPW@garbage",
        "postgres://cdb:S3cr3tPW@garbage",
        "postgres://u:S3c@r3tPW@127.0.0.1:1/db",
        "postgres://u@127.0.0.1:1/db?password=S3cr3tPW&S3cr3tPW=1",
        "host=127.0.0.1 port=1 user=u password=S3cr3t PW",
        "host=127.0.0.1 port=1 user=u password S3cr3tPW",
        "host=127.0.0.1 port=1 user=u S3cr3tPW=1",
        "host=127.0.0.1 port=1 user=u password='S3cr3tPW",
        "mysql://u:S3cr3tPW@127.0.0.1:1/db",
    ] {
        let e = PostgresProvider::connect(url).err().unwrap();
        let text = format!("{e:#} {e:?}");
        assert!(!text.contains(secret), "{url:?}: {text}");
        assert!(!text.contains("S3c"), "{url:?}: {text}");
        eprintln!("{e:#}");
        if url.contains("127.0.0.1:1") || url.contains("port=1") {
            if let Some(d) = db_error(&e) {
                assert_eq!(d.kind, FailureKind::ConnectionLost, "{url:?}: {text}");
                assert!(text.contains("u@127.0.0.1:1/db"), "{url:?}: {text}");
            }
        }
    }
    let e = PostgresProvider::connect("postgres://u:S3cr3tPW@127.0.0.1:1/db")
        .err()
        .unwrap();
    assert!(
        db_error(&e).is_some_and(|d| d.kind == FailureKind::ConnectionLost),
        "{e:#}"
    );
}

/// A session that died between PREPARE TRANSACTION and COMMIT PREPARED
/// (a Citus backend killed mid-commit) leaves a prepared transaction in
/// lancet's database, which no DROP DATABASE, even WITH (FORCE), removes:
/// the drop rolls it back, connected to that database, and drops.
#[test]
fn a_transaction_left_prepared_in_our_database_does_not_keep_it() {
    let pg = PgServer::start_with(
        lancet_testkit::ServerOptions::default().setting("max_prepared_transactions", "5"),
    )
    .unwrap_or_else(|e| panic!("{e:#}"));
    let provider = PostgresProvider::connect(&pg.url()).unwrap();
    let created = provider.create_database(&id("prepared", 0)).unwrap();
    let name = created.owned.name.clone();
    drop(created.conn);
    pg.psql(
        &name,
        "BEGIN; CREATE TABLE t (a int); PREPARE TRANSACTION 'lancet_left_prepared'",
    )
    .unwrap();
    assert_eq!(
        pg.psql("postgres", "SELECT count(*) FROM pg_prepared_xacts")
            .unwrap(),
        "1"
    );
    assert!(provider.drop_database(&created.owned).unwrap());
    assert!(!exists(&pg, &name));
    assert_eq!(
        pg.psql("postgres", "SELECT count(*) FROM pg_prepared_xacts")
            .unwrap(),
        "0"
    );
}
