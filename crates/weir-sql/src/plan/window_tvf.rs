//! Window table-valued functions: the window a `TUMBLE`/`HOP`/`CUMULATE`/`SESSION` call
//! (or the legacy `GROUP BY TUMBLE(..)`) describes, its validation, and the rowtime
//! column it must be applied to. Shared by the FROM clause and the SELECT binder.

use super::{format_duration, PlanKind, PlanNode, WindowKind};
use crate::error::{Result, SqlError};
use crate::expr::Expr;

/// A window TVF in FROM: the table it windows and the window.
#[derive(Debug, Clone)]
pub struct WindowTvf {
    /// The window.
    pub kind: WindowKind,
    /// The time column's name.
    pub time_col: String,
    /// Its description, e.g. `TUMBLE(time_col=[ts], size=[1 min])`.
    pub desc: String,
    /// A SESSION window's `PARTITION BY` columns (sessions are per value of these).
    pub partition_keys: Vec<String>,
}

/// The window `name` (TUMBLE, HOP, CUMULATE or SESSION) over `time_col`, with its
/// intervals in ms (size; slide, size; step, max size; gap), if they are valid.
pub fn window_of(name: &str, time_col: String, intervals: &[i64]) -> Option<WindowTvf> {
    let (kind, desc) = match (name, intervals) {
        ("TUMBLE", [size]) => (
            WindowKind::Tumble { size: *size },
            format!("TUMBLE(time_col=[{time_col}], size=[{}])", format_duration(*size)),
        ),
        ("HOP", [slide, size]) => (
            WindowKind::Hop {
                slide: *slide,
                size: *size,
            },
            format!(
                "HOP(time_col=[{time_col}], size=[{}], slide=[{}])",
                format_duration(*size),
                format_duration(*slide)
            ),
        ),
        ("CUMULATE", [step, size]) => (
            WindowKind::Cumulate {
                step: *step,
                size: *size,
            },
            format!(
                "CUMULATE(time_col=[{time_col}], max_size=[{}], step=[{}])",
                format_duration(*size),
                format_duration(*step)
            ),
        ),
        ("SESSION", [gap]) => (
            WindowKind::Session { gap: *gap },
            format!("SESSION(time_col=[{time_col}], gap=[{}])", format_duration(*gap)),
        ),
        _ => return None,
    };
    check_window(kind).ok()?;
    Some(WindowTvf {
        kind,
        time_col,
        desc,
        partition_keys: Vec::new(),
    })
}

/// Refuses window sizes the runtime cannot use.
pub fn check_window(kind: WindowKind) -> Result<()> {
    let ok = match kind {
        WindowKind::Tumble { size } => size > 0,
        WindowKind::Hop { slide, size } => slide > 0 && size > 0 && size % slide == 0,
        WindowKind::Cumulate { step, size } => step > 0 && size > 0 && size % step == 0,
        WindowKind::Session { gap } => gap > 0,
    };
    if ok {
        Ok(())
    } else {
        Err(SqlError::validation(
            "Window sizes must be positive, and a HOP size (CUMULATE max size) a multiple of its slide (step)",
        ))
    }
}

/// Checks that `col` of `input` is its rowtime: a time attribute with a watermark.
pub fn check_time_attribute(input: &PlanNode, col: &str) -> Result<()> {
    let idx = input
        .schema
        .iter()
        .position(|c| c.name.eq_ignore_ascii_case(col))
        .ok_or_else(|| SqlError::validation(format!("Column '{col}' not found in any table")))?;
    let rowtime = rowtime_of(input);
    if rowtime != Some(idx) {
        return Err(SqlError::validation(format!(
            "The window function requires the timecol is a time attribute type, but is {}.",
            input.schema[idx].data_type
        )));
    }
    Ok(())
}

/// The rowtime column of a plan's output, if it kept one.
pub fn rowtime_of(node: &PlanNode) -> Option<usize> {
    match &node.kind {
        PlanKind::Scan(t) => t.emitted_rowtime(),
        PlanKind::Calc { input, exprs, .. } => {
            let r = rowtime_of(input)?;
            exprs.iter().position(|e| matches!(e, Expr::Column(i) if *i == r))
        }
        PlanKind::WindowAggregate { .. } => Some(2),
        PlanKind::GroupAggregate { .. } | PlanKind::Union(_) => None,
    }
}
