//! The Nexmark data model: people, auctions and bids (Flink's `Person`, `Auction`,
//! `Bid`), and the event that carries exactly one of them.
//!
//! Times are epoch milliseconds of event time; prices are in cents.

use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// A person who registered to sell or bid.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Person {
    /// The person's id, from 1000.
    pub id: i64,
    /// First and last name.
    pub name: String,
    /// E-mail address.
    pub email_address: String,
    /// Credit card number, four groups of four digits.
    pub credit_card: String,
    /// US city.
    pub city: String,
    /// US state: one of AZ, CA, ID, OR, WA, WY.
    pub state: String,
    /// Event time.
    pub date_time: i64,
    /// Padding to the configured average size.
    pub extra: String,
}

/// An auction opened by a seller.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Auction {
    /// The auction's id, from 1000.
    pub id: i64,
    /// Item name.
    pub item_name: String,
    /// Item description.
    pub description: String,
    /// The first bid's minimum price.
    pub initial_bid: i64,
    /// The reserve price.
    pub reserve: i64,
    /// Event time: when the auction opened.
    pub date_time: i64,
    /// When the auction closes.
    pub expires: i64,
    /// The seller (a person id).
    pub seller: i64,
    /// Category, 10 to 14.
    pub category: i64,
    /// Padding to the configured average size.
    pub extra: String,
}

/// A bid on an auction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bid {
    /// The auction bid on.
    pub auction: i64,
    /// The bidder (a person id).
    pub bidder: i64,
    /// The price in cents.
    pub price: i64,
    /// The channel the bid came through (shared with every bid of the channel).
    pub channel: Arc<str>,
    /// The page the bid was placed on.
    pub url: Arc<str>,
    /// Event time.
    pub date_time: i64,
    /// Padding to the configured average size.
    pub extra: String,
}

/// One generated event. People and auctions (8 % of the events, and the larger
/// records) are boxed so that an event is as small as a bid when it is moved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Event {
    /// A new person.
    Person(Box<Person>),
    /// A new auction.
    Auction(Box<Auction>),
    /// A new bid.
    Bid(Bid),
}

impl Event {
    /// The event's time (epoch ms).
    pub fn date_time(&self) -> i64 {
        match self {
            Event::Person(p) => p.date_time,
            Event::Auction(a) => a.date_time,
            Event::Bid(b) => b.date_time,
        }
    }

    /// The bid, if this is one.
    pub fn into_bid(self) -> Option<Bid> {
        match self {
            Event::Bid(b) => Some(b),
            _ => None,
        }
    }

    /// The auction, if this is one.
    pub fn into_auction(self) -> Option<Auction> {
        match self {
            Event::Auction(a) => Some(*a),
            _ => None,
        }
    }

    /// The person, if this is one.
    pub fn into_person(self) -> Option<Person> {
        match self {
            Event::Person(p) => Some(*p),
            _ => None,
        }
    }
}
