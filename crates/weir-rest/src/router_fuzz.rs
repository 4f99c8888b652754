//! Hostile requests against the REST router (through `tower::ServiceExt::oneshot`,
//! no socket): every route template with arbitrary ids in its `:id` places, arbitrary
//! paths, methods, content types and bodies (arbitrary bytes and mutated valid job
//! submissions). The router answers every one with a status below 500 (the
//! [`PANICKY`](crate::fake_backend::PANICKY) job, whose backend panics on purpose, is
//! never generated) and never panics. Unknown ids are 404, malformed ids 400.

use crate::examples::{JID, TM_ID};
use crate::fake_backend::FakeBackend;
use crate::handlers::router;
use axum::body::Body;
use axum::http::{header, Method, Request, StatusCode};
use axum::Router;
use proptest::prelude::*;
use tower::ServiceExt;
use weir_core::fuzz::{cases, corpus, mutate, mutations};

/// Every route with an id: `{j}` job, `{v}` vertex, `{s}` subtask, `{c}` checkpoint,
/// `{t}` TaskManager, `{x}` trigger id, `{f}` file name.
const TEMPLATES: &[&str] = &[
    "/jobs/{j}",
    "/jobs/{j}/plan",
    "/jobs/{j}/exceptions",
    "/jobs/{j}/config",
    "/jobs/{j}/status",
    "/jobs/{j}/accumulators",
    "/jobs/{j}/metrics",
    "/jobs/{j}/checkpoints",
    "/jobs/{j}/checkpoints/config",
    "/jobs/{j}/checkpoints/details/{c}",
    "/jobs/{j}/savepoints/{x}",
    "/jobs/{j}/vertices/{v}",
    "/jobs/{j}/vertices/{v}/backpressure",
    "/jobs/{j}/vertices/{v}/subtasktimes",
    "/jobs/{j}/vertices/{v}/taskmanagers",
    "/jobs/{j}/vertices/{v}/watermarks",
    "/jobs/{j}/vertices/{v}/metrics",
    "/jobs/{j}/vertices/{v}/subtasks/metrics",
    "/jobs/{j}/vertices/{v}/subtasks/{s}",
    "/jobs/{j}/vertices/{v}/subtasks/{s}/metrics",
    "/taskmanagers/{t}",
    "/taskmanagers/{t}/logs",
    "/jobmanager/logs/{f}",
];

/// One path segment as a hostile client might send it, percent-encoded.
fn segment() -> impl Strategy<Value = String> {
    let hex = "[0-9a-fA-F]{32}";
    prop_oneof![
        Just(JID.to_string()),
        Just(TM_ID.to_string()),
        hex.prop_map(|s| s),
        "-?[0-9]{1,25}",
        ".{0,40}".prop_map(|s| percent_encode(&s)),
        proptest::collection::vec(any::<u8>(), 0..40).prop_map(|b| percent_encode_bytes(&b)),
    ]
}

fn percent_encode(s: &str) -> String {
    percent_encode_bytes(s.as_bytes())
}

fn percent_encode_bytes(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b':' => (*b as char).to_string(),
            other => format!("%{other:02X}"),
        })
        .collect()
}

fn fill(template: &str, ids: &[String]) -> String {
    let mut out = template.to_string();
    for (place, id) in ["{j}", "{v}", "{s}", "{c}", "{t}", "{x}", "{f}"].iter().zip(ids) {
        out = out.replace(place, id);
    }
    out
}

fn method() -> impl Strategy<Value = Method> {
    prop_oneof![
        Just(Method::GET),
        Just(Method::POST),
        Just(Method::PATCH),
        Just(Method::PUT),
        Just(Method::DELETE),
        Just(Method::HEAD),
    ]
}

fn content_type() -> impl Strategy<Value = Option<String>> {
    prop_oneof![
        Just(None),
        Just(Some("application/json".to_string())),
        Just(Some("text/plain".to_string())),
        Just(Some("multipart/form-data; boundary=x".to_string())),
        "[ -~]{0,30}".prop_map(Some),
    ]
}

/// The status `app` answers; panics (failing the case) if the router panics.
fn status(app: &Router, method: Method, uri: &str, content_type: Option<&str>, body: Vec<u8>) -> Option<StatusCode> {
    let mut builder = Request::builder().method(method).uri(uri);
    if let Some(ct) = content_type {
        builder = builder.header(header::CONTENT_TYPE, ct);
    }
    let request = builder.body(Body::from(body)).ok()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    let response = runtime.block_on(app.clone().oneshot(request)).expect("infallible");
    Some(response.status())
}

fn app() -> Router {
    router(FakeBackend::new())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(256)))]

    #[test]
    fn any_id_in_any_route_is_answered_below_500(
        template in proptest::sample::select(TEMPLATES),
        ids in proptest::collection::vec(segment(), 7),
        v1 in any::<bool>(),
        method in method(),
    ) {
        let uri = format!("{}{}", if v1 { "/v1" } else { "" }, fill(template, &ids));
        if let Some(status) = status(&app(), method, &uri, None, Vec::new()) {
            prop_assert!(status.as_u16() < 500, "{uri}: {status}");
        }
    }

    #[test]
    fn arbitrary_paths_methods_and_bodies_are_answered_below_500(
        path in proptest::collection::vec(segment(), 0..6),
        method in method(),
        content_type in content_type(),
        body in proptest::collection::vec(any::<u8>(), 0..256),
    ) {
        let uri = format!("/{}", path.join("/"));
        if let Some(status) = status(&app(), method, &uri, content_type.as_deref(), body) {
            prop_assert!(status.as_u16() < 500, "{uri}: {status}");
        }
    }

    #[test]
    fn mutated_job_submissions_are_answered_below_500(
        mutations in mutations(1..8),
        content_type in content_type(),
        target in prop_oneof![Just("/jobs".to_string()), Just(format!("/jobs/{JID}/savepoints")), Just(format!("/jobs/{JID}/stop"))],
    ) {
        let valid = br#"{"program":"keyed-sum","parallelism":2,"args":{"keys":"4","records":"100"},"savepointPath":"/tmp/sp","target-directory":"/tmp/x","cancel-job":false}"#;
        let body = mutate(valid, &mutations);
        for method in [Method::POST, Method::PATCH] {
            if let Some(status) = status(&app(), method, &target, content_type.as_deref(), body.clone()) {
                prop_assert!(status.as_u16() < 500, "{target}: {status}");
            }
        }
    }
}

#[test]
fn unknown_ids_are_404_and_malformed_ids_400_on_every_route() {
    let app = app();
    let unknown_job = "00000000000000000000000000000001";
    for template in TEMPLATES {
        let uses = |place: &str| template.contains(place);
        let known = |place: &str| match place {
            "{j}" => JID.to_string(),
            "{t}" => TM_ID.to_string(),
            "{f}" => "weir.log".to_string(),
            _ => "0".to_string(),
        };
        if uses("{j}") {
            let ids: Vec<String> = ["{j}", "{v}", "{s}", "{c}", "{t}", "{x}", "{f}"]
                .iter()
                .map(|p| if *p == "{j}" { "not-a-job".to_string() } else { known(p) })
                .collect();
            let uri = fill(template, &ids);
            let got = status(&app, Method::GET, &uri, None, Vec::new());
            assert_eq!(got.map(|s| s.as_u16()), Some(400), "{uri}");
        }
        let unknown: Vec<String> = ["{j}", "{v}", "{s}", "{c}", "{t}", "{x}", "{f}"]
            .iter()
            .map(|p| match *p {
                "{j}" => unknown_job.to_string(),
                "{v}" => "ffffffffffffffffffffffffffffffff".to_string(),
                "{t}" => "127.0.0.1:1-deadbeef".to_string(),
                "{f}" => "no-such.log".to_string(),
                _ => "12345".to_string(),
            })
            .collect();
        let uri = fill(template, &unknown);
        let got = status(&app, Method::GET, &uri, None, Vec::new()).map(|s| s.as_u16());
        let unknown_ok = if template.ends_with("metrics") {
            [200, 404]
        } else {
            [404, 404]
        };
        assert!(got.is_some_and(|s| unknown_ok.contains(&s)), "{uri}: {got:?}");
    }
}

#[test]
fn the_rest_corpus_replays_below_500() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/rest");
    let app = app();
    for (path, bytes) in corpus(&dir).expect("corpus readable") {
        let text = String::from_utf8_lossy(&bytes);
        let (uri, body) = text.split_once('\n').unwrap_or((&text, ""));
        let got = status(
            &app,
            Method::POST,
            uri.trim(),
            Some("application/json"),
            body.as_bytes().to_vec(),
        );
        assert!(got.is_none_or(|s| s.as_u16() < 500), "{}: {got:?}", path.display());
    }
}
