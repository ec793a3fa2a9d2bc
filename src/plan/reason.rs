//! Why a node must run: a comparison of its key material with the material it had when it last
//! ran (Snakemake-style rerun reasons).

use std::fmt;

use serde_json::Value;

/// The state of a node against the cache.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeState {
    /// A complete entry with this key exists.
    Cached,
    /// Must run, for this reason.
    ToRun(Reason),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reason {
    /// Never ran (no record of an earlier key for this node).
    New,
    /// Its key material changed: the JSON paths that differ, with old and new values.
    Changed(Vec<Change>),
    /// Same key as a recorded run, but the entry is missing (never finished, failed, or removed).
    Missing,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    pub path: String,
    pub old: Option<Value>,
    pub new: Option<Value>,
}

impl Change {
    /// How a user should read this change.
    pub fn kind(&self) -> &'static str {
        if self.path.starts_with("model_version") || self.path.starts_with("key_schema") {
            "model version changed"
        } else if self.path.starts_with("metrics_version") {
            "metrics code changed"
        } else if self.path.contains("blake3") || self.path.contains("bytes") {
            "input content changed"
        } else if self.path.starts_with("upstream") {
            "upstream node changed"
        } else {
            "parameter changed"
        }
    }
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let show = |v: &Option<Value>| v.as_ref().map_or("(absent)".to_string(), |v| v.to_string());
        write!(
            f,
            "{}: {} ({} → {})",
            self.kind(),
            self.path,
            show(&self.old),
            show(&self.new)
        )
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::New => f.write_str("new"),
            Reason::Missing => f.write_str("not in the cache (never finished, failed or removed)"),
            Reason::Changed(changes) => {
                let parts: Vec<String> = changes.iter().map(|c| c.to_string()).collect();
                f.write_str(&parts.join("; "))
            }
        }
    }
}

/// Why a node whose entry is absent must run, given the material of its last run (if any).
pub fn reason(previous: Option<&Value>, current: &Value) -> Reason {
    match previous {
        None => Reason::New,
        Some(old) => {
            let mut changes = Vec::new();
            diff("", Some(old), Some(current), &mut changes);
            if changes.is_empty() {
                Reason::Missing
            } else {
                Reason::Changed(changes)
            }
        }
    }
}

fn diff(path: &str, old: Option<&Value>, new: Option<&Value>, out: &mut Vec<Change>) {
    match (old, new) {
        (Some(Value::Object(a)), Some(Value::Object(b))) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let sub = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                diff(&sub, a.get(k), b.get(k), out);
            }
        }
        (a, b) if a == b => {}
        (a, b) => out.push(Change {
            path: path.to_string(),
            old: a.cloned(),
            new: b.cloned(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reasons_name_the_changed_paths() {
        let old = json!({"model_version": "a", "params": {"interval": null, "policy": "easy"}, "input": {"blake3": "x"}});
        let new = json!({"model_version": "a", "params": {"interval": 900, "policy": "easy"}, "input": {"blake3": "x"}});
        let Reason::Changed(c) = reason(Some(&old), &new) else {
            panic!("expected a change")
        };
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].path, "params.interval");
        assert_eq!(c[0].kind(), "parameter changed");
        assert_eq!(
            c[0].to_string(),
            "parameter changed: params.interval (null → 900)"
        );
        assert_eq!(reason(None, &new), Reason::New);
        assert_eq!(reason(Some(&new), &new), Reason::Missing);
        let moved = json!({"model_version": "b", "params": {"interval": 900, "policy": "easy"}, "input": {"blake3": "y"}});
        let Reason::Changed(c) = reason(Some(&new), &moved) else {
            panic!()
        };
        let kinds: Vec<_> = c.iter().map(|c| c.kind()).collect();
        assert_eq!(
            kinds,
            vec!["input content changed", "model version changed"]
        );
    }
}
