//! Exact non-negative rational amounts, for expected capacities that are fractions of the system
//! (2,176 CPUs over 75 users is 29 1/75 CPUs). Algorithm 1 of Tóth & Klusáček only compares and
//! subtracts amounts, so it is exact on rationals once every amount of a user's share is
//! multiplied by the capacity's denominator (`share.rs`); no floating point enters an EET.

use std::fmt;

/// `num / den`, always reduced, `den > 0`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ratio {
    num: u128,
    den: u128,
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl Ratio {
    pub const ONE: Ratio = Ratio { num: 1, den: 1 };

    /// `num / den` reduced; `None` when `den` is 0.
    pub fn new(num: u128, den: u128) -> Option<Ratio> {
        if den == 0 {
            return None;
        }
        let g = gcd(num, den).max(1);
        Some(Ratio {
            num: num / g,
            den: den / g,
        })
    }

    pub fn integer(n: u64) -> Ratio {
        Ratio {
            num: u128::from(n),
            den: 1,
        }
    }

    pub fn num(&self) -> u128 {
        self.num
    }

    pub fn den(&self) -> u128 {
        self.den
    }

    pub fn is_zero(&self) -> bool {
        self.num == 0
    }

    /// The product, or `None` when a reduced part overflows 128 bits.
    pub fn checked_mul(self, other: Ratio) -> Option<Ratio> {
        // Cross-reduce first so that products stay as small as the result allows.
        let g1 = gcd(self.num, other.den).max(1);
        let g2 = gcd(other.num, self.den).max(1);
        let num = (self.num / g1).checked_mul(other.num / g2)?;
        let den = (self.den / g2).checked_mul(other.den / g1)?;
        Ratio::new(num, den)
    }

    /// The quotient; `None` when `other` is 0 or a part overflows.
    pub fn checked_div(self, other: Ratio) -> Option<Ratio> {
        if other.num == 0 {
            return None;
        }
        self.checked_mul(Ratio {
            num: other.den,
            den: other.num,
        })
    }

    pub fn to_f64(&self) -> f64 {
        self.num as f64 / self.den as f64
    }

    /// Parses a plain decimal such as `8`, `0.5` or `29.0133`: digits with at most one point,
    /// no sign, no exponent, at most 18 digits after the point.
    pub fn parse_decimal(text: &str) -> Result<Ratio, String> {
        let bad =
            || format!("expected a non-negative decimal number such as 8 or 0.5, found {text:?}");
        let (whole, frac) = text.split_once('.').unwrap_or((text, ""));
        let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if (whole.is_empty() && frac.is_empty()) || !digits(whole) || !digits(frac) {
            return Err(bad());
        }
        let too_long = || format!("{text:?} has too many digits");
        if frac.len() > 18 {
            return Err(too_long());
        }
        let mut num: u128 = 0;
        for b in whole.bytes().chain(frac.bytes()) {
            num = num
                .checked_mul(10)
                .and_then(|n| n.checked_add(u128::from(b - b'0')))
                .ok_or_else(too_long)?;
        }
        Ratio::new(num, 10u128.pow(frac.len() as u32)).ok_or_else(bad)
    }
}

impl fmt::Display for Ratio {
    /// `7`, or `29 1/75` for a proper fraction part.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (whole, rest) = (self.num / self.den, self.num % self.den);
        match (whole, rest) {
            (w, 0) => write!(f, "{w}"),
            (0, r) => write!(f, "{r}/{}", self.den),
            (w, r) => write!(f, "{w} {r}/{}", self.den),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reduced_arithmetic_and_parsing() {
        let r = |n, d| Ratio::new(n, d).unwrap();
        assert_eq!(r(6, 4), r(3, 2));
        assert_eq!((r(6, 4).num(), r(6, 4).den()), (3, 2));
        assert_eq!(Ratio::new(1, 0), None);
        assert_eq!(r(2176, 75).checked_mul(r(1, 2)), Some(r(1088, 75)));
        assert_eq!(r(3, 4).checked_div(r(3, 8)), Some(r(2, 1)));
        assert_eq!(r(3, 4).checked_div(r(0, 1)), None);
        assert_eq!(Ratio::parse_decimal("0.5"), Ok(r(1, 2)));
        assert_eq!(Ratio::parse_decimal("2.25"), Ok(r(9, 4)));
        assert_eq!(Ratio::parse_decimal("8"), Ok(r(8, 1)));
        assert_eq!(Ratio::parse_decimal(".5"), Ok(r(1, 2)));
        let huge = format!("{}.5", "9".repeat(40));
        for bad in ["", ".", "-1", "1e3", "1.2.3", "x", huge.as_str()] {
            assert!(Ratio::parse_decimal(bad).is_err(), "{bad}");
        }
        assert_eq!(r(2176, 75).to_string(), "29 1/75");
        assert_eq!(r(1, 2).to_string(), "1/2");
        assert_eq!(r(8, 1).to_string(), "8");
        let big = r(u128::MAX, 1);
        assert_eq!(big.checked_mul(r(2, 1)), None);
    }
}
