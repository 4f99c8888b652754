//! The endpoint's request policy and socket bounds: the CORS header follows the
//! configuration (absent by default), non-JSON writes are 415, a connection that never
//! finishes its headers (or, kept alive, never sends its next request) is closed, and
//! connections beyond the limit are closed at once.

use crate::endpoint::RestServerHandle;
use crate::fake_backend::FakeBackend;
use crate::handlers::{router, router_with_origin};
use crate::server::RestServerOptions;
use axum::body::Body;
use axum::http::{header, HeaderValue, Method, Request, StatusCode};
use axum::Router;
use serde_json::{json, Value};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tower::ServiceExt;

async fn exchange(
    app: &Router,
    method: Method,
    uri: &str,
    content_type: Option<&str>,
    body: &str,
) -> axum::response::Response {
    let mut request = Request::builder()
        .method(method)
        .uri(uri)
        .header(header::ORIGIN, "https://evil.example");
    if let Some(ct) = content_type {
        request = request.header(header::CONTENT_TYPE, ct);
    }
    let request = request.body(Body::from(body.to_owned())).unwrap();
    app.clone().oneshot(request).await.unwrap()
}

async fn json_of(response: axum::response::Response) -> Value {
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 20).await.unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

#[tokio::test]
async fn without_a_configured_origin_no_response_allows_another_origin() {
    let app = router(FakeBackend::new());
    let r = exchange(&app, Method::GET, "/overview", None, "").await;
    assert_eq!(r.status(), StatusCode::OK);
    assert!(!r.headers().contains_key(header::ACCESS_CONTROL_ALLOW_ORIGIN));
}

#[tokio::test]
async fn a_configured_origin_is_the_allow_origin_header_of_every_response() {
    let origin = HeaderValue::from_static("https://dashboard.example");
    let app = router_with_origin(FakeBackend::new(), Some(origin.clone()));
    for (method, uri) in [(Method::GET, "/overview"), (Method::GET, "/nosuch")] {
        let r = exchange(&app, method, uri, None, "").await;
        assert_eq!(
            r.headers().get(header::ACCESS_CONTROL_ALLOW_ORIGIN),
            Some(&origin),
            "{uri}"
        );
    }
}

#[tokio::test]
async fn a_text_plain_job_submission_is_refused_with_415_and_submits_nothing() {
    let fake = FakeBackend::new();
    let app = router(fake.clone());
    let body = r#"{"program":"keyed-sum"}"#;
    let r = exchange(&app, Method::POST, "/jobs", Some("text/plain;charset=UTF-8"), body).await;
    assert_eq!(r.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_eq!(
        json_of(r).await,
        json!({"errors": ["Unsupported Content-Type 'text/plain;charset=UTF-8' for POST /jobs: requests that change something must be sent as application/json."]})
    );
    let r = exchange(&app, Method::POST, "/v1/jobs", None, body).await;
    assert_eq!(r.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_eq!(fake.submitted.lock().unwrap().len(), 0);
    let r = exchange(&app, Method::POST, "/jobs", Some("application/json"), body).await;
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    assert_eq!(fake.submitted.lock().unwrap().len(), 1);
}

async fn read_all(stream: &mut TcpStream) -> String {
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut raw))
        .await
        .expect("the server ends the connection")
        .ok();
    String::from_utf8_lossy(&raw).into_owned()
}

/// A server over a fake backend whose header read timeout is `timeout`.
async fn start_with_header_read_timeout(timeout: Duration) -> RestServerHandle {
    let options = RestServerOptions {
        header_read_timeout: timeout,
        ..RestServerOptions::default()
    };
    RestServerHandle::start_with("127.0.0.1:0", FakeBackend::new(), options)
        .await
        .unwrap()
}

#[tokio::test]
async fn a_request_whose_headers_never_end_is_closed_after_the_header_read_timeout() {
    let server = start_with_header_read_timeout(Duration::from_millis(200)).await;
    let mut stream = TcpStream::connect(server.local_addr()).await.unwrap();
    stream
        .write_all(b"GET /overview HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    let answer = read_all(&mut stream).await;
    assert!(!answer.contains("200 OK"), "{answer}");
}

#[tokio::test]
async fn a_kept_alive_connection_that_sends_no_further_request_is_closed_after_the_header_read_timeout() {
    let server = start_with_header_read_timeout(Duration::from_millis(200)).await;
    let mut stream = TcpStream::connect(server.local_addr()).await.unwrap();
    stream
        .write_all(b"GET /overview HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    // One answer, then the idle connection is closed: a served place held by a peer
    // that stopped asking is freed, as one that never asked is.
    let answer = read_all(&mut stream).await;
    assert_eq!(answer.matches("HTTP/1.1 200 OK").count(), 1, "{answer}");
}

#[tokio::test]
async fn connections_beyond_the_limit_of_served_ones_are_closed_until_one_ends() {
    let options = RestServerOptions {
        max_connections: 1,
        ..RestServerOptions::default()
    };
    let server = RestServerHandle::start_with("127.0.0.1:0", FakeBackend::new(), options)
        .await
        .unwrap();
    let addr = server.local_addr();
    let mut held = TcpStream::connect(addr).await.unwrap();
    held.write_all(b"GET /overview HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut head = [0u8; 12];
    held.read_exact(&mut head).await.unwrap();
    assert_eq!(&head, b"HTTP/1.1 200");
    let mut refused = TcpStream::connect(addr).await.unwrap();
    refused
        .write_all(b"GET /overview HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .ok();
    assert_eq!(read_all(&mut refused).await, "");
    drop(held);
    let answer = loop {
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(b"GET /overview HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .await
            .ok();
        let answer = read_all(&mut s).await;
        if !answer.is_empty() {
            break answer;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
}

#[tokio::test]
async fn slow_connections_that_send_no_request_cannot_lock_a_user_out() {
    let options = RestServerOptions {
        max_connections: 4,
        ..RestServerOptions::default()
    };
    let server = RestServerHandle::start_with("127.0.0.1:0", FakeBackend::new(), options)
        .await
        .unwrap();
    let addr = server.local_addr();
    let mut slow = Vec::new();
    for _ in 0..20 {
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(b"GET /overview HTTP/1.1\r\n").await.unwrap();
        slow.push(s);
    }
    let mut user = TcpStream::connect(addr).await.unwrap();
    user.write_all(b"GET /overview HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let answer = read_all(&mut user).await;
    assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
    assert_eq!(
        read_all(&mut slow[0]).await,
        "",
        "the oldest slow connection was closed"
    );
}

/// An `OPTIONS` preflight from a page of `https://dashboard.example` for a JSON POST.
async fn preflight(app: &Router, uri: &str) -> axum::response::Response {
    let request = Request::builder()
        .method(Method::OPTIONS)
        .uri(uri)
        .header(header::ORIGIN, "https://dashboard.example")
        .header(header::ACCESS_CONTROL_REQUEST_METHOD, "POST")
        .header(header::ACCESS_CONTROL_REQUEST_HEADERS, "content-type")
        .body(Body::empty())
        .unwrap();
    app.clone().oneshot(request).await.unwrap()
}

#[tokio::test]
async fn with_a_configured_origin_a_preflight_gets_the_allowed_methods_and_headers() {
    let fake = FakeBackend::new();
    let origin = HeaderValue::from_static("https://dashboard.example");
    let app = router_with_origin(fake.clone(), Some(origin.clone()));
    for uri in ["/jobs", "/v1/jobs/00000000000000000000000000000000"] {
        let r = preflight(&app, uri).await;
        assert_eq!(r.status(), StatusCode::OK, "{uri}");
        let header_of = |name| r.headers().get(name).and_then(|v| v.to_str().ok());
        assert_eq!(
            header_of(header::ACCESS_CONTROL_ALLOW_ORIGIN),
            Some("https://dashboard.example")
        );
        assert_eq!(
            header_of(header::ACCESS_CONTROL_ALLOW_METHODS),
            Some("GET, POST, PATCH, OPTIONS")
        );
        assert_eq!(header_of(header::ACCESS_CONTROL_ALLOW_HEADERS), Some("Content-Type"));
    }
    assert_eq!(fake.submitted.lock().unwrap().len(), 0, "a preflight submits nothing");
}

#[tokio::test]
async fn without_a_configured_origin_a_preflight_allows_nothing() {
    let app = router(FakeBackend::new());
    let r = preflight(&app, "/jobs").await;
    assert_eq!(r.status(), StatusCode::METHOD_NOT_ALLOWED);
    let cors: Vec<_> = r
        .headers()
        .keys()
        .filter(|k| k.as_str().starts_with("access-control-"))
        .collect();
    assert!(cors.is_empty(), "{cors:?}");
}
