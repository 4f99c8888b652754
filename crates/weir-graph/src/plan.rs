//! The job plan: the stable JSON printed by `weir plan --json`, and its text form.
//!
//! Owns [`JobPlan`], a read-only summary of a [`JobGraph`] for people and tools. The
//! JSON is a **stable contract**: field names are snake_case, fields are only ever
//! added (never renamed or removed), and enum values are Flink's upper-case names.
//!
//! ```json
//! {
//!   "jid": "…32 hex…",            // omitted when the plan is not of a submitted job
//!   "name": "WordCount",
//!   "vertices": [{
//!     "id": "…32 hex…", "name": "Source: Lines -> FlatMap", "parallelism": 2,
//!     "max_parallelism": 128, "operators": ["Source: Lines", "FlatMap"],
//!     "operator_uids": [null, null], "slot_sharing_group": "default"
//!   }],
//!   "edges": [{ "source": "…", "target": "…", "ship_strategy": "HASH",
//!               "distribution_pattern": "ALL_TO_ALL" }]
//! }
//! ```
//!
//! Invariants: vertices are in the JobGraph's topological order; edges are in the
//! JobGraph's order and name only vertex ids present in `vertices`; `operators` and
//! `operator_uids` have equal length.

use crate::job_graph::JobGraph;
use crate::stream_graph::{DistributionPattern, Partitioner};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use weir_core::ids::JobId;

/// The plan of a job (`weir plan --json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobPlan {
    /// The job id as 32 lower-case hex characters; absent (omitted from the JSON) for a
    /// plan that was not submitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jid: Option<String>,
    /// The job's name.
    pub name: String,
    /// The vertices (operator chains), sources first, in topological order.
    pub vertices: Vec<PlanVertex>,
    /// The connections between vertices.
    pub edges: Vec<PlanEdge>,
}

/// One vertex (operator chain) of a [`JobPlan`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanVertex {
    /// The vertex id, 32 lower-case hex characters; stable for the same program.
    pub id: String,
    /// The chained name, e.g. `Source: S -> Map`.
    pub name: String,
    /// Number of parallel subtasks.
    pub parallelism: u32,
    /// Resolved max parallelism (number of key groups).
    pub max_parallelism: u32,
    /// Names of the chained operators in chain order, head first.
    pub operators: Vec<String>,
    /// The uid of each operator in `operators` (same position), `null` when unset.
    pub operator_uids: Vec<Option<String>>,
    /// The slot sharing group.
    pub slot_sharing_group: String,
}

/// One edge of a [`JobPlan`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanEdge {
    /// Id of the producing vertex (hex, as in [`PlanVertex::id`]).
    pub source: String,
    /// Id of the consuming vertex.
    pub target: String,
    /// The partitioner: `FORWARD`, `REBALANCE`, `RESCALE`, `SHUFFLE`, `BROADCAST`,
    /// `GLOBAL`, `HASH` or `CUSTOM`.
    pub ship_strategy: Partitioner,
    /// `POINTWISE` or `ALL_TO_ALL`.
    pub distribution_pattern: DistributionPattern,
}

impl JobPlan {
    /// The plan of `job_graph`, without a job id.
    pub fn from_job_graph(job_graph: &JobGraph) -> Self {
        let vertices: Vec<PlanVertex> = job_graph
            .vertices
            .iter()
            .map(|v| PlanVertex {
                id: v.id.to_string(),
                name: v.name.clone(),
                parallelism: v.parallelism,
                max_parallelism: v.max_parallelism,
                operators: v.operators.iter().map(|op| op.name.clone()).collect(),
                operator_uids: v.operators.iter().map(|op| op.uid.clone()).collect(),
                slot_sharing_group: v.slot_sharing_group.clone(),
            })
            .collect();
        let edges = job_graph
            .edges
            .iter()
            .filter_map(|e| {
                Some(PlanEdge {
                    source: vertices.get(e.source_vertex)?.id.clone(),
                    target: vertices.get(e.target_vertex)?.id.clone(),
                    ship_strategy: e.ship_strategy,
                    distribution_pattern: e.distribution,
                })
            })
            .collect();
        Self {
            jid: None,
            name: job_graph.job_name.clone(),
            vertices,
            edges,
        }
    }

    /// The same plan, labelled with the id of the submitted job.
    pub fn with_jid(mut self, jid: JobId) -> Self {
        self.jid = Some(jid.to_string());
        self
    }

    /// The vertex with id `id`, if any.
    pub fn vertex(&self, id: &str) -> Option<&PlanVertex> {
        self.vertices.iter().find(|v| v.id == id)
    }

    /// The plan as pretty-printed JSON.
    pub fn to_json_pretty(&self) -> String {
        // Serialising these plain types cannot fail; an impossible error gives an empty
        // string rather than a panic.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// A human-readable listing: a header, one block per vertex (id, name, parallelism,
    /// max parallelism, chained operators, slot sharing group), then one line per edge
    /// (`<source name> -> <target name>  HASH  ALL_TO_ALL`).
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let _ = write!(out, "Job: {}", self.name);
        if let Some(jid) = &self.jid {
            let _ = write!(out, " ({jid})");
        }
        out.push('\n');
        for v in &self.vertices {
            out.push('\n');
            let _ = writeln!(out, "Vertex {}", v.id);
            let _ = writeln!(out, "  name:               {}", v.name);
            let _ = writeln!(out, "  parallelism:        {}", v.parallelism);
            let _ = writeln!(out, "  max parallelism:    {}", v.max_parallelism);
            let _ = writeln!(out, "  operators:");
            for (name, uid) in v.operators.iter().zip(&v.operator_uids) {
                match uid {
                    Some(uid) => {
                        let _ = writeln!(out, "    - {name} (uid: {uid})");
                    }
                    None => {
                        let _ = writeln!(out, "    - {name}");
                    }
                }
            }
            let _ = writeln!(out, "  slot sharing group: {}", v.slot_sharing_group);
        }
        out.push_str("\nEdges:\n");
        if self.edges.is_empty() {
            out.push_str("  (none)\n");
        }
        for e in &self.edges {
            let name = |id: &str| self.vertex(id).map_or(id, |v| v.name.as_str()).to_string();
            let _ = writeln!(
                out,
                "  [{}] =={} ({})==> [{}]",
                name(&e.source),
                e.ship_strategy,
                e.distribution_pattern,
                name(&e.target)
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job_graph::tests::wordcount;

    fn plan() -> JobPlan {
        let mut g = wordcount();
        g.job_name = "WordCount".to_string();
        g.nodes[2].uid = Some("counts".to_string());
        match JobGraph::from_stream_graph(&g) {
            Ok(jg) => JobPlan::from_job_graph(&jg),
            Err(e) => panic!("compilation failed: {e}"),
        }
    }

    #[test]
    fn wordcount_plan_lists_two_chains_and_one_hash_edge() {
        let p = plan();
        assert_eq!(p.name, "WordCount");
        assert_eq!(p.jid, None);
        assert_eq!(p.vertices.len(), 2);
        let agg = &p.vertices[1];
        assert_eq!(agg.name, "KeyedAgg -> Sink: Print");
        assert_eq!(agg.operators, vec!["KeyedAgg", "Sink: Print"]);
        assert_eq!(agg.operator_uids, vec![Some("counts".to_string()), None]);
        assert_eq!((agg.parallelism, agg.max_parallelism), (2, 128));
        assert_eq!(agg.id.len(), 32);
        assert_eq!(p.edges.len(), 1);
        assert_eq!(p.edges[0].source, p.vertices[0].id);
        assert_eq!(p.edges[0].target, agg.id);
    }

    #[test]
    fn plan_json_uses_the_documented_snake_case_fields() {
        let p = plan().with_jid(JobId(0xab));
        let v: serde_json::Value = serde_json::from_str(&p.to_json_pretty()).unwrap_or_default();
        assert_eq!(v["jid"], "000000000000000000000000000000ab");
        assert_eq!(v["name"], "WordCount");
        let vertex = &v["vertices"][0];
        for field in [
            "id",
            "name",
            "parallelism",
            "max_parallelism",
            "operators",
            "operator_uids",
            "slot_sharing_group",
        ] {
            assert!(vertex.get(field).is_some(), "vertex field {field}");
        }
        assert_eq!(vertex["operator_uids"], serde_json::json!([null, null]));
        assert_eq!(v["vertices"][1]["operator_uids"][0], "counts");
        let edge = &v["edges"][0];
        assert_eq!(edge["ship_strategy"], "HASH");
        assert_eq!(edge["distribution_pattern"], "ALL_TO_ALL");
        assert_eq!(edge["source"], v["vertices"][0]["id"]);
        assert_eq!(edge.as_object().map(|o| o.len()), Some(4));
    }

    #[test]
    fn plan_without_jid_omits_the_field_and_round_trips() {
        let p = plan();
        let json = serde_json::to_string(&p).unwrap_or_default();
        assert!(!json.contains("\"jid\""));
        let back: Result<JobPlan, _> = serde_json::from_str(&json);
        assert_eq!(back.ok(), Some(p.clone()));
        let with = p.with_jid(JobId(1));
        let back: Result<JobPlan, _> = serde_json::from_str(&serde_json::to_string(&with).unwrap_or_default());
        assert_eq!(back.ok(), Some(with));
    }

    #[test]
    fn text_plan_shows_vertex_blocks_then_edges() {
        let p = plan();
        let text = p.to_text();
        assert!(text.starts_with("Job: WordCount\n"), "{text}");
        assert!(text.contains(&format!("Vertex {}\n", p.vertices[0].id)), "{text}");
        assert!(
            text.contains("  name:               Source: Lines -> FlatMap\n"),
            "{text}"
        );
        assert!(text.contains("  parallelism:        2\n"), "{text}");
        assert!(text.contains("  max parallelism:    128\n"), "{text}");
        assert!(text.contains("    - KeyedAgg (uid: counts)\n"), "{text}");
        assert!(text.contains("  slot sharing group: default\n"), "{text}");
        assert!(
            text.ends_with("Edges:\n  [Source: Lines -> FlatMap] ==HASH (ALL_TO_ALL)==> [KeyedAgg -> Sink: Print]\n"),
            "{text}"
        );
    }
}
