//! Numbers as table cells write them. Most cells of a big table are plain whole numbers
//! (counts, ids, seconds): up to 15 digits are read here without the general float parser, and
//! are exactly an `f64`, so the value is the one `str::parse::<f64>` gives; anything else
//! (signs, fractions, exponents, `inf`) goes to that parser.

/// The number `text` writes, as `text.parse::<f64>().ok()` reads it.
pub fn number(text: &str) -> Option<f64> {
    let b = text.as_bytes();
    if !b.is_empty() && b.len() <= 15 && b.iter().all(u8::is_ascii_digit) {
        // < 10¹⁵ < 2⁵³: every such integer is an f64 exactly.
        return Some(b.iter().fold(0u64, |n, d| n * 10 + u64::from(d - b'0')) as f64);
    }
    text.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Against the float parser (the reference), on text of digits and the other
        /// characters numbers are written with.
        #[test]
        fn any_text_reads_as_the_float_parser_reads_it(t in "[0-9+\\-.eEinfatyINFATY ]{0,20}") {
            let (got, want) = (number(&t), t.parse::<f64>().ok());
            prop_assert_eq!(got.map(f64::to_bits), want.map(f64::to_bits), "{:?}", t);
        }
    }

    #[test]
    fn numbers_read_as_the_float_parser_reads_them() {
        for t in [
            "0",
            "7",
            "007",
            "123456789012345",
            "999999999999999",
            "1234567890123456",
            "99999999999999999999",
            "",
            " 4",
            "4 ",
            "+5",
            "-3",
            "1.5",
            "1e3",
            ".5",
            "5.",
            "inf",
            "NaN",
            "4G",
            "0x10",
            "١٢",
        ] {
            let want = t.parse::<f64>().ok();
            let got = number(t);
            assert!(
                got == want || (got.is_some_and(f64::is_nan) && want.is_some_and(f64::is_nan)),
                "{t:?}: {got:?} ≠ {want:?}"
            );
        }
        // Hand-worked: the fast path's largest input and a sum of its digits' places.
        assert_eq!(number("999999999999999"), Some(999_999_999_999_999.0));
        assert_eq!(number("000000000000042"), Some(42.0));
    }
}
