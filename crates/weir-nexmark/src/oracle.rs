//! Every query's result computed directly over a whole event list, with no streaming:
//! the reference the end-to-end tests compare a run's output lines with. Lines are
//! formatted as the programs format them and returned sorted.
//!
//! For q12 (processing-time windows, whose boundaries depend on the clock) the
//! reference is each bidder's total number of bids, see [`q12_totals`].

use crate::format::{day, euros_between_1m_and_50m, hour_minute};
use crate::model::{Auction, Bid, Event, Person};
use crate::queries::aggregates::{price_rank, PricedBid, RankedCounts};
use crate::queries::ranking::{price_order, recency_order, TOP_N};
use crate::queries::seller_prices::{Sale, PRECEDING};
use crate::rows;
use std::collections::{BTreeMap, BTreeSet, HashMap};

const WINDOW: i64 = 10_000;

fn bids(events: &[Event]) -> impl Iterator<Item = &Bid> {
    events.iter().filter_map(|e| match e {
        Event::Bid(b) => Some(b),
        _ => None,
    })
}

fn auctions(events: &[Event]) -> impl Iterator<Item = &Auction> {
    events.iter().filter_map(|e| match e {
        Event::Auction(a) => Some(&**a),
        _ => None,
    })
}

fn persons(events: &[Event]) -> impl Iterator<Item = &Person> {
    events.iter().filter_map(|e| match e {
        Event::Person(p) => Some(&**p),
        _ => None,
    })
}

fn sorted(mut lines: Vec<String>) -> Vec<String> {
    lines.sort();
    lines
}

/// The expected sorted output lines of query `name` (not q12) over `events`.
pub fn expected(name: &str, events: &[Event]) -> Vec<String> {
    sorted(match name {
        "q0" => bids(events).map(rows::bid_summary).collect(),
        "q1" => bids(events).map(rows::in_euros).collect(),
        "q2" => bids(events)
            .filter(|b| b.auction % 123 == 0)
            .map(|b| format!("{},{}", b.auction, b.price))
            .collect(),
        "q3" => q3(events),
        "q4" => q4(events),
        "q5" => q5(events),
        "q6" => q6(events),
        "q7" => q7(events),
        "q8" => q8(events),
        "q9" => q9(events),
        "q10" => bids(events).map(rows::partitioned_bid).collect(),
        "q11" => q11(events),
        "q13" => bids(events)
            .map(|b| rows::enriched_bid(b, &(b.auction % 10_000).to_string()))
            .collect(),
        "q14" => bids(events)
            .filter(|b| euros_between_1m_and_50m(b.price))
            .map(rows::calculation)
            .collect(),
        "q15" => q15_q16(events, false),
        "q16" => q15_q16(events, true),
        "q17" => q17(events),
        "q18" => q18(events),
        "q19" => q19(events),
        "q20" => q20(events),
        "q21" => bids(events).filter_map(rows::with_channel_id).collect(),
        "q22" => bids(events).map(rows::url_directories).collect(),
        other => panic!("no reference for query {other}"),
    })
}

/// Each bidder's number of bids (the sum of q12's window counts).
pub fn q12_totals(events: &[Event]) -> BTreeMap<i64, u64> {
    let mut totals = BTreeMap::new();
    for b in bids(events) {
        *totals.entry(b.bidder).or_default() += 1;
    }
    totals
}

fn q3(events: &[Event]) -> Vec<String> {
    let sellers: HashMap<i64, &Person> = persons(events)
        .filter(|p| ["OR", "ID", "CA"].contains(&p.state.as_str()))
        .map(|p| (p.id, p))
        .collect();
    auctions(events)
        .filter(|a| a.category == 10)
        .filter_map(|a| {
            sellers
                .get(&a.seller)
                .map(|p| format!("{},{},{},{}", p.name, p.city, p.state, a.id))
        })
        .collect()
}

/// The winning bid of each auction with one.
fn winners(events: &[Event]) -> Vec<(&Auction, &Bid)> {
    let mut by_auction: HashMap<i64, Vec<&Bid>> = HashMap::new();
    for b in bids(events) {
        by_auction.entry(b.auction).or_default().push(b);
    }
    auctions(events)
        .filter_map(|a| {
            let candidates = by_auction.get(&a.id)?;
            candidates
                .iter()
                .filter(|b| b.date_time >= a.date_time && b.date_time <= a.expires)
                .min_by(|x, y| price_order(x, y))
                .map(|b| (a, *b))
        })
        .collect()
}

fn q4(events: &[Event]) -> Vec<String> {
    let mut per_category: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
    for (a, b) in winners(events) {
        per_category.entry(a.category).or_default().push(b.price);
    }
    per_category
        .iter()
        .map(|(c, prices)| format!("{c},{}", prices.iter().sum::<i64>() / prices.len() as i64))
        .collect()
}

fn q6(events: &[Event]) -> Vec<String> {
    let mut per_seller: BTreeMap<i64, Vec<Sale>> = BTreeMap::new();
    for (a, b) in winners(events) {
        per_seller.entry(a.seller).or_default().push(Sale {
            time: b.date_time,
            auction: a.id,
            price: b.price,
        });
    }
    let mut lines = Vec::new();
    for (seller, mut sales) in per_seller {
        sales.sort_unstable();
        for i in 0..sales.len() {
            let window = &sales[i.saturating_sub(PRECEDING)..=i];
            let sum: i64 = window.iter().map(|s| s.price).sum();
            lines.push(format!("{seller},{}", sum / window.len() as i64));
        }
    }
    lines
}

fn q9(events: &[Event]) -> Vec<String> {
    winners(events)
        .into_iter()
        .map(|(a, b)| rows::winning_bid(a, b))
        .collect()
}

fn q5(events: &[Event]) -> Vec<String> {
    let mut counts: BTreeMap<i64, BTreeMap<i64, u64>> = BTreeMap::new();
    for b in bids(events) {
        let last_start = b.date_time - b.date_time.rem_euclid(2_000);
        let mut start = last_start;
        while start > b.date_time - WINDOW {
            *counts.entry(start).or_default().entry(b.auction).or_default() += 1;
            start -= 2_000;
        }
    }
    let mut lines = Vec::new();
    for per_auction in counts.values() {
        let max = per_auction.values().copied().max().unwrap_or(0);
        for (auction, n) in per_auction {
            if *n == max {
                lines.push(format!("{auction},{n}"));
            }
        }
    }
    lines
}

fn q7(events: &[Event]) -> Vec<String> {
    let mut max: BTreeMap<i64, i64> = BTreeMap::new();
    for b in bids(events) {
        let start = b.date_time - b.date_time.rem_euclid(WINDOW);
        let m = max.entry(start).or_insert(i64::MIN);
        *m = (*m).max(b.price);
    }
    let mut lines = Vec::new();
    for (start, m) in &max {
        let end = start + WINDOW;
        for b in bids(events).filter(|b| b.price == *m && b.date_time >= *start && b.date_time <= end) {
            lines.push(format!(
                "{},{},{},{},{}",
                b.auction, b.bidder, b.price, b.date_time, b.extra
            ));
        }
    }
    lines
}

fn q8(events: &[Event]) -> Vec<String> {
    let window = |t: i64| t - t.rem_euclid(WINDOW);
    let sold: BTreeSet<(i64, i64)> = auctions(events).map(|a| (a.seller, window(a.date_time))).collect();
    let people: BTreeSet<(i64, &str, i64)> = persons(events)
        .map(|p| (p.id, p.name.as_str(), window(p.date_time)))
        .collect();
    people
        .into_iter()
        .filter(|(id, _, w)| sold.contains(&(*id, *w)))
        .map(|(id, name, w)| format!("{id},{name},{w}"))
        .collect()
}

fn q11(events: &[Event]) -> Vec<String> {
    let mut times: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
    for b in bids(events) {
        times.entry(b.bidder).or_default().push(b.date_time);
    }
    let mut lines = Vec::new();
    for (bidder, mut ts) in times {
        ts.sort_unstable();
        let (mut start, mut last, mut n) = (ts[0], ts[0], 0u64);
        for t in ts {
            if t - last >= WINDOW {
                lines.push(format!("{bidder},{n},{start},{}", last + WINDOW));
                start = t;
                n = 0;
            }
            last = t;
            n += 1;
        }
        lines.push(format!("{bidder},{n},{start},{}", last + WINDOW));
    }
    lines
}

fn q15_q16(events: &[Event], per_channel: bool) -> Vec<String> {
    let mut groups: BTreeMap<String, (String, RankedCounts)> = BTreeMap::new();
    for b in bids(events) {
        let key = if per_channel {
            format!("{},{}", b.channel, day(b.date_time))
        } else {
            day(b.date_time)
        };
        let g = groups.entry(key).or_default();
        g.0 = g.0.clone().max(hour_minute(b.date_time));
        g.1.add(PricedBid::from(b));
    }
    groups
        .into_iter()
        .map(|(key, (minute, counts))| {
            if per_channel {
                format!("{key},{minute},{}", counts.columns())
            } else {
                format!("{key},{}", counts.columns())
            }
        })
        .collect()
}

fn q17(events: &[Event]) -> Vec<String> {
    let mut groups: BTreeMap<(i64, String), Vec<i64>> = BTreeMap::new();
    for b in bids(events) {
        groups.entry((b.auction, day(b.date_time))).or_default().push(b.price);
    }
    groups
        .into_iter()
        .map(|((auction, d), prices)| {
            let rank = |r| prices.iter().filter(|p| price_rank(**p) == r).count();
            let sum: i64 = prices.iter().sum();
            format!(
                "{auction},{d},{},{},{},{},{},{},{},{sum}",
                prices.len(),
                rank(1),
                rank(2),
                rank(3),
                prices.iter().min().unwrap_or(&0),
                prices.iter().max().unwrap_or(&0),
                sum / prices.len() as i64
            )
        })
        .collect()
}

fn q18(events: &[Event]) -> Vec<String> {
    let mut last: HashMap<(i64, i64), &Bid> = HashMap::new();
    for b in bids(events) {
        let e = last.entry((b.bidder, b.auction)).or_insert(b);
        if recency_order(b, e).is_lt() {
            *e = b;
        }
    }
    last.values().map(|b| rows::bid(b)).collect()
}

fn q19(events: &[Event]) -> Vec<String> {
    let mut per_auction: HashMap<i64, Vec<&Bid>> = HashMap::new();
    for b in bids(events) {
        per_auction.entry(b.auction).or_default().push(b);
    }
    let mut lines = Vec::new();
    for mut all in per_auction.into_values() {
        all.sort_by(|x, y| price_order(x, y));
        for (rank, b) in all.iter().take(TOP_N).enumerate() {
            lines.push(format!("{},{}", rows::bid(b), rank + 1));
        }
    }
    lines
}

fn q20(events: &[Event]) -> Vec<String> {
    let category_10: HashMap<i64, &Auction> = auctions(events)
        .filter(|a| a.category == 10)
        .map(|a| (a.id, a))
        .collect();
    bids(events)
        .filter_map(|b| Some(rows::expanded_bid(b, category_10.get(&b.auction)?)))
        .collect()
}
