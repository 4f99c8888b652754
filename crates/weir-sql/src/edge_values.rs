//! Values at the edges of DOUBLE arithmetic and conversion, for the property tests that
//! compare a fast path with the general one: signed zeros, NaN and the infinities,
//! the extremes, fractions without an exact binary form, and doubles next to the
//! bounds of INT and BIGINT.

/// The DOUBLE edge values.
pub(crate) const EDGE_DOUBLES: [f64; 15] = [
    0.0,
    -0.0,
    0.1,
    0.2,
    1.0,
    -1.5,
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::MAX,
    f64::MIN_POSITIVE,
    1e16,
    9.223372036854776e18,
    -9.3e18,
    2147483648.5,
];
