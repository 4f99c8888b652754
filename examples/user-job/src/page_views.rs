//! `page-views`: views and distinct visitors per page and ten seconds of event time.
//!
//! ```text
//! views --> key_by(page) --> 10 s tumbling event-time windows: views, distinct users --> sink
//! ```
//!
//! A seeded generator makes `views` page views, one every 100 ms of event time, each of
//! a user below `users` on one of [`PAGES`]; the same views at any parallelism. The
//! output is one line per window and page: `window_start_ms,page,views,distinct_users`.

use std::collections::BTreeSet;
use weir::api::program::ArgSpec;
use weir::prelude::*;

/// The pages of the site.
pub const PAGES: [&str; 4] = ["/", "/cart", "/checkout", "/search"];
/// Event time of the first view.
pub const START_MS: i64 = 1_700_000_000_000;
/// Event time between consecutive views.
pub const STEP_MS: i64 = 100;
/// The window size.
pub const WINDOW_MS: i64 = 10_000;

/// One page view.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PageView {
    /// Who viewed.
    pub user: u64,
    /// Which page.
    pub page: String,
    /// When, in epoch milliseconds.
    pub ts: i64,
}

/// View `index` of the generator.
pub fn view(users: u64, index: u64, rng: &mut Rng) -> PageView {
    PageView {
        user: rng.next_below(users),
        page: PAGES[rng.next_below(PAGES.len() as u64) as usize].to_string(),
        ts: START_MS + index as i64 * STEP_MS,
    }
}

/// Views and the set of users who viewed, per window and page.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Visits {
    /// Views.
    pub views: u64,
    /// Distinct users.
    pub users: BTreeSet<u64>,
}

/// Counts views and collects their users.
#[derive(Clone)]
pub struct CountVisits;

impl AggregateFunction<PageView, Visits, Visits> for CountVisits {
    fn create_accumulator(&self) -> Visits {
        Visits::default()
    }
    fn add(&self, view: PageView, acc: &mut Visits) {
        acc.views += 1;
        acc.users.insert(view.user);
    }
    fn get_result(&self, acc: &Visits) -> Visits {
        acc.clone()
    }
    fn merge(&self, mut a: Visits, b: Visits) -> Visits {
        a.views += b.views;
        a.users.extend(b.users);
        a
    }
}

/// Formats a window's result as `window_start_ms,page,views,distinct_users`.
#[derive(Clone)]
pub struct FormatVisits;

impl ProcessWindowFunction<String, Visits, String, TimeWindow> for FormatVisits {
    fn process(
        &mut self,
        page: &String,
        ctx: &mut WindowContext<'_, String, TimeWindow>,
        results: Vec<Visits>,
        out: &mut Collector<'_, String>,
    ) -> Result<(), UserError> {
        let start = ctx.window().start();
        for v in results {
            out.collect(format!("{start},{page},{},{}", v.views, v.users.len()));
        }
        Ok(())
    }
}

/// The program.
pub fn program() -> Program {
    Program {
        name: "page-views",
        description: "page views -> key_by(page) -> 10 s event-time windows: views and distinct users per page",
        args: &[
            ArgSpec {
                name: "views",
                help: "number of generated page views (default 10000)",
            },
            ArgSpec {
                name: "users",
                help: "distinct users (default 50)",
            },
            ArgSpec {
                name: "seed",
                help: "generator seed (default 7)",
            },
            ArgSpec {
                name: "output",
                help: "directory for part files, exactly-once with checkpointing (default: print)",
            },
        ],
        build,
    }
}

fn build(env: &StreamExecutionEnvironment, args: &ProgramArgs) -> Result<(), ProgramError> {
    let views = args.get_u64("views", 10_000)?;
    let users = args.get_u64("users", 50)?;
    let seed = args.get_u64("seed", 7)?;
    if users == 0 {
        return Err(ProgramError::InvalidValue {
            key: "users".into(),
            value: "0".into(),
            reason: "expected at least 1".into(),
        });
    }
    let visits = env
        .from_generator(views, seed, move |i, rng| view(users, i, rng))
        .assign_timestamps_and_watermarks(
            WatermarkStrategy::for_monotonous_timestamps().with_timestamp_assigner(|v: &PageView, _| v.ts),
        )
        .key_by(|v: &PageView| v.page.clone())
        .window(TumblingEventTimeWindows::of(Duration::from_millis(WINDOW_MS as u64)))
        .aggregate_with_process(CountVisits, FormatVisits);
    match args.get("output") {
        Some(dir) => visits.write_as_text(dir),
        None => visits.print(),
    };
    Ok(())
}

/// The lines the job writes for `views` views of `users` users with `seed`, computed
/// directly, sorted.
pub fn expected_lines(views: u64, users: u64, seed: u64) -> Vec<String> {
    let mut windows: std::collections::BTreeMap<(i64, String), Visits> = Default::default();
    for i in 0..views {
        let v = view(users, i, &mut Rng::for_index(seed, i));
        let start = v.ts - v.ts.rem_euclid(WINDOW_MS);
        CountVisits.add(v.clone(), windows.entry((start, v.page)).or_default());
    }
    let mut lines: Vec<String> = windows
        .into_iter()
        .map(|((start, page), v)| format!("{start},{page},{},{}", v.views, v.users.len()))
        .collect();
    lines.sort();
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_view_falls_in_one_window_and_is_counted_once() {
        let lines = expected_lines(1000, 10, 1);
        let total: u64 = lines
            .iter()
            .map(|l| l.split(',').nth(2).unwrap().parse::<u64>().unwrap())
            .sum();
        assert_eq!(total, 1000);
        // 1000 views 100 ms apart span 100 s: ten windows of up to four pages.
        let windows: BTreeSet<&str> = lines.iter().map(|l| l.split(',').next().unwrap()).collect();
        assert_eq!(windows.len(), 10);
    }
}
