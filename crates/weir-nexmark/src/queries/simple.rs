//! The stateless queries: q0 (pass-through), q1 (currency conversion), q2 (selection),
//! q10 (bids with date/time partition columns), q14 (calculation with a UDF), q21 (channel
//! ids), q22 (URL directories).

use super::bids;
use crate::csv_line::CsvLine;
use crate::format::euros_between_1m_and_50m;
use crate::model::{Bid, Event};
use crate::rows;
use weir_api::prelude::*;

/// q0: `auction, bidder, price, dateTime, extra` of every bid.
pub fn q0(events: &DataStream<Event>) -> DataStream<String> {
    bids(events).map(|b: Bid| rows::bid_summary(&b))
}

/// q1: every bid with its price in euros (`0.908 * price`).
pub fn q1(events: &DataStream<Event>) -> DataStream<String> {
    bids(events).map(|b: Bid| rows::in_euros(&b))
}

/// q2: `auction, price` of bids on auctions whose id is a multiple of 123.
pub fn q2(events: &DataStream<Event>) -> DataStream<String> {
    bids(events)
        .filter(|b: &Bid| b.auction % 123 == 0)
        .map(|b: Bid| CsvLine::with_capacity(24).int(b.auction).int(b.price).finish())
}

/// q10: every bid with its partition columns `dt` (`yyyy-MM-dd`) and `hm` (`HH:mm`).
/// The suite writes to a filesystem sink partitioned by them; here they are the last
/// two columns of the line, written to the query's usual sink.
pub fn q10(events: &DataStream<Event>) -> DataStream<String> {
    bids(events).map(|b: Bid| rows::partitioned_bid(&b))
}

/// q21: `auction, bidder, price, channel, channel_id` of the bids with a channel id: the
/// hot channels' fixed ids, else the URL's `channel_id` parameter.
pub fn q21(events: &DataStream<Event>) -> DataStream<String> {
    bids(events).flat_map(|b: Bid| rows::with_channel_id(&b))
}

/// q14: bids priced between 1M and 50M euros with their time-of-day class and the
/// number of `c`s in `extra`.
pub fn q14(events: &DataStream<Event>) -> DataStream<String> {
    bids(events)
        .filter(|b: &Bid| euros_between_1m_and_50m(b.price))
        .map(|b: Bid| rows::calculation(&b))
}

/// q22: `auction, bidder, price, channel` and the first three directories of the URL.
pub fn q22(events: &DataStream<Event>) -> DataStream<String> {
    bids(events).map(|b: Bid| rows::url_directories(&b))
}
