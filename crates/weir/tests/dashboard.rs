//! The web dashboard in a real browser: a cluster runs a throttled `keyed-sum` at
//! parallelism 2 and headless Chromium loads the dashboard's hash routes from the
//! JobManager. The rendered DOM must show the job in the overview's job list, one graph
//! box per vertex of `/jobs/:jid` with its name and parallelism, an edge per plan input
//! with its ship strategy, the subtasks of a clicked vertex, and the TaskManagers.
//! Screenshots of the overview, the job graph and a vertex's subtasks are kept under
//! `<target>/dashboard-screenshots/`.
//!
//! Needs Debian's `chromium` (`scripts/test.sh` installs it); without it the test fails.

mod common;

use common::{get, Cluster};
use scraper::{ElementRef, Html, Selector};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The browser binary, or a failure that says how to get it.
fn chromium() -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .flat_map(|dir| ["chromium", "chromium-browser"].map(|name| dir.join(name)))
        .find(|candidate| candidate.is_file())
        .unwrap_or_else(|| {
            panic!(
                "chromium is not installed: the dashboard test drives headless Chromium \
                 (install Debian's package: apt-get install -y --no-install-recommends chromium; \
                 scripts/test.sh does this when it is missing)"
            )
        })
}

/// Runs headless Chromium on `url` with `action` (`--dump-dom` or `--screenshot=…`),
/// letting the page run 8 s of virtual time (its fetches and a few refreshes); stdout.
fn browse(url: &str, action: &str) -> String {
    let profile = tempfile::tempdir().expect("browser profile dir");
    let out = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--hide-scrollbars",
            "--window-size=1400,900",
            "--virtual-time-budget=8000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(action)
        .arg(url)
        .output()
        .expect("run chromium");
    assert!(
        out.status.success(),
        "chromium {action} {url} failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("the DOM is UTF-8")
}

/// The DOM of a dashboard route, parsed.
fn dom(rest: &str, route: &str) -> Html {
    Html::parse_document(&browse(&format!("http://{rest}/{route}"), "--dump-dom"))
}

/// Saves a screenshot of a dashboard route as `<dir>/<name>.png`; asserts it is a PNG.
fn screenshot(rest: &str, route: &str, dir: &Path, name: &str) {
    let file = dir.join(format!("{name}.png"));
    browse(
        &format!("http://{rest}/{route}"),
        &format!("--screenshot={}", file.display()),
    );
    let png = std::fs::read(&file).unwrap_or_else(|e| panic!("screenshot {}: {e}", file.display()));
    assert!(png.starts_with(b"\x89PNG"), "{} is not a PNG", file.display());
}

/// The elements matching a CSS selector.
fn select<'a>(page: &'a Html, css: &str) -> Vec<ElementRef<'a>> {
    let selector = Selector::parse(css).unwrap_or_else(|e| panic!("selector {css}: {e}"));
    page.select(&selector).collect()
}

/// The one element matching `css`; fails naming the selector otherwise.
fn one<'a>(page: &'a Html, css: &str) -> ElementRef<'a> {
    let found = select(page, css);
    assert_eq!(
        found.len(),
        1,
        "expected one {css} in the dashboard, found {}",
        found.len()
    );
    found[0]
}

fn attr<'a>(e: ElementRef<'a>, name: &str) -> &'a str {
    e.value().attr(name).unwrap_or_default()
}

/// `<target>/dashboard-screenshots/`, created.
fn screenshot_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("the target dir holds tmp/")
        .join("dashboard-screenshots");
    std::fs::create_dir_all(&dir).expect("screenshot dir");
    dir
}

#[test]
fn the_dashboard_draws_a_running_jobs_graph_subtasks_and_job_list_in_a_browser() {
    chromium();
    let cluster = Cluster::start(2, 2, &[]);
    let jid = cluster.submit(json!({
        "program": "keyed-sum",
        "parallelism": 2,
        "args": {"records": "100000000", "rate_per_sec": "2000"},
    }));
    cluster.wait_running(&jid);
    let rest = &cluster.rest;
    let (_, detail) = get(rest, &format!("/jobs/{jid}"));
    let (_, plan) = get(rest, &format!("/jobs/{jid}/plan"));
    let vertices = detail["vertices"].as_array().expect("vertices");
    assert!(
        vertices.len() >= 2,
        "keyed-sum has a source and a keyed vertex: {detail}"
    );

    let graph_route = format!("#/job/running/{jid}/overview");
    let page = dom(rest, &graph_route);
    let boxes = select(&page, "svg[data-job-graph] g[data-vertex-id]");
    assert_eq!(boxes.len(), vertices.len(), "one box per vertex of {detail}");
    for v in vertices {
        let id = v["id"].as_str().expect("vertex id");
        let b = one(&page, &format!("g[data-vertex-id=\"{id}\"]"));
        assert_eq!(
            attr(b, "data-vertex-name"),
            v["name"].as_str().expect("name"),
            "vertex {id}"
        );
        assert_eq!(attr(b, "data-parallelism"), v["parallelism"].to_string(), "vertex {id}");
        assert_eq!(attr(b, "data-status"), "RUNNING", "vertex {id}");
    }
    let mut strategies = Vec::new();
    for node in plan["plan"]["nodes"].as_array().expect("plan nodes") {
        for input in node["inputs"].as_array().into_iter().flatten() {
            let css = format!(
                "g.edge[data-source=\"{}\"][data-target=\"{}\"]",
                input["id"].as_str().expect("input id"),
                node["id"].as_str().expect("node id")
            );
            let edge = one(&page, &css);
            assert_eq!(
                attr(edge, "data-ship-strategy"),
                input["ship_strategy"].as_str().expect("strategy")
            );
            assert!(
                edge.text().any(|t| t == attr(edge, "data-ship-strategy")),
                "{css} is labelled"
            );
            strategies.push(attr(edge, "data-ship-strategy").to_string());
        }
    }
    assert!(
        strategies.iter().any(|s| s == "HASH"),
        "keyBy is a HASH edge: {strategies:?}"
    );

    let keyed = vertices.last().expect("a vertex");
    let vid = keyed["id"].as_str().expect("vertex id");
    let subtasks_route = format!("{graph_route}/{vid}");
    let page = dom(rest, &subtasks_route);
    one(&page, &format!("h3[data-subtasks-of=\"{vid}\"]"));
    let rows = select(&page, "tr[data-subtask]");
    assert_eq!(rows.len(), 2, "a row per subtask of the keyed vertex");
    assert!(
        rows.iter().all(|r| r.text().any(|t| t == "RUNNING")),
        "every subtask shows RUNNING"
    );

    let page = dom(rest, "#/overview");
    let row = one(&page, &format!("tr[data-job-row=\"{jid}\"]"));
    assert_eq!(attr(row, "data-job-state"), "RUNNING");
    let name = detail["name"].as_str().expect("job name");
    assert!(row.text().any(|t| t == name), "the row names the job {name}");

    let page = dom(rest, "#/task-manager");
    assert_eq!(select(&page, "tr[data-taskmanager]").len(), 2, "a row per TaskManager");

    let dir = screenshot_dir();
    screenshot(rest, "#/overview", &dir, "overview");
    screenshot(rest, &graph_route, &dir, "job-graph");
    screenshot(rest, &subtasks_route, &dir, "vertex-subtasks");
}
