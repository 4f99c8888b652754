use super::*;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::time::{Duration, Instant};

const DEADLINE: Duration = Duration::from_secs(5);

fn ip(last: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(127, 0, 0, last))
}

fn limits(max: usize, per_peer: usize) -> Limits {
    Limits::new(max, per_peer, DEADLINE)
}

fn admitted(a: &mut Admission, peer: IpAddr, now: Instant) -> ConnId {
    let d = a.admit(peer, now);
    assert_eq!(d.close, vec![], "admitting from {peer} closed others");
    d.result.expect("admitted")
}

fn established(a: &mut Admission, peer: IpAddr, now: Instant) -> ConnId {
    let id = admitted(a, peer, now);
    a.establish(id, now).result.expect("established");
    id
}

#[test]
fn limits_of_zero_are_raised_to_one_and_the_pending_pool_is_as_large_as_the_established_one() {
    let l = Limits::new(0, 0, DEADLINE);
    assert_eq!((l.max_connections, l.max_per_peer, l.max_pending), (1, 1, 1));
    assert_eq!(Limits::new(256, 64, DEADLINE).max_pending, 256);
}

#[test]
fn a_new_connection_while_the_established_ones_are_full_is_refused_until_one_closes() {
    let mut a = Admission::new(limits(2, 10));
    let now = Instant::now();
    let first = established(&mut a, ip(1), now);
    established(&mut a, ip(2), now);
    let refused = a.admit(ip(3), now);
    assert_eq!(refused.result, Err(Refusal::ServerFull { limit: 2 }));
    assert_eq!(refused.close, vec![]);
    assert_eq!((a.pending(), a.established()), (0, 2));
    a.release(first);
    assert_eq!(a.established(), 1);
    established(&mut a, ip(3), now);
}

#[test]
fn a_handshake_finishing_while_the_established_ones_are_full_is_refused_and_frees_its_place() {
    let mut a = Admission::new(Limits {
        max_pending: 2,
        ..limits(1, 10)
    });
    let now = Instant::now();
    let waiting = admitted(&mut a, ip(1), now);
    established(&mut a, ip(2), now);
    assert_eq!(a.establish(waiting, now).result, Err(Refusal::ServerFull { limit: 1 }));
    assert_eq!((a.pending(), a.established(), a.connections_of(ip(1))), (0, 1, 0));
}

#[test]
fn a_full_pending_pool_closes_its_oldest_connection_to_admit_a_new_one() {
    let mut a = Admission::new(limits(3, 10));
    let now = Instant::now();
    let idle: Vec<ConnId> = (0..3).map(|_| admitted(&mut a, ip(2), now)).collect();
    let d = a.admit(ip(1), now);
    assert_eq!(d.close, vec![idle[0]]);
    let speaker = d.result.expect("admitted");
    assert_eq!((a.pending(), a.connections_of(ip(2))), (3, 2));
    assert_eq!(a.establish(speaker, now).result, Ok(()));
    assert_eq!(a.establish(idle[0], now).result, Err(Refusal::Evicted));
    assert_eq!((a.pending(), a.established()), (2, 1));
}

#[test]
fn a_flood_of_idle_connections_cannot_keep_out_a_peer_that_speaks() {
    let mut a = Admission::new(limits(8, 1000));
    let start = Instant::now();
    let mut closed = 0;
    for i in 0..10_000u32 {
        let d = a.admit(ip(2), start + Duration::from_micros(u64::from(i)));
        assert!(d.result.is_ok());
        closed += d.close.len();
    }
    assert_eq!((a.pending(), closed), (8, 10_000 - 8));
    let d = a.admit(ip(1), start + Duration::from_millis(20));
    let speaker = d.result.expect("admitted");
    assert_eq!(a.establish(speaker, start + Duration::from_millis(21)).result, Ok(()));
    assert_eq!((a.pending(), a.established()), (7, 1));
}

#[test]
fn a_peer_at_its_limit_closes_its_own_oldest_pending_connection_not_anothers() {
    let mut a = Admission::new(limits(10, 3));
    let now = Instant::now();
    let other = admitted(&mut a, ip(1), now);
    let own: Vec<ConnId> = (0..3).map(|_| admitted(&mut a, ip(2), now)).collect();
    let d = a.admit(ip(2), now);
    assert_eq!(d.close, vec![own[0]]);
    assert!(d.result.is_ok());
    assert_eq!(a.connections_of(ip(2)), 3);
    assert_eq!(a.establish(other, now).result, Ok(()));
}

#[test]
fn a_peer_whose_connections_are_all_established_is_refused_and_others_are_admitted() {
    let mut a = Admission::new(limits(10, 2));
    let now = Instant::now();
    let first = established(&mut a, ip(2), now);
    established(&mut a, ip(2), now);
    let d = a.admit(ip(2), now);
    assert_eq!(d.result, Err(Refusal::PeerFull { peer: ip(2), limit: 2 }));
    assert_eq!(d.close, vec![]);
    established(&mut a, ip(1), now);
    a.release(first);
    established(&mut a, ip(2), now);
}

#[test]
fn an_ipv4_peer_is_the_same_peer_as_its_ipv4_mapped_ipv6_address() {
    let mut a = Admission::new(limits(10, 1));
    let now = Instant::now();
    established(&mut a, ip(2), now);
    let mapped = IpAddr::V6(Ipv4Addr::new(127, 0, 0, 2).to_ipv6_mapped());
    assert_eq!(
        a.admit(mapped, now).result,
        Err(Refusal::PeerFull { peer: ip(2), limit: 1 })
    );
    assert!(a.admit(IpAddr::V6(Ipv6Addr::LOCALHOST), now).result.is_ok());
}

#[test]
fn a_pending_connection_past_its_deadline_is_closed_at_the_next_admission_and_cannot_establish() {
    let mut a = Admission::new(limits(10, 10));
    let start = Instant::now();
    let slow = admitted(&mut a, ip(2), start);
    let in_time = admitted(&mut a, ip(3), start + Duration::from_secs(1));
    let d = a.admit(ip(1), start + DEADLINE + Duration::from_millis(1));
    assert_eq!(d.close, vec![slow]);
    assert!(d.result.is_ok());
    assert_eq!(a.connections_of(ip(2)), 0);
    assert_eq!(
        a.establish(
            in_time,
            start + Duration::from_secs(1) + DEADLINE + Duration::from_millis(1)
        )
        .result,
        Err(Refusal::HandshakeTooLate { timeout: DEADLINE })
    );
    assert_eq!((a.pending(), a.established(), a.connections_of(ip(3))), (1, 0, 0));
}

#[test]
fn a_handshake_at_its_deadline_is_in_time() {
    let mut a = Admission::new(limits(10, 10));
    let start = Instant::now();
    let id = admitted(&mut a, ip(1), start);
    assert_eq!(a.establish(id, start + DEADLINE).result, Ok(()));
    assert_eq!(
        a.establish(id, start + DEADLINE * 2).result,
        Ok(()),
        "established stays"
    );
}

#[test]
fn releasing_frees_the_place_and_the_peers_count_and_a_second_release_changes_nothing() {
    let mut a = Admission::new(limits(2, 2));
    let now = Instant::now();
    let pending = admitted(&mut a, ip(1), now);
    let live = established(&mut a, ip(1), now);
    a.release(pending);
    assert_eq!((a.pending(), a.established(), a.connections_of(ip(1))), (0, 1, 1));
    a.release(live);
    a.release(live);
    a.release(ConnId(99));
    assert_eq!((a.pending(), a.established(), a.connections_of(ip(1))), (0, 0, 0));
    established(&mut a, ip(1), now);
    established(&mut a, ip(1), now);
}

#[test]
fn a_burst_of_refusals_and_closings_warns_once_then_reports_the_counts_after_the_interval() {
    let mut a = Admission::new(limits(1, 10));
    let start = Instant::now();
    established(&mut a, ip(1), start);
    assert_eq!(a.admit(ip(2), start).warning, Some(Warning { refused: 1, evicted: 0 }));
    for _ in 0..99 {
        assert_eq!(a.admit(ip(2), start + Duration::from_secs(1)).warning, None);
    }
    let later = start + WARN_INTERVAL + Duration::from_secs(1);
    assert_eq!(
        a.admit(ip(2), later).warning,
        Some(Warning {
            refused: 100,
            evicted: 0
        })
    );

    let mut b = Admission::new(limits(1, 10));
    assert_eq!(admitted(&mut b, ip(2), start), ConnId(0));
    assert_eq!(b.admit(ip(2), start).warning, Some(Warning { refused: 0, evicted: 1 }));
    assert_eq!(b.admit(ip(2), start).warning, None);
    let late = b.admit(ip(1), start + WARN_INTERVAL);
    assert_eq!(late.warning, Some(Warning { refused: 0, evicted: 2 }));
}

#[test]
fn admissions_without_refusal_warn_nothing() {
    let mut a = Admission::new(limits(4, 4));
    let now = Instant::now();
    for _ in 0..4 {
        let d = a.admit(ip(1), now);
        assert_eq!(d.warning, None);
        assert_eq!(a.establish(d.result.unwrap(), now).warning, None);
    }
}

#[test]
fn a_gate_hands_back_the_closers_of_evicted_connections_and_a_dropped_ticket_frees_its_place() {
    let gate = Gate::new(limits(2, 10));
    let now = Instant::now();
    let first = gate.admit(ip(2), now, "first").result.unwrap();
    let second = gate.admit(ip(2), now, "second").result.unwrap();
    let third = gate.admit(ip(1), now, "third");
    assert_eq!(third.close, vec!["first"]);
    let third = third.result.unwrap();
    assert_eq!(first.establish(now).result, Err(Refusal::Evicted));
    assert_eq!(third.establish(now).result, Ok(()));
    assert_eq!(gate.counts(), (1, 1));
    drop(second);
    assert_eq!(gate.counts(), (0, 1));
    let fourth = gate.admit(ip(3), now, "fourth");
    assert_eq!(
        fourth.close,
        Vec::<&str>::new(),
        "an established connection is never evicted"
    );
    let _fifth = gate.admit(ip(3), now, "fifth").result.unwrap();
    let sixth = gate.admit(ip(3), now, "sixth");
    assert_eq!(sixth.close, vec!["fourth"]);
    drop(sixth);
    drop(third);
    drop(first);
    assert_eq!(gate.counts(), (1, 0));
    assert_eq!(gate.limits(), limits(2, 10));
}

#[test]
fn a_refused_connection_leaves_no_closer_behind() {
    let gate = Gate::new(limits(1, 10));
    let now = Instant::now();
    let live = gate.admit(ip(1), now, 1).result.unwrap();
    live.establish(now).result.unwrap();
    let refused = gate.admit(ip(2), now, 2);
    assert_eq!(refused.result.map(|t| t.id()), Err(Refusal::ServerFull { limit: 1 }));
    assert_eq!(gate.counts(), (0, 1));
}
