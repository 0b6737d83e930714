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

/// Whether `psql` shows the disagreement a Citus reproducer records: the
/// file runs whole on the coordinator in a fresh schema, and the rows of
/// query 1 and query 2 break the oracle's relation. Relations psql cannot
/// judge by comparing two row sets (PQS's containment, TLP-aggregate's
/// recombination, a containment `transform`) need the file to run and
/// lancet's confirmation on a fresh database.
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
    std::fs::write(file.path(), script).unwrap();
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
    let _ = cluster.coordinator.psql(
        "postgres",
        "DROP SCHEMA IF EXISTS lancet_repro, lancet_twin CASCADE",
    );
    if !out.status.success() {
        eprintln!("psql failed: {}", String::from_utf8_lossy(&out.stderr));
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
