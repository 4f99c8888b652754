//! The common shape of an order line, parsed in one pass over its bytes: four fields
//! of plain ASCII digits (the amount with a dot and at most two fractional digits), no
//! sign, no spaces, no field too long to fit its type.
//!
//! Every function here answers `None` for any other line, which then takes the general
//! path of the parent module (trimming, signs, the error messages). Invariant: where a
//! function here answers `Some`, the general path gives the same value, so which path a
//! line takes never changes a result.

use super::Order;

/// Digits an unsigned field may have here: any 19-digit number fits a `u64`.
const U64_DIGITS: usize = 19;
/// Digits an `i64` field may have here: any 18-digit number fits.
const I64_DIGITS: usize = 18;
/// Digits of the amount's whole part: times 100 plus 99 still fits an `i64`.
const WHOLE_DIGITS: usize = 16;

/// Reads the digits at `at` (one to `max`), leaving `at` on the first other byte.
#[inline(always)]
fn digits(line: &[u8], at: &mut usize, max: usize) -> Option<u64> {
    let start = *at;
    let mut n = 0u64;
    while let Some(&b) = line.get(*at) {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        // A digit past `max` is refused before it is taken in (it could overflow).
        if *at - start == max {
            return None;
        }
        n = n * 10 + u64::from(d);
        *at += 1;
    }
    (*at > start).then_some(n)
}

/// Steps over `byte` at `at`.
#[inline(always)]
fn expect(line: &[u8], at: &mut usize, byte: u8) -> Option<()> {
    (line.get(*at) == Some(&byte)).then(|| *at += 1)
}

/// The first three fields of a line, `order_id,user_id,amount,`.
struct FirstThree {
    order_id: u64,
    user_id: u64,
    amount_cents: i64,
    /// Where the fourth field starts.
    rest: usize,
}

/// The first three fields of the plain shape.
#[inline(always)]
fn first_three(line: &[u8]) -> Option<FirstThree> {
    let mut at = 0;
    let order_id = digits(line, &mut at, U64_DIGITS)?;
    expect(line, &mut at, b',')?;
    let user_id = digits(line, &mut at, U64_DIGITS)?;
    expect(line, &mut at, b',')?;
    let whole = digits(line, &mut at, WHOLE_DIGITS)? as i64;
    let mut cents = whole * 100;
    if expect(line, &mut at, b'.').is_some() {
        let start = at;
        match digits(line, &mut at, 2) {
            Some(frac) => cents += if at - start == 1 { frac as i64 * 10 } else { frac as i64 },
            // More than two fractional digits.
            None if at > start => return None,
            None => {}
        }
    }
    expect(line, &mut at, b',')?;
    Some(FirstThree {
        order_id,
        user_id,
        amount_cents: cents,
        rest: at,
    })
}

/// `order_id,user_id,amount,ts_millis` of the plain shape.
pub(super) fn parse_order(line: &[u8]) -> Option<Order> {
    let first = first_three(line)?;
    let mut at = first.rest;
    let ts_millis = digits(line, &mut at, I64_DIGITS)? as i64;
    (at == line.len()).then_some(Order {
        order_id: first.order_id,
        user_id: first.user_id,
        amount_cents: first.amount_cents,
        ts_millis,
    })
}

/// [`parse_order`] of a line whose [`last_field_timestamp`] is `ts` (the source
/// stamped the line with it): the fourth field is only checked to be plain digits, not
/// parsed again.
pub(super) fn parse_stamped_order(line: &[u8], ts: i64) -> Option<Order> {
    let first = first_three(line)?;
    let last = &line[first.rest..];
    if last.is_empty() || last.len() > I64_DIGITS || !last.iter().all(u8::is_ascii_digit) {
        return None;
    }
    debug_assert_eq!(
        last_field_timestamp(line),
        Some(ts),
        "a line stamped with another timestamp"
    );
    Some(Order {
        order_id: first.order_id,
        user_id: first.user_id,
        amount_cents: first.amount_cents,
        ts_millis: ts,
    })
}

/// The last field of a line, when it is plain digits after a comma: read backwards
/// from the end in one pass.
pub(super) fn last_field_timestamp(line: &[u8]) -> Option<i64> {
    let mut ts = 0i64;
    let mut scale = 1i64;
    let mut at = line.len();
    while at > 0 {
        let d = line[at - 1].wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        if line.len() - at == I64_DIGITS {
            return None;
        }
        ts += i64::from(d) * scale;
        scale = scale.wrapping_mul(10);
        at -= 1;
    }
    (at < line.len() && at > 0 && line[at - 1] == b',').then_some(ts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::strategy::Strategy;

    #[test]
    fn plain_lines_parse_as_the_general_path_parses_them() {
        for line in [
            "1,2,3.45,1700000000000",
            "9999999999999999999,0,0.5,0",
            "7,3,12.,999999999999999999",
            "0007,03,9999999999999999.99,1",
            "1,2,3,4",
        ] {
            assert_eq!(
                parse_order(line.as_bytes()),
                super::super::parse_order_general(line).ok(),
                "{line}"
            );
        }
    }

    #[test]
    fn a_stamped_line_takes_its_timestamp_from_the_stamp_once_its_last_field_is_digits() {
        let line = b"5,6,7.80,1700000000123";
        assert_eq!(parse_stamped_order(line, 1_700_000_000_123), parse_order(line));
        for line in ["5,6,7.80,17x", "5,6,7.80, 17", "5,6,7.80,1,2", "5,6,7.80,"] {
            assert_eq!(parse_stamped_order(line.as_bytes(), 17), None, "{line}");
        }
    }

    #[test]
    fn anything_but_the_plain_shape_is_left_to_the_general_path() {
        for line in [
            "7, 3, 9.99, 1700000000123",
            "1,2,-3.00,4",
            "1,2,3.456,4",
            "1,2,.5,4",
            "1,2,3.00,4,5",
            "1,2,3.00",
            "1,2,3.00,-4",
            "1,2,3.00,4 ",
            "1,2,3.00,1234567890123456789",
            "1,2,12345678901234567.00,4",
            "1,2,3.00,",
            "+1,2,3.00,4",
            "",
        ] {
            assert_eq!(parse_order(line.as_bytes()), None, "{line}");
        }
        assert_eq!(last_field_timestamp(b"1,2,3.00,42"), Some(42));
        assert_eq!(
            last_field_timestamp(b",999999999999999999"),
            Some(999_999_999_999_999_999)
        );
        for line in [
            "1,2,3.00, 42",
            "42",
            "1,2,3.00,-42",
            "1,2,3.00,4x",
            "1,2,3.00,",
            ",1234567890123456789",
        ] {
            assert_eq!(last_field_timestamp(line.as_bytes()), None, "{line}");
        }
    }

    /// Found by `the_plain_order_reader_computes_exactly_what_the_general_parse_computes`:
    /// a field of twenty digits overflowed the reader (a panic with overflow checks on)
    /// before it was refused as too long.
    #[test]
    fn a_field_too_long_for_the_plain_reader_is_refused_without_overflowing() {
        assert_eq!(parse_order(b"99999999999999999999"), None);
        assert_eq!(parse_order(b"99999999999999999999,1,2.5,3"), None);
        assert_eq!(parse_order(b"1,99999999999999999999,2.5,3"), None);
        assert_eq!(parse_order(b"1,2,99999999999999999.99,3"), None);
        assert_eq!(parse_order(b"1,2,2.5,9999999999999999999"), None);
        assert_eq!(
            parse_order(b"9999999999999999999,2,9999999999999999.99,999999999999999999"),
            super::super::parse_order("9999999999999999999,2,9999999999999999.99,999999999999999999").ok()
        );
    }

    /// An order line's field: digits of every length around the readers' limits, with
    /// and without signs, spaces, dots and fractions.
    fn field() -> impl proptest::strategy::Strategy<Value = String> {
        proptest::prop_oneof![
            "[-+ ]?[0-9]{0,21}(\\.[0-9]{0,3})?[ x]?",
            proptest::sample::select(vec![
                "18446744073709551615",
                "18446744073709551616",
                "9223372036854775807",
                "9223372036854775808",
                "99999999999999999999",
                "9999999999999999.99",
                "99999999999999999.99",
            ])
            .prop_map(str::to_owned),
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(5_000))]

        /// Wherever the one-pass readers answer, the general parse gives the same: the
        /// order, the timestamp of the last field, and a stamped line's order.
        #[test]
        fn the_plain_order_reader_computes_exactly_what_the_general_parse_computes(
            line in proptest::prop_oneof![
                proptest::collection::vec(field(), 1..6).prop_map(|f| f.join(",")),
                "[-+0-9,. x]{0,48}",
            ],
        ) {
            let fast = parse_order(line.as_bytes());
            if fast.is_some() {
                proptest::prop_assert_eq!(fast, super::super::parse_order_general(&line).ok(), "{:?}", line);
            }
            if let Some(ts) = last_field_timestamp(line.as_bytes()) {
                let general = line.rsplit(',').next().and_then(|t| t.trim().parse::<i64>().ok());
                proptest::prop_assert_eq!(Some(ts), general, "{:?}", line);
                let stamped = parse_stamped_order(line.as_bytes(), ts);
                if stamped.is_some() {
                    proptest::prop_assert_eq!(stamped, super::super::parse_order(&line).ok(), "{:?}", line);
                }
            }
        }
    }
}
