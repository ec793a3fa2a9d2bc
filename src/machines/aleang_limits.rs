//! AleaNG's limit files beside a workload (`<workload>.queues`, `.users`, `.groups`) → queues
//! and CPU quotas (docs/queues.md, "Importing AleaNG's limits").
//!
//! - `.queues`: `id queue_name CPU_quota priority` — jobs reach queue `id` through SWF field 15;
//! - `.users` / `.groups`: `id name shares CPU_quota` — the shares are fairshare's (issue 12);
//!   the quota caps the processors the user's (group's) running jobs hold.
//!
//! `;` lines are comments; columns are separated by tabs or spaces. Text in, records out.

use std::path::Path;

use super::MachinesError;

/// One line of a `.queues` file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AleaQueue {
    pub id: i32,
    pub name: String,
    pub cpu_quota: u64,
    pub priority: i64,
}

/// One line of a `.users` or `.groups` file.
#[derive(Clone, Debug, PartialEq)]
pub struct AleaAccount {
    pub id: i32,
    pub name: String,
    pub shares: f64,
    pub cpu_quota: u64,
}

/// What the limit files beside one workload define; a missing file defines nothing.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AleaLimits {
    pub queues: Vec<AleaQueue>,
    pub users: Vec<AleaAccount>,
    pub groups: Vec<AleaAccount>,
}

/// Reads `<workload>.queues` (required), `.users` and `.groups` (optional); errors name the file.
pub fn read_beside(workload: &Path) -> Result<AleaLimits, String> {
    let with = |ext: &str| {
        let mut p = workload.as_os_str().to_owned();
        p.push(ext);
        std::path::PathBuf::from(p)
    };
    let read = |path: &Path| super::read_text(path);
    let queues_path = with(".queues");
    let queues = parse_queues(&read(&queues_path)?)
        .map_err(|e| format!("{}: {e}", queues_path.display()))?;
    let mut limits = AleaLimits {
        queues,
        ..AleaLimits::default()
    };
    for (ext, into) in [
        (".users", &mut limits.users),
        (".groups", &mut limits.groups),
    ] {
        let path = with(ext);
        if path.is_file() {
            *into =
                parse_accounts(&read(&path)?).map_err(|e| format!("{}: {e}", path.display()))?;
        }
    }
    Ok(limits)
}

/// Parses a `.queues` file.
pub fn parse_queues(text: &str) -> Result<Vec<AleaQueue>, MachinesError> {
    let mut out = Vec::new();
    for (line, cols) in lines(text) {
        if cols.len() != 4 {
            return Err(MachinesError::at(
                line,
                format!(
                    "expected 4 columns `id queue_name CPU_quota priority`, found {}",
                    cols.len()
                ),
            ));
        }
        let q = AleaQueue {
            id: number(line, "id", cols[0])?,
            name: cols[1].to_string(),
            cpu_quota: number(line, "CPU_quota", cols[2])?,
            priority: number(line, "priority", cols[3])?,
        };
        if out.iter().any(|o: &AleaQueue| o.id == q.id) {
            return Err(MachinesError::at(line, format!("queue id {} again", q.id)));
        }
        if out.iter().any(|o: &AleaQueue| o.name == q.name) {
            return Err(MachinesError::at(
                line,
                format!("a second queue named `{}` (queue names are unique)", q.name),
            ));
        }
        out.push(q);
    }
    if out.is_empty() {
        return Err(MachinesError {
            line: None,
            message: "no queue defined".into(),
        });
    }
    Ok(out)
}

/// Parses a `.users` or `.groups` file.
pub fn parse_accounts(text: &str) -> Result<Vec<AleaAccount>, MachinesError> {
    let mut out = Vec::new();
    for (line, cols) in lines(text) {
        if cols.len() != 4 {
            return Err(MachinesError::at(
                line,
                format!(
                    "expected 4 columns `id name shares CPU_quota`, found {}",
                    cols.len()
                ),
            ));
        }
        let shares: f64 = cols[2]
            .parse()
            .ok()
            .filter(|s: &f64| s.is_finite() && *s >= 0.0)
            .ok_or_else(|| {
                MachinesError::at(
                    line,
                    format!("shares: expected a number ≥ 0, found {:?}", cols[2]),
                )
            })?;
        let a = AleaAccount {
            id: number(line, "id", cols[0])?,
            name: cols[1].to_string(),
            shares,
            cpu_quota: number(line, "CPU_quota", cols[3])?,
        };
        if out.iter().any(|o: &AleaAccount| o.id == a.id) {
            return Err(MachinesError::at(line, format!("id {} again", a.id)));
        }
        out.push(a);
    }
    Ok(out)
}

fn lines(text: &str) -> impl Iterator<Item = (u64, Vec<&str>)> {
    text.lines().enumerate().filter_map(|(i, l)| {
        let t = l.trim();
        (!t.is_empty() && !t.starts_with(';'))
            .then(|| (i as u64 + 1, t.split_whitespace().collect()))
    })
}

fn number<T: std::str::FromStr>(line: u64, what: &str, token: &str) -> Result<T, MachinesError> {
    token.parse().map_err(|_| {
        MachinesError::at(
            line,
            format!("{what}: expected an integer, found {token:?}"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_example1_files() {
        // The bundled copies (`example1.swf.*`), byte for byte AleaNG's files of every load
        // (tests/aleang_example1.rs compares them when ../shared is present).
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/aleang-example1");
        let limits = read_beside(&dir.join("example1.swf")).unwrap();
        assert_eq!(
            limits.queues,
            vec![
                AleaQueue {
                    id: 0,
                    name: "priority_queue".into(),
                    cpu_quota: 100,
                    priority: 50
                },
                AleaQueue {
                    id: 1,
                    name: "default_queue".into(),
                    cpu_quota: 96,
                    priority: 20
                },
            ]
        );
        assert_eq!(limits.users.len(), 4);
        assert_eq!(limits.users[2].name, "normal_large_user");
        assert_eq!(limits.users[2].cpu_quota, 64);
        assert_eq!(limits.groups[0].cpu_quota, 100);
        assert_eq!(limits.groups[1].shares, 1.0);
    }

    #[test]
    fn bad_lines_are_located() {
        let err = parse_queues("; header\n0 a 10 5\n1 b ten 5\n").unwrap_err();
        assert_eq!(err.line, Some(3));
        assert!(err.message.contains("CPU_quota"), "{err}");
        let err = parse_queues("0 a 10\n").unwrap_err();
        assert!(err.message.contains("4 columns"), "{err}");
        let err = parse_queues("0 a 10 1\n0 b 10 1\n").unwrap_err();
        assert_eq!(err.line, Some(2));
        let err = parse_queues("0 a 10 1\n1 a 10 1\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "line 2: a second queue named `a` (queue names are unique)"
        );
        assert!(parse_queues("; only comments\n").is_err());
        let err = parse_accounts("0 u x 4\n").unwrap_err();
        assert!(err.message.contains("shares"), "{err}");
    }
}
