//! Every reader of user files fuzzed in CI-sized form (issue 37): SWF traces, manifests, Alea and
//! AleaNG machine files, AleaNG's `.queues`/`.users`/`.groups` files, job tables (CSV through
//! the Helios mapping, random bytes as Parquet; Slurm accounting through the `slurm` mapping).
//! Inputs are random lines
//! built from tokens that readers find hard (empty, negative, beyond `u32`, beyond `u64`, NaN,
//! brackets, separators), valid lines with fields replaced, and random bytes. Each reader must
//! read the input or refuse it with an error that says where (a line, or a manifest's
//! position or key path) — never panic (a panic fails the test with the input shrunk).
//!
//! A few hundred cases per reader keep the file to a few seconds; `PROPTEST_CASES=100000` runs a
//! longer search.

use std::fs;

use proptest::prelude::*;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|c| c.parse().ok())
            .unwrap_or(300),
        ..ProptestConfig::default()
    }
}

/// A column value readers find hard, or a plain one.
fn token() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => (0u64..200).prop_map(|n| n.to_string()),
        1 => any::<i64>().prop_map(|n| n.to_string()),
        1 => any::<u64>().prop_map(|n| n.to_string()),
        1 => "[a-z_]{1,8}",
        2 => prop::sample::select(vec![
            "0", "-1", "-2", "1", "4000000000", "4294967296", "16777217", "500000000",
            "18446744073709551616", "99999999999999999999999", "1.5", "-0.5", "1e308", "nan",
            "inf", "-", "none", "x", "{1,2}", "{}", "1:ppn=4:cl_a", "2x8:gpu", "a,b", ",", ";",
            "é", "\u{feff}", "0x10", "+3", "00",
        ])
        .prop_map(str::to_string),
    ]
}

/// A line of `0..max` tokens, separated by spaces or tabs.
fn line(max: usize) -> impl Strategy<Value = String> {
    (prop::collection::vec(token(), 0..max), any::<bool>())
        .prop_map(|(tokens, tabs)| tokens.join(if tabs { "\t" } else { " " }))
}

/// A valid line with some of its columns replaced, a column dropped or added.
fn mutated(base: &'static str) -> impl Strategy<Value = String> {
    let n = base.split_whitespace().count();
    (
        prop::collection::vec((0..n, token()), 0..4),
        0..3usize,
        token(),
    )
        .prop_map(move |(replace, shape, extra)| {
            let mut cols: Vec<String> = base.split_whitespace().map(str::to_string).collect();
            for (i, t) in replace {
                cols[i] = t;
            }
            match shape {
                1 => {
                    cols.pop();
                }
                2 => cols.push(extra),
                _ => {}
            }
            cols.join(" ")
        })
}

/// Text of up to `lines` lines, each random or a mutation of one of `bases`, with comments.
fn text(
    bases: Vec<&'static str>,
    lines: usize,
    max_tokens: usize,
) -> impl Strategy<Value = String> {
    let base = prop::sample::select(bases).prop_flat_map(mutated);
    let one = prop_oneof![
        4 => base,
        2 => line(max_tokens),
        1 => line(4).prop_map(|l| format!("; {l}")),
        1 => Just(String::new()),
    ];
    prop::collection::vec(one, 0..lines).prop_map(|l| l.join("\n"))
}

/// Random bytes, mostly text-like.
fn bytes() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        prop_oneof![
            4 => prop::sample::select(b"0123456789 \t\n;-.,{}:abcxyz".to_vec()),
            1 => any::<u8>(),
        ],
        0..300,
    )
}

fn assert_machines_located(result: Result<impl Sized, schedlab::machines::MachinesError>) {
    if let Err(e) = result {
        assert!(
            e.line.is_some() || e.message.starts_with("no "),
            "an error without a line: {e}"
        );
    }
}

const SWF_LINES: [&str; 3] = [
    "1 0 10 100 4 -1 -1 4 200 -1 1 3 1 -1 1 -1 -1 -1",
    "2 5 0 50 8 40 1024 8 60 2048 1 4 2 1 2 1 1 0",
    "3 9 1 7 2 -1 -1 2 10 -1 0 5 1 -1 1 -1 -1 -1 {1,2} batch 1:ppn=2:cl_a",
];

const SWF_HEADERS: [&str; 5] = [
    "; MaxProcs: 128",
    "; MaxNodes: 64",
    "; UnixStartTime: 0",
    "; TimeZone: 3600",
    "; Note: fuzz",
];

/// A Helios `cluster_log.csv` row with some cells replaced, dropped or added.
fn table_row() -> impl Strategy<Value = String> {
    const BASE: &str = "7,u1,vc1,8,32,1,COMPLETED,2020-06-01 00:00:00,2020-06-01 00:01:00,2020-06-01 01:01:00,3600,60";
    (
        prop::collection::vec((0..12usize, token()), 0..4),
        0..3usize,
        token(),
    )
        .prop_map(|(replace, shape, extra)| {
            let mut cols: Vec<String> = BASE.split(',').map(str::to_string).collect();
            for (i, t) in replace {
                cols[i] = t;
            }
            match shape {
                1 => {
                    cols.pop();
                }
                2 => cols.push(extra),
                _ => {}
            }
            cols.join(",")
        })
}

/// The table at `path` read through `mapping` strictly and leniently: read, or refused naming
/// the file.
fn read_table(path: &std::path::Path, mapping: &str) {
    let reading = schedlab::table::mapping::shipped(mapping)
        .unwrap()
        .resolve(mapping)
        .unwrap();
    for mode in [schedlab::swf::Mode::Strict, schedlab::swf::Mode::Lenient] {
        if let Err(e) = schedlab::table::read_path(path, mode, &reading) {
            let text = e.to_string();
            assert!(text.contains(&path.display().to_string()), "{text}");
        }
    }
}

/// Cells that Slurm's accounting writes and that its reader must tell apart.
const SACCT_TOKENS: [&str; 16] = [
    "Unknown",
    "None",
    "UNLIMITED",
    "Partition_Limit",
    "1-00:00:00",
    "99:59",
    "1-24:00:00",
    "12.batch",
    "12_[1-3]",
    "12+1",
    "4000Mc",
    "16Gn",
    "gres/gpu=x",
    "cpu=2,gres/gpu:a100=1",
    "CANCELLED by 0",
    "|",
];

/// An sacct dump row (`slurm` mapping's columns) with cells replaced, dropped or added.
fn sacct_row() -> impl Strategy<Value = String> {
    const BASE: &str = "12|12|u|acct|cpu|normal|2026-10-01T00:00:00|2026-10-01T00:00:00|2026-10-01T00:00:10|2026-10-01T01:00:10|01:00:00|02:00:00|4|4|1|8G|billing=4,cpu=4,gres/gpu:v100=2,mem=8G,node=1|COMPLETED|0:0";
    let cell = prop_oneof![
        2 => prop::sample::select(SACCT_TOKENS.to_vec()).prop_map(str::to_string),
        1 => token(),
    ];
    (prop::collection::vec((0..19usize, cell), 0..4), 0..3usize).prop_map(|(replace, shape)| {
        let mut cols: Vec<String> = BASE.split('|').map(str::to_string).collect();
        for (i, t) in replace {
            cols[i] = t;
        }
        match shape {
            1 => {
                cols.pop();
            }
            2 => cols.push(String::new()),
            _ => {}
        }
        cols.join("|")
    })
}

proptest! {
    #![proptest_config(config())]

    /// Slurm accounting (`sacct --parsable2`) through the `slurm` mapping: read, or refused
    /// naming the file.
    #[test]
    fn sacct_dumps_are_read_or_refused_at_a_row(rows in prop::collection::vec(sacct_row(), 0..12)) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sacct.txt");
        let header = "JobIDRaw|JobID|User|Account|Partition|QOS|Submit|Eligible|Start|End|Elapsed|Timelimit|AllocCPUS|ReqCPUS|NNodes|ReqMem|AllocTRES|State|ExitCode";
        fs::write(&path, format!("{header}\n{}\n", rows.join("\n"))).unwrap();
        read_table(&path, "slurm");
    }

    /// SWF text in every reading mode and option: read, or refused at the line of the problem.
    #[test]
    fn swf_traces_are_read_or_refused_at_their_line(
        body in text(SWF_LINES.to_vec(), 12, 24),
        headers in prop::collection::vec(
            (prop::sample::select(SWF_HEADERS.to_vec()), token()),
            0..3,
        ),
        options in (0..4usize, 0..4usize, any::<bool>()),
    ) {
        let mut input = String::new();
        for (h, value) in headers {
            let name = h.split(':').next().unwrap();
            input.push_str(&format!("{name}: {value}\n"));
        }
        input.push_str(&body);
        let memory = schedlab::swf::MemoryReading::ALL;
        let extended = schedlab::swf::Extended::ALL;
        let options = schedlab::swf::ReadOptions {
            memory: memory[options.0 % memory.len()],
            extended: extended[options.1 % extended.len()],
            used_memory_fallback: options.2,
            ..Default::default()
        };
        for mode in [schedlab::swf::Mode::Strict, schedlab::swf::Mode::Lenient] {
            if let Err(e) =
                schedlab::swf::read_bytes_with(input.as_bytes(), "fuzz.swf", mode, &options)
            {
                if e.is_malformed_line() {
                    prop_assert!(e.line > 0, "no line: {e}");
                }
                prop_assert!(e.to_string().contains("fuzz.swf"), "no file: {e}");
            }
        }
    }

    /// Random bytes as an SWF trace: read or refused, never a panic.
    #[test]
    fn swf_bytes_are_read_or_refused(input in bytes()) {
        for mode in [schedlab::swf::Mode::Strict, schedlab::swf::Mode::Lenient] {
            let _ = schedlab::swf::read_bytes(&input, "fuzz.swf", mode);
        }
    }

    /// Alea and AleaNG machine files: read, or refused at a line.
    #[test]
    fn machine_files_are_read_or_refused_at_a_line(
        input in text(
            vec![
                "0 zewura 20 80 1 529426432",
                "1 zegox 48 12 1",
                "0 cl_a 4 1 1 256 dedicated 4",
                "1 fast 2 8 2.5 16 ib,x86_64 0",
            ],
            8,
            10,
        ),
        raw in bytes(),
    ) {
        assert_machines_located(schedlab::machines::parse(&input));
        match schedlab::machines::text(raw) {
            Ok(text) => assert_machines_located(schedlab::machines::parse(&text)),
            Err(e) => prop_assert!(e.line.is_some(), "{e}"),
        }
    }

    /// AleaNG's `.queues`, `.users` and `.groups`: read, or refused at a line.
    #[test]
    fn limit_files_are_read_or_refused_at_a_line(
        queues in text(vec!["0 priority_queue 100 50", "1 default_queue 96 20"], 8, 6),
        accounts in text(vec!["0 u 1 64", "1 normal_large_user 0.5 100"], 8, 6),
    ) {
        use schedlab::machines::aleang_limits::{parse_accounts, parse_queues};
        assert_machines_located(parse_queues(&queues));
        assert_machines_located(parse_accounts(&accounts));
    }

    /// Manifests with hard values in the places that size or select things, importing fuzzed
    /// machine and limit files: loaded, or refused with a position or a key path.
    #[test]
    fn manifests_are_loaded_or_refused_with_a_location(
        values in prop::collection::vec(
            prop_oneof![
                2 => token(),
                1 => prop::sample::select(vec![
                    "null", "[]", "{}", "\"x\"", "[1, 2]", "'a b'", "true", "-0", "2.5",
                    "[0]", "{a: 1}", "1e300", "0x10",
                ])
                .prop_map(str::to_string),
            ],
            14,
        ),
        machines in text(
            vec!["0 zewura 20 80 1 529426432", "0 cl_a 4 1 1 256 dedicated 4"],
            4,
            10,
        ),
        queues in text(vec!["0 priority_queue 100 50", "1 default_queue 96 20"], 4, 6),
        shape in 0..4usize,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        fs::write(d.join("t.swf"), "; MaxProcs: 64\n1 0 10 100 4 -1 -1 4 200 -1 1 3 1 -1 1 -1 -1 -1\n").unwrap();
        fs::write(d.join("m.swf.machines"), &machines).unwrap();
        fs::write(d.join("t.swf.queues"), &queues).unwrap();
        let v = |i: usize| values[i].as_str();
        let cluster = match shape {
            0 => format!("{{procs: {}, node_size: {}}}", v(0), v(1)),
            1 => format!(
                "{{topology: {{c: {{nodes: [{{count: {}, cores: {}, memory: {} GB}}]}}}}}}",
                v(0), v(1), v(2)
            ),
            2 => "{machines: m.swf.machines}".to_string(),
            _ => format!("{{from_trace: {}}}", v(0)),
        };
        let manifest = format!(
            "name: fuzz
workloads:
  w:
    trace: t.swf
    first_jobs: {}
    users: {}
    window: {{start: {}, end: {}}}
    load_scale: {}
clusters:
  c: {cluster}
schedulers:
  s: {{policy: easy, interval: {}}}
queues:
  q:
    aleang: t.swf
  l:
    queues:
      - {{name: a, swf_queue: {}, max_running: {}}}
grid:
  axes:
    queues: [q, l]
    procs: [{}]
  replicas: {}
",
            v(3), v(4), v(5), v(6), v(7), v(8), v(9), v(10), v(11), v(12)
        );
        let path = d.join("fuzz.yaml");
        fs::write(&path, &manifest).unwrap();
        if let Err(e) = schedlab::manifest::load(&path) {
            prop_assert!(
                e.position.is_some() || !e.key_path.is_empty(),
                "no location: {e}\n{manifest}"
            );
        }
    }

    /// Job tables: rows of a Helios log with cells replaced, or random bytes as a Parquet file.
    #[test]
    fn job_tables_are_read_or_refused_at_a_row(
        rows in prop::collection::vec(table_row(), 0..12),
        junk in bytes(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("t.csv");
        let header = "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue";
        fs::write(&csv, format!("{header}\n{}\n", rows.join("\n"))).unwrap();
        read_table(&csv, "helios");
        let parquet = dir.path().join("t.parquet");
        fs::write(&parquet, &junk).unwrap();
        read_table(&parquet, "pm100");
    }
}
