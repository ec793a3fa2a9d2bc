//! Numbers as the report writes them in sentences: three significant digits (thousands
//! separated), signed percentages, factors for large increases; and in tables: a column of
//! numbers with one count of decimals that keeps three significant digits, thousands separated.

/// `v` with three significant digits; integers from 1,000 up with thousands separators.
pub fn number(v: f64) -> String {
    if !v.is_finite() {
        return "–".to_string();
    }
    let a = v.abs();
    if a >= 999.5 {
        return fixed(v, 0);
    }
    if a == 0.0 {
        return "0".to_string();
    }
    let s = format!("{:.*}", significant_decimals(a), a);
    // 9.995 rounds to "10.00": drop the extra digit.
    let s = if s.replace('.', "").trim_start_matches('0').len() > 3 && s.contains('.') {
        s[..s.len() - 1].trim_end_matches('.').to_string()
    } else {
        s
    };
    if v < 0.0 { format!("−{s}") } else { s }
}

/// `v` with `decimals` decimals, thousands separated ("1,410.36"), for tables.
pub fn fixed(v: f64, decimals: usize) -> String {
    if !v.is_finite() {
        return "–".to_string();
    }
    let s = format!("{:.*}", decimals, v.abs());
    let (int, frac) = s
        .split_once('.')
        .map_or((s.as_str(), None), |(i, f)| (i, Some(f)));
    let mut out = String::new();
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if let Some(f) = frac {
        out.push('.');
        out.push_str(f);
    }
    // "−0.00" would claim a sign the digits do not show.
    if v < 0.0 && out.chars().any(|c| c.is_ascii_digit() && c != '0') {
        format!("−{out}")
    } else {
        out
    }
}

/// A count as reports print it: a whole number, thousands separated ("17,897"; `fixed` with no
/// decimals). Years, seeds, ids and figures quoted from papers are not counts: they stay as
/// written.
pub fn whole(n: usize) -> String {
    fixed(n as f64, 0)
}

/// Decimals that keep three significant digits of `v` (none for values from 100 up; at most 6).
pub fn significant_decimals(v: f64) -> usize {
    if v == 0.0 || !v.is_finite() {
        0
    } else {
        (2 - v.abs().log10().floor() as i64).clamp(0, 6) as usize
    }
}

/// A table column of numbers with one count of decimals: at least `min_decimals`, more where a
/// value would otherwise keep fewer than three significant digits (LPC-EGEE's mean waits of
/// 0.0396 h and 0.0366 h are not both "0.04"); thousands separated; "–" where missing. Values
/// under a thousandth of the column's largest do not add decimals: a column of per-user waits
/// from 20.4 h down to 1 s reads 20.448 … 0.000, not 20.448227 … 0.000327.
pub fn column(values: &[Option<f64>], min_decimals: usize) -> Vec<String> {
    let largest = values.iter().flatten().map(|v| v.abs()).fold(0.0, f64::max);
    let decimals = values
        .iter()
        .flatten()
        .filter(|v| v.abs() >= largest / 1000.0)
        .map(|&v| significant_decimals(v))
        .fold(min_decimals, usize::max);
    values
        .iter()
        .map(|v| v.map_or("–".to_string(), |v| fixed(v, decimals)))
        .collect()
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

/// `n` in words up to twelve, in digits beyond (thousands separated).
pub fn count(n: usize) -> String {
    const WORDS: [&str; 13] = [
        "no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
        "eleven", "twelve",
    ];
    WORDS.get(n).map_or_else(|| whole(n), |w| (*w).to_string())
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
        assert_eq!(count(17_897), "17,897");
        assert_eq!(whole(1306), "1,306");
        assert_eq!(whole(999), "999");
        assert_eq!(whole(1_000_000), "1,000,000");
    }

    #[test]
    fn table_columns_by_hand() {
        assert_eq!(fixed(1410.364, 2), "1,410.36");
        assert_eq!(fixed(13860.61, 0), "13,861");
        assert_eq!(fixed(999.996, 2), "1,000.00");
        assert_eq!(fixed(-2.5, 1), "−2.5");
        assert_eq!(fixed(-0.001, 2), "0.00");
        assert_eq!(fixed(0.0396, 4), "0.0396");
        assert_eq!(significant_decimals(0.0396), 4);
        assert_eq!(significant_decimals(5.41), 2);
        assert_eq!(significant_decimals(427.3), 0);
        assert_eq!(significant_decimals(0.0), 0);
        assert_eq!(significant_decimals(1e-9), 6);
        // The smallest value decides the column's decimals: 0.0396 needs four.
        assert_eq!(
            column(&[Some(0.0396), Some(14.1036), None, Some(0.0)], 2),
            ["0.0396", "14.1036", "–", "0.0000"]
        );
        assert_eq!(
            column(&[Some(1410.364), Some(5.72)], 2),
            ["1,410.36", "5.72"]
        );
        // A value under a thousandth of the largest adds no decimals: 0.000327 beside 20.448
        // (0.702 needs three).
        assert_eq!(
            column(&[Some(20.448227), Some(0.702415), Some(0.000327)], 2),
            ["20.448", "0.702", "0.000"]
        );
        // No value needs more than the minimum: 12.5 keeps three digits with one decimal.
        assert_eq!(column(&[Some(12.5), Some(140.0)], 1), ["12.5", "140.0"]);
    }
}
