//! q13 (bounded side input join): every bid enriched with the side-input row whose key
//! is `MOD(auction, 10000)`, as the suite's processing-time lookup join into a bounded
//! filesystem table.
//!
//! The side input is loaded when the program is built (in every process that builds
//! it, like a lookup join's per-task cache) and shared read-only by the subtasks; the
//! join is stateless and chains onto the source. A bid whose key has no row is
//! dropped (inner join); a key with several rows yields one line per row.

use super::bids;
use crate::model::{Bid, Event};
use crate::rows;
use crate::side_input::{SideInput, SUITE_ROWS};
use std::sync::Arc;
use weir_api::prelude::*;

/// q13: `auction, bidder, price, dateTime, value` for each side-input row matching a bid.
pub fn q13(events: &DataStream<Event>, side_input: Arc<SideInput>) -> DataStream<String> {
    bids(events).flat_map(move |b: Bid| {
        let table = Arc::clone(&side_input);
        let key = join_key(&b);
        (0..table.lookup(key).len()).map(move |i| rows::enriched_bid(&b, &table.lookup(key)[i]))
    })
}

/// `MOD(B.auction, 10000)`, with SQL's (Java's) sign rule.
pub fn join_key(b: &Bid) -> i64 {
    b.auction % SUITE_ROWS
}
