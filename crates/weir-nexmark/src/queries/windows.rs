//! The windowed queries: q5 (hot items, sliding windows), q7 (highest bid, tumbling
//! windows), q11 (user sessions), q12 (processing-time windows).

use super::bids;
use crate::model::{Bid, Event};
use crate::rows;
use serde::{Deserialize, Serialize};
use weir_api::prelude::*;
use weir_api::windowing::WindowContext;

/// The window size of q5, q7 and q12 and the session gap of q11, in ms.
pub const TEN_SECONDS: i64 = 10_000;
/// The slide of q5's windows in ms.
pub const TWO_SECONDS: i64 = 2_000;

/// Counts the elements of a window.
#[derive(Clone)]
pub struct Count;

impl<T> AggregateFunction<T, u64, u64> for Count {
    fn create_accumulator(&self) -> u64 {
        0
    }
    fn add(&self, _: T, acc: &mut u64) {
        *acc += 1;
    }
    fn get_result(&self, acc: &u64) -> u64 {
        *acc
    }
    fn merge(&self, a: u64, b: u64) -> u64 {
        a + b
    }
}

/// The number of bids on an auction in one window.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AuctionCount {
    /// End of the window (exclusive).
    pub window_end: i64,
    /// The auction.
    pub auction: i64,
    /// Its bids in the window.
    pub count: u64,
}

#[derive(Clone)]
struct TagAuctionCount;

impl ProcessWindowFunction<i64, u64, AuctionCount, TimeWindow> for TagAuctionCount {
    fn process(
        &mut self,
        auction: &i64,
        ctx: &mut WindowContext<'_, i64, TimeWindow>,
        counts: Vec<u64>,
        out: &mut Collector<'_, AuctionCount>,
    ) -> Result<(), UserError> {
        let window_end = ctx.window().end();
        for count in counts {
            out.collect(AuctionCount {
                window_end,
                auction: *auction,
                count,
            });
        }
        Ok(())
    }
}

/// The auctions with the most bids in one window so far.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct HotAuctions {
    max: u64,
    auctions: Vec<i64>,
}

/// Per window (the key is its end): keeps the auctions with the most bids and emits
/// `auction,num` for each once the watermark passes the window.
#[derive(Clone)]
struct HotItems {
    hot: ValueStateDescriptor<HotAuctions>,
}

impl KeyedProcessFunction<i64, AuctionCount, String> for HotItems {
    fn process_element(
        &mut self,
        c: AuctionCount,
        ctx: &mut KeyedContext<'_, i64>,
        _out: &mut Collector<'_, String>,
    ) -> Result<(), UserError> {
        ctx.register_event_time_timer(c.window_end - 1)?;
        let mut state = ctx.value_state(&self.hot)?;
        let hot = state.get_or_insert_with(HotAuctions::default);
        if c.count > hot.max {
            hot.max = c.count;
            hot.auctions.clear();
        }
        if c.count == hot.max {
            hot.auctions.push(c.auction);
        }
        Ok(())
    }

    fn on_timer(
        &mut self,
        _timestamp: i64,
        ctx: &mut KeyedContext<'_, i64>,
        out: &mut Collector<'_, String>,
    ) -> Result<(), UserError> {
        if let Some(hot) = ctx.value_state(&self.hot)?.take() {
            for auction in hot.auctions {
                out.collect(format!("{auction},{}", hot.max));
            }
        }
        Ok(())
    }
}

/// q5: per 10 s window sliding by 2 s, the auctions with the most bids: `auction,num`.
pub fn q5(events: &DataStream<Event>) -> DataStream<String> {
    bids(events)
        .key_by(|b: &Bid| b.auction)
        .window(SlidingEventTimeWindows::of(
            Duration::from_millis(TEN_SECONDS as u64),
            Duration::from_millis(TWO_SECONDS as u64),
        ))
        .aggregate_with_process(Count, TagAuctionCount)
        .key_by(|c: &AuctionCount| c.window_end)
        .process(HotItems {
            hot: ValueStateDescriptor::new("hot-auctions"),
        })
}

/// A bid routed to a tumbling window: its own, or (`at_end`) the previous one, whose
/// inclusive upper bound it lies on.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct WindowedBid {
    window_start: i64,
    at_end: bool,
    bid: Bid,
}

/// The highest bids of a window, and the bids on its end.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct HighestBids {
    max: Option<i64>,
    highest: Vec<Bid>,
    at_end: Vec<Bid>,
}

/// Per tumbling window: the maximum price of its bids, and the bids in
/// `[start, end]` at that price, emitted once the watermark reaches the end.
#[derive(Clone)]
struct HighestBid {
    state: ValueStateDescriptor<HighestBids>,
}

impl KeyedProcessFunction<i64, WindowedBid, String> for HighestBid {
    fn process_element(
        &mut self,
        w: WindowedBid,
        ctx: &mut KeyedContext<'_, i64>,
        _out: &mut Collector<'_, String>,
    ) -> Result<(), UserError> {
        ctx.register_event_time_timer(w.window_start + TEN_SECONDS)?;
        let mut state = ctx.value_state(&self.state)?;
        let s = state.get_or_insert_with(HighestBids::default);
        if w.at_end {
            s.at_end.push(w.bid);
        } else if s.max.is_none_or(|m| w.bid.price > m) {
            s.max = Some(w.bid.price);
            s.highest = vec![w.bid];
        } else if s.max == Some(w.bid.price) {
            s.highest.push(w.bid);
        }
        Ok(())
    }

    fn on_timer(
        &mut self,
        _timestamp: i64,
        ctx: &mut KeyedContext<'_, i64>,
        out: &mut Collector<'_, String>,
    ) -> Result<(), UserError> {
        let Some(s) = ctx.value_state(&self.state)?.take() else {
            return Ok(());
        };
        let Some(max) = s.max else { return Ok(()) };
        for b in s.highest.iter().chain(s.at_end.iter().filter(|b| b.price == max)) {
            out.collect(rows::bid_summary(b));
        }
        Ok(())
    }
}

/// q7: per 10 s tumbling window, the bids in `[window_end - 10 s, window_end]` priced at
/// the window's maximum: `auction,bidder,price,dateTime,extra`.
pub fn q7(events: &DataStream<Event>) -> DataStream<String> {
    bids(events)
        .flat_map(|bid: Bid| {
            let window_start = bid.date_time - bid.date_time.rem_euclid(TEN_SECONDS);
            let on_previous_end = window_start == bid.date_time;
            let previous = on_previous_end.then(|| WindowedBid {
                window_start: window_start - TEN_SECONDS,
                at_end: true,
                bid: bid.clone(),
            });
            previous.into_iter().chain(std::iter::once(WindowedBid {
                window_start,
                at_end: false,
                bid,
            }))
        })
        .key_by(|w: &WindowedBid| w.window_start)
        .process(HighestBid {
            state: ValueStateDescriptor::new("highest-bids"),
        })
}

#[derive(Clone)]
struct FormatSession;

impl ProcessWindowFunction<i64, u64, String, TimeWindow> for FormatSession {
    fn process(
        &mut self,
        bidder: &i64,
        ctx: &mut WindowContext<'_, i64, TimeWindow>,
        counts: Vec<u64>,
        out: &mut Collector<'_, String>,
    ) -> Result<(), UserError> {
        let w = ctx.window();
        for count in counts {
            out.collect(format!("{bidder},{count},{},{}", w.start(), w.end()));
        }
        Ok(())
    }
}

/// q11: bids per bidder session (gap 10 s): `bidder,bid_count,starttime,endtime`.
pub fn q11(events: &DataStream<Event>) -> DataStream<String> {
    bids(events)
        .key_by(|b: &Bid| b.bidder)
        .window(EventTimeSessionWindows::with_gap(Duration::from_millis(
            TEN_SECONDS as u64,
        )))
        .aggregate_with_process(Count, FormatSession)
}

/// The open processing-time window of a bidder.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct OpenWindow {
    start: i64,
    count: u64,
}

/// Counts a bidder's bids per 10 s window of processing time; a window goes out when
/// the clock passes its end, or when the input ends.
#[derive(Clone)]
struct ProcessingTimeCount {
    open: ValueStateDescriptor<OpenWindow>,
}

fn window_line(bidder: i64, w: OpenWindow) -> String {
    format!("{bidder},{},{},{}", w.count, w.start, w.start + TEN_SECONDS)
}

impl KeyedProcessFunction<i64, Bid, String> for ProcessingTimeCount {
    fn process_element(
        &mut self,
        bid: Bid,
        ctx: &mut KeyedContext<'_, i64>,
        out: &mut Collector<'_, String>,
    ) -> Result<(), UserError> {
        let now = ctx.current_processing_time();
        let start = now - now.rem_euclid(TEN_SECONDS);
        let mut state = ctx.value_state(&self.open)?;
        let previous = state.value();
        match previous {
            Some(mut w) if w.start == start => {
                w.count += 1;
                state.update(w);
            }
            _ => {
                state.update(OpenWindow { start, count: 1 });
                if let Some(w) = previous {
                    out.collect(window_line(bid.bidder, w));
                }
                ctx.register_processing_time_timer(start + TEN_SECONDS - 1)?;
                ctx.register_event_time_timer(i64::MAX)?;
            }
        }
        Ok(())
    }

    fn on_timer(
        &mut self,
        timestamp: i64,
        ctx: &mut KeyedContext<'_, i64>,
        out: &mut Collector<'_, String>,
    ) -> Result<(), UserError> {
        let Some(&bidder) = ctx.current_key() else {
            return Ok(());
        };
        let mut state = ctx.value_state(&self.open)?;
        if let Some(w) = state.value() {
            if w.start + TEN_SECONDS - 1 <= timestamp {
                state.clear();
                out.collect(window_line(bidder, w));
            }
        }
        Ok(())
    }
}

/// q12: bids per bidder per 10 s window of processing time:
/// `bidder,bid_count,starttime,endtime`.
pub fn q12(events: &DataStream<Event>) -> DataStream<String> {
    bids(events).key_by(|b: &Bid| b.bidder).process(ProcessingTimeCount {
        open: ValueStateDescriptor::new("open-window"),
    })
}
