//! Numbers as the report writes them in sentences: three significant digits (thousands
//! separated), signed percentages, factors for large increases.

/// `v` with three significant digits; integers from 1,000 up with thousands separators.
pub fn number(v: f64) -> String {
    if !v.is_finite() {
        return "–".to_string();
    }
    let a = v.abs();
    if a >= 999.5 {
        let digits = format!("{:.0}", a);
        let mut out = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        return if v < 0.0 { format!("−{out}") } else { out };
    }
    if a == 0.0 {
        return "0".to_string();
    }
    let decimals = (2 - a.log10().floor() as i32).clamp(0, 6) as usize;
    let s = format!("{:.*}", decimals, a);
    // 9.995 rounds to "10.00": drop the extra digit.
    let s = if s.replace('.', "").trim_start_matches('0').len() > 3 && s.contains('.') {
        s[..s.len() - 1].trim_end_matches('.').to_string()
    } else {
        s
    };
    if v < 0.0 { format!("−{s}") } else { s }
}

/// A relative change as a signed percentage with one decimal ("+8.5 %", "−98.7 %").
pub fn percent(rel: f64) -> String {
    let p = rel * 100.0;
    let s = format!("{:.1}", p.abs());
    if s == "0.0" {
        "±0.0 %".to_string()
    } else if p < 0.0 {
        format!("−{s} %")
    } else {
        format!("+{s} %")
    }
}

/// How much `to` differs from `from`: a percentage, or a factor ("×8.1") beyond doubling.
pub fn change(from: f64, to: f64) -> String {
    if from == 0.0 {
        return if to == 0.0 {
            "±0.0 %".to_string()
        } else {
            "from zero".to_string()
        };
    }
    let ratio = to / from;
    if ratio >= 2.0 {
        factor(ratio)
    } else {
        percent(ratio - 1.0)
    }
}

/// A ratio as "×8.1" (one decimal under 10, none above).
pub fn factor(ratio: f64) -> String {
    if ratio >= 9.95 {
        format!("×{ratio:.0}")
    } else {
        format!("×{ratio:.1}")
    }
}

/// A signed difference with three significant digits ("+1.93", "−0.200").
pub fn signed(v: f64) -> String {
    if v > 0.0 {
        format!("+{}", number(v))
    } else if v < 0.0 {
        number(v)
    } else {
        "0".to_string()
    }
}

/// Items joined as "a, b and c".
pub fn list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// `n` in words up to twelve, in digits beyond.
pub fn count(n: usize) -> String {
    const WORDS: [&str; 13] = [
        "no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
        "eleven", "twelve",
    ];
    WORDS
        .get(n)
        .map_or_else(|| n.to_string(), |w| (*w).to_string())
}

/// `s` with an ASCII first letter capitalized (a Greek μ stays μ: its capital reads as M).
pub fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) if f.is_ascii_lowercase() => f.to_ascii_uppercase().to_string() + c.as_str(),
        Some(f) => f.to_string() + c.as_str(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_by_hand() {
        assert_eq!(number(426.8), "427");
        assert_eq!(number(5.7149), "5.71");
        assert_eq!(number(0.82449), "0.824");
        assert_eq!(number(13860.6), "13,861");
        assert_eq!(number(1_543_737.6), "1,543,738");
        assert_eq!(number(-2.0), "−2.00");
        assert_eq!(number(9.996), "10.0");
        assert_eq!(number(0.0), "0");
        assert_eq!(percent(-0.98661), "−98.7 %");
        assert_eq!(percent(0.0854), "+8.5 %");
        assert_eq!(percent(0.00004), "±0.0 %");
        assert_eq!(change(1.2, 9.7), "×8.1");
        assert_eq!(change(427.0, 5.7), "−98.7 %");
        assert_eq!(change(10.0, 15.0), "+50.0 %");
        assert_eq!(factor(12.4), "×12");
        assert_eq!(signed(1.5), "+1.50");
        assert_eq!(list(&["a".into(), "b".into(), "c".into()]), "a, b and c");
        assert_eq!(count(3), "three");
        assert_eq!(count(26), "26");
    }
}
