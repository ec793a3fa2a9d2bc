//! docs/manifest.schema.json is generated from the manifest types; this fails when it is stale.
//! Regenerate with `SCHEDLAB_BLESS=1 cargo test --test manifest_schema`.

use std::path::Path;

#[test]
fn committed_json_schema_is_current() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/manifest.schema.json");
    let current = schedlab::manifest::json_schema();
    if std::env::var_os("SCHEDLAB_BLESS").is_some() {
        std::fs::write(&path, &current).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == current,
        "docs/manifest.schema.json is stale; regenerate it with\n  SCHEDLAB_BLESS=1 cargo test --test manifest_schema"
    );
    let schema: serde_json::Value = serde_json::from_str(&current).unwrap();
    for section in [
        "workloads",
        "clusters",
        "schedulers",
        "metrics",
        "grid",
        "replicas",
        "seeds",
        "reports",
    ] {
        assert!(
            schema["properties"].get(section).is_some(),
            "schema lacks {section}"
        );
    }
}

#[test]
fn the_schema_describes_topologies() {
    let schema: serde_json::Value =
        serde_json::from_str(&schedlab::manifest::json_schema()).unwrap();
    let defs = &schema["$defs"];
    let cluster = &defs["RawCluster"]["properties"];
    for key in [
        "procs",
        "node_size",
        "from_trace",
        "machines",
        "topology",
        "allocation",
        "properties",
        "ignore_memory",
        "scale_runtime",
    ] {
        assert!(cluster.get(key).is_some(), "clusters.<name> lacks {key}");
    }
    let class = &defs["RawNodeClass"];
    assert_eq!(class["required"], serde_json::json!(["count", "cores"]));
    // Memory is a size with a unit, written as a string.
    let memory = class["properties"]["memory"].to_string();
    assert!(memory.contains("#/$defs/RawSize"), "{memory}");
    assert_eq!(defs["RawSize"]["type"], "string");
    let workload = &defs["RawWorkload"]["properties"];
    for key in ["memory", "used_memory_fallback", "extended_fields"] {
        assert!(workload.get(key).is_some(), "workloads.<name> lacks {key}");
    }
    assert!(
        defs["RawScheduler"]["properties"]
            .get("placement")
            .is_some()
    );
}

#[test]
fn gantt_start_describes_every_accepted_value() {
    // An editor shows this text: it must say what an integer means (trace seconds, kept as
    // given, even outside the trace) and what leaving it out does (the default and its move),
    // not the default alone (src/report/gantt_window.rs::choose).
    let schema: serde_json::Value =
        serde_json::from_str(&schedlab::manifest::json_schema()).unwrap();
    let start = &schema["$defs"]["RawGantt"]["properties"]["start"];
    assert_eq!(start["type"], serde_json::json!(["integer", "null"]));
    let text = start["description"].as_str().unwrap().replace('\n', " ");
    for part in [
        "trace seconds",
        "Unix times",
        "Any integer is taken as it is",
        "before the first job or after the last",
        "Omitted or null: a quarter into the cell's measurement window",
        "moved on when that window is idle",
    ] {
        assert!(text.contains(part), "gantt.start lacks {part:?}: {text}");
    }
}
