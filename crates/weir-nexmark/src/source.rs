//! The Nexmark source: a [`GeneratorSource`] whose records are Nexmark events, with
//! event time from each event's `date_time` and watermarks 4 s behind the largest
//! timestamp seen (the suite's `WATERMARK FOR dateTime AS dateTime - INTERVAL '4'
//! SECOND`).
//!
//! Subtask `s` of `p` generates events `s, s+p, s+2p, …`, so the splits together
//! generate exactly the single-split sequence; its position (split and offset) is the
//! generator source's, checkpointed and redistributed on rescaling like any generator
//! source's.

use crate::config::NexmarkConfig;
use crate::generator::generate_event;
use crate::model::Event;
use crate::strings::Channels;
use std::sync::Arc;
use std::time::Duration;
use weir_api::prelude::*;
use weir_connectors::source::generator::GeneratorFn;
use weir_connectors::source::GeneratorSource;

/// The watermark bound of the suite.
pub const WATERMARK_BOUND: Duration = Duration::from_secs(4);

/// The function that makes event `n` under `cfg` and `seed`.
pub fn event_fn(cfg: NexmarkConfig, seed: u64) -> GeneratorFn<Event> {
    let channels = Channels::new(seed);
    Arc::new(move |n, rng: &mut Rng| generate_event(&cfg, &channels, n, rng))
}

/// The source subtask `subtask` of `parallelism` generating its share of `count` events.
pub fn nexmark_source(
    cfg: &NexmarkConfig,
    count: u64,
    seed: u64,
    subtask: u32,
    parallelism: u32,
) -> GeneratorSource<Event> {
    GeneratorSource::new(count, seed, event_fn(cfg.clone(), seed), subtask, parallelism)
}

/// `count` Nexmark events with timestamps and bounded-out-of-orderness watermarks.
pub fn events(env: &StreamExecutionEnvironment, cfg: &NexmarkConfig, count: u64, seed: u64) -> DataStream<Event> {
    let f = event_fn(cfg.clone(), seed);
    let strategy = WatermarkStrategy::for_bounded_out_of_orderness(WATERMARK_BOUND)
        .with_timestamp_assigner(|e: &Event, _| e.date_time());
    env.from_source(
        move |ctx| {
            Ok(Box::new(GeneratorSource::new(
                count,
                seed,
                f.clone(),
                ctx.subtask_index,
                ctx.parallelism,
            )))
        },
        strategy,
        "Nexmark",
    )
    .set_boundedness(weir_api::Boundedness::Bounded)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generator::generate_events;
    use weir_core::{StreamRecord, Watermark};
    use weir_runtime::operator::{Output, SourceFunction, SourceStatus};
    use weir_runtime::TaskError;

    struct Gather(Vec<Event>);

    impl Output<Event> for Gather {
        fn collect(&mut self, record: StreamRecord<Event>) -> Result<(), TaskError> {
            self.0.push(record.value);
            Ok(())
        }
        fn emit_watermark(&mut self, _: Watermark) -> Result<(), TaskError> {
            Ok(())
        }
        fn end_input(&mut self) -> Result<(), TaskError> {
            Ok(())
        }
    }

    fn drain(source: &mut GeneratorSource<Event>, out: &mut Gather) {
        while source.poll_next(out).unwrap() == SourceStatus::More {}
    }

    #[test]
    fn three_splits_together_generate_exactly_the_single_split_sequence() {
        let cfg = NexmarkConfig::default();
        let single = generate_events(&cfg, 9, 4_000);
        let mut merged: Vec<Option<Event>> = vec![None; 4_000];
        for s in 0..3u32 {
            let mut out = Gather(Vec::new());
            drain(&mut nexmark_source(&cfg, 4_000, 9, s, 3), &mut out);
            for (k, e) in out.0.into_iter().enumerate() {
                merged[s as usize + 3 * k] = Some(e);
            }
        }
        let merged: Vec<Event> = merged.into_iter().map(|e| e.expect("every event generated")).collect();
        assert_eq!(merged, single);
    }

    #[test]
    fn a_restored_position_continues_where_the_snapshot_was_taken() {
        let cfg = NexmarkConfig::default();
        let mut first = nexmark_source(&cfg, 3_000, 4, 1, 2);
        let mut before = Gather(Vec::new());
        assert_eq!(first.poll_next(&mut before).unwrap(), SourceStatus::More);
        let position = first.snapshot_position().unwrap();
        let mut rest_of_first = Gather(Vec::new());
        drain(&mut first, &mut rest_of_first);

        let mut restored = nexmark_source(&cfg, 3_000, 4, 1, 2);
        restored.restore_position(position).unwrap();
        let mut after = Gather(Vec::new());
        drain(&mut restored, &mut after);
        assert_eq!(after.0, rest_of_first.0);
        assert_eq!(before.0.len() + after.0.len(), 1_500);
    }
}
