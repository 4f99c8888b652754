//! The join queries, each a keyed co-process function over two inputs with keyed
//! state: q3 (person ⋈ auction), q8 (people and sellers of the same 10 s window),
//! q20 (bid ⋈ auction).

use super::{auctions, bids, persons};
use crate::model::{Auction, Bid, Event, Person};
use crate::rows;
use serde::{Deserialize, Serialize};
use weir_api::prelude::*;

/// The seller side of q3: name, city and state of a person.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Seller {
    name: String,
    city: String,
    state: String,
}

/// q3's join per person id: people (of OR, ID, CA) against their category-10 auctions.
#[derive(Clone)]
struct LocalItems {
    seller: ValueStateDescriptor<Seller>,
    waiting: ListStateDescriptor<i64>,
}

fn local_item(s: &Seller, auction: i64) -> String {
    format!("{},{},{},{auction}", s.name, s.city, s.state)
}

impl KeyedCoProcessFunction<i64, Person, Auction, String> for LocalItems {
    fn process_element1(
        &mut self,
        p: Person,
        ctx: &mut KeyedContext<'_, i64>,
        out: &mut Collector<'_, String>,
    ) -> Result<(), UserError> {
        let seller = Seller {
            name: p.name,
            city: p.city,
            state: p.state,
        };
        for auction in ctx.list_state(&self.waiting)?.take() {
            out.collect(local_item(&seller, auction));
        }
        ctx.value_state(&self.seller)?.update(seller);
        Ok(())
    }

    fn process_element2(
        &mut self,
        a: Auction,
        ctx: &mut KeyedContext<'_, i64>,
        out: &mut Collector<'_, String>,
    ) -> Result<(), UserError> {
        match ctx.value_state(&self.seller)?.value_ref() {
            Some(seller) => out.collect(local_item(seller, a.id)),
            None => ctx.list_state(&self.waiting)?.add(a.id),
        }
        Ok(())
    }
}

/// q3: `name,city,state,id` of category-10 auctions whose seller lives in OR, ID or CA.
pub fn q3(events: &DataStream<Event>) -> DataStream<String> {
    let people = persons(events).filter(|p: &Person| matches!(p.state.as_str(), "OR" | "ID" | "CA"));
    let category_10 = auctions(events).filter(|a: &Auction| a.category == 10);
    people
        .connect(&category_10)
        .key_by(|p: &Person| p.id, |a: &Auction| a.seller)
        .process(LocalItems {
            seller: ValueStateDescriptor::new("seller"),
            waiting: ListStateDescriptor::new("waiting-auctions"),
        })
}

/// Start of the 10 s tumbling window of `t`.
fn window_start(t: i64) -> i64 {
    t - t.rem_euclid(super::windows::TEN_SECONDS)
}

/// A person's window and name, once the person is there.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct NewPerson {
    window_start: i64,
    name: String,
    emitted: bool,
}

/// q8's join per person id: the person's window against the windows the person sold
/// in; state of a window is dropped once the watermark passes its end.
#[derive(Clone)]
struct NewSellers {
    person: ValueStateDescriptor<NewPerson>,
    sold_in: ListStateDescriptor<i64>,
}

impl NewSellers {
    fn emit_if_sold(p: &mut NewPerson, id: i64, sold: bool, out: &mut Collector<'_, String>) {
        if sold && !p.emitted {
            p.emitted = true;
            out.collect(format!("{id},{},{}", p.name, p.window_start));
        }
    }
}

impl KeyedCoProcessFunction<i64, Person, Auction, String> for NewSellers {
    fn process_element1(
        &mut self,
        p: Person,
        ctx: &mut KeyedContext<'_, i64>,
        out: &mut Collector<'_, String>,
    ) -> Result<(), UserError> {
        let ws = window_start(p.date_time);
        let sold = ctx.list_state(&self.sold_in)?.get().contains(&ws);
        let mut person = NewPerson {
            window_start: ws,
            name: p.name,
            emitted: false,
        };
        Self::emit_if_sold(&mut person, p.id, sold, out);
        ctx.value_state(&self.person)?.update(person);
        ctx.register_event_time_timer(ws + super::windows::TEN_SECONDS - 1)?;
        Ok(())
    }

    fn process_element2(
        &mut self,
        a: Auction,
        ctx: &mut KeyedContext<'_, i64>,
        out: &mut Collector<'_, String>,
    ) -> Result<(), UserError> {
        let ws = window_start(a.date_time);
        let mut person = ctx.value_state(&self.person)?;
        if let Some(mut p) = person.value() {
            if p.window_start == ws && !p.emitted {
                Self::emit_if_sold(&mut p, a.seller, true, out);
                person.update(p);
            }
            return Ok(());
        }
        let mut sold_in = ctx.list_state(&self.sold_in)?;
        if !sold_in.get().contains(&ws) {
            sold_in.add(ws);
        }
        ctx.register_event_time_timer(ws + super::windows::TEN_SECONDS - 1)?;
        Ok(())
    }

    fn on_timer(
        &mut self,
        timestamp: i64,
        ctx: &mut KeyedContext<'_, i64>,
        _out: &mut Collector<'_, String>,
    ) -> Result<(), UserError> {
        let ended = |ws: i64| ws + super::windows::TEN_SECONDS - 1 <= timestamp;
        let mut sold_in = ctx.list_state(&self.sold_in)?;
        let open: Vec<i64> = sold_in.take().into_iter().filter(|ws| !ended(*ws)).collect();
        if !open.is_empty() {
            sold_in.update(open);
        }
        let mut person = ctx.value_state(&self.person)?;
        if person.value_ref().is_some_and(|p| ended(p.window_start)) {
            person.clear();
        }
        Ok(())
    }
}

/// q8: people who opened an auction in the 10 s tumbling window they registered in:
/// `id,name,starttime`.
pub fn q8(events: &DataStream<Event>) -> DataStream<String> {
    persons(events)
        .connect(&auctions(events))
        .key_by(|p: &Person| p.id, |a: &Auction| a.seller)
        .process(NewSellers {
            person: ValueStateDescriptor::new("new-person"),
            sold_in: ListStateDescriptor::new("sold-in-windows"),
        })
}

/// What is known of an auction in q20's join.
#[derive(Debug, Clone, Serialize, Deserialize)]
enum AuctionSide {
    /// Not seen yet: its bids wait.
    Waiting(Vec<Bid>),
    /// A category-10 auction: bids join it.
    Joined(Box<Auction>),
    /// Another category: bids are dropped.
    Other,
}

/// q20's join per auction id.
#[derive(Clone)]
struct ExpandBids {
    side: ValueStateDescriptor<AuctionSide>,
}

impl KeyedCoProcessFunction<i64, Bid, Auction, String> for ExpandBids {
    fn process_element1(
        &mut self,
        b: Bid,
        ctx: &mut KeyedContext<'_, i64>,
        out: &mut Collector<'_, String>,
    ) -> Result<(), UserError> {
        let mut side = ctx.value_state(&self.side)?;
        match side.get_or_insert_with(|| AuctionSide::Waiting(Vec::new())) {
            AuctionSide::Waiting(bids) => bids.push(b),
            AuctionSide::Joined(a) => out.collect(rows::expanded_bid(&b, a)),
            AuctionSide::Other => {}
        }
        Ok(())
    }

    fn process_element2(
        &mut self,
        a: Auction,
        ctx: &mut KeyedContext<'_, i64>,
        out: &mut Collector<'_, String>,
    ) -> Result<(), UserError> {
        let mut side = ctx.value_state(&self.side)?;
        if let Some(AuctionSide::Waiting(bids)) = side.value_ref() {
            if a.category == 10 {
                for b in bids {
                    out.collect(rows::expanded_bid(b, &a));
                }
            }
        }
        side.update(if a.category == 10 {
            AuctionSide::Joined(Box::new(a))
        } else {
            AuctionSide::Other
        });
        Ok(())
    }
}

/// q20: bids joined with their auction where the category is 10: the bid's columns,
/// then the auction's.
pub fn q20(events: &DataStream<Event>) -> DataStream<String> {
    bids(events)
        .connect(&auctions(events))
        .key_by(|b: &Bid| b.auction, |a: &Auction| a.id)
        .process(ExpandBids {
            side: ValueStateDescriptor::new("auction-side"),
        })
}
