//! What the REST endpoint demands of a request and adds to every response, beyond the
//! routes: writes must be JSON, and the CORS header follows
//! `web.access-control-allow-origin`.
//!
//! - Every `POST`, and every `PATCH`, `PUT` or `DELETE` that carries a body, must have
//!   `Content-Type: application/json` (parameters such as `charset` allowed); anything
//!   else is 415 with a `{"errors": [...]}` body. A web page can send a cross-origin
//!   request without a CORS preflight only with a form or `text/plain` content type,
//!   so no page can submit or change anything.
//! - `Access-Control-Allow-Origin` is the configured value, or absent when none is
//!   configured (Weir's default; Flink's is `*`).
//! - A CORS preflight (`OPTIONS`) is answered 200 with the methods and request headers
//!   the API uses ([`PREFLIGHT_ALLOW_METHODS`], [`PREFLIGHT_ALLOW_HEADERS`]) only when an
//!   origin is configured; otherwise `OPTIONS` is an unsupported method (405) without
//!   any `Access-Control-*` header, so a browser lets no other origin send a JSON write.

use crate::error::{json_response, ErrorResponse};
use axum::extract::Request;
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::Response;

/// True when a request of `method` with `headers` must be JSON but is not; the
/// request's content type (or `None`) is returned for the error message.
pub fn refused_content_type(method: &Method, headers: &HeaderMap) -> Option<String> {
    let has_body = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .is_some_and(|n| n > 0)
        || headers.contains_key(header::TRANSFER_ENCODING);
    let is_write =
        *method == Method::POST || ([Method::PATCH, Method::PUT, Method::DELETE].contains(method) && has_body);
    if !is_write {
        return None;
    }
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    let is_json = content_type.as_deref().is_some_and(|ct| {
        ct.split(';')
            .next()
            .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
    });
    if is_json {
        None
    } else {
        Some(content_type.unwrap_or_else(|| "none".to_owned()))
    }
}

/// The `Access-Control-Allow-Origin` value `web.access-control-allow-origin: value`
/// gives; an error when it cannot be a header value.
pub fn parse_allow_origin(value: &str) -> Result<HeaderValue, String> {
    HeaderValue::from_str(value.trim()).map_err(|_| {
        format!("web.access-control-allow-origin: '{value}' is not a valid Access-Control-Allow-Origin value")
    })
}

/// The middleware refusing writes that are not JSON (415).
pub(crate) async fn require_json(request: Request, next: Next) -> Response {
    match refused_content_type(request.method(), request.headers()) {
        Some(content_type) => json_response(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            &ErrorResponse::single(format!(
                "Unsupported Content-Type '{content_type}' for {} {}: requests that change something must be sent as application/json.",
                request.method(),
                request.uri().path()
            )),
        ),
        None => next.run(request).await,
    }
}

/// The methods a preflight allows: those the API serves.
pub const PREFLIGHT_ALLOW_METHODS: &str = "GET, POST, PATCH, OPTIONS";
/// The request headers a preflight allows: `Content-Type`, which every write sets.
pub const PREFLIGHT_ALLOW_HEADERS: &str = "Content-Type";

/// Answers an `OPTIONS` request with the allowed methods and headers when `origin` is
/// configured (the `Access-Control-Allow-Origin` header is added by [`allow_origin`]);
/// passes every other request, and every request when no origin is configured, on.
pub(crate) async fn answer_preflight(origin: Option<HeaderValue>, request: Request, next: Next) -> Response {
    if request.method() != Method::OPTIONS || origin.is_none() {
        return next.run(request).await;
    }
    let mut response = Response::new(axum::body::Body::empty());
    let headers = response.headers_mut();
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static(PREFLIGHT_ALLOW_METHODS),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static(PREFLIGHT_ALLOW_HEADERS),
    );
    response
}

/// Sets `Access-Control-Allow-Origin: origin` on `response` when an origin is given.
pub(crate) fn allow_origin(origin: Option<&HeaderValue>, mut response: Response) -> Response {
    if let Some(origin) = origin {
        response
            .headers_mut()
            .insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin.clone());
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(entries: &[(header::HeaderName, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in entries {
            h.insert(k.clone(), HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn a_post_must_be_json_even_without_a_body() {
        let plain = headers(&[(header::CONTENT_TYPE, "text/plain"), (header::CONTENT_LENGTH, "2")]);
        assert_eq!(
            refused_content_type(&Method::POST, &plain).as_deref(),
            Some("text/plain")
        );
        assert_eq!(
            refused_content_type(&Method::POST, &HeaderMap::new()).as_deref(),
            Some("none")
        );
        let json = headers(&[(header::CONTENT_TYPE, "Application/JSON; charset=utf-8")]);
        assert_eq!(refused_content_type(&Method::POST, &json), None);
    }

    #[test]
    fn a_patch_without_a_body_and_every_get_pass() {
        assert_eq!(refused_content_type(&Method::PATCH, &HeaderMap::new()), None);
        let form = headers(&[(header::CONTENT_TYPE, "application/x-www-form-urlencoded")]);
        assert_eq!(refused_content_type(&Method::GET, &form), None);
        let with_body = headers(&[(header::CONTENT_TYPE, "text/plain"), (header::CONTENT_LENGTH, "5")]);
        assert_eq!(
            refused_content_type(&Method::PATCH, &with_body).as_deref(),
            Some("text/plain")
        );
        let chunked = headers(&[(header::TRANSFER_ENCODING, "chunked")]);
        assert_eq!(refused_content_type(&Method::DELETE, &chunked).as_deref(), Some("none"));
    }
}
