//! Flink's `tableau` result form: a boxed table with right-aligned cells.
//!
//! Two ways to size the columns, as Flink's SQL client does: by content (a finished
//! result, e.g. `SHOW TABLES`: every row is known before printing) and by type (a
//! streaming result, printed row by row as it arrives: the widths must be known before
//! the first row). A cell wider than its column is cut and ends in `...`.

use crate::cli::terminal::escape;
use weir_sql::types::DataType;

/// The widest a column gets (Flink's `sql-client.display.max-column-width`, 30).
pub const MAX_COLUMN_WIDTH: usize = 30;

/// How NULL is shown.
pub const NULL_CELL: &str = "<NULL>";

/// Renders `rows` under `header` as a boxed table, the columns as wide as their widest
/// cell (at most [`MAX_COLUMN_WIDTH`]), ending with `N rows in set`.
pub fn render(header: &[&str], rows: &[Vec<String>]) -> String {
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| r.iter().map(|c| escape(c).into_owned()).collect())
        .collect();
    let rows = &rows;
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            if let Some(w) = widths.get_mut(i) {
                *w = (*w).max(c.chars().count());
            }
        }
    }
    for w in &mut widths {
        *w = (*w).min(MAX_COLUMN_WIDTH);
    }
    let header: Vec<String> = header.iter().map(|h| h.to_string()).collect();
    let mut out = border(&widths);
    out.push_str(&row(&widths, &header));
    out.push_str(&border(&widths));
    for r in rows {
        out.push_str(&row(&widths, r));
    }
    out.push_str(&border(&widths));
    out.push_str(&format!(
        "{} row{} in set\n",
        rows.len(),
        if rows.len() == 1 { "" } else { "s" }
    ));
    out
}

/// Column widths from the columns' names and types (Flink's rule: the digits of the
/// type plus a sign, the length of a date or timestamp, `false`, [`NULL_CELL`]; other
/// types [`MAX_COLUMN_WIDTH`]), with the `op` column first.
pub fn widths_by_type(columns: &[(&str, DataType)]) -> Vec<usize> {
    let mut widths = vec![2];
    for (name, t) in columns {
        let by_type = match t {
            DataType::TinyInt => 4,
            DataType::SmallInt => 6,
            DataType::Int => 11,
            DataType::BigInt => 20,
            DataType::Decimal(p, _) => usize::from(*p) + 2,
            DataType::Boolean => 5,
            DataType::Date => 10,
            DataType::Time => 8,
            DataType::Timestamp(p) | DataType::TimestampLtz(p) => match p {
                0 => 19,
                1..=3 => 23,
                4..=6 => 26,
                _ => 29,
            },
            _ => MAX_COLUMN_WIDTH,
        };
        widths.push(name.chars().count().max(by_type).max(NULL_CELL.len()));
    }
    widths
}

/// A border line `+----+-----+`.
pub fn border(widths: &[usize]) -> String {
    let dashes: Vec<String> = widths.iter().map(|w| "-".repeat(w + 2)).collect();
    format!("+{}+\n", dashes.join("+"))
}

/// One row of `cells`, right-aligned, a cell wider than its column cut to end in `...`;
/// control characters in a cell are shown escaped (a value never breaks the box).
pub fn row(widths: &[usize], cells: &[String]) -> String {
    let parts: Vec<String> = cells
        .iter()
        .zip(widths)
        .map(|(c, &w)| {
            let c = escape(c);
            let len = c.chars().count();
            if len <= w {
                format!(" {c:>w$} ")
            } else {
                let kept: String = c.chars().take(w.saturating_sub(3)).collect();
                format!(" {kept:>width$}... ", width = w.saturating_sub(3))
            }
        })
        .collect();
    format!("|{}|\n", parts.join("|"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_right_aligned_in_a_box_with_the_row_count() {
        let t = render(&["table name"], &[vec!["orders".into()]]);
        assert_eq!(
            t,
            "+------------+\n| table name |\n+------------+\n|     orders |\n+------------+\n1 row in set\n"
        );
    }

    #[test]
    fn streaming_widths_follow_the_types_and_long_cells_are_cut_with_dots() {
        let widths = widths_by_type(&[
            ("id", DataType::BigInt),
            ("n", DataType::Int),
            ("amount", DataType::Decimal(10, 2)),
            ("ts", DataType::TimestampLtz(3)),
            ("name", DataType::STRING),
            ("ok", DataType::Boolean),
        ]);
        assert_eq!(widths, vec![2, 20, 11, 12, 23, 30, 6]);
        let line = row(&[2, 6], &["+I".into(), "abcdefghij".into()]);
        assert_eq!(line, "| +I | abc... |\n");
        assert_eq!(border(&[2, 6]), "+----+--------+\n");
    }
}
