//! Router tests: every route with and without `/v1`, against the [`FakeBackend`],
//! through `tower::ServiceExt::oneshot`; plus one request over a real loopback socket.

use crate::endpoint::RestServerHandle;
use crate::examples::{self, JID, TM_ID};
use crate::fake_backend::{FakeBackend, FINISHED, NEW_JOB, PANICKY};
use crate::handlers::router_with_origin;
use crate::sample_check::sample;
use crate::test_client::{get, raw_get, send};
use axum::body::Body;
use axum::http::{header, Method, Request, StatusCode};
use axum::Router;
use serde_json::{json, Value};
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tower::ServiceExt;

fn app() -> (Arc<FakeBackend>, Router) {
    let fake = FakeBackend::new();
    // Flink's default CORS header, configured.
    let app = router_with_origin(fake.clone(), Some(axum::http::HeaderValue::from_static("*")));
    (fake, app)
}

fn to_json<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).expect("serialises")
}

#[tokio::test]
async fn every_get_route_answers_with_and_without_v1() {
    let (_, app) = app();
    let jid = JID.to_string();
    let expected: Vec<(String, Value)> = vec![
        ("/overview".to_string(), to_json(&examples::overview())),
        ("/config".to_string(), to_json(&examples::dashboard_config())),
        ("/jobs".to_string(), to_json(&examples::jobs_overview().to_jobs_list())),
        ("/jobs/overview".to_string(), to_json(&examples::jobs_overview())),
        (format!("/jobs/{jid}"), to_json(&examples::job_detail())),
        (
            format!("/jobs/{jid}/plan"),
            json!({ "plan": to_json(&examples::job_plan()) }),
        ),
        (format!("/jobs/{jid}/config"), to_json(&examples::job_config())),
        (
            "/taskmanagers".to_string(),
            json!({ "taskmanagers": [to_json(&examples::taskmanager_info())] }),
        ),
        (
            format!("/taskmanagers/{TM_ID}"),
            to_json(&examples::taskmanager_detail()),
        ),
        (
            "/jobmanager/config".to_string(),
            to_json(&examples::jobmanager_config()),
        ),
    ];
    for (path, body) in &expected {
        for prefix in ["", "/v1"] {
            let uri = format!("{prefix}{path}");
            let a = get(&app, &uri).await;
            assert_eq!(a.status, StatusCode::OK, "{uri}: {}", a.json);
            assert_eq!(&a.json, body, "{uri}");
            assert_eq!(
                a.headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()),
                Some("application/json; charset=UTF-8"),
                "{uri}"
            );
            assert_eq!(
                a.headers
                    .get(header::ACCESS_CONTROL_ALLOW_ORIGIN)
                    .and_then(|v| v.to_str().ok()),
                Some("*"),
                "{uri}"
            );
        }
    }
    // The exceptions route (body depends on the query): see its own test.
    for prefix in ["", "/v1"] {
        let a = get(&app, &format!("{prefix}/jobs/{jid}/exceptions")).await;
        assert_eq!(a.status, StatusCode::OK);
        assert_eq!(a.json["exceptionHistory"]["entries"].as_array().map(Vec::len), Some(2));
    }
}

#[tokio::test]
async fn head_is_served_for_get_routes() {
    let (_, app) = app();
    let request = Request::builder()
        .method(Method::HEAD)
        .uri("/v1/overview")
        .body(Body::empty())
        .expect("valid request");
    let response = app.oneshot(request).await.expect("infallible");
    assert_eq!(response.status(), StatusCode::OK);
}

#[tokio::test]
async fn unknown_paths_answer_like_flink() {
    let (_, app) = app();
    let a = get(&app, "/no/such/path").await;
    assert_eq!(a.status, StatusCode::NOT_FOUND);
    assert_eq!(a.json, sample("error_404_unknown_path.json"));

    let a = get(&app, "/v1/nosuch").await;
    assert_eq!(a.status, StatusCode::NOT_FOUND);
    assert_eq!(
        a.errors(),
        vec!["Unable to load requested file /v1/nosuch.".to_string()]
    );

    let a = send(&app, Method::POST, "/nosuch?x=1", "{}").await;
    assert_eq!(a.status, StatusCode::NOT_FOUND);
    assert_eq!(a.errors(), vec!["Not found: /nosuch?x=1".to_string()]);
    assert!(a.headers.contains_key(header::ACCESS_CONTROL_ALLOW_ORIGIN));

    let a = get(&app, &format!("/jobs/{JID}/nosuch")).await;
    assert_eq!(a.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn unknown_job_is_flinks_404() {
    let (_, app) = app();
    let unknown = "00000000000000000000000000000000";
    for suffix in ["", "/plan", "/exceptions", "/config"] {
        for prefix in ["", "/v1"] {
            let uri = format!("{prefix}/jobs/{unknown}{suffix}");
            let a = get(&app, &uri).await;
            assert_eq!(a.status, StatusCode::NOT_FOUND, "{uri}");
            let errors = a.errors();
            assert_eq!(errors.len(), 1, "{uri}");
            assert!(
                errors[0].starts_with(&format!(
                    "org.apache.flink.runtime.rest.NotFoundException: Job {unknown} not found"
                )),
                "{uri}: {errors:?}"
            );
            assert!(errors[0].contains(&format!("Could not find Flink job ({unknown})")));
        }
    }
}

#[tokio::test]
async fn malformed_job_ids_are_400() {
    let (_, app) = app();
    let bad_ids = [
        "xyz",
        "ca04c947811b49b7a5496fe764893d4",   // 31 chars
        "ca04c947811b49b7a5496fe764893d4c0", // 33 chars
        "+a04c947811b49b7a5496fe764893d4c",  // sign accepted by from_str_radix
        "ga04c947811b49b7a5496fe764893d4c",
        "%E2%82%AC",
    ];
    for id in bad_ids {
        for suffix in ["", "/plan", "/exceptions", "/config"] {
            let uri = format!("/v1/jobs/{id}{suffix}");
            let a = get(&app, &uri).await;
            assert_eq!(a.status, StatusCode::BAD_REQUEST, "{uri}");
            let errors = a.errors();
            assert_eq!(errors.len(), 1);
            assert!(
                errors[0].starts_with(
                    "Bad request, could not parse parameters: Cannot resolve path parameter (jobid) from value \""
                ),
                "{uri}: {errors:?}"
            );
        }
        let a = send(&app, Method::PATCH, &format!("/jobs/{id}?mode=cancel"), "").await;
        assert_eq!(a.status, StatusCode::BAD_REQUEST, "PATCH {id}");
    }
    let a = get(&app, "/jobs/xyz").await;
    assert_eq!(
        a.errors(),
        vec![
            "Bad request, could not parse parameters: Cannot resolve path parameter (jobid) from value \"xyz\"."
                .to_string()
        ]
    );
    // Upper-case hex is a valid id.
    let upper = JID.to_string().to_uppercase();
    assert_eq!(get(&app, &format!("/jobs/{upper}")).await.status, StatusCode::OK);
}

#[tokio::test]
async fn unknown_taskmanager_is_a_404_not_a_server_error() {
    let (_, app) = app();
    for prefix in ["", "/v1"] {
        let a = get(&app, &format!("{prefix}/taskmanagers/127.0.0.1:1-deadbeef")).await;
        assert_eq!(a.status, StatusCode::NOT_FOUND);
        let errors = a.errors();
        assert_eq!(errors.len(), 1);
        assert!(errors[0].starts_with(
            "org.apache.flink.runtime.rest.handler.RestHandlerException: Could not find TaskExecutor 127.0.0.1:1-deadbeef\nCaused by: org.apache.flink.runtime.resourcemanager.exceptions.UnknownTaskExecutorException: No TaskExecutor registered under 127.0.0.1:1-deadbeef."
        ));
    }
}

#[tokio::test]
async fn wrong_method_is_405_with_errors() {
    let (_, app) = app();
    for (method, uri, allow) in [
        (Method::DELETE, "/overview", "GET,HEAD"),
        (Method::POST, "/v1/overview", "GET,HEAD"),
        (Method::PUT, "/jobs", "GET,HEAD,POST"),
        (
            Method::DELETE,
            "/v1/jobs/ca04c947811b49b7a5496fe764893d4c",
            "GET,HEAD,PATCH",
        ),
        (Method::POST, "/jobs/overview", "GET,HEAD"),
        (Method::PATCH, "/taskmanagers", "GET,HEAD"),
    ] {
        let a = send(&app, method.clone(), uri, "").await;
        assert_eq!(a.status, StatusCode::METHOD_NOT_ALLOWED, "{method} {uri}");
        let errors = a.errors();
        assert_eq!(errors.len(), 1, "{method} {uri}");
        assert!(errors[0].contains(method.as_str()), "{errors:?}");
        let mut got: Vec<String> = a
            .headers
            .get(header::ALLOW)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .split(',')
            .map(str::to_string)
            .collect();
        got.sort();
        let mut want: Vec<String> = allow.split(',').map(str::to_string).collect();
        want.sort();
        assert_eq!(got, want, "{method} {uri}");
    }
}

#[tokio::test]
async fn cancel_semantics() {
    let (fake, app) = app();
    let flink_body = sample("job_cancel_patch.json");

    let a = send(&app, Method::PATCH, &format!("/jobs/{JID}?mode=cancel"), "").await;
    assert_eq!(a.status, StatusCode::ACCEPTED);
    assert_eq!(a.json, flink_body);

    let a = send(&app, Method::PATCH, &format!("/v1/jobs/{JID}?mode=CANCEL"), "").await;
    assert_eq!(a.status, StatusCode::ACCEPTED);

    // Without a mode Flink cancels.
    let a = send(&app, Method::PATCH, &format!("/v1/jobs/{JID}"), "").await;
    assert_eq!(a.status, StatusCode::ACCEPTED);
    assert_eq!(fake.cancelled(), vec![JID, JID, JID]);

    let a = send(&app, Method::PATCH, &format!("/jobs/{JID}?mode=stop"), "").await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST);
    assert!(a.errors()[0].starts_with("The termination mode \"stop\" has been removed."));

    let a = send(&app, Method::PATCH, &format!("/jobs/{JID}?mode=halt"), "").await;
    assert_eq!(a.status, StatusCode::BAD_REQUEST);
    assert_eq!(
        a.errors(),
        vec![
            "Bad request, could not parse parameters: Cannot resolve query parameter (mode) from value \"halt\"."
                .to_string()
        ]
    );
    assert_eq!(fake.cancelled().len(), 3, "rejected modes do not cancel");

    let a = send(
        &app,
        Method::PATCH,
        "/jobs/00000000000000000000000000000000?mode=cancel",
        "",
    )
    .await;
    assert_eq!(a.status, StatusCode::NOT_FOUND);
    assert_eq!(a.errors(), vec!["Job could not be found.".to_string()]);

    let a = send(&app, Method::PATCH, &format!("/jobs/{FINISHED}?mode=cancel"), "").await;
    assert_eq!(a.status, StatusCode::CONFLICT);
    assert!(a.errors()[0].contains("(FINISHED)"));
}

#[tokio::test]
async fn submit_accepts_the_documented_body() {
    let (fake, app) = app();
    for prefix in ["", "/v1"] {
        let a = send(
            &app,
            Method::POST,
            &format!("{prefix}/jobs"),
            r#"{"program":"keyed-sum","args":{"keys":"10"},"parallelism":4}"#,
        )
        .await;
        assert_eq!(a.status, StatusCode::ACCEPTED, "{}", a.json);
        assert_eq!(a.json, json!({ "jobid": NEW_JOB.to_string() }));
    }
    let submitted = fake.submitted.lock().map(|s| s.clone()).unwrap_or_default();
    assert_eq!(submitted.len(), 2);
    assert_eq!(submitted[0].parallelism, Some(4));
    assert_eq!(submitted[0].args.get("keys").map(String::as_str), Some("10"));
}

#[tokio::test]
async fn submit_rejects_bad_bodies_with_400() {
    let (fake, app) = app();
    for body in [
        "",
        "   ",
        "{",
        "not json",
        "[]",
        "{}",
        r#"{"program": 5}"#,
        r#"{"program":"keyed-sum","unknown":true}"#,
        r#"{"program":"keyed-sum","parallelism":-1}"#,
        r#"{"program":"keyed-sum","args":{"keys":10}}"#,
        "\u{0}\u{1}\u{2}",
    ] {
        let a = send(&app, Method::POST, "/jobs", body).await;
        assert_eq!(a.status, StatusCode::BAD_REQUEST, "body {body:?}");
        let errors = a.errors();
        assert_eq!(
            errors.first().map(String::as_str),
            Some("Request did not match expected format JobSubmitRequest."),
            "body {body:?}"
        );
        assert_eq!(errors.len(), 2, "the parser's message follows");
    }
    for body in [
        r#"{"program":"keyed-sum","parallelism":0}"#,
        r#"{"program":"","parallelism":1}"#,
        r#"{"program":"keyed-sum","parallelism":8,"max-parallelism":4}"#,
        r#"{"program":"no-such-program"}"#,
    ] {
        let a = send(&app, Method::POST, "/v1/jobs", body).await;
        assert_eq!(a.status, StatusCode::BAD_REQUEST, "body {body:?}");
        assert_eq!(a.errors().len(), 1, "body {body:?}");
    }
    assert!(fake.submitted.lock().map(|s| s.is_empty()).unwrap_or(false));
}

#[tokio::test]
async fn exceptions_query_parameters() {
    let (fake, app) = app();
    let base = format!("/jobs/{JID}/exceptions");

    let a = get(&app, &format!("{base}?maxExceptions=1")).await;
    assert_eq!(a.status, StatusCode::OK);
    let history = &a.json["exceptionHistory"];
    assert_eq!(history["entries"].as_array().map(Vec::len), Some(1));
    assert_eq!(history["truncated"], true);

    let a = get(&app, &format!("{base}?maxExceptions=0")).await;
    assert_eq!(a.json["exceptionHistory"]["entries"], json!([]));
    assert_eq!(a.json["exceptionHistory"]["truncated"], true);

    let a = get(&app, &format!("/v1{base}?failureLabelFilter=type:user")).await;
    assert_eq!(a.status, StatusCode::OK);
    let entries = a.json["exceptionHistory"]["entries"].clone();
    assert_eq!(entries.as_array().map(Vec::len), Some(1));
    assert_eq!(entries[0]["failureLabels"]["type"], "user");
    assert_eq!(a.json["exceptionHistory"]["truncated"], false);

    let hints = fake.exception_hints.lock().map(|h| h.clone()).unwrap_or_default();
    assert_eq!(hints, vec![Some(1), Some(0), None], "no hint while filtering");

    for (query, key, value) in [
        ("maxExceptions=abc", "maxExceptions", "abc"),
        ("maxExceptions=-1", "maxExceptions", "-1"),
        ("maxExceptions=1&maxExceptions=2", "maxExceptions", "1,2"),
        ("failureLabelFilter=nocolon", "failureLabelFilter", "nocolon"),
        ("failureLabelFilter=:v", "failureLabelFilter", ":v"),
    ] {
        let a = get(&app, &format!("{base}?{query}")).await;
        assert_eq!(a.status, StatusCode::BAD_REQUEST, "{query}");
        assert_eq!(
            a.errors(),
            vec![format!(
                "Bad request, could not parse parameters: Cannot resolve query parameter ({key}) from value \"{value}\"."
            )],
            "{query}"
        );
    }
    // Unknown parameters are ignored, as Flink does.
    let a = get(&app, &format!("{base}?whatever=1")).await;
    assert_eq!(a.status, StatusCode::OK);
}

#[tokio::test]
async fn a_panicking_backend_is_a_500_and_the_router_survives() {
    let (_, app) = app();
    let a = get(&app, &format!("/jobs/{PANICKY}")).await;
    assert_eq!(a.status, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(a.errors()[0], "Internal server error.");
    let a = send(&app, Method::PATCH, &format!("/jobs/{PANICKY}"), "").await;
    assert_eq!(a.status, StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(get(&app, "/overview").await.status, StatusCode::OK);
}

#[tokio::test]
async fn real_socket_serves_and_shuts_down() {
    let fake = FakeBackend::new();
    let server = RestServerHandle::start("127.0.0.1:0", fake)
        .await
        .expect("binds an ephemeral port");
    let addr = server.local_addr();
    assert!(addr.ip().is_loopback());
    assert_ne!(addr.port(), 0);

    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connects");
    stream
        .write_all(b"GET /v1/overview HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .await
        .expect("writes");
    let mut raw = Vec::new();
    tokio::time::timeout(std::time::Duration::from_secs(10), stream.read_to_end(&mut raw))
        .await
        .expect("answers within 10 s")
        .expect("reads");
    let text = String::from_utf8_lossy(&raw);
    assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
    let lower = text.to_ascii_lowercase();
    assert!(lower.contains("content-type: application/json; charset=utf-8"));
    let body = text.split("\r\n\r\n").nth(1).unwrap_or_default();
    let json: Value = serde_json::from_str(body).expect("JSON body");
    assert_eq!(json, to_json(&examples::overview()));

    tokio::time::timeout(std::time::Duration::from_secs(10), server.shutdown())
        .await
        .expect("shuts down within 10 s")
        .expect("clean shutdown");
    assert!(
        tokio::net::TcpStream::connect(addr).await.is_err(),
        "nothing listens after shutdown"
    );
}

#[tokio::test]
async fn the_web_ui_is_served_at_the_root_and_loads_its_scripts_and_styles() {
    let (_, app) = app();
    for uri in ["/", "/index.html"] {
        let (status, content_type, page) = raw_get(&app, uri).await;
        assert_eq!(status, StatusCode::OK);
        assert!(content_type.is_some_and(|c| c.starts_with("text/html")), "{uri}");
        for asset in [
            "/web/dashboard.css",
            "/web/app.js",
            "/web/job.js",
            "/web/job_tabs.js",
            "/web/graph.js",
        ] {
            assert!(page.contains(&format!("\"{asset}\"")), "{uri} does not load {asset}");
        }
    }
}

#[tokio::test]
async fn each_dashboard_asset_is_served_with_its_content_type() {
    let (_, app) = app();
    for (uri, content_type, needle) in [
        ("/web/dashboard.css", "text/css; charset=utf-8", "#sidebar"),
        ("/web/app.js", "text/javascript; charset=utf-8", "/jobs/overview"),
        ("/web/job.js", "text/javascript; charset=utf-8", "/backpressure"),
        ("/web/job_tabs.js", "text/javascript; charset=utf-8", "/exceptions"),
        ("/web/graph.js", "text/javascript; charset=utf-8", "data-ship-strategy"),
    ] {
        let (status, got, body) = raw_get(&app, uri).await;
        assert_eq!(status, StatusCode::OK, "{uri}");
        assert_eq!(got.as_deref(), Some(content_type), "{uri}");
        assert!(body.contains(needle), "{uri} lacks {needle}");
    }
}
