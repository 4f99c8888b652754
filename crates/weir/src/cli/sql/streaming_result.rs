//! A streaming `SELECT`'s result in the `tableau` form, printed row by row while the
//! job runs (Flink's SQL client does the same): the header as soon as the job is
//! submitted, each row as it arrives, and `Received a total of N rows` when the
//! results ended. Column widths come from the result's types, since no row is known
//! up front.

use super::collect::{drain, CollectedRow, ResultFetcher};
use super::tableau::{border, row, widths_by_type, NULL_CELL};
use anyhow::Result;
use std::io::Write;
use weir_sql::types::DataType;

/// Prints the header and then the rows `fetcher` receives to `out` until the results
/// end; then the job's failure, or the footer line (`Received a total of N rows`)
/// for the caller to print.
pub fn print_while_running<W: Write>(
    columns: &[(&str, DataType)],
    fetcher: &mut ResultFetcher,
    out: &mut W,
) -> Result<String> {
    let widths = widths_by_type(columns);
    let mut header = vec!["op".to_string()];
    header.extend(columns.iter().map(|(name, _)| name.to_string()));
    write!(out, "{}{}{}", border(&widths), row(&widths, &header), border(&widths))?;
    out.flush()?;
    let mut received = 0u64;
    let outcome = drain(fetcher, |rows| {
        for r in rows {
            received += 1;
            out.write_all(row(&widths, &cells(r)).as_bytes())?;
        }
        out.flush()?;
        Ok(())
    });
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
