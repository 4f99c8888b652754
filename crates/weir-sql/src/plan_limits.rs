//! A SQL job's plan checked against the job's [`PlanLimits`]: the statement's size
//! before it is parsed, and the windows each record falls into (HOP: size / slide,
//! CUMULATE: max size / step) once it is planned. A job over a limit is refused when
//! the JobManager builds it, with the key that raises the limit.

use crate::error::{Result, SqlError};
use crate::plan::{format_duration, PlanKind, PlanNode, WindowKind};
use weir_api::limits::PlanLimits;

/// How many windows one record of `window` belongs to, and the window's description.
fn windows_per_record(window: WindowKind) -> Option<(u64, String)> {
    match window {
        WindowKind::Hop { slide, size } => Some((
            (size / slide.max(1)).max(1) as u64,
            format!(
                "HOP(size=[{}], slide=[{}])",
                format_duration(size),
                format_duration(slide)
            ),
        )),
        WindowKind::Cumulate { step, size } => Some((
            (size / step.max(1)).max(1) as u64,
            format!(
                "CUMULATE(max_size=[{}], step=[{}])",
                format_duration(size),
                format_duration(step)
            ),
        )),
        WindowKind::Tumble { .. } | WindowKind::Session { .. } => None,
    }
}

/// Refuses a plan with a window over `limits`' windows per record.
pub fn check_windows(plan: &PlanNode, limits: &PlanLimits) -> Result<()> {
    match &plan.kind {
        PlanKind::Scan(_) => Ok(()),
        PlanKind::Calc { input, .. } | PlanKind::GroupAggregate { input, .. } => check_windows(input, limits),
        PlanKind::WindowAggregate { input, window, .. } => {
            if let Some((n, what)) = windows_per_record(*window) {
                limits
                    .check_windows_per_record(&what, n)
                    .map_err(SqlError::validation)?;
            }
            check_windows(input, limits)
        }
        PlanKind::Union(inputs) => inputs.iter().try_for_each(|i| check_windows(i, limits)),
    }
}

/// Refuses a statement or catalog script (`what`) longer than `limits` allow.
pub fn check_text(what: &str, text: &str, limits: &PlanLimits) -> Result<()> {
    limits.check_statement_size(what, text).map_err(SqlError::validation)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hop_of_a_millisecond_over_a_hundred_days_is_over_the_default_limit() {
        let (n, what) = windows_per_record(WindowKind::Hop {
            slide: 1,
            size: 100 * 86_400_000,
        })
        .unwrap();
        assert_eq!(n, 8_640_000_000);
        let limits = PlanLimits {
            max_windows_per_record: Some(10_000),
            max_statement_bytes: None,
        };
        let err = limits.check_windows_per_record(&what, n).unwrap_err();
        assert!(err.contains("pipeline.window.max-windows-per-record"), "{err}");
        assert_eq!(windows_per_record(WindowKind::Tumble { size: 1 }), None);
    }
}
