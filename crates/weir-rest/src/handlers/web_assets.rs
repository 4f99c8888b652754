//! The web dashboard's files, compiled into the binary (no build step, no CDN) and
//! served by the router:
//!
//! | path | file | content type |
//! |---|---|---|
//! | `/`, `/index.html` | `web/index.html`: the page shell | `text/html` |
//! | `/web/dashboard.css` | `web/dashboard.css`: the styles | `text/css` |
//! | `/web/app.js` | `web/app.js`: fetching, hash routes, live refresh, cluster views | `text/javascript` |
//! | `/web/job.js` | `web/job.js`: a job's header, tabs and overview (graph, vertices, subtasks) | `text/javascript` |
//! | `/web/job_tabs.js` | `web/job_tabs.js`: a job's exceptions, checkpoints and configuration tabs | `text/javascript` |
//! | `/web/graph.js` | `web/graph.js`: the job graph's layout and SVG | `text/javascript` |
//!
//! The scripts read only the REST API this crate serves. Invariant: every file of
//! [`WEB_ASSETS`] has a route, with its content type.

use crate::handlers::reply::Backend;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

/// One file of the dashboard.
pub(crate) struct WebAsset {
    /// The paths it is served at.
    pub(crate) paths: &'static [&'static str],
    /// Its `Content-Type`.
    pub(crate) content_type: &'static str,
    /// Its text.
    pub(crate) body: &'static str,
}

/// A script of the dashboard (served as JavaScript).
const fn script(paths: &'static [&'static str], body: &'static str) -> WebAsset {
    WebAsset {
        paths,
        content_type: "text/javascript; charset=utf-8",
        body,
    }
}

/// Every file of the dashboard.
pub(crate) const WEB_ASSETS: &[WebAsset] = &[
    WebAsset {
        paths: &["/", "/index.html"],
        content_type: "text/html; charset=utf-8",
        body: include_str!("../web/index.html"),
    },
    WebAsset {
        paths: &["/web/dashboard.css"],
        content_type: "text/css; charset=utf-8",
        body: include_str!("../web/dashboard.css"),
    },
    script(&["/web/app.js"], include_str!("../web/app.js")),
    script(&["/web/job.js"], include_str!("../web/job.js")),
    script(&["/web/job_tabs.js"], include_str!("../web/job_tabs.js")),
    script(&["/web/graph.js"], include_str!("../web/graph.js")),
];

/// Adds a GET route for every path of every file of [`WEB_ASSETS`].
pub(crate) fn add(mut r: Router<Backend>) -> Router<Backend> {
    for asset in WEB_ASSETS {
        for path in asset.paths {
            let (content_type, body) = (asset.content_type, asset.body);
            r = r.route(path, get(move || serve(content_type, body)));
        }
    }
    r
}

async fn serve(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}
