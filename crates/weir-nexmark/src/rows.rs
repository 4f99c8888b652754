//! The output rows of the queries, as CSV lines: the column lists of the suite's
//! `CREATE TABLE nexmark_qN` sinks. The programs and the reference computation
//! ([`crate::oracle`]) both write their rows with these functions.

use crate::csv_line::CsvLine;
use crate::format::{bid_time_type, Day, MinuteOfDay};
use crate::model::{Auction, Bid};
use std::fmt::Write;

/// Room for the numbers and separators of a row.
const NUMBERS: usize = 96;

/// `auction, bidder, price, dateTime, extra` (q0, q7).
pub fn bid_summary(b: &Bid) -> String {
    CsvLine::with_capacity(NUMBERS + b.extra.len())
        .int(b.auction)
        .int(b.bidder)
        .int(b.price)
        .int(b.date_time)
        .text(&b.extra)
        .finish()
}

/// Every column of a bid: `auction, bidder, price, channel, url, dateTime, extra`
/// (q18, q19).
pub fn bid(b: &Bid) -> String {
    CsvLine::with_capacity(NUMBERS + b.channel.len() + b.url.len() + b.extra.len())
        .int(b.auction)
        .int(b.bidder)
        .int(b.price)
        .text(&b.channel)
        .text(&b.url)
        .int(b.date_time)
        .text(&b.extra)
        .finish()
}

/// q1: `auction, bidder, 0.908 * price, dateTime, extra`.
pub fn in_euros(b: &Bid) -> String {
    CsvLine::with_capacity(NUMBERS + b.extra.len())
        .int(b.auction)
        .int(b.bidder)
        .euros(b.price)
        .int(b.date_time)
        .text(&b.extra)
        .finish()
}

/// The `count_char(s, c)` UDF: occurrences of `c` in `s`.
pub fn count_char(s: &str, c: char) -> usize {
    s.chars().filter(|x| *x == c).count()
}

/// q14: `auction, bidder, 0.908 * price, bidTimeType, dateTime, extra, c_counts`.
pub fn calculation(b: &Bid) -> String {
    CsvLine::with_capacity(NUMBERS + b.extra.len())
        .int(b.auction)
        .int(b.bidder)
        .euros(b.price)
        .text(bid_time_type(b.date_time))
        .int(b.date_time)
        .text(&b.extra)
        .int(count_char(&b.extra, 'c'))
        .finish()
}

/// `SPLIT_INDEX(s, '/', i)`: the `i`th field (from 0), empty (SQL NULL) past the end.
pub fn split_index(s: &str, i: usize) -> &str {
    s.split('/').nth(i).unwrap_or("")
}

/// q22: `auction, bidder, price, channel, dir1, dir2, dir3`.
pub fn url_directories(b: &Bid) -> String {
    CsvLine::with_capacity(NUMBERS + b.url.len())
        .int(b.auction)
        .int(b.bidder)
        .int(b.price)
        .text(&b.channel)
        .text(split_index(&b.url, 3))
        .text(split_index(&b.url, 4))
        .text(split_index(&b.url, 5))
        .finish()
}

/// q10: `auction, bidder, price, dateTime, extra` and the partition columns `dt`
/// (`yyyy-MM-dd`) and `hm` (`HH:mm`).
pub fn partitioned_bid(b: &Bid) -> String {
    let mut s = bid_summary(b);
    write!(s, ",{},{}", Day::of(b.date_time), MinuteOfDay::of(b.date_time)).expect("writing to a String cannot fail");
    s
}

/// The ids of the hot channels in q21, by lower-cased name.
const HOT_CHANNEL_IDS: [(&str, &str); 4] = [("apple", "0"), ("google", "1"), ("facebook", "2"), ("baidu", "3")];

/// `lower(channel) = name`, as Java lower-cases.
fn lower_equals(channel: &str, name: &str) -> bool {
    if channel.is_ascii() {
        channel.eq_ignore_ascii_case(name)
    } else {
        channel.to_lowercase() == name
    }
}

/// `REGEXP_EXTRACT(url, '(&|^)channel_id=([^&]*)', 2)`: the value of the first
/// `channel_id` parameter that starts the URL or follows a `&`, up to the next `&`
/// (possibly empty); `None` (SQL NULL) when there is none.
pub fn url_channel_id(url: &str) -> Option<&str> {
    const PARAM: &str = "channel_id=";
    let mut from = 0;
    while let Some(at) = url[from..].find(PARAM).map(|i| from + i) {
        if at == 0 || url.as_bytes()[at - 1] == b'&' {
            let value = &url[at + PARAM.len()..];
            return Some(value.split('&').next().unwrap_or(""));
        }
        from = at + 1;
    }
    None
}

/// q21's `channel_id`: the hot channels' fixed ids, else the URL's `channel_id`
/// parameter; `None` when neither applies (the bid is filtered out).
pub fn channel_id(b: &Bid) -> Option<&str> {
    HOT_CHANNEL_IDS
        .iter()
        .find(|(name, _)| lower_equals(&b.channel, name))
        .map(|(_, id)| *id)
        .or_else(|| url_channel_id(&b.url))
}

/// q21: `auction, bidder, price, channel, channel_id` of a bid with a channel id.
pub fn with_channel_id(b: &Bid) -> Option<String> {
    let id = channel_id(b)?;
    Some(
        CsvLine::with_capacity(NUMBERS + b.channel.len() + id.len())
            .int(b.auction)
            .int(b.bidder)
            .int(b.price)
            .text(&b.channel)
            .text(id)
            .finish(),
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

/// `auction, bidder, price, dateTime, value`: a bid with its side-input value (q13).
pub fn enriched_bid(b: &Bid, value: &str) -> String {
    CsvLine::with_capacity(NUMBERS + value.len())
        .int(b.auction)
        .int(b.bidder)
        .int(b.price)
        .int(b.date_time)
        .text(value)
        .finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_channel_id_parameter_must_start_the_url_or_follow_an_ampersand() {
        assert_eq!(url_channel_id("https://x.com/a?b=1&channel_id=42"), Some("42"));
        assert_eq!(url_channel_id("channel_id=7&x=1"), Some("7"));
        assert_eq!(
            url_channel_id("https://x.com/?xchannel_id=1&channel_id=2&c=3"),
            Some("2")
        );
        assert_eq!(url_channel_id("https://x.com/?a=1&channel_id=&b=2"), Some(""));
        assert_eq!(url_channel_id("https://x.com/?xchannel_id=1"), None);
        assert_eq!(url_channel_id("https://x.com/?a=1"), None);
    }

    #[test]
    fn hot_channels_have_fixed_ids_whatever_their_case_or_url() {
        let bid = |channel: &str, url: &str| Bid {
            auction: 1,
            bidder: 2,
            price: 3,
            channel: channel.into(),
            url: url.into(),
            date_time: 0,
            extra: String::new(),
        };
        assert_eq!(channel_id(&bid("Apple", "https://a?channel_id=9")), Some("0"));
        assert_eq!(channel_id(&bid("BAIDU", "https://a")), Some("3"));
        assert_eq!(channel_id(&bid("channel-5", "https://a?q=1&channel_id=77")), Some("77"));
        assert_eq!(channel_id(&bid("channel-5", "https://a?q=1")), None);
        assert_eq!(
            with_channel_id(&bid("Google", "https://a")).as_deref(),
            Some("1,2,3,Google,1")
        );
    }
}
