//! `OutputTag<T>`: names a side output of type `T` (Flink's `OutputTag`).
//!
//! An operator that supports side outputs (the window operator, for late data) emits
//! to a tag; `DataStream::get_side_output(&tag)` selects that stream downstream. In
//! the StreamGraph the selection is a pass-through node named `SideOutput(<tag>)`
//! chained behind the producing operator (see `weir_runtime::operator::side_output`).

use std::marker::PhantomData;

/// The name and record type of a side output.
#[derive(Debug)]
pub struct OutputTag<T> {
    id: String,
    _t: PhantomData<fn() -> T>,
}

impl<T> Clone for OutputTag<T> {
    fn clone(&self) -> Self {
        Self {
            id: self.id.clone(),
            _t: PhantomData,
        }
    }
}

impl<T> OutputTag<T> {
    /// A tag called `id` (unique within the job).
    pub fn new(id: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            _t: PhantomData,
        }
    }

    /// The tag's name.
    pub fn id(&self) -> &str {
        &self.id
    }
}
