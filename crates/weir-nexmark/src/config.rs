//! What the generator makes (Nexmark's `GeneratorConfig` with the suite's defaults) and
//! the id spaces derived from an event's id.
//!
//! Event `n` (from 0) has id `n`; `n % 50` decides its kind: 0 a person, 1–3 an
//! auction, else a bid (proportions 1:3:46). People and auctions are numbered in the
//! order they are generated, from 1000, so the id of the last person or auction
//! generated at or before any event follows from the event id alone: that is what lets
//! parallel splits generate disjoint parts of one sequence.

/// The first person id.
pub const FIRST_PERSON_ID: i64 = 1000;
/// The first auction id.
pub const FIRST_AUCTION_ID: i64 = 1000;
/// The first category id; there are [`NUM_CATEGORIES`] from it.
pub const FIRST_CATEGORY_ID: i64 = 10;
/// Number of categories.
pub const NUM_CATEGORIES: u64 = 5;
/// People and auctions not generated yet that bids and auctions may refer to.
pub const ID_LEAD: u64 = 10;
/// Hot sellers, bidders and auctions are the first of each batch of this many.
pub const HOT_BATCH: i64 = 100;
/// Event time of the first event: 2023-11-14T22:13:20Z.
pub const DEFAULT_BASE_TIME: i64 = 1_700_000_000_000;

/// The generator's parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct NexmarkConfig {
    /// Events per second of event time (`first-event.rate`).
    pub first_event_rate: u64,
    /// Event time of event 0 (epoch ms).
    pub base_time: i64,
    /// Person share of every `total_proportion()` events.
    pub person_proportion: u64,
    /// Auction share.
    pub auction_proportion: u64,
    /// Bid share.
    pub bid_proportion: u64,
    /// Average size of a person in bytes (`person.avg-size`).
    pub avg_person_byte_size: u64,
    /// Average size of an auction (`auction.avg-size`).
    pub avg_auction_byte_size: u64,
    /// Average size of a bid (`bid.avg-size`).
    pub avg_bid_byte_size: u64,
    /// A bid is for a hot auction unless a draw below this is 0 (`bid.hot-ratio.auctions`).
    pub hot_auction_ratio: u64,
    /// The same for hot bidders (`bid.hot-ratio.bidders`).
    pub hot_bidders_ratio: u64,
    /// The same for hot sellers (`auction.hot-ratio.sellers`).
    pub hot_sellers_ratio: u64,
    /// Recent people that bids and auctions pick from.
    pub num_active_people: u64,
    /// Recent auctions that bids pick from.
    pub num_in_flight_auctions: u64,
}

impl Default for NexmarkConfig {
    fn default() -> Self {
        Self {
            first_event_rate: 10_000,
            base_time: DEFAULT_BASE_TIME,
            person_proportion: 1,
            auction_proportion: 3,
            bid_proportion: 46,
            avg_person_byte_size: 200,
            avg_auction_byte_size: 500,
            avg_bid_byte_size: 100,
            hot_auction_ratio: 2,
            hot_bidders_ratio: 4,
            hot_sellers_ratio: 4,
            num_active_people: 1000,
            num_in_flight_auctions: 100,
        }
    }
}

/// What kind of record an event id makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// A person.
    Person,
    /// An auction.
    Auction,
    /// A bid.
    Bid,
}

impl NexmarkConfig {
    /// Events per cycle of person, auction and bid proportions.
    pub fn total_proportion(&self) -> u64 {
        self.person_proportion + self.auction_proportion + self.bid_proportion
    }

    /// The kind of event `event_id`.
    pub fn kind(&self, event_id: u64) -> EventKind {
        let rem = event_id % self.total_proportion();
        if rem < self.person_proportion {
            EventKind::Person
        } else if rem < self.person_proportion + self.auction_proportion {
            EventKind::Auction
        } else {
            EventKind::Bid
        }
    }

    /// Event time of event number `n`: the base time plus `n` inter-event delays.
    pub fn timestamp_for_event(&self, n: u64) -> i64 {
        let delay_us = 1_000_000.0 / self.first_event_rate.max(1) as f64;
        self.base_time + (n as f64 * delay_us) as i64 / 1000
    }

    /// The last person id (from 0) generated at or before `event_id`.
    pub fn last_base0_person_id(&self, event_id: u64) -> i64 {
        let total = self.total_proportion();
        let epoch = (event_id / total) as i64;
        let offset = (event_id % total).min(self.person_proportion - 1) as i64;
        epoch * self.person_proportion as i64 + offset
    }

    /// The last auction id (from 0) generated at or before `event_id` (-1 before the first).
    pub fn last_base0_auction_id(&self, event_id: u64) -> i64 {
        let total = self.total_proportion();
        let mut epoch = (event_id / total) as i64;
        let mut offset = (event_id % total) as i64;
        let (persons, auctions) = (self.person_proportion as i64, self.auction_proportion as i64);
        if offset < persons {
            epoch -= 1;
            offset = auctions - 1;
        } else if offset >= persons + auctions {
            offset = auctions - 1;
        } else {
            offset -= persons;
        }
        epoch * auctions + offset
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_cycle_of_fifty_events_is_a_person_three_auctions_and_forty_six_bids() {
        let c = NexmarkConfig::default();
        let kinds: Vec<EventKind> = (0..50).map(|i| c.kind(i)).collect();
        assert_eq!(kinds[0], EventKind::Person);
        assert!(kinds[1..4].iter().all(|k| *k == EventKind::Auction));
        assert!(kinds[4..].iter().all(|k| *k == EventKind::Bid));
        assert_eq!(c.kind(100), EventKind::Person);
    }

    #[test]
    fn person_and_auction_ids_count_the_people_and_auctions_generated_so_far() {
        let c = NexmarkConfig::default();
        assert_eq!(c.last_base0_person_id(0), 0);
        assert_eq!(c.last_base0_person_id(49), 0);
        assert_eq!(c.last_base0_person_id(50), 1);
        assert_eq!(c.last_base0_auction_id(0), -1);
        assert_eq!(c.last_base0_auction_id(1), 0);
        assert_eq!(c.last_base0_auction_id(3), 2);
        assert_eq!(c.last_base0_auction_id(10), 2);
        assert_eq!(c.last_base0_auction_id(50), 2);
        assert_eq!(c.last_base0_auction_id(51), 3);
    }

    #[test]
    fn event_times_advance_by_the_inter_event_delay() {
        let c = NexmarkConfig {
            first_event_rate: 1000,
            ..NexmarkConfig::default()
        };
        assert_eq!(c.timestamp_for_event(0), DEFAULT_BASE_TIME);
        assert_eq!(c.timestamp_for_event(1500), DEFAULT_BASE_TIME + 1500);
        let fast = NexmarkConfig::default();
        assert_eq!(fast.timestamp_for_event(25), DEFAULT_BASE_TIME + 2);
    }
}
