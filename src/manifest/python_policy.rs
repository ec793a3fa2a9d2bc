//! A scheduler written in Python (docs/policies.md, "In a manifest"): `policy: python` with the
//! file, the class and its parameters. Resolving checks the file and the class name and finds
//! the policy's sources — the file and the local modules it imports (recursively: `import x`
//! or `from x import …` where `x.py` sits beside the file), or the files the manifest declares
//! — whose digests enter the simulation's key, so that editing the policy re-runs exactly its
//! cells and `plan` says which file changed.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::ctx::Ctx;
use super::error::ManifestError;
use super::raw::RawScheduler;
use crate::sim::fairshare::FairshareSpec;

/// A resolved Python policy.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PythonPolicySpec {
    /// The file defining the class (resolved against the manifest's folder).
    pub path: PathBuf,
    pub class: String,
    /// Keyword arguments of the class, as JSON (canonical: keys sorted).
    pub params: serde_json::Value,
    /// The sources whose digests key the simulation: the file first, then the local modules
    /// it imports (or the declared files), by path.
    pub sources: Vec<PathBuf>,
    /// blake3 of each source's bytes, in the order of `sources` (read when the manifest is
    /// loaded: a few small files).
    pub digests: Vec<String>,
    /// The scheduler's `fairshare` settings, when given: the policy's view then holds each
    /// waiting job's user's decayed usage and factor as `order: fairshare` computes them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fairshare: Option<FairshareSpec>,
}

impl PythonPolicySpec {
    /// What keys the simulations of this policy: the class, its parameters and every source by
    /// name and content — never the paths.
    pub fn key_material(&self) -> serde_json::Value {
        let sources: serde_json::Map<String, serde_json::Value> = self
            .sources
            .iter()
            .zip(&self.digests)
            .map(|(p, d)| (self.source_name(p), serde_json::Value::String(d.clone())))
            .collect();
        let mut material =
            serde_json::json!({ "class": self.class, "params": self.params, "sources": sources });
        // Only where given, so that the keys of policies without one stay what they were.
        if let Some(fairshare) = &self.fairshare {
            material["fairshare"] = serde_json::json!(fairshare);
        }
        material
    }

    /// A source's name in keys and messages: its path relative to the policy file's folder
    /// (paths never enter a simulation key, docs/cache.md).
    pub fn source_name(&self, source: &Path) -> String {
        let dir = self.path.parent().unwrap_or(Path::new(""));
        source
            .strip_prefix(dir)
            .unwrap_or(source)
            .to_string_lossy()
            .replace('\\', "/")
    }
}

/// The Python policy of scheduler `path` (`schedulers.<name>`), whose `policy` is `python`.
pub fn resolve(
    ctx: &Ctx<'_>,
    path: &str,
    s: &RawScheduler,
) -> Result<PythonPolicySpec, ManifestError> {
    for (given, key) in [
        (s.backfill.is_some(), "backfill"),
        (s.order.is_some(), "order"),
        (s.reorder.is_some(), "reorder"),
        (s.backfill_order.is_some(), "backfill_order"),
        (s.compat.is_some(), "compat"),
        (s.priority.is_some(), "priority"),
    ] {
        if given {
            return Err(ctx
                .key_error(
                    &format!("{path}.{key}"),
                    key,
                    format!("`{key}` is a setting of the built-in rules; a Python policy decides the order itself"),
                )
                .hint("leave it out, or give it to the policy in `params`"));
        }
    }
    let Some(file) = &s.path else {
        return Err(ctx
            .key_error(path, "policy", "a Python policy needs `path`: the file that defines it")
            .hint("e.g. `path: ../policies/wfp3.py` (relative to the manifest's folder) and `class: WFP3`"));
    };
    let full = ctx.existing_file(&format!("{path}.path"), "policy", file)?;
    let text = std::fs::read_to_string(&full).map_err(|e| {
        ctx.error(
            &format!("{path}.path"),
            format!("cannot read {}: {e}", full.display()),
            &file.referenced,
        )
    })?;
    let Some(class) = &s.class else {
        return Err(ctx
            .key_error(
                path,
                "path",
                "a Python policy needs `class`: the class in the file",
            )
            .hint(match defined_classes(&text).first() {
                Some(c) => format!("the file defines `class {c}`"),
                None => "the file defines no class".to_string(),
            }));
    };
    if !defined_classes(&text).iter().any(|c| c == &class.value) {
        let defined = defined_classes(&text);
        return Err(ctx
            .error(
                &format!("{path}.class"),
                format!("{} defines no class `{}`", full.display(), class.value),
                &class.referenced,
            )
            .hint(if defined.is_empty() {
                "the file defines no class".to_string()
            } else {
                format!("it defines {}", defined.join(", "))
            }));
    }
    let params = match &s.params {
        None => serde_json::Value::Object(Default::default()),
        Some(v @ serde_json::Value::Object(_)) => v.clone(),
        Some(_) => {
            return Err(ctx
                .key_error(
                    &format!("{path}.params"),
                    "params",
                    "`params` must be a mapping of keyword arguments",
                )
                .hint("e.g. `params: {power: 3}`"));
        }
    };
    let sources = match &s.files {
        Some(files) => {
            let mut sources = vec![full.clone()];
            for f in files {
                let p = ctx.base_dir.join(&f.value);
                if !p.is_file() {
                    return Err(ctx.error(
                        &format!("{path}.files"),
                        format!("policy source not found: {}", p.display()),
                        &f.referenced,
                    ));
                }
                if !sources.contains(&p) {
                    sources.push(p);
                }
            }
            sources
        }
        None => local_sources(&full),
    };
    let mut digests = Vec::with_capacity(sources.len());
    for source in &sources {
        let bytes = std::fs::read(source).map_err(|e| {
            ctx.key_error(
                &format!("{path}.path"),
                "path",
                format!("cannot read policy source {}: {e}", source.display()),
            )
        })?;
        digests.push(blake3::hash(&bytes).to_hex().to_string());
    }
    // The fairshare is the built-in one, resolved by the same code: the view shows its factor.
    let fairshare = match &s.fairshare {
        Some(raw) => Some(
            super::order::resolve(
                ctx,
                path,
                super::order::RawOrderKeys {
                    order: None,
                    reorder: None,
                    fairshare: Some(raw),
                    priority: None,
                },
            )?
            .fairshare,
        ),
        None => None,
    };
    Ok(PythonPolicySpec {
        path: full,
        class: class.value.clone(),
        params,
        sources,
        digests,
        fairshare,
    })
}

/// Names of the top-level classes `text` defines.
fn defined_classes(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix("class "))
        .map(|rest| {
            rest.chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect::<String>()
        })
        .filter(|c| !c.is_empty())
        .collect()
}

/// The file and the modules beside it that it imports, recursively, in the order found.
fn local_sources(file: &Path) -> Vec<PathBuf> {
    let dir = file.parent().unwrap_or(Path::new("."));
    let mut seen = BTreeSet::new();
    let mut order = Vec::new();
    let mut todo = vec![file.to_path_buf()];
    while let Some(f) = todo.pop() {
        if !seen.insert(f.clone()) {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        order.push(f);
        let mut found: Vec<PathBuf> = imported_modules(&text)
            .into_iter()
            .map(|m| dir.join(format!("{m}.py")))
            .filter(|p| p.is_file() && !seen.contains(p))
            .collect();
        found.reverse();
        todo.extend(found);
    }
    order
}

/// Top-level module names of `import a, b` and `from a import …` lines (relative imports and
/// packages are not followed: declare such sources with `files`).
fn imported_modules(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let t = line.trim_start();
        let names: Vec<&str> = if let Some(rest) = t.strip_prefix("import ") {
            rest.split(',').collect()
        } else if let Some(rest) = t.strip_prefix("from ") {
            rest.split_whitespace().next().into_iter().collect()
        } else {
            continue;
        };
        for name in names {
            let module = name.split_whitespace().next().unwrap_or("");
            let top = module.split('.').next().unwrap_or("");
            if !top.is_empty() && top.chars().all(|c| c.is_alphanumeric() || c == '_') {
                out.push(top.to_string());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn imports_are_read_from_both_forms() {
        let text = "import numpy as np\nfrom backfill import easy, by_score\nimport os, helpers.sub\n    from .rel import x\nx = 'import no'\n";
        assert_eq!(
            imported_modules(text),
            ["numpy", "backfill", "os", "helpers"]
        );
    }

    #[test]
    fn local_sources_follow_imports_beside_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(
            d.join("main.py"),
            "import numpy\nfrom helper import f\nclass P: pass\n",
        )
        .unwrap();
        std::fs::write(d.join("helper.py"), "import deep\n").unwrap();
        std::fs::write(d.join("deep.py"), "import helper\n").unwrap();
        std::fs::write(d.join("unused.py"), "").unwrap();
        let found = local_sources(&d.join("main.py"));
        assert_eq!(
            found,
            [d.join("main.py"), d.join("helper.py"), d.join("deep.py")]
        );
        assert_eq!(
            defined_classes("class P(Base):\nclass Q:\n  class Inner:\n"),
            ["P", "Q"]
        );
    }
}
