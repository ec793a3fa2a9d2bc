//! Node keys: blake3 over canonical key material (STYLE.md item 8).
//!
//! Key material is a JSON value built from serde structs of *semantic* inputs only — resolved
//! parameters, content hashes of input files, upstream keys, and the version of the code that
//! computes the node. `serde_json`'s maps are sorted, and the material is serialized compactly,
//! so the bytes hashed are canonical: the same material on another machine gives the same key.
//! Thread counts, output paths and progress settings never enter it.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Bump when the *layout* of key material changes in a way that must invalidate every entry
/// (2: the aggregate material holds a digest of its cells, the command and the traces; 3: metric
/// settings left the simulate node for a metrics node).
pub const KEY_SCHEMA: u32 = 3;

/// A node's key: the hex blake3 hash of its canonical key material.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct NodeKey(pub String);

impl NodeKey {
    pub fn of(material: &serde_json::Value) -> NodeKey {
        let bytes = serde_json::to_vec(material).expect("key material serializes");
        NodeKey::of_bytes(&bytes)
    }

    /// The key of material already serialized canonically.
    pub fn of_bytes(canonical: &[u8]) -> NodeKey {
        NodeKey(blake3::hash(canonical).to_hex().to_string())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The first 12 hex digits, for humans.
    pub fn short(&self) -> &str {
        &self.0[..12.min(self.0.len())]
    }
}

impl fmt::Display for NodeKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_ignore_field_order_and_see_every_value() {
        let a = json!({"x": 1, "y": {"b": 2, "a": 3}});
        let b: serde_json::Value =
            serde_json::from_str(r#"{"y": {"a": 3, "b": 2}, "x": 1}"#).unwrap();
        assert_eq!(NodeKey::of(&a), NodeKey::of(&b));
        assert_ne!(
            NodeKey::of(&a),
            NodeKey::of(&json!({"x": 1, "y": {"b": 2, "a": 4}}))
        );
        assert_eq!(NodeKey::of(&a).0.len(), 64);
    }
}
