//! The unbounded group aggregations: q15 (daily bidding statistics), q16 (the same per
//! channel), q17 (daily statistics per auction). Each key's final row goes out when the
//! input ends.

use super::at_end::{at_end, FinalAggregate};
use super::bids;
use crate::format::{Day, MinuteOfDay};
use crate::model::{Bid, Event};
use rustc_hash::FxHashSet;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
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

/// The columns of a bid the statistics read: the projection Flink's planner pushes
/// below the aggregate, so the keyed exchange carries four numbers, not the bid.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct PricedBid {
    /// The auction bid on.
    pub auction: i64,
    /// The bidder.
    pub bidder: i64,
    /// The price in cents.
    pub price: i64,
    /// Event time.
    pub date_time: i64,
}

impl From<&Bid> for PricedBid {
    fn from(b: &Bid) -> Self {
        Self {
            auction: b.auction,
            bidder: b.bidder,
            price: b.price,
            date_time: b.date_time,
        }
    }
}

/// A [`PricedBid`] with its channel (q16).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ChannelBid {
    /// The channel the bid came through.
    pub channel: Arc<str>,
    /// The bid's numbers.
    pub bid: PricedBid,
}

/// q16's key: a channel on a day, written `channel,yyyy-MM-dd`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ChannelOnDay {
    /// The channel.
    pub channel: Arc<str>,
    /// The day.
    pub day: Day,
}

/// Bids, distinct bidders and distinct auctions, in total (index 0) and per price rank
/// (indices 1–3).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RankedCounts {
    bids: [u64; 4],
    bidders: [FxHashSet<i64>; 4],
    auctions: [FxHashSet<i64>; 4],
}

impl RankedCounts {
    /// Counts `bid`.
    pub fn add(&mut self, bid: PricedBid) {
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

/// Per day, ranked counts of its bids (q15).
#[derive(Clone)]
struct DailyStats;

impl FinalAggregate<Day, PricedBid> for DailyStats {
    type Acc = RankedCounts;

    fn add(&self, s: &mut RankedCounts, bid: PricedBid) {
        s.add(bid);
    }

    fn emit(&self, day: &Day, s: RankedCounts, out: &mut Collector<'_, String>) {
        out.collect(format!("{day},{}", s.columns()));
    }
}

/// The aggregate of a q16 group: counts and the latest minute.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ChannelDayStats {
    latest: MinuteOfDay,
    counts: RankedCounts,
}

/// Per channel and day, ranked counts of its bids and the latest `HH:mm` (q16).
#[derive(Clone)]
struct ChannelStats;

impl FinalAggregate<ChannelOnDay, ChannelBid> for ChannelStats {
    type Acc = ChannelDayStats;

    fn add(&self, s: &mut ChannelDayStats, bid: ChannelBid) {
        s.counts.add(bid.bid);
        s.latest = s.latest.max(MinuteOfDay::of(bid.bid.date_time));
    }

    fn emit(&self, key: &ChannelOnDay, s: ChannelDayStats, out: &mut Collector<'_, String>) {
        out.collect(format!(
            "{},{},{},{}",
            key.channel,
            key.day,
            s.latest,
            s.counts.columns()
        ));
    }
}

/// The bids of `events` projected to [`PricedBid`].
fn priced_bids(events: &DataStream<Event>) -> DataStream<PricedBid> {
    bids(events).map(|b: Bid| PricedBid::from(&b))
}

/// q15: per day, bids, distinct bidders and distinct auctions in total and per price
/// rank: `day` and twelve counts.
pub fn q15(events: &DataStream<Event>) -> DataStream<String> {
    let per_day = priced_bids(events).key_by(|b: &PricedBid| Day::of(b.date_time));
    at_end(&per_day, DailyStats, "daily-stats")
}

/// q16: q15 per channel and day, with the latest `HH:mm`: `channel,day,minute` and
/// twelve counts.
pub fn q16(events: &DataStream<Event>) -> DataStream<String> {
    let per_channel_day = bids(events)
        .map(|b: Bid| ChannelBid {
            bid: PricedBid::from(&b),
            channel: b.channel,
        })
        .key_by(|b: &ChannelBid| ChannelOnDay {
            channel: b.channel.clone(),
            day: Day::of(b.bid.date_time),
        });
    at_end(&per_channel_day, ChannelStats, "channel-stats")
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

impl FinalAggregate<(i64, Day), PricedBid> for AuctionStats {
    type Acc = PriceStats;

    fn add(&self, s: &mut PriceStats, bid: PricedBid) {
        s.bids[0] += 1;
        s.bids[price_rank(bid.price)] += 1;
        s.min = s.min.min(bid.price);
        s.max = s.max.max(bid.price);
        s.sum += bid.price;
    }

    fn emit(&self, (auction, day): &(i64, Day), s: PriceStats, out: &mut Collector<'_, String>) {
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
    let per_auction_day = priced_bids(events).key_by(|b: &PricedBid| (b.auction, Day::of(b.date_time)));
    at_end(&per_auction_day, AuctionStats, "auction-stats")
}
