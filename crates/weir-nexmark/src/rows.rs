//! The output rows of the queries, as CSV lines: the column lists of the suite's
//! `CREATE TABLE nexmark_qN` sinks. The programs and the reference computation
//! ([`crate::oracle`]) both write their rows with these functions.

use crate::format::{bid_time_type, Euros};
use crate::model::{Auction, Bid};
use std::fmt::Write;

/// A line of at least `capacity` bytes from `args`, written without reallocating when
/// the estimate holds.
fn line(capacity: usize, args: std::fmt::Arguments<'_>) -> String {
    let mut s = String::with_capacity(capacity);
    s.write_fmt(args).expect("writing to a String cannot fail");
    s
}

/// Room for the numbers and separators of a row.
const NUMBERS: usize = 96;

/// `auction, bidder, price, dateTime, extra` (q0, q7).
pub fn bid_summary(b: &Bid) -> String {
    line(
        NUMBERS + b.extra.len(),
        format_args!("{},{},{},{},{}", b.auction, b.bidder, b.price, b.date_time, b.extra),
    )
}

/// Every column of a bid: `auction, bidder, price, channel, url, dateTime, extra`
/// (q18, q19).
pub fn bid(b: &Bid) -> String {
    line(
        NUMBERS + b.channel.len() + b.url.len() + b.extra.len(),
        format_args!(
            "{},{},{},{},{},{},{}",
            b.auction, b.bidder, b.price, b.channel, b.url, b.date_time, b.extra
        ),
    )
}

/// q1: `auction, bidder, 0.908 * price, dateTime, extra`.
pub fn in_euros(b: &Bid) -> String {
    format!(
        "{},{},{},{},{}",
        b.auction,
        b.bidder,
        Euros(b.price),
        b.date_time,
        b.extra
    )
}

/// The `count_char(s, c)` UDF: occurrences of `c` in `s`.
pub fn count_char(s: &str, c: char) -> usize {
    s.chars().filter(|x| *x == c).count()
}

/// q14: `auction, bidder, 0.908 * price, bidTimeType, dateTime, extra, c_counts`.
pub fn calculation(b: &Bid) -> String {
    line(
        NUMBERS + b.extra.len(),
        format_args!(
            "{},{},{},{},{},{},{}",
            b.auction,
            b.bidder,
            Euros(b.price),
            bid_time_type(b.date_time),
            b.date_time,
            b.extra,
            count_char(&b.extra, 'c')
        ),
    )
}

/// `SPLIT_INDEX(s, '/', i)`: the `i`th field (from 0), empty (SQL NULL) past the end.
pub fn split_index(s: &str, i: usize) -> &str {
    s.split('/').nth(i).unwrap_or("")
}

/// q22: `auction, bidder, price, channel, dir1, dir2, dir3`.
pub fn url_directories(b: &Bid) -> String {
    line(
        NUMBERS + b.url.len(),
        format_args!(
            "{},{},{},{},{},{},{}",
            b.auction,
            b.bidder,
            b.price,
            b.channel,
            split_index(&b.url, 3),
            split_index(&b.url, 4),
            split_index(&b.url, 5)
        ),
    )
}

fn auction(a: &Auction) -> String {
    format!(
        "{},{},{},{},{},{},{},{},{}",
        a.item_name, a.description, a.initial_bid, a.reserve, a.date_time, a.expires, a.seller, a.category, a.extra
    )
}

/// q9: the auction's columns (id first), then `auction, bidder, price, dateTime,
/// extra` of its winning bid.
pub fn winning_bid(a: &Auction, b: &Bid) -> String {
    format!("{},{},{}", a.id, auction(a), bid_summary(b))
}

/// q20: the bid's columns, then the auction's without its id.
pub fn expanded_bid(b: &Bid, a: &Auction) -> String {
    format!("{},{}", bid(b), auction(a))
}
