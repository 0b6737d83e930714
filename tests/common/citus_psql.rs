//! Showing a Citus reproducer's disagreement with `psql` on the
//! coordinator: what tells a real Citus bug from a false alarm.

use lancet_testkit::CitusCluster;

/// `psql` as the superuser on the coordinator's `postgres` database, stopping
/// at the first error.
pub fn coordinator_psql(cluster: &CitusCluster) -> std::process::Command {
    let mut c = std::process::Command::new(cluster.coordinator.bindir().join("psql"));
    c.args(["-X", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1"])
        .args(["-p", &cluster.coordinator.port().to_string()])
        .args(["-U", "postgres", "-d", "postgres"]);
    c
}

/// The message of the error an unexpected-error reproducer records (its
/// `-- error: [CODE] message` header), or None for another finding.
fn recorded_error(text: &str) -> Option<String> {
    if !text.starts_with("-- lancet") || !text.lines().next()?.ends_with("unexpected-error") {
        return None;
    }
    let header = text.lines().find_map(|l| l.strip_prefix("-- error: ["))?;
    Some(header.split_once("] ")?.1.to_string())
}

/// Whether the reproducer records a crash (`-- lancet ... finding: crash`).
fn records_crash(text: &str) -> bool {
    text.lines()
        .next()
        .is_some_and(|l| l.starts_with("-- lancet") && l.ends_with("finding: crash"))
}

/// Waits (at most a minute) until the coordinator, restarting after a
/// crash, answers again.
fn wait_for_coordinator(cluster: &CitusCluster) {
    let start = std::time::Instant::now();
    while start.elapsed() < std::time::Duration::from_secs(60) {
        let up = coordinator_psql(cluster)
            .args(["-c", "SELECT 1"])
            .output()
            .is_ok_and(|o| o.status.success());
        if up {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

/// Whether `psql` shows the disagreement a Citus reproducer records: the
/// file runs whole on the coordinator in a fresh schema, and the rows of
/// query 1 and query 2 break the oracle's relation. Relations psql cannot
/// judge by comparing two row sets (PQS's containment, TLP-aggregate's
/// recombination, a containment `transform`) need the file to run and
/// lancet's confirmation on a fresh database. An unexpected-error
/// reproducer is shown when psql stops after its failing statement's
/// marker with the recorded error, a crash reproducer when psql loses
/// the server.
pub fn psql_shows(cluster: &CitusCluster, text: &str) -> bool {
    let oracle = text
        .lines()
        .find_map(|l| l.strip_prefix("-- oracle: "))
        .unwrap_or("")
        .to_string();
    let relation = text
        .lines()
        .find_map(|l| l.strip_prefix("-- relation that broke: "))
        .unwrap_or("")
        .to_string();
    let script = text.replace("\n-- query ", "\n\\echo LANCET-QUERY\n-- query ");
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), &script).unwrap();
    let out = coordinator_psql(cluster)
        .args(["-A", "-t", "-q"])
        .args([
            "-c",
            "DROP SCHEMA IF EXISTS lancet_repro, lancet_twin CASCADE",
        ])
        .args(["-c", "CREATE SCHEMA lancet_repro"])
        .args(["-c", "SET search_path TO lancet_repro"])
        .arg("-f")
        .arg(file.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // A crash finding: psql loses the server at the failing statement
    // (not before it); the coordinator restarts.
    let failing = script
        .lines()
        .position(|l| l.contains("(failing statement)"))
        .map_or(usize::MAX, |i| i + 1);
    let crashed = records_crash(text)
        && !out.status.success()
        && stderr.lines().any(|l| {
            let mut parts = l.splitn(4, ':');
            let at = parts.nth(2).and_then(|n| n.trim().parse::<usize>().ok());
            at.is_some_and(|n| n > failing)
                && l.contains("server closed the connection unexpectedly")
        });
    if records_crash(text) {
        wait_for_coordinator(cluster);
    }
    let _ = cluster.coordinator.psql(
        "postgres",
        "DROP SCHEMA IF EXISTS lancet_repro, lancet_twin CASCADE",
    );
    if records_crash(text) {
        if !crashed {
            eprintln!("psql did not lose the server: {stderr}");
        }
        return crashed;
    }
    // An error finding: psql stops at the failing statement with the
    // recorded error.
    if let Some(message) = recorded_error(text) {
        let failing = script
            .lines()
            .position(|l| l.contains("(failing statement)"))
            .map_or(usize::MAX, |i| i + 1);
        let shown = stderr.lines().any(|l| {
            let mut parts = l.splitn(4, ':');
            let (_, _, line, rest) = (parts.next(), parts.next(), parts.next(), parts.next());
            let at = line.and_then(|n| n.trim().parse::<usize>().ok());
            // psql prints the error's first line; the header holds the
            // whole message (DETAIL and HINT too) on one line.
            let shown = rest
                .and_then(|r| r.trim_start().strip_prefix("ERROR:"))
                .map(str::trim);
            at.is_some_and(|n| n > failing)
                && shown.is_some_and(|m| !m.is_empty() && message.starts_with(m))
        });
        if !shown {
            eprintln!("psql did not stop with the recorded error: {stderr}");
        }
        return !out.status.success() && shown;
    }
    if !out.status.success() {
        eprintln!("psql failed: {stderr}");
        return false;
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let sections: Vec<Vec<String>> = stdout
        .split("LANCET-QUERY\n")
        .map(|s| {
            let mut rows: Vec<String> = s.lines().map(str::to_string).collect();
            rows.sort();
            rows
        })
        .collect();
    let (Some(a), Some(b)) = (sections.get(1), sections.get(2)) else {
        return false;
    };
    let equal_rows = relation.contains(") = RS(") || oracle == "norec";
    if !equal_rows {
        return text.contains("-- confirmed on a fresh database: yes");
    }
    if relation.contains("as sets") {
        let set = |v: &Vec<String>| v.iter().cloned().collect::<std::collections::BTreeSet<_>>();
        set(a) != set(b)
    } else {
        a != b
    }
}
