//! The SWF reader against hand-written inputs and every real trace in ../shared/workloads (when
//! the shared folder is present: tests/common/shared.rs).

use std::io::Write;

use schedlab::swf::{Mode, TraceInfo, read_bytes, read_path};

mod common;

const HEADER: &str = "; MaxProcs: 8\n; MaxNodes: 4\n; UnixStartTime: 1000\n; Note: kept\n";

fn line(id: u64, submit: i64, run: i64, alloc: i64, req_procs: i64, req_time: i64) -> String {
    format!("{id} {submit} -1 {run} {alloc} 1.50 -1 {req_procs} {req_time} -1 1 7 3 -1 2 1 -1 -1\n")
}

#[test]
fn rules_for_processors_and_requested_time() {
    let text = format!(
        "{HEADER}{}{}{}",
        line(1, 0, 100, 4, 2, 300),  // field 8 wins over field 5
        line(2, 5, 100, 4, -1, 300), // field 8 unknown → field 5
        line(3, 9, 100, 4, 2, -1),   // no request → runtime
    );
    let t = read_bytes(text.as_bytes(), "t.swf", Mode::Strict).unwrap();
    let procs: Vec<_> = t.workload.jobs.iter().map(|j| j.procs).collect();
    let req: Vec<_> = t.workload.jobs.iter().map(|j| j.requested_time).collect();
    assert_eq!(procs, vec![2, 4, 2]);
    assert_eq!(req, vec![300, 300, 100]);
    assert_eq!(t.anomalies.missing_request, 1);
    assert_eq!(t.header.max_procs, Some(8));
    assert_eq!(t.header.max_nodes, Some(4));
    assert_eq!(t.header.unix_start_time, Some(1000));
    assert_eq!(t.header.notes, vec!["Note: kept"]);
    let j = &t.workload.jobs[0];
    assert_eq!((j.user, j.group, j.queue, j.partition), (7, 3, 2, 1));
}

#[test]
fn anomalies_are_counted_not_dropped_silently() {
    let text = [
        line(1, 0, -1, 1, 1, 10),  // unknown runtime: skipped
        line(2, 1, 0, 1, 1, 10),   // zero runtime: skipped
        line(3, 2, 5, -1, -1, 10), // unknown procs: skipped
        line(4, -1, 5, 1, 1, 10),  // unknown submit: skipped
        line(5, 9, 50, 1, 1, 10),  // runtime > request: kept
        line(6, 3, 5, 1, 1, 10),   // out of order: kept, sorted
        line(7, 12, 5, 1, 99, 10), // larger than MaxProcs 8: kept by the reader
    ]
    .concat();
    let t = read_bytes(text.as_bytes(), "a.swf", Mode::Strict).unwrap();
    let a = t.anomalies;
    assert_eq!(
        (
            a.unknown_runtime,
            a.zero_runtime,
            a.unknown_procs,
            a.unknown_submit
        ),
        (1, 1, 1, 1)
    );
    assert_eq!((a.runtime_exceeds_request, a.out_of_order), (1, 1));
    assert_eq!(a.skipped(), 4);
    assert_eq!(t.records, 7);
    let ids: Vec<_> = t.workload.jobs.iter().map(|j| j.id).collect();
    assert_eq!(ids, vec![6, 5, 7]);
    assert_eq!(t.larger_than(8), 1);
}

#[test]
fn bad_fields_name_file_line_and_field() {
    let text = format!(
        "{HEADER}{}1 10 -1 12x 1 -1 -1 1 10 -1 1 1 1 -1 1 1 -1 -1\n",
        line(1, 0, 5, 1, 1, 5)
    );
    let err = read_bytes(text.as_bytes(), "trace.swf", Mode::Strict).unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"trace.swf:6: field 4 (run time): expected an integer, found "12x""#
    );
    let short = read_bytes(b"1 2 3\n", "s.swf", Mode::Strict).unwrap_err();
    assert_eq!(short.to_string(), "s.swf:1: expected 18 fields, found 3");
    let notnum = "1 0 -1 5 1 abc -1 1 5 -1 1 1 1 -1 1 1 -1 -1\n";
    let err = read_bytes(notnum.as_bytes(), "n.swf", Mode::Strict).unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"n.swf:1: field 6 (average CPU time): expected a number, found "abc""#
    );
    let frac = "1 0 -1 5.5 1 -1 -1 1 5 -1 1 1 1 -1 1 1 -1 -1\n";
    assert!(read_bytes(frac.as_bytes(), "f.swf", Mode::Strict).is_err());
}

#[test]
fn lenient_mode_skips_and_counts_malformed_lines() {
    let text = format!(
        "{}garbage\n{}1 2 3\n",
        line(1, 0, 5, 1, 1, 5),
        line(2, 1, 5, 1, 1, 5)
    );
    assert!(read_bytes(text.as_bytes(), "l.swf", Mode::Strict).is_err());
    let t = read_bytes(text.as_bytes(), "l.swf", Mode::Lenient).unwrap();
    assert_eq!(t.workload.len(), 2);
    assert_eq!(t.malformed.count, 2);
    assert_eq!(
        t.malformed.first[0].to_string(),
        "l.swf:2: expected 18 fields, found 1"
    );
    assert_eq!(t.malformed.first[1].line, 4);
}

#[test]
fn crlf_blank_lines_and_extra_fields_are_fine() {
    let text = "; MaxProcs: 4\r\n\r\n1 0 -1 5 1 -1 -1 1 5 -1 1 1 1 -1 1 1 -1 -1 {1,1} q_1d 1:ppn=1\r\n  \n";
    let t = read_bytes(text.as_bytes(), "c.swf", Mode::Strict).unwrap();
    assert_eq!(t.workload.len(), 1);
    assert_eq!(t.header.max_procs, Some(4));
}

#[test]
fn gzip_is_detected_by_magic_bytes_not_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!("{HEADER}{}", line(1, 0, 5, 1, 1, 5));
    let gz_named_txt = dir.path().join("trace.txt");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(text.as_bytes()).unwrap();
    std::fs::write(&gz_named_txt, enc.finish().unwrap()).unwrap();
    let plain_named_gz = dir.path().join("trace.swf.gz");
    std::fs::write(&plain_named_gz, &text).unwrap();
    for path in [&gz_named_txt, &plain_named_gz] {
        let t = read_path(path, Mode::Strict).unwrap();
        assert_eq!(t.workload.len(), 1, "{}", path.display());
        assert_eq!(t.header.max_procs, Some(8));
    }
    let missing = read_path(&dir.path().join("nope.swf"), Mode::Strict).unwrap_err();
    assert!(
        missing.to_string().starts_with("failed to read "),
        "{missing}"
    );
    assert!(missing.to_string().contains("nope.swf"));
}

#[test]
fn every_shared_trace_reads_with_its_documented_job_count() {
    let Some(dir) = common::shared::shared("workloads") else {
        return;
    };
    // Job counts from ../shared/workloads/README.md: every job line is read (kept or skipped).
    let expected = [
        ("SDSC-SP2-1998-4.2-cln.swf.gz", 59_715, Some(128)),
        ("SDSC-BLUE-2000-4.2-cln.swf.gz", 243_306, Some(1152)),
        ("CTC-SP2-1996-3.1-cln.swf.gz", 77_222, Some(338)),
        ("KTH-SP2-1996-2.1-cln.swf.gz", 28_476, Some(100)),
        ("LPC-EGEE-2004-1.2-cln.swf.gz", 234_889, Some(140)),
        ("HPC2N-2002-2.2-cln.swf.gz", 202_871, Some(240)),
        ("METACENTRUM-2009-2.swf.gz", 103_656, None),
        ("SDSC-DS-2004-2.1-cln.swf.gz", 96_069, Some(1664)),
        ("RICC-2010-2.swf.gz", 447_794, None),
        ("alea/wagap-2013.swf.gz", 17_900, None),
    ];
    for (name, jobs, max_procs) in expected {
        let t = read_path(&dir.join(name), Mode::Strict).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(t.records, jobs, "{name}");
        assert_eq!(
            t.workload.len() as u64 + t.anomalies.skipped(),
            jobs,
            "{name}"
        );
        assert_eq!(t.header.max_procs, max_procs, "{name}");
        let info = TraceInfo::from_trace(&t);
        assert_eq!(info.jobs, t.workload.len() as u64);
        if let Some(load) = info.offered_load {
            assert!(
                load > 0.05 && load < 2.0,
                "{name}: implausible offered load {load}"
            );
        }
    }
}

mod never_panics {
    use proptest::prelude::*;
    use schedlab::swf::{Mode, read_bytes};

    proptest! {
        #![proptest_config(crate::common::proptest_cases(2000))]

        /// Arbitrary bytes, and arbitrary mixes of plausible tokens, give a trace or an error —
        /// never a panic.
        #[test]
        fn arbitrary_input(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
            for mode in [Mode::Strict, Mode::Lenient] {
                let _ = read_bytes(&bytes, "fuzz.swf", mode);
            }
        }

        #[test]
        fn token_soup(tokens in prop::collection::vec(
            prop::sample::select(vec!["-1", "0", "1", "99999999999999999999", "3.5", "x", ";", "\n", " ", "\t", "1e9", "-", "1.0", "\r\n"]),
            0..120,
        )) {
            let text = tokens.join(" ");
            let _ = read_bytes(text.as_bytes(), "soup.swf", Mode::Strict);
            if let Ok(t) = read_bytes(text.as_bytes(), "soup.swf", Mode::Lenient) {
                prop_assert!(t.workload.jobs.iter().all(|j| j.runtime > 0 && j.requested_time > 0 && j.procs > 0));
            }
        }
    }
}

#[test]
fn absurd_times_and_sizes_are_errors_not_overflows() {
    let huge = "1 0 -1 9223372036854775807 1 -1 -1 1 10 -1 1 1 1 -1 1 1 -1 -1\n";
    let err = read_bytes(huge.as_bytes(), "h.swf", Mode::Strict).unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"h.swf:1: field 4 (run time): expected at most 10^12 seconds, found "9223372036854775807""#
    );
    let wide = "1 0 -1 10 1 -1 -1 99999999999 10 -1 1 1 1 -1 1 1 -1 -1\n";
    assert!(
        read_bytes(wide.as_bytes(), "w.swf", Mode::Strict)
            .unwrap_err()
            .to_string()
            .contains("at most 4294967295 processors")
    );
}

/// Issue 33, "Real data as it comes": names where SWF has numbers (AleaNG's NGI_CZ traces put
/// `user_A` in field 12) are read in strict mode, numbered after the field's largest numeric id
/// in order of first appearance, and the mapping travels with the workload.
#[test]
fn user_group_and_queue_names_map_to_ids_after_the_numeric_ones() {
    let row = |id: u64, submit: i64, user: &str, group: &str, queue: &str| {
        format!("{id} {submit} -1 100 1 -1 -1 1 100 -1 1 {user} {group} -1 {queue} -1 -1 -1\n")
    };
    let text = format!(
        "{HEADER}{}{}{}{}{}",
        row(1, 0, "user_B", "grp", "q_long"),
        row(2, 1, "7", "3", "2"),
        row(3, 2, "user_A", "3", "q_short"),
        row(4, 3, "user_B", "grp", "q_long"),
        row(5, 4, "-1", "-1", "-1"),
    );
    let t = read_bytes(text.as_bytes(), "names.swf", Mode::Strict).unwrap();
    let users: Vec<i32> = t.workload.jobs.iter().map(|j| j.user).collect();
    let groups: Vec<i32> = t.workload.jobs.iter().map(|j| j.group).collect();
    let queues: Vec<i32> = t.workload.jobs.iter().map(|j| j.queue).collect();
    // Largest numeric ids: user 7, group 3, queue 2. Names follow, first appearance first.
    assert_eq!(users, [8, 7, 9, 8, -1]);
    assert_eq!(groups, [4, 3, 3, 4, -1]);
    assert_eq!(queues, [3, 2, 4, 3, -1]);
    let names = &t.workload.names;
    assert_eq!(names.users.get(&8).map(String::as_str), Some("user_B"));
    assert_eq!(names.users.get(&9).map(String::as_str), Some("user_A"));
    assert_eq!(names.groups.get(&4).map(String::as_str), Some("grp"));
    assert_eq!(t.workload.queue_name(4), Some("q_short"));
    let info = TraceInfo::from_trace(&t);
    assert_eq!(info.users, 3);
    assert_eq!(info.user_names.get("user_A"), Some(&9));
    // The same file read twice gives the same ids (no hash order anywhere).
    let again = read_bytes(text.as_bytes(), "names.swf", Mode::Strict).unwrap();
    assert_eq!(again.workload, t.workload);
    // A fraction is neither a number of the field's kind nor a name.
    let bad = format!("{HEADER}{}", row(1, 0, "1.5", "1", "1"));
    let err = read_bytes(bad.as_bytes(), "bad.swf", Mode::Strict).unwrap_err();
    assert!(
        err.to_string().contains("field 12") && err.to_string().contains("an integer or a name"),
        "{err}"
    );
}
