//! The ranking queries: q18 (the last bid per bidder and auction, a deduplication) and
//! q19 (the ten highest bids per auction, a top-N). Each keeps the rows that rank
//! first per key and emits them when the input ends.

use super::at_end::{at_end, FinalAggregate};
use super::bids;
use crate::model::{Bid, Event};
use crate::rows;
use std::cmp::Ordering;
use weir_api::prelude::*;

/// Highest price first, then earliest, then by bidder, channel, url and extra: the
/// order of q9 and q19 with ties broken deterministically.
pub fn price_order(a: &Bid, b: &Bid) -> Ordering {
    b.price
        .cmp(&a.price)
        .then(a.date_time.cmp(&b.date_time))
        .then_with(|| tie_break(a, b))
}

/// Latest first, then highest price, then by the remaining fields: q18's order.
pub fn recency_order(a: &Bid, b: &Bid) -> Ordering {
    b.date_time
        .cmp(&a.date_time)
        .then(b.price.cmp(&a.price))
        .then_with(|| tie_break(a, b))
}

fn tie_break(a: &Bid, b: &Bid) -> Ordering {
    (a.bidder, &a.channel, &a.url, &a.extra).cmp(&(b.bidder, &b.channel, &b.url, &b.extra))
}

/// Keeps the last bid of each bidder and auction.
#[derive(Clone)]
struct LastBid;

impl FinalAggregate<(i64, i64), Bid> for LastBid {
    type Acc = Option<Bid>;

    fn add(&self, last: &mut Option<Bid>, bid: Bid) {
        if last.as_ref().is_none_or(|l| recency_order(&bid, l) == Ordering::Less) {
            *last = Some(bid);
        }
    }

    fn emit(&self, _key: &(i64, i64), last: Option<Bid>, out: &mut Collector<'_, String>) {
        if let Some(bid) = last {
            out.collect(rows::bid(&bid));
        }
    }
}

/// q18: the last bid of each bidder on each auction: the bid's columns.
pub fn q18(events: &DataStream<Event>) -> DataStream<String> {
    at_end(
        &bids(events).key_by(|b: &Bid| (b.bidder, b.auction)),
        LastBid,
        "last-bid",
    )
}

/// How many bids q19 keeps per auction.
pub const TOP_N: usize = 10;

/// Keeps the ten highest bids of each auction, in order.
#[derive(Clone)]
struct TopBids;

impl FinalAggregate<i64, Bid> for TopBids {
    type Acc = Vec<Bid>;

    fn add(&self, top: &mut Vec<Bid>, bid: Bid) {
        let at = top.partition_point(|b| price_order(b, &bid) == Ordering::Less);
        if at < TOP_N {
            top.insert(at, bid);
            top.truncate(TOP_N);
        }
    }

    fn emit(&self, _auction: &i64, top: Vec<Bid>, out: &mut Collector<'_, String>) {
        for (rank, bid) in top.iter().enumerate() {
            out.collect(format!("{},{}", rows::bid(bid), rank + 1));
        }
    }
}

/// q19: the ten highest bids of each auction with their rank: the bid's columns and
/// `rank_number`.
pub fn q19(events: &DataStream<Event>) -> DataStream<String> {
    at_end(&bids(events).key_by(|b: &Bid| b.auction), TopBids, "top-bids")
}
