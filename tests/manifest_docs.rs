//! The complete example in docs/manifest.md loads, and has the cell count the page states.

use std::path::Path;

#[test]
fn the_documented_example_loads_with_its_stated_cells() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/manifest.md")).unwrap();
    let start = doc.find("```yaml\n").unwrap() + "```yaml\n".len();
    let yaml = &doc[start..start + doc[start..].find("```").unwrap()];
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("experiments")).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(root.join("workloads"), dir.path().join("workloads")).unwrap();
    #[cfg(not(unix))]
    return;
    let path = dir.path().join("experiments/sp2-study.yaml");
    std::fs::write(&path, yaml).unwrap();
    let m = schedlab::manifest::load(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(m.name, "sp2-study");
    assert_eq!(m.cells.len(), 14, "the page says 14 cells");
    assert!(
        m.cells
            .iter()
            .any(|c| c.id == "sp2.easy-15min.tau-10.seed-8"),
        "{:?}",
        m.cells.iter().map(|c| &c.id).collect::<Vec<_>>()
    );
}
