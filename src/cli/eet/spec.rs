//! Parsing the capacity options of `trace eet` into the metric's [`CapacityRule`]: system
//! sizes, shares (`USER=W`), explicit capacities (`USER:cpu=8,memory=64GiB`) and the scale.
//! Every error names the option and the text, with what was expected.

use std::collections::BTreeMap;

use crate::sim::metrics::eet::{PerResource, Ratio, Resource};

/// Binary multipliers to KB for memory sizes (SWF's KB are 1,024 bytes).
const SIZE_UNITS: [(&str, u128); 12] = [
    ("KiB", 1),
    ("MiB", 1 << 10),
    ("GiB", 1 << 20),
    ("TiB", 1 << 30),
    ("KB", 1),
    ("MB", 1 << 10),
    ("GB", 1 << 20),
    ("TB", 1 << 30),
    ("K", 1),
    ("M", 1 << 10),
    ("G", 1 << 20),
    ("T", 1 << 30),
];

/// A memory size in KB: a decimal number with an optional binary unit (`K`/`KiB`, `M`/`MiB`,
/// `G`/`GiB`, `T`/`TiB`; `KB`, `MB`, … mean the same); a bare number is KB.
pub fn memory_kb(text: &str) -> Result<Ratio, String> {
    let text = text.trim();
    let (number, factor) = SIZE_UNITS
        .iter()
        .find_map(|(suffix, f)| text.strip_suffix(suffix).map(|n| (n, *f)))
        .unwrap_or((text, 1));
    let value = Ratio::parse_decimal(number.trim())
        .map_err(|e| format!("{e} (a size such as 512GiB, 1.5TiB or 1048576 for KB)"))?;
    value
        .checked_mul(Ratio::new(factor, 1).expect("non-zero"))
        .ok_or_else(|| format!("{text:?} is too large"))
}

/// A whole number of KB (the system's memory).
pub fn whole_kb(text: &str) -> Result<u64, String> {
    let kb = memory_kb(text)?;
    if kb.den() != 1 {
        return Err(format!("{text:?} is not a whole number of KB"));
    }
    u64::try_from(kb.num()).map_err(|_| format!("{text:?} is too large"))
}

/// `KEY=W`: a user or group id and a positive whole share.
pub fn share(text: &str) -> Result<(i32, u64), String> {
    let (key, weight) = text
        .split_once('=')
        .ok_or_else(|| format!("expected ID=WEIGHT such as 17=4, found {text:?}"))?;
    let key = id(key)?;
    let weight: u64 = weight
        .trim()
        .parse()
        .map_err(|_| format!("expected a whole share after '=', found {weight:?} in {text:?}"))?;
    if weight == 0 {
        return Err(format!("{text:?}: a share must be at least 1"));
    }
    Ok((key, weight))
}

fn id(text: &str) -> Result<i32, String> {
    text.trim()
        .parse()
        .map_err(|_| format!("expected a user or group id (an integer), found {text:?}"))
}

/// `KEY:cpu=8,memory=64GiB,gpu=1`: a user or group id and its capacities (at least one).
pub fn capacity(text: &str) -> Result<(i32, PerResource<Option<Ratio>>), String> {
    let (key, list) = text.split_once(':').ok_or_else(|| {
        format!("expected ID:cpu=N[,memory=SIZE] such as 17:cpu=8,memory=64GiB, found {text:?}")
    })?;
    let key = id(key)?;
    let mut caps = PerResource::new(None, None, None);
    for item in list.split(',') {
        let (name, value) = item
            .split_once('=')
            .ok_or_else(|| format!("expected RESOURCE=VALUE, found {item:?} in {text:?}"))?;
        let resource = Resource::ALL
            .into_iter()
            .find(|r| r.name() == name.trim())
            .ok_or_else(|| {
                format!("unknown resource {name:?} in {text:?} (expected cpu, memory or gpu)")
            })?;
        let amount = match resource {
            Resource::Memory => memory_kb(value)?,
            _ => Ratio::parse_decimal(value.trim())?,
        };
        if amount.is_zero() {
            return Err(format!("{text:?}: a capacity must be above 0"));
        }
        if caps[resource].replace(amount).is_some() {
            return Err(format!("{text:?} gives {} twice", resource.name()));
        }
    }
    Ok((key, caps))
}

/// Parses every `values` of option `flag` with `parse` into a map; a key given twice is an
/// error.
pub fn collect<T>(
    flag: &str,
    values: &[String],
    parse: fn(&str) -> Result<(i32, T), String>,
) -> Result<BTreeMap<i32, T>, String> {
    let mut out = BTreeMap::new();
    for v in values {
        let (key, value) = parse(v).map_err(|e| format!("{flag}: {e}"))?;
        if out.insert(key, value).is_some() {
            return Err(format!("{flag}: id {key} is given twice"));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_shares_and_capacities() {
        assert_eq!(whole_kb("1048576"), Ok(1 << 20));
        assert_eq!(whole_kb("504GiB"), Ok(504 << 20));
        assert_eq!(whole_kb("504G"), Ok(504 << 20));
        assert_eq!(whole_kb("1.5TiB"), Ok(3 << 29));
        assert!(whole_kb("0.3K").is_err());
        assert!(whole_kb("12 parsecs").is_err());
        assert_eq!(share("17=4"), Ok((17, 4)));
        assert!(share("17=0").is_err());
        assert!(share("x=1").is_err());
        let (k, c) = capacity("-1:cpu=29.5,memory=64GiB").unwrap();
        assert_eq!(k, -1);
        assert_eq!(c[Resource::Cpu], Ratio::new(59, 2));
        assert_eq!(c[Resource::Memory], Some(Ratio::integer(64 << 20)));
        assert_eq!(c[Resource::Gpu], None);
        assert!(capacity("3:cpu=0").is_err());
        assert!(capacity("3:disk=1").is_err());
        assert!(capacity("3:cpu=1,cpu=2").is_err());
        assert!(capacity("3").is_err());
        let twice = collect("--user-share", &["1=2".into(), "1=3".into()], share);
        assert_eq!(twice, Err("--user-share: id 1 is given twice".into()));
    }
}
