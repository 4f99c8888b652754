//! A streaming `SELECT`'s result in the `tableau` form, printed row by row while the
//! job runs (Flink's SQL client does the same): the header as soon as the job is
//! submitted, each row as it arrives, and `Received a total of N rows` when the job
//! ended. Column widths come from the result's types, since no row is known up front.

use super::collect::{CollectedRow, RowCollector};
use super::tableau::{border, row, widths_by_type, NULL_CELL};
use anyhow::{anyhow, Result};
use std::io::Write;
use std::time::Duration;
use weir_sql::types::DataType;

/// How long to wait for a row before checking whether the job ended.
const POLL: Duration = Duration::from_millis(50);

/// Prints the header and then the rows `collector` receives to `out` until `job_ended`
/// (which waits for the job) returns; then the job's failure, or the footer line
/// (`Received a total of N rows`) for the caller to print.
pub fn print_while_running<W: Write>(
    columns: &[(&str, DataType)],
    collector: RowCollector,
    job_ended: impl FnOnce() -> Result<()> + Send,
    out: &mut W,
) -> Result<String> {
    let widths = widths_by_type(columns);
    let mut header = vec!["op".to_string()];
    header.extend(columns.iter().map(|(name, _)| name.to_string()));
    write!(out, "{}{}{}", border(&widths), row(&widths, &header), border(&widths))?;
    out.flush()?;
    let mut received = 0u64;
    let mut print = |r: CollectedRow, out: &mut W| -> Result<()> {
        received += 1;
        out.write_all(row(&widths, &cells(r)).as_bytes())?;
        Ok(())
    };
    let outcome = std::thread::scope(|scope| -> Result<Result<()>> {
        let waiter = scope.spawn(job_ended);
        while !waiter.is_finished() {
            if let Some(r) = collector.next_row(POLL) {
                print(r, out)?;
                out.flush()?;
            }
        }
        waiter
            .join()
            .map_err(|_| anyhow!("the thread waiting for the job panicked"))
    })?;
    for r in collector.finish()? {
        print(r, out)?;
    }
    if received > 0 {
        out.write_all(border(&widths).as_bytes())?;
    }
    out.flush()?;
    outcome?;
    Ok(format!(
        "Received a total of {received} row{}",
        if received == 1 { "" } else { "s" }
    ))
}

fn cells((kind, values): CollectedRow) -> Vec<String> {
    std::iter::once(kind)
        .chain(values.into_iter().map(|v| v.unwrap_or_else(|| NULL_CELL.to_string())))
        .collect()
}
