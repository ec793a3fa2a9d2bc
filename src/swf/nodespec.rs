//! PBS-like node specifications of Alea's extended SWF (field 21), e.g.
//! `1:ppn=64:x86_64:cl_zewura#excl` or `8:ppn=8:x86_64:cl_zegox`, and AleaNG's property field
//! (`normal`, `all`, optionally with an `NxP` node spec).
//!
//! Grammar (Torque's `-l nodes=`): parts joined by `+`, each `count[:token]*`, and `#excl`
//! (whole nodes) at the end. A token is `ppn=P` (processors per node), a property, a negated
//! property `^p`, a host name (contains a `.`, or is the part's first token) or a resource
//! `key=value`. What the simulator can express is kept; the rest is counted
//! ([`NodeSpec::ignored`]) — never an error, since real traces hold all of it:
//! - negated properties, host names and resources are ignored;
//! - a fractional `ppn=1.5` is rounded down (at least 1), as Alea does;
//! - several parts (`1:ppn=1+3:ppn=2`) become one uniform request: the nodes of all parts, each
//!   with the largest `ppn` (a job's nodes all ask for the same amounts).

/// A node spec as the simulator can use it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodeSpec {
    /// Nodes asked for (`None`: the spec names no count, as AleaNG's plain property field).
    pub nodes: Option<u32>,
    /// Processors per node (`None`: not given).
    pub ppn: Option<u32>,
    /// Required properties, sorted and without duplicates.
    pub properties: Vec<String>,
    /// `#excl`: whole nodes to itself.
    pub exclusive: bool,
    /// Negated properties, host names and resources left out.
    pub ignored: bool,
    /// `ppn` was fractional and rounded down.
    pub fractional_ppn: bool,
    /// Several `+` parts merged into one uniform request.
    pub multi_part: bool,
}

/// Parses Alea's node spec (field 21).
pub fn parse_alea(spec: &str) -> NodeSpec {
    let mut out = NodeSpec::default();
    let (body, flags) = match spec.split_once('#') {
        Some((body, flags)) => (body, Some(flags)),
        None => (spec, None),
    };
    if let Some(flags) = flags {
        for flag in flags.split('#') {
            if flag == "excl" {
                out.exclusive = true;
            } else {
                out.ignored = true;
            }
        }
    }
    let parts: Vec<&str> = body.split('+').filter(|p| !p.is_empty()).collect();
    out.multi_part = parts.len() > 1;
    let mut total_nodes: u64 = 0;
    let mut max_ppn: Option<u32> = None;
    for part in &parts {
        let mut tokens = part.split(':');
        let count = tokens.next().unwrap_or_default();
        let nodes = match count.parse::<u32>() {
            Ok(n) => n,
            // `host:ppn=4` names one node by host.
            Err(_) => {
                out.ignored = true;
                1
            }
        };
        total_nodes += u64::from(nodes);
        let mut ppn = None;
        for token in tokens {
            if let Some(value) = token.strip_prefix("ppn=") {
                ppn = Some(parse_ppn(value, &mut out));
            } else {
                property(token, &mut out);
            }
        }
        max_ppn = max_ppn.max(Some(ppn.unwrap_or(1)));
    }
    if !parts.is_empty() {
        out.nodes = Some(u32::try_from(total_nodes).unwrap_or(u32::MAX));
        out.ppn = max_ppn;
    }
    out.properties.sort();
    out.properties.dedup();
    out
}

/// Parses AleaNG's property field (field 21) as AleaNG reads it (`ResourceInfo.canExecuteEver`,
/// `SWFLoader.readGridlet`): a field containing `all` anywhere may run on any cluster; otherwise
/// its first `:`-separated token is the *partition* it needs, which a cluster's 7th machine-file
/// column names (read as the cluster's one property, [`crate::machines`]). A token `NxP` is a
/// node spec (N nodes of P processors). AleaNG looks at nothing else: further tokens are left
/// out and counted as ignored.
pub fn parse_aleang(field: &str) -> NodeSpec {
    let mut out = NodeSpec::default();
    let any = field.contains("all");
    for (i, token) in field.split(':').filter(|t| !t.is_empty()).enumerate() {
        if let Some((n, p)) = token.split_once('x')
            && let (Ok(n), Ok(p)) = (n.parse::<u32>(), p.parse::<u32>())
        {
            out.nodes = Some(n);
            out.ppn = Some(p);
        } else if i == 0 {
            if !any {
                property(token, &mut out);
            }
        } else {
            out.ignored = true;
        }
    }
    out
}

fn parse_ppn(value: &str, out: &mut NodeSpec) -> u32 {
    if let Ok(p) = value.parse::<u32>() {
        return p;
    }
    match value.parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => {
            out.fractional_ppn = true;
            (x.floor() as u32).max(1)
        }
        _ => {
            out.ignored = true;
            1
        }
    }
}

/// A plain property is kept; negations, host names and `key=value` resources are not.
fn property(token: &str, out: &mut NodeSpec) {
    if token.is_empty() {
        return;
    }
    if token.starts_with('^') || token.contains('.') || token.contains('=') {
        out.ignored = true;
    } else {
        out.properties.push(token.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(s: &NodeSpec) -> Vec<&str> {
        s.properties.iter().map(String::as_str).collect()
    }

    #[test]
    fn alea_specs_from_wagap() {
        let s = parse_alea("1:ppn=64:x86_64:cl_zewura#excl");
        assert_eq!((s.nodes, s.ppn, s.exclusive), (Some(1), Some(64), true));
        assert_eq!(props(&s), ["cl_zewura", "x86_64"]);
        assert!(!s.ignored && !s.multi_part && !s.fractional_ppn);

        let s = parse_alea("8:ppn=8:x86_64:cl_zegox");
        assert_eq!((s.nodes, s.ppn, s.exclusive), (Some(8), Some(8), false));

        let s = parse_alea("1:ppn=12");
        assert_eq!((s.nodes, s.ppn), (Some(1), Some(12)));
        assert!(s.properties.is_empty());

        // No ppn: one processor per node.
        let s = parse_alea("2:infiniband");
        assert_eq!((s.nodes, s.ppn), (Some(2), Some(1)));
        assert_eq!(props(&s), ["infiniband"]);
        let s = parse_alea("1");
        assert_eq!((s.nodes, s.ppn), (Some(1), Some(1)));
    }

    #[test]
    fn what_cannot_be_expressed_is_counted_not_kept() {
        let s = parse_alea("1:ppn=12:^zewura12.cerit-sc.cz");
        assert!(s.ignored && s.properties.is_empty());
        let s = parse_alea("1:ppn=2:mem=3gb:brno");
        assert!(s.ignored);
        assert_eq!(props(&s), ["brno"]);
        let s = parse_alea("zewura19.cerit-sc.cz:ppn=4");
        assert_eq!((s.nodes, s.ppn, s.ignored), (Some(1), Some(4), true));
        let s = parse_alea("1:ppn=1.5:brno");
        assert_eq!((s.ppn, s.fractional_ppn), (Some(1), true));
        // 1 node of 1 + 3 nodes of 2 → 4 nodes of 2.
        let s = parse_alea("1:ppn=1+3:ppn=2");
        assert_eq!((s.nodes, s.ppn, s.multi_part), (Some(4), Some(2), true));
        let s = parse_alea("1:ppn=4#shared");
        assert!(s.ignored && !s.exclusive);
    }

    #[test]
    fn aleang_properties() {
        let s = parse_aleang("normal");
        assert_eq!((s.nodes, s.ppn), (None, None));
        assert_eq!(props(&s), ["normal"]);
        assert!(parse_aleang("all").properties.is_empty());
        let s = parse_aleang("dedicated:4x8");
        assert_eq!((s.nodes, s.ppn), (Some(4), Some(8)));
        assert_eq!(props(&s), ["dedicated"]);
    }

    #[test]
    fn aleang_reads_the_first_token_as_a_partition_and_all_anywhere_as_any() {
        // ResourceInfo.canExecuteEver: `properties.contains("all")` → any cluster; else the
        // partition is `properties.split(":")[0]`; nothing else is looked at.
        let s = parse_aleang("gpu:ib");
        assert_eq!(props(&s), ["gpu"]);
        assert!(s.ignored, "the second token is not AleaNG's");
        assert!(
            parse_aleang("small").properties.is_empty(),
            "`small` contains `all`"
        );
        assert!(parse_aleang("all:2x4").properties.is_empty());
        assert_eq!(parse_aleang("all:2x4").nodes, Some(2));
    }
}
