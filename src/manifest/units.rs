//! Memory sizes with units, as manifests write them: `16 GiB`, `512 GB`, `1.5 TB`, `64gb`.
//!
//! Every unit is binary: `KB`/`KiB`/`K` = 2^10 bytes, `MB`/`MiB`/`M` = 2^20, `GB`/`GiB`/`G` =
//! 2^30, `TB`/`TiB`/`T` = 2^40, case-insensitive. `GB` means GiB as it does in PBS, Slurm,
//! Alea/AleaNG and the MetaCentrum papers, whose "512 GB" nodes hold 2^39 bytes; there is no
//! decimal unit, so `16 GB` and `16 GiB` are the same size. Sizes are kept in KB.

/// A size in KB, or what is wrong with the text.
pub fn parse_memory_kb(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = (t[..split].trim(), t[split..].trim());
    let value: f64 = number
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite())
        .ok_or_else(|| format!("expected a size such as `16 GiB`, found `{text}`"))?;
    let kb_per_unit: u64 = match unit.to_ascii_lowercase().as_str() {
        "" if value == 0.0 => 0,
        "" => {
            return Err(format!(
                "`{text}` has no unit (KB, MB, GB or TB; GB = GiB = 2^30 bytes)"
            ));
        }
        "k" | "kb" | "kib" => 1,
        "m" | "mb" | "mib" => 1 << 10,
        "g" | "gb" | "gib" => 1 << 20,
        "t" | "tb" | "tib" => 1 << 30,
        _ => {
            return Err(format!(
                "unknown unit `{unit}` in `{text}` (expected KB, MB, GB or TB; GB = GiB = 2^30 bytes)"
            ));
        }
    };
    let kb = value * kb_per_unit as f64;
    if kb >= u64::MAX as f64 / 2.0 {
        return Err(format!("`{text}` is too large"));
    }
    if kb.fract() != 0.0 {
        return Err(format!("`{text}` is not a whole number of KB"));
    }
    Ok(kb as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_units_either_spelling() {
        assert_eq!(parse_memory_kb("16 GiB"), Ok(16 << 20));
        assert_eq!(parse_memory_kb("16 GB"), Ok(16 << 20));
        assert_eq!(parse_memory_kb("16gb"), Ok(16 << 20));
        assert_eq!(parse_memory_kb("512 GB"), Ok(1 << 29));
        assert_eq!(parse_memory_kb("1.5 TB"), Ok(3 << 29));
        assert_eq!(parse_memory_kb("1 TiB"), Ok(1 << 30));
        assert_eq!(parse_memory_kb("100 MB"), Ok(102_400));
        assert_eq!(parse_memory_kb("529426432 KB"), Ok(529_426_432));
        assert_eq!(parse_memory_kb("0"), Ok(0));
        assert!(parse_memory_kb("16").unwrap_err().contains("no unit"));
        assert!(
            parse_memory_kb("16 GHz")
                .unwrap_err()
                .contains("unknown unit `GHz`")
        );
        assert!(parse_memory_kb("0.1 KB").is_err());
        assert!(parse_memory_kb("lots").is_err());
        assert!(parse_memory_kb("-1 GB").is_err());
    }
}
