//! The unbounded group aggregations: q15 (daily bidding statistics), q16 (the same per
//! channel), q17 (daily statistics per auction). Each key's final row goes out when the
//! input ends.

use super::at_end::{at_end, FinalAggregate};
use super::bids;
use crate::format::{day, hour_minute};
use crate::model::{Bid, Event};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use weir_api::prelude::*;

/// The price rank of q15–q17: 1 below $100, 2 below $10,000, else 3.
pub fn price_rank(price: i64) -> usize {
    if price < 10_000 {
        1
    } else if price < 1_000_000 {
        2
    } else {
        3
    }
}

/// Bids, distinct bidders and distinct auctions, in total (index 0) and per price rank
/// (indices 1–3).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RankedCounts {
    bids: [u64; 4],
    bidders: [HashSet<i64>; 4],
    auctions: [HashSet<i64>; 4],
}

impl RankedCounts {
    /// Counts `bid`.
    pub fn add(&mut self, bid: &Bid) {
        for i in [0, price_rank(bid.price)] {
            self.bids[i] += 1;
            self.bidders[i].insert(bid.bidder);
            self.auctions[i].insert(bid.auction);
        }
    }

    /// The twelve count columns, comma-separated.
    pub fn columns(&self) -> String {
        let bids = self.bids.map(|n| n.to_string());
        let bidders = self.bidders.each_ref().map(|s| s.len().to_string());
        let auctions = self.auctions.each_ref().map(|s| s.len().to_string());
        [bids.join(","), bidders.join(","), auctions.join(",")].join(",")
    }
}

/// The aggregate of a q15 or q16 group: counts and the latest `HH:mm`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ChannelDay {
    minute: String,
    counts: RankedCounts,
}

/// Per key, ranked counts of its bids (q15, q16), with the latest minute for q16.
#[derive(Clone)]
struct DailyStats {
    with_minute: bool,
}

impl<K: std::fmt::Display> FinalAggregate<K, Bid> for DailyStats {
    type Acc = ChannelDay;

    fn add(&self, s: &mut ChannelDay, bid: Bid) {
        s.counts.add(&bid);
        if self.with_minute {
            let minute = hour_minute(bid.date_time);
            if minute > s.minute {
                s.minute = minute;
            }
        }
    }

    fn emit(&self, key: &K, s: ChannelDay, out: &mut Collector<'_, String>) {
        if self.with_minute {
            out.collect(format!("{key},{},{}", s.minute, s.counts.columns()));
        } else {
            out.collect(format!("{key},{}", s.counts.columns()));
        }
    }
}

/// q15: per day, bids, distinct bidders and distinct auctions in total and per price
/// rank: `day` and twelve counts.
pub fn q15(events: &DataStream<Event>) -> DataStream<String> {
    let per_day = bids(events).key_by(|b: &Bid| day(b.date_time));
    at_end(&per_day, DailyStats { with_minute: false }, "daily-stats")
}

/// q16: q15 per channel and day, with the latest `HH:mm`: `channel,day,minute` and
/// twelve counts.
pub fn q16(events: &DataStream<Event>) -> DataStream<String> {
    let per_channel_day = bids(events).key_by(|b: &Bid| format!("{},{}", b.channel, day(b.date_time)));
    at_end(&per_channel_day, DailyStats { with_minute: true }, "channel-stats")
}

/// The aggregate of a q17 group.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct PriceStats {
    bids: [u64; 4],
    min: i64,
    max: i64,
    sum: i64,
}

impl Default for PriceStats {
    fn default() -> Self {
        Self {
            bids: [0; 4],
            min: i64::MAX,
            max: i64::MIN,
            sum: 0,
        }
    }
}

/// Per auction and day, bid counts and price statistics.
#[derive(Clone)]
struct AuctionStats;

impl FinalAggregate<(i64, String), Bid> for AuctionStats {
    type Acc = PriceStats;

    fn add(&self, s: &mut PriceStats, bid: Bid) {
        s.bids[0] += 1;
        s.bids[price_rank(bid.price)] += 1;
        s.min = s.min.min(bid.price);
        s.max = s.max.max(bid.price);
        s.sum += bid.price;
    }

    fn emit(&self, (auction, day): &(i64, String), s: PriceStats, out: &mut Collector<'_, String>) {
        let [total, r1, r2, r3] = s.bids;
        out.collect(format!(
            "{auction},{day},{total},{r1},{r2},{r3},{},{},{},{}",
            s.min,
            s.max,
            s.sum / total as i64,
            s.sum
        ));
    }
}

/// q17: per auction and day, bid counts (total and per price rank) and min, max,
/// average and sum of prices.
pub fn q17(events: &DataStream<Event>) -> DataStream<String> {
    let per_auction_day = bids(events).key_by(|b: &Bid| (b.auction, day(b.date_time)));
    at_end(&per_auction_day, AuctionStats, "auction-stats")
}
