//! Test support: requests through a router without a socket
//! (`tower::ServiceExt::oneshot`), and their answers as the tests look at them.

use axum::body::{Body, Bytes};
use axum::http::{header, HeaderMap, Method, Request, StatusCode};
use axum::Router;
use serde_json::Value;
use tower::ServiceExt;

/// A response as the tests look at it.
pub(crate) struct Answer {
    pub(crate) status: StatusCode,
    pub(crate) headers: HeaderMap,
    pub(crate) json: Value,
}

impl Answer {
    /// The error messages of an error body.
    pub(crate) fn errors(&self) -> Vec<String> {
        self.json["errors"]
            .as_array()
            .map(|a| a.iter().map(|e| e.as_str().unwrap_or_default().to_string()).collect())
            .unwrap_or_default()
    }
}

/// Sends a request through `app`: status, headers and body.
async fn exchange(app: &Router, method: Method, uri: &str, body: &str) -> (StatusCode, HeaderMap, Bytes) {
    let mut request = Request::builder().method(method.clone()).uri(uri);
    if method != Method::GET && method != Method::HEAD {
        request = request.header(header::CONTENT_TYPE, "application/json");
    }
    let request = request.body(Body::from(body.to_string())).expect("valid request");
    let response = app.clone().oneshot(request).await.expect("infallible");
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 20).await.expect("body");
    (status, headers, bytes)
}

/// A request whose answer is JSON (or empty).
pub(crate) async fn send(app: &Router, method: Method, uri: &str, body: &str) -> Answer {
    let (status, headers, bytes) = exchange(app, method, uri, body).await;
    let json = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes)
            .unwrap_or_else(|e| panic!("{uri}: body is not JSON ({e}): {}", String::from_utf8_lossy(&bytes)))
    };
    Answer { status, headers, json }
}

/// A GET whose answer is JSON.
pub(crate) async fn get(app: &Router, uri: &str) -> Answer {
    send(app, Method::GET, uri, "").await
}

/// A GET whose body is not JSON: (status, content type, body text).
pub(crate) async fn raw_get(app: &Router, uri: &str) -> (StatusCode, Option<String>, String) {
    let (status, headers, bytes) = exchange(app, Method::GET, uri, "").await;
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    (status, content_type, String::from_utf8_lossy(&bytes).into_owned())
}
