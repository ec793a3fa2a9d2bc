//! Whole `schedlab` commands timed with their peak memory, as the benches that drive the
//! release binary like a user measure them.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

/// Runs `exe ARGS` in `dir` under `/usr/bin/time`; (wall seconds, peak RSS in MB). Panics
/// with the command's stderr when it fails: a bench measures only correct runs.
pub fn measure(exe: &Path, dir: &Path, args: &[&str]) -> (f64, f64) {
    let started = Instant::now();
    let out = Command::new("/usr/bin/time")
        .args(["-f", "%M"])
        .arg(exe)
        .args(args)
        .current_dir(dir)
        .output()
        .expect("schedlab runs");
    let secs = started.elapsed().as_secs_f64();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "schedlab {args:?} failed: {err}");
    let kb: f64 = err
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .expect("/usr/bin/time -f %M prints the peak RSS in KB");
    (secs, kb / 1024.0)
}
