//! `flashbuf reproduce all --quick` from scratch: every paper writes its report, and every file
//! and plot the report links to exists.

use std::path::Path;
use std::process::Command;

#[test]
fn reproduce_all_quick_writes_every_report_and_plot() {
    let out = tempfile::tempdir().unwrap();
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces");
    let o = Command::new(env!("CARGO_BIN_EXE_flashbuf"))
        .env("FLASHBUF_CACHE_DIR", std::env::temp_dir().join(format!("flashbuf-test-cache-{}", std::process::id())))
        .args(["reproduce", "all", "--quick", "-q", "--out"])
        .arg(out.path())
        .arg("--traces")
        .arg(&shared)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    for paper in ["adlru", "cfdc", "ref", "gather"] {
        let dir = out.path().join(paper);
        let report = std::fs::read_to_string(dir.join("REPORT.md")).unwrap_or_else(|e| panic!("{paper}: {e}"));
        assert!(report.starts_with("# "), "{paper}: title");
        assert!(report.contains("Claims checked:"), "{paper}: tally");
        assert!(report.matches("\n## ").count() >= 3, "{paper}: sections");
        assert!(
            report.contains(
                "| the paper says | tolerance (fixed before measuring) | we measured (mean ± sd) | seeds | verdict | why |"
            ),
            "{paper}: claims table with tolerance and seeds"
        );
        // Every linked file exists; every plot has its PNG and SVG.
        let mut plots = 0;
        for link in report.split("](").skip(1).map(|s| &s[..s.find(')').unwrap()]) {
            assert!(dir.join(link).is_file(), "{paper}: {link} is linked but missing");
            if let Some(base) = link.strip_suffix(".png") {
                plots += 1;
                assert!(dir.join(format!("{base}.svg")).is_file(), "{paper}: {base}.svg");
                let png = std::fs::read(dir.join(link)).unwrap();
                assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "{paper}: {link} is a PNG");
            }
        }
        assert!(plots >= 3, "{paper}: only {plots} plots");
    }
}

#[test]
fn an_existing_report_is_kept_unless_forced() {
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("gather");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("REPORT.md"), "my edits").unwrap();
    let run = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_flashbuf"))
            .env("FLASHBUF_CACHE_DIR", std::env::temp_dir().join(format!("flashbuf-test-cache-{}", std::process::id())))
            .args(["reproduce", "gather", "--quick", "-q", "--out"])
            .arg(out.path())
            .args(extra)
            .output()
            .unwrap()
    };
    let o = run(&["--traces", "/nonexistent/traces"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && stderr.contains("REPORT.md: a report is already there") && stderr.contains("--force"),
        "{stderr}"
    );
    // A missing trace directory is a warning even with -q.
    assert!(stderr.contains("warning: trace directory /nonexistent/traces not found"), "{stderr}");
    assert_eq!(std::fs::read_to_string(dir.join("REPORT.md")).unwrap(), "my edits");
    let o = run(&["--force"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(std::fs::read_to_string(dir.join("REPORT.md")).unwrap().starts_with("# "));
}

#[test]
fn help_lists_every_paper() {
    let o = Command::new(env!("CARGO_BIN_EXE_flashbuf")).args(["reproduce", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&o.stdout);
    for paper in ["adlru", "cfdc", "ref", "gather", "all"] {
        assert!(help.contains(paper), "{paper} missing from: {help}");
    }
}
