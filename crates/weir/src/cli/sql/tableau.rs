//! Flink's `tableau` result form: a boxed table with right-aligned cells.

/// Renders `rows` under `header` as a boxed table, ending with `N rows in set`.
pub fn render(header: &[&str], rows: &[Vec<String>]) -> String {
    let footer = format!("{} row{} in set", rows.len(), if rows.len() == 1 { "" } else { "s" });
    render_with_footer(header, rows, &footer)
}

/// Renders `rows` under `header` as a boxed table followed by `footer`.
pub fn render_with_footer(header: &[&str], rows: &[Vec<String>], footer: &str) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            if let Some(w) = widths.get_mut(i) {
                *w = (*w).max(c.chars().count());
            }
        }
    }
    let line = format!(
        "+{}+\n",
        widths.iter().map(|w| "-".repeat(w + 2)).collect::<Vec<_>>().join("+")
    );
    let row = |cells: Vec<&str>| {
        let parts: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!(" {c:>w$} ", w = *w))
            .collect();
        format!("|{}|\n", parts.join("|"))
    };
    let mut out = line.clone();
    out.push_str(&row(header.to_vec()));
    out.push_str(&line);
    for r in rows {
        out.push_str(&row(r.iter().map(String::as_str).collect()));
    }
    out.push_str(&line);
    out.push_str(footer);
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn cells_are_right_aligned_in_a_box_with_the_row_count() {
        let t = super::render(&["table name"], &[vec!["orders".into()]]);
        assert_eq!(
            t,
            "+------------+\n| table name |\n+------------+\n|     orders |\n+------------+\n1 row in set\n"
        );
    }
}
