//! User functions shared by the tests of this crate and of the crates built on it
//! (enabled by the `test-fixtures` feature), so that one fixture is written once.
//!
//! Nothing here is part of the API a program uses.

use crate::co_process::CoProcessFunction;
use crate::functions::Collector;
use crate::process::ProcessContext;
use weir_runtime::error::UserError;
use weir_state::{ListStateDescriptor, OperatorStateStore};

/// The list state [`CountBoth`] keeps its counts in.
pub fn count_both_state() -> ListStateDescriptor<(u64, u64)> {
    ListStateDescriptor::new("counts")
}

/// Counts the records of each input in fields, kept in list state at checkpoints
/// (summed up on restore), and describes every record as
/// `<input>:<value> ts=<timestamp> wm=<watermark> counts=<first>/<second>`.
#[derive(Clone, Default)]
pub struct CountBoth {
    first: u64,
    second: u64,
}

impl CountBoth {
    fn describe(&self, side: &str, value: String, ctx: &ProcessContext<'_>) -> String {
        format!(
            "{side}:{value} ts={:?} wm={} counts={}/{}",
            ctx.timestamp(),
            ctx.current_watermark(),
            self.first,
            self.second
        )
    }
}

impl CoProcessFunction<String, u64, String> for CountBoth {
    fn initialize_state(&mut self, store: &mut OperatorStateStore) -> Result<(), UserError> {
        for (first, second) in store.list_state(&count_both_state())?.iter() {
            self.first += first;
            self.second += second;
        }
        Ok(())
    }

    fn snapshot_state(&mut self, _checkpoint_id: u64, store: &mut OperatorStateStore) -> Result<(), UserError> {
        store
            .list_state(&count_both_state())?
            .update(vec![(self.first, self.second)]);
        Ok(())
    }

    fn process_element1(
        &mut self,
        value: String,
        ctx: &mut ProcessContext<'_>,
        out: &mut Collector<'_, String>,
    ) -> Result<(), UserError> {
        self.first += 1;
        out.collect(self.describe("1", value, ctx));
        Ok(())
    }

    fn process_element2(
        &mut self,
        value: u64,
        ctx: &mut ProcessContext<'_>,
        out: &mut Collector<'_, String>,
    ) -> Result<(), UserError> {
        self.second += 1;
        out.collect(self.describe("2", value.to_string(), ctx));
        Ok(())
    }
}
