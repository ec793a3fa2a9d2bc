//! Snapshot tests of the error messages for a corpus of invalid manifests
//! (`tests/fixtures/manifests/invalid/*.yaml`, expected text in `*.expected`). The messages are
//! user-facing text: review a changed snapshot before accepting it with
//! `SCHEDLAB_BLESS=1 cargo test --test manifest_errors`.

use std::fs;
use std::path::Path;

#[test]
fn invalid_manifests_fail_with_their_reviewed_messages() {
    // Relative paths keep messages free of machine-specific prefixes.
    let dir = Path::new("tests/fixtures/manifests/invalid");
    let mut cases: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    cases.sort();
    assert!(cases.len() >= 12);
    let bless = std::env::var_os("SCHEDLAB_BLESS").is_some();
    let mut mismatches = Vec::new();
    for case in &cases {
        let got = match schedlab::manifest::load(case) {
            Ok(_) => "(loaded without error)".to_string(),
            Err(e) => format!("error: {e}\n"),
        };
        let expected_path = case.with_extension("expected");
        if bless {
            fs::write(&expected_path, &got).unwrap();
        }
        let want = fs::read_to_string(&expected_path).unwrap_or_default();
        if got != want {
            mismatches.push(format!(
                "== {}\n-- got:\n{got}-- want:\n{want}",
                case.display()
            ));
        }
        assert!(!got.contains("panicked"));
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

/// Errors found when a run is planned, against the manifest's traces
/// (`tests/fixtures/manifests/plan-invalid/*.yaml`, next to their small traces): filters that
/// keep no job, dated windows on a trace without a start time. Blessed like the load errors.
#[test]
fn plan_time_selection_errors_name_the_traces_span() {
    let dir = Path::new("tests/fixtures/manifests/plan-invalid");
    let mut cases: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    cases.sort();
    assert!(cases.len() >= 5);
    let bless = std::env::var_os("SCHEDLAB_BLESS").is_some();
    let mut mismatches = Vec::new();
    for case in &cases {
        let m = schedlab::manifest::load(case).unwrap_or_else(|e| panic!("{e}"));
        let got = match schedlab::execute::selection::place_and_check(&mut [m]) {
            Ok(()) => "(planned without error)".to_string(),
            Err(e) => format!("error: {e}\n"),
        };
        let expected_path = case.with_extension("expected");
        if bless {
            fs::write(&expected_path, &got).unwrap();
        }
        let want = fs::read_to_string(&expected_path).unwrap_or_default();
        if got != want {
            mismatches.push(format!(
                "== {}\n-- got:\n{got}-- want:\n{want}",
                case.display()
            ));
        }
        // Every case is a located plan-time error that says what was expected.
        assert!(got.starts_with("error: failed to plan "), "{got}");
        assert!(
            got.contains("  --> ") && got.contains("  at workloads.small."),
            "{got}"
        );
        assert!(got.contains("hint: "), "{got}");
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}
