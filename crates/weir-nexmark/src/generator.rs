//! The event generator (Nexmark's `NexmarkGenerator` with its person, auction, bid and
//! price generators): event `n` from the configuration, the channel table and a random
//! generator seeded from the job's seed and `n`.
//!
//! Ids, the hot seller/bidder/auction choices, categories, prices, auction lengths,
//! string shapes and padding sizes follow Nexmark's generator; the random numbers
//! come from SplitMix64 ([`Rng`]) instead of `java.util.Random`, so the values differ
//! from Java's while their distributions and id spaces are the same. One departure:
//! Nexmark's bid generator adds the first person id to the bidder twice (bidders start
//! at 2000, matching no person); here a bidder is a person id, as the model intends.

use crate::config::{
    EventKind, NexmarkConfig, FIRST_AUCTION_ID, FIRST_CATEGORY_ID, FIRST_PERSON_ID, HOT_BATCH, ID_LEAD, NUM_CATEGORIES,
};
use crate::model::{Auction, Bid, Event, Person};
use crate::strings::{next_extra, next_string, Channels, CHANNELS_NUMBER, HOT_CHANNELS};
use weir_connectors::Rng;

const US_STATES: [&str; 6] = ["AZ", "CA", "ID", "OR", "WA", "WY"];
const US_CITIES: [&str; 10] = [
    "Phoenix",
    "Los Angeles",
    "San Francisco",
    "Boise",
    "Portland",
    "Bend",
    "Redmond",
    "Seattle",
    "Kent",
    "Cheyenne",
];
const FIRST_NAMES: [&str; 11] = [
    "Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter",
];
const LAST_NAMES: [&str; 9] = [
    "Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris",
];

/// Event `n` of the sequence.
pub fn generate_event(cfg: &NexmarkConfig, channels: &Channels, n: u64, rng: &mut Rng) -> Event {
    let timestamp = cfg.timestamp_for_event(n);
    match cfg.kind(n) {
        EventKind::Person => Event::Person(Box::new(next_person(cfg, n, timestamp, rng))),
        EventKind::Auction => Event::Auction(Box::new(next_auction(cfg, n, timestamp, rng))),
        EventKind::Bid => Event::Bid(next_bid(cfg, channels, n, timestamp, rng)),
    }
}

/// The first `count` events of seed `seed`, as a single split generates them.
pub fn generate_events(cfg: &NexmarkConfig, seed: u64, count: u64) -> Vec<Event> {
    let channels = Channels::new(seed);
    (0..count)
        .map(|n| generate_event(cfg, &channels, n, &mut Rng::for_index(seed, n)))
        .collect()
}

fn pick<'a>(rng: &mut Rng, items: &[&'a str]) -> &'a str {
    items[rng.next_below(items.len() as u64) as usize]
}

/// A price in cents: 10^(6u) dollars for a uniform u, from $1 to $1M, skewed low.
pub fn next_price(rng: &mut Rng) -> i64 {
    (10f64.powf(rng.next_f64() * 6.0) * 100.0).round() as i64
}

/// A random recent person (from 0): one of the last `num_active_people`, or up to
/// [`ID_LEAD`] not generated yet.
fn next_base0_person_id(cfg: &NexmarkConfig, event_id: u64, rng: &mut Rng) -> i64 {
    let num_people = cfg.last_base0_person_id(event_id) + 1;
    let active = num_people.min(cfg.num_active_people as i64);
    num_people - active + rng.next_below(active as u64 + ID_LEAD) as i64
}

/// A random auction (from 0) likely still open, or up to [`ID_LEAD`] not generated yet.
fn next_base0_auction_id(cfg: &NexmarkConfig, event_id: u64, rng: &mut Rng) -> i64 {
    let max = cfg.last_base0_auction_id(event_id);
    let min = (max - cfg.num_in_flight_auctions as i64).max(0);
    min + rng.next_below((max - min + 1) as u64 + ID_LEAD) as i64
}

fn next_person(cfg: &NexmarkConfig, n: u64, timestamp: i64, rng: &mut Rng) -> Person {
    let id = cfg.last_base0_person_id(n) + FIRST_PERSON_ID;
    let name = format!("{} {}", pick(rng, &FIRST_NAMES), pick(rng, &LAST_NAMES));
    let email_address = format!("{}@{}.com", next_string(rng, 7, b' '), next_string(rng, 5, b' '));
    let credit_card = (0..4)
        .map(|_| format!("{:04}", rng.next_below(10_000)))
        .collect::<Vec<_>>()
        .join(" ");
    let city = pick(rng, &US_CITIES).to_string();
    let state = pick(rng, &US_STATES).to_string();
    let size = 8 + name.len() + email_address.len() + credit_card.len() + city.len() + state.len();
    let extra = next_extra(rng, size as u64, cfg.avg_person_byte_size);
    Person {
        id,
        name,
        email_address,
        credit_card,
        city,
        state,
        date_time: timestamp,
        extra,
    }
}

/// How long an auction runs: uniform up to twice the event time until
/// `num_in_flight_auctions` more auctions will have been generated.
fn next_auction_length_ms(cfg: &NexmarkConfig, n: u64, timestamp: i64, rng: &mut Rng) -> i64 {
    let events_for_auctions = cfg.num_in_flight_auctions * cfg.total_proportion() / cfg.auction_proportion;
    let horizon = cfg.timestamp_for_event(n + events_for_auctions) - timestamp;
    1 + rng.next_below((horizon * 2).max(1) as u64) as i64
}

fn next_auction(cfg: &NexmarkConfig, n: u64, timestamp: i64, rng: &mut Rng) -> Auction {
    let id = cfg.last_base0_auction_id(n) + FIRST_AUCTION_ID;
    let seller = if rng.next_below(cfg.hot_sellers_ratio) > 0 {
        (cfg.last_base0_person_id(n) / HOT_BATCH) * HOT_BATCH
    } else {
        next_base0_person_id(cfg, n, rng)
    } + FIRST_PERSON_ID;
    let category = FIRST_CATEGORY_ID + rng.next_below(NUM_CATEGORIES) as i64;
    let initial_bid = next_price(rng);
    let expires = timestamp + next_auction_length_ms(cfg, n, timestamp, rng);
    let item_name = next_string(rng, 20, b' ');
    let description = next_string(rng, 100, b' ');
    let reserve = initial_bid + next_price(rng);
    let size = 8 + item_name.len() + description.len() + 40;
    let extra = next_extra(rng, size as u64, cfg.avg_auction_byte_size);
    Auction {
        id,
        item_name,
        description,
        initial_bid,
        reserve,
        date_time: timestamp,
        expires,
        seller,
        category,
        extra,
    }
}

fn next_bid(cfg: &NexmarkConfig, channels: &Channels, n: u64, timestamp: i64, rng: &mut Rng) -> Bid {
    let auction = if rng.next_below(cfg.hot_auction_ratio) > 0 {
        (cfg.last_base0_auction_id(n) / HOT_BATCH) * HOT_BATCH
    } else {
        next_base0_auction_id(cfg, n, rng)
    } + FIRST_AUCTION_ID;
    let bidder = if rng.next_below(cfg.hot_bidders_ratio) > 0 {
        (cfg.last_base0_person_id(n) / HOT_BATCH) * HOT_BATCH + 1
    } else {
        next_base0_person_id(cfg, n, rng)
    } + FIRST_PERSON_ID;
    let price = next_price(rng);
    let (channel, url) = if rng.next_below(2) > 0 {
        channels.hot(rng.next_below(HOT_CHANNELS.len() as u64) as usize)
    } else {
        channels.numbered(rng.next_below(CHANNELS_NUMBER) as usize)
    };
    let extra = next_extra(rng, 32, cfg.avg_bid_byte_size);
    Bid {
        auction,
        bidder,
        price,
        channel: channel.clone(),
        url: url.clone(),
        date_time: timestamp,
        extra,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sequence_has_nexmarks_proportions_ids_and_categories() {
        let cfg = NexmarkConfig::default();
        let events = generate_events(&cfg, 7, 5_000);
        let persons: Vec<&Person> = events
            .iter()
            .filter_map(|e| match e {
                Event::Person(p) => Some(&**p),
                _ => None,
            })
            .collect();
        let auctions: Vec<&Auction> = events
            .iter()
            .filter_map(|e| match e {
                Event::Auction(a) => Some(&**a),
                _ => None,
            })
            .collect();
        assert_eq!(persons.len(), 100);
        assert_eq!(auctions.len(), 300);
        assert_eq!(persons[0].id, 1000);
        assert_eq!(persons[99].id, 1099);
        assert_eq!(auctions[0].id, 1000);
        assert_eq!(auctions[299].id, 1299);
        assert!(auctions
            .iter()
            .all(|a| (10..=14).contains(&a.category) && a.expires > a.date_time));
        assert!(auctions
            .iter()
            .all(|a| a.reserve >= a.initial_bid && a.seller >= 1000 && a.seller <= 1099 + 10));
        let bids: Vec<&Bid> = events
            .iter()
            .filter_map(|e| match e {
                Event::Bid(b) => Some(b),
                _ => None,
            })
            .collect();
        assert_eq!(bids.len(), 4_600);
        let hot = bids.iter().filter(|b| (b.auction - 1000) % 100 == 0).count();
        assert!(
            hot > bids.len() * 2 / 5,
            "about half the bids go to hot auctions: {hot}"
        );
        assert!(bids.iter().all(|b| b.price >= 100 && b.price <= 100_000_000));
        assert!(bids.iter().all(|b| b.bidder >= 1000 && b.bidder < 1100 + 10));
        assert_eq!(events[4_999].date_time(), cfg.timestamp_for_event(4_999));
    }

    #[test]
    fn the_same_seed_makes_the_same_events_and_another_seed_others() {
        let cfg = NexmarkConfig::default();
        assert_eq!(generate_events(&cfg, 1, 200), generate_events(&cfg, 1, 200));
        assert_ne!(generate_events(&cfg, 1, 200), generate_events(&cfg, 2, 200));
    }
}
