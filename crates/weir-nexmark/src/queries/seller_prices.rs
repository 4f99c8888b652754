//! q6: the average selling price per seller over their last closed auctions.
//!
//! The winning bid of each auction comes from q4/q9's join
//! ([`super::winning_bids::winning_bids`]); per seller, the winners are ordered by the
//! winning bid's time (`ORDER BY customTime`, ties by auction id) and each gets the
//! average price of itself and the seller's 10 winners before it (`ROWS BETWEEN 10
//! PRECEDING AND CURRENT ROW`, `AVG` of `BIGINT` truncated).
//!
//! A winner goes out when its auction expires, so a later-expiring auction can carry an
//! earlier winning bid: no winner's window is final until the input ends. The seller's
//! winners are kept in keyed state and their rows go out then (as for q4's average).
//! Flink SQL cannot run this query at all (its OVER window does not take the join's
//! retractions).

use super::at_end::{at_end, FinalAggregate};
use super::winning_bids::{winning_bids, WinningBid};
use crate::model::Event;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use weir_api::prelude::*;

/// Rows before the current one in q6's window.
pub const PRECEDING: usize = 10;

/// One closed auction of a seller: its winning bid's time and price.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Sale {
    /// The winning bid's event time (the window's order).
    pub time: i64,
    /// The auction's id (breaks ties in time).
    pub auction: i64,
    /// The winning price.
    pub price: i64,
}

/// A seller and one of their sales.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct SellerSale {
    /// The seller (a person id).
    pub seller: i64,
    /// The sale.
    pub sale: Sale,
}

/// Keeps a seller's sales and emits the moving averages when the input ends.
#[derive(Clone)]
struct MovingAverage;

impl FinalAggregate<i64, SellerSale> for MovingAverage {
    type Acc = Vec<Sale>;

    fn add(&self, sales: &mut Vec<Sale>, input: SellerSale) {
        sales.push(input.sale);
    }

    fn emit(&self, seller: &i64, mut sales: Vec<Sale>, out: &mut Collector<'_, String>) {
        sales.sort_unstable();
        let mut window = VecDeque::with_capacity(PRECEDING + 1);
        let mut sum = 0i64;
        for sale in sales {
            if window.len() > PRECEDING {
                sum -= window.pop_front().unwrap_or(0);
            }
            window.push_back(sale.price);
            sum += sale.price;
            out.collect(format!("{seller},{}", sum / window.len() as i64));
        }
    }
}

/// q6: `seller, avg_price` for every closed auction with a winning bid: the average
/// winning price of the seller's auction and their 10 before it in winning-bid time.
pub fn q6(events: &DataStream<Event>) -> DataStream<String> {
    let sales = winning_bids(events)
        .map(|w: WinningBid| SellerSale {
            seller: w.auction.seller,
            sale: Sale {
                time: w.bid.date_time,
                auction: w.auction.id,
                price: w.bid.price,
            },
        })
        .key_by(|s: &SellerSale| s.seller);
    at_end(&sales, MovingAverage, "seller-sales")
}
