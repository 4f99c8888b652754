//! The winning-bid queries: q9 (the winning bid of each auction) and q4 (the average
//! winning price per category), on one keyed join of auctions and bids.
//!
//! Per auction id the join keeps the bids that came before their auction, then the
//! best bid in `[auction.dateTime, auction.expires]` (highest price, then earliest; see
//! [`super::ranking::price_order`]); once the watermark reaches `expires` no bid can
//! join any more, so the winner goes out and the auction is closed.

use super::at_end::{at_end, FinalAggregate};
use super::ranking::price_order;
use super::{auctions, bids};
use crate::model::{Auction, Bid, Event};
use crate::rows;
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use weir_api::prelude::*;

/// An auction and its winning bid.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WinningBid {
    /// The auction.
    pub auction: Auction,
    /// Its best bid within its lifetime.
    pub bid: Bid,
}

/// An auction's state in the join.
#[derive(Debug, Clone, Serialize, Deserialize)]
enum Bidding {
    /// The auction is not there yet: its bids wait.
    Waiting(Vec<Bid>),
    /// The auction is open, with its best bid so far.
    Open { auction: Box<Auction>, best: Option<Bid> },
    /// The auction expired and its winner went out.
    Closed,
}

fn consider(auction: &Auction, best: &mut Option<Bid>, bid: Bid) {
    let in_time = (auction.date_time..=auction.expires).contains(&bid.date_time);
    if in_time && best.as_ref().is_none_or(|b| price_order(&bid, b) == Ordering::Less) {
        *best = Some(bid);
    }
}

/// The join of auctions (first input) and bids (second input) per auction id.
#[derive(Clone)]
struct Winners {
    bidding: ValueStateDescriptor<Bidding>,
}

impl KeyedCoProcessFunction<i64, Auction, Bid, WinningBid> for Winners {
    fn process_element1(
        &mut self,
        auction: Auction,
        ctx: &mut KeyedContext<'_, i64>,
        _out: &mut Collector<'_, WinningBid>,
    ) -> Result<(), UserError> {
        ctx.register_event_time_timer(auction.expires)?;
        let mut state = ctx.value_state(&self.bidding)?;
        let waiting = match state.take() {
            Some(Bidding::Waiting(bids)) => bids,
            _ => Vec::new(),
        };
        let mut best = None;
        for bid in waiting {
            consider(&auction, &mut best, bid);
        }
        state.update(Bidding::Open {
            auction: Box::new(auction),
            best,
        });
        Ok(())
    }

    fn process_element2(
        &mut self,
        bid: Bid,
        ctx: &mut KeyedContext<'_, i64>,
        _out: &mut Collector<'_, WinningBid>,
    ) -> Result<(), UserError> {
        let mut state = ctx.value_state(&self.bidding)?;
        match state.get_or_insert_with(|| Bidding::Waiting(Vec::new())) {
            Bidding::Waiting(bids) => bids.push(bid),
            Bidding::Open { auction, best } => consider(auction, best, bid),
            Bidding::Closed => {}
        }
        Ok(())
    }

    fn on_timer(
        &mut self,
        _timestamp: i64,
        ctx: &mut KeyedContext<'_, i64>,
        out: &mut Collector<'_, WinningBid>,
    ) -> Result<(), UserError> {
        let mut state = ctx.value_state(&self.bidding)?;
        if let Some(Bidding::Open {
            auction,
            best: Some(bid),
        }) = state.take()
        {
            out.collect(WinningBid { auction: *auction, bid });
        }
        state.update(Bidding::Closed);
        Ok(())
    }
}

/// The winning bid of every auction that had a bid in its lifetime.
pub fn winning_bids(events: &DataStream<Event>) -> DataStream<WinningBid> {
    auctions(events)
        .connect(&bids(events))
        .key_by(|a: &Auction| a.id, |b: &Bid| b.auction)
        .process(Winners {
            bidding: ValueStateDescriptor::new("bidding"),
        })
}

/// q9: each auction with its winning bid: the auction's columns, then `auction,
/// bidder, price, dateTime, extra` of the bid.
pub fn q9(events: &DataStream<Event>) -> DataStream<String> {
    winning_bids(events).map(|w: WinningBid| rows::winning_bid(&w.auction, &w.bid))
}

/// Sum and count of the winning prices of a category.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub struct PriceSum {
    sum: i64,
    count: i64,
}

/// Averages the winning prices per category (`AVG` of `BIGINT`: truncated).
#[derive(Clone)]
struct AveragePrice;

impl FinalAggregate<i64, (i64, i64)> for AveragePrice {
    type Acc = PriceSum;

    fn add(&self, acc: &mut PriceSum, (_, price): (i64, i64)) {
        acc.sum += price;
        acc.count += 1;
    }

    fn emit(&self, category: &i64, acc: PriceSum, out: &mut Collector<'_, String>) {
        out.collect(format!("{category},{}", acc.sum / acc.count));
    }
}

/// q4: per category, the average of its auctions' winning prices: `category,avg`.
pub fn q4(events: &DataStream<Event>) -> DataStream<String> {
    let per_category = winning_bids(events)
        .map(|w: WinningBid| (w.auction.category, w.bid.price))
        .key_by(|c: &(i64, i64)| c.0);
    at_end(&per_category, AveragePrice, "winning-price-sum")
}
