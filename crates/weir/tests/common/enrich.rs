//! The sequential result of the `enrich` program, shared by connected.rs and cluster.rs.

use std::collections::BTreeMap;
use weir::programs::enrich;
use weir_api::prelude::Rng;

/// `user,tier,orders,total` per user, computed sequentially.
pub fn expected_enrich(users: u64, orders: u64, seed: u64) -> Vec<String> {
    let order = enrich::order(users);
    let mut totals: BTreeMap<u64, (u64, u64)> = BTreeMap::new();
    for i in 0..orders {
        let (u, a) = order(i, &mut Rng::for_index(seed, i));
        let t = totals.entry(u).or_default();
        t.0 += 1;
        t.1 += a;
    }
    let mut lines: Vec<String> = (0..users)
        .map(|u| {
            let (_, tier) = enrich::profile(u, &mut Rng::for_index(seed ^ 0x5eed, u));
            let (n, total) = totals.get(&u).copied().unwrap_or((0, 0));
            format!("{u},{tier},{n},{total}")
        })
        .collect();
    lines.sort();
    lines
}
