//! Bounding the text a report carries to the JobMaster. A task's failure message can
//! quote anything (a user function's error, a huge input line), and a gRPC message
//! above the JobManager's decoding limit never arrives; so every report's free text
//! is cut to [`MAX_REPORT_TEXT_BYTES`] before it is sent.
//!
//! Invariant: a bounded text is at most its bound long, keeps its first line (the
//! failure) and as much of its `Caused by:` chain as fits, latest causes first (the
//! root cause is last), and says that and how much it omitted.

use crate::checkpointing::Report;

/// The most bytes of free text one report carries.
pub const MAX_REPORT_TEXT_BYTES: usize = 64 * 1024;

/// The bound of the retry after the JobMaster refused a report as too large.
pub const RETRY_REPORT_TEXT_BYTES: usize = 4 * 1024;

/// `text` cut to at most `max` bytes (see the module invariant). `max` is at least
/// 256 in practice; below that only the first line's start is kept.
pub fn bound_text(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let line_max = max / 4;
    let mut lines = text.lines();
    let first = cut_middle(lines.next().unwrap_or_default(), line_max);
    let mut causes: Vec<String> = lines
        .filter(|l| l.trim_start().starts_with("Caused by:"))
        .map(|l| cut_middle(l, line_max))
        .collect();
    let marker = |omitted: usize| {
        format!(
            "… (the TaskManager truncated this text of {} bytes to at most {max}: its first line and `Caused by:` chain are kept, {omitted} bytes omitted)",
            text.len()
        )
    };
    let joined_len = |causes: &[String]| {
        first.len() + 1 + marker(text.len()).len() + causes.iter().map(|c| c.len() + 1).sum::<usize>()
    };
    while !causes.is_empty() && joined_len(&causes) > max {
        causes.remove(0);
    }
    let kept = first.len() + causes.iter().map(String::len).sum::<usize>();
    let mut out = first.clone();
    out.push('\n');
    out.push_str(&marker(text.len().saturating_sub(kept)));
    for c in &causes {
        out.push('\n');
        out.push_str(c);
    }
    if out.len() > max {
        out.truncate(floor_char_boundary(&out, max));
    }
    out
}

/// `line` whole when it has at most `max` bytes, else its start and its end around
/// a note of how many bytes were left out.
fn cut_middle(line: &str, max: usize) -> String {
    if line.len() <= max {
        return line.to_string();
    }
    let half = max.saturating_sub(64) / 2;
    let head = &line[..floor_char_boundary(line, half)];
    let tail = &line[ceil_char_boundary(line, line.len() - half)..];
    let omitted = line.len() - head.len() - tail.len();
    format!("{head} … ({omitted} bytes omitted) … {tail}")
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_char_boundary(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

impl Report {
    /// The attempt the report is about.
    pub fn attempt_id(&self) -> &str {
        match self {
            Report::State(s) => &s.attempt_id,
            Report::Acknowledge(a) => &a.attempt_id,
            Report::Decline(d) => &d.attempt_id,
        }
    }

    /// The report with its free text (failure message, decline reason) cut to `max`
    /// bytes; returns whether anything was cut.
    pub fn bound_text(&mut self, max: usize) -> bool {
        let text = match self {
            Report::State(s) => &mut s.failure_message,
            Report::Decline(d) => &mut d.reason,
            Report::Acknowledge(_) => return false,
        };
        if text.len() <= max {
            return false;
        }
        *text = bound_text(text, max);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_text_is_kept_whole() {
        assert_eq!(bound_text("boom\nCaused by: x", 100), "boom\nCaused by: x");
    }

    #[test]
    fn a_huge_single_line_keeps_its_start_and_end_and_says_how_long_it_was() {
        let text = format!(
            "ParseOrder: malformed order at line 7: '{}' end",
            "x".repeat(10_000_000)
        );
        let bounded = bound_text(&text, MAX_REPORT_TEXT_BYTES);
        assert!(bounded.len() <= MAX_REPORT_TEXT_BYTES, "{}", bounded.len());
        assert!(
            bounded.starts_with("ParseOrder: malformed order at line 7: 'xxx"),
            "{bounded}"
        );
        let first = bounded.lines().next().unwrap();
        assert!(first.ends_with("xxx' end"), "{first}");
        assert!(
            bounded.contains(&format!("this text of {} bytes", text.len())),
            "{bounded}"
        );
    }

    #[test]
    fn the_middle_goes_and_the_caused_by_chain_stays() {
        let mut text = String::from("Job failed: task Map (1/1) failed\n");
        for i in 0..100_000 {
            text.push_str(&format!("    at frame {i}\n"));
        }
        text.push_str("Caused by: the user function failed\nCaused by: root cause: disk full");
        let bounded = bound_text(&text, 4096);
        assert!(bounded.len() <= 4096);
        let lines: Vec<&str> = bounded.lines().collect();
        assert_eq!(lines[0], "Job failed: task Map (1/1) failed");
        assert!(
            lines[1].starts_with("… (the TaskManager truncated this text"),
            "{}",
            lines[1]
        );
        assert_eq!(
            &lines[2..],
            [
                "Caused by: the user function failed",
                "Caused by: root cause: disk full"
            ]
        );
    }

    #[test]
    fn too_many_causes_drop_the_earliest_ones_and_keep_the_root_cause() {
        let mut text = String::from("failed\n");
        for i in 0..1000 {
            text.push_str(&format!("Caused by: cause {i}\n"));
        }
        let bounded = bound_text(&text, 1024);
        assert!(bounded.len() <= 1024);
        assert!(bounded.ends_with("Caused by: cause 999"), "{bounded}");
        assert!(!bounded.contains("Caused by: cause 0\n"), "{bounded}");
    }

    #[test]
    fn multibyte_text_is_cut_on_character_boundaries() {
        let text = "é".repeat(100_000);
        let bounded = bound_text(&text, 999);
        assert!(bounded.len() <= 999);
        assert!(bounded.starts_with("éé"));
    }

    #[test]
    fn a_failed_state_report_is_bounded_and_says_so() {
        let mut report = Report::State(Box::new(weir_rpc::TaskExecutionState {
            attempt_id: "a1".into(),
            state: "FAILED".into(),
            failure_message: "y".repeat(5_000_000),
            ..Default::default()
        }));
        assert_eq!(report.attempt_id(), "a1");
        assert!(report.bound_text(RETRY_REPORT_TEXT_BYTES));
        let Report::State(s) = &report else {
            panic!("the report changed its kind")
        };
        assert!(s.failure_message.len() <= RETRY_REPORT_TEXT_BYTES);
        assert!(!report.bound_text(RETRY_REPORT_TEXT_BYTES));
    }
}
