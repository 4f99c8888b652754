//! A slow sink behind a fast generator of 10M records: the generator is held back by
//! backpressure, and the process's peak resident memory stays under 64 MiB — the
//! records in flight are bounded by the network buffers, never queued without limit
//! (10M records would be ~130 MB of frames).

use std::time::{Duration, Instant};
use weir::prelude::*;
use weir_runtime::operator::Output;
use weir_runtime::TaskError;

const RECORDS: u64 = 10_000_000;
const PEAK_RSS_BOUND_KIB: u64 = 64 * 1024;

struct SlowSink {
    count: u64,
    handle: CollectHandle<u64>,
}

impl Output<u64> for SlowSink {
    fn collect(&mut self, record: StreamRecord<u64>) -> Result<(), TaskError> {
        self.count += 1;
        let until = Instant::now() + Duration::from_nanos(150);
        while Instant::now() < until {
            std::hint::spin_loop();
        }
        std::hint::black_box(record.value);
        Ok(())
    }
    fn emit_watermark(&mut self, _w: Watermark) -> Result<(), TaskError> {
        Ok(())
    }
    fn end_input(&mut self) -> Result<(), TaskError> {
        let mut v = self.handle.take();
        v.push(self.count);
        Ok(())
    }
}

fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

#[test]
fn slow_sink_behind_fast_generator_keeps_peak_memory_bounded() {
    let env = StreamExecutionEnvironment::create_local_environment();
    let counted = CollectHandle::<u64>::new();
    let h = counted.clone();
    env.from_generator(RECORDS, 1, |i, _| i)
        .map(|v: u64| v + 1)
        .add_sink("Slow Sink", move |_ctx| {
            Ok(Box::new(SlowSink {
                count: 0,
                handle: h.clone(),
            }))
        })
        .disable_chaining();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    env.execute("backpressure").unwrap();
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let peak = peak_rss_kib();
    assert!(peak > 0, "could not read VmHWM");
    assert!(
        peak < PEAK_RSS_BOUND_KIB,
        "peak RSS {peak} KiB exceeds the bound of {PEAK_RSS_BOUND_KIB} KiB"
    );
}
