//! Percentiles as Flink estimates them in its statistics (checkpoint summaries, subtask
//! aggregates): Apache Commons Math's legacy `Percentile` — position `p·(n+1)/100`,
//! linear interpolation between the neighbours, clamped to the smallest and largest
//! value.

/// The `p`-th percentile (0–100) of `sorted` (ascending); `NaN` when it is empty.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    let n = sorted.len();
    if n == 0 {
        return f64::NAN;
    }
    let pos = p * (n as f64 + 1.0) / 100.0;
    if pos < 1.0 {
        return sorted[0];
    }
    if pos >= n as f64 {
        return sorted[n - 1];
    }
    let lower_index = pos.floor() as usize;
    let (lower, upper) = (sorted[lower_index - 1], sorted[lower_index]);
    lower + (pos - pos.floor()) * (upper - lower)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_interpolate_and_clamp_like_commons_math() {
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(percentile(&v, 50.0), 5.5);
        assert_eq!(percentile(&v, 90.0), 9.9);
        assert_eq!(percentile(&v, 99.0), 10.0);
        assert_eq!(percentile(&v, 5.0), 1.0);
        assert_eq!(percentile(&[5100.0, 5116.0], 50.0), 5108.0);
        assert!(percentile(&[], 50.0).is_nan());
    }
}
