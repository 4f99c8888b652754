//! The plan as indented text (the `== Optimized Execution Plan ==` of `EXPLAIN`):
//! one node per line, its inputs below it one level deeper, with the hash exchange
//! before an aggregation shown as a node of its own.

use super::{PlanKind, PlanNode};

/// The plan tree as text.
pub fn explain(node: &PlanNode) -> String {
    let mut out = String::new();
    write_node(node, 0, &mut out);
    out
}

fn line(depth: usize, text: &str, out: &mut String) {
    if depth > 0 {
        out.push_str(&"   ".repeat(depth - 1));
        out.push_str("+- ");
    }
    out.push_str(text);
    out.push('\n');
}

fn write_node(node: &PlanNode, depth: usize, out: &mut String) {
    line(depth, &node.describe(), out);
    match &node.kind {
        PlanKind::Scan(_) => {}
        PlanKind::Calc { input, .. } => write_node(input, depth + 1, out),
        PlanKind::GroupAggregate { input, keys, .. } | PlanKind::WindowAggregate { input, keys, .. } => {
            let distribution = if *keys == 0 {
                "single".to_string()
            } else {
                let names: Vec<&str> = input.schema[..*keys].iter().map(|c| c.name.as_str()).collect();
                format!("hash[{}]", names.join(", "))
            };
            line(depth + 1, &format!("Exchange(distribution=[{distribution}])"), out);
            write_node(input, depth + 2, out);
        }
        PlanKind::Union(inputs) => {
            for i in inputs {
                write_node(i, depth + 1, out);
            }
        }
    }
}
