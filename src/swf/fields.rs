//! The 18 SWF fields and their names, as the Parallel Workloads Archive defines them.

pub const FIELD_COUNT: usize = 18;

const NAMES: [&str; FIELD_COUNT] = [
    "job number",
    "submit time",
    "wait time",
    "run time",
    "allocated processors",
    "average CPU time",
    "used memory",
    "requested processors",
    "requested time",
    "requested memory",
    "status",
    "user id",
    "group id",
    "executable",
    "queue",
    "partition",
    "preceding job",
    "think time",
];

/// The name of field `n` (1-based), as used in error messages.
pub fn field_name(n: usize) -> &'static str {
    NAMES
        .get(n.wrapping_sub(1))
        .copied()
        .unwrap_or("extra field")
}

/// Parses an integer field. Accepts an optional sign and, for friendliness, an integral decimal
/// such as `3600.0` or `-1.00`; anything else is `None`.
#[inline]
pub fn parse_int(token: &[u8]) -> Option<i64> {
    let (negative, digits) = match token.first()? {
        b'-' => (true, &token[1..]),
        b'+' => (false, &token[1..]),
        _ => (false, token),
    };
    let (int_part, frac) = match digits.iter().position(|&b| b == b'.') {
        Some(dot) => (&digits[..dot], &digits[dot + 1..]),
        None => (digits, &[][..]),
    };
    if int_part.is_empty() || !frac.iter().all(|&b| b == b'0') {
        return None;
    }
    let mut value: i64 = 0;
    for &b in int_part {
        if !b.is_ascii_digit() {
            return None;
        }
        value = value.checked_mul(10)?.checked_add(i64::from(b - b'0'))?;
    }
    Some(if negative { -value } else { value })
}

/// True when `token` is a decimal number (fields the simulator does not use need only be
/// numeric: some traces write the average CPU time as `142.00`).
pub fn is_number(token: &[u8]) -> bool {
    std::str::from_utf8(token).is_ok_and(|s| s.parse::<f64>().is_ok_and(f64::is_finite))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_and_integral_decimals() {
        assert_eq!(parse_int(b"42"), Some(42));
        assert_eq!(parse_int(b"-1"), Some(-1));
        assert_eq!(parse_int(b"3600.0"), Some(3600));
        assert_eq!(parse_int(b"-1.00"), Some(-1));
        assert_eq!(parse_int(b"12.5"), None);
        assert_eq!(parse_int(b"12x"), None);
        assert_eq!(parse_int(b"-"), None);
        assert_eq!(parse_int(b".5"), None);
        assert_eq!(parse_int(b"99999999999999999999"), None);
        assert!(is_number(b"142.00"));
        assert!(!is_number(b"abc"));
        assert_eq!(field_name(4), "run time");
        assert_eq!(field_name(19), "extra field");
    }
}
