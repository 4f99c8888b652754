//! Finding 4: connection floods. An attacker at 127.0.0.2 (all of 127/8 is loopback on
//! Linux) holds idle connections to a port — beyond its connection limit — while a user
//! at 127.0.0.1 needs the same port to be served.

use crate::cluster::{open_descriptors, send, Throwaway};
use crate::probes_rpc::first_line;
use anyhow::{anyhow, bail, Context, Result};
use serde_json::json;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

/// How many idle connections an attacker holds, per port.
pub struct FloodSizes {
    /// Against the REST endpoint.
    pub rest: usize,
    /// Against each TaskManager's data port.
    pub data: usize,
    /// Against a TaskManager's Prometheus port.
    pub prometheus: usize,
}

/// Idle connections from 127.0.0.2, kept open while the value lives.
struct Flood {
    _runtime: tokio::runtime::Runtime,
    streams: Vec<tokio::net::TcpStream>,
}

/// Opens up to `n` idle connections from 127.0.0.2 to `target`; a refusal by the
/// server (reset or closed) only ends the flood early.
fn flood(target: SocketAddr, n: usize) -> Result<Flood> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("a runtime")?;
    let streams = runtime.block_on(async {
        let mut streams = Vec::with_capacity(n);
        for _ in 0..n {
            let socket = tokio::net::TcpSocket::new_v4()?;
            socket.bind("127.0.0.2:0".parse().expect("an address"))?;
            match tokio::time::timeout(Duration::from_secs(2), socket.connect(target)).await {
                Ok(Ok(stream)) => streams.push(stream),
                Ok(Err(_)) | Err(_) => break,
            }
        }
        Ok::<_, std::io::Error>(streams)
    })?;
    Ok(Flood {
        _runtime: runtime,
        streams,
    })
}

fn address(host_port: &str) -> Result<SocketAddr> {
    host_port
        .parse()
        .with_context(|| format!("not an address: {host_port}"))
}

/// Idle connections beyond the REST limit, then `GET /overview` from 127.0.0.1.
pub fn rest_flood(c: &Throwaway, sizes: &FloodSizes) -> Result<String> {
    let f = flood(address(&c.rest)?, sizes.rest)?;
    let (code, _) = send(&c.rest, "GET", "/overview", None).context("a user's request was not served")?;
    if code != 200 {
        bail!("/overview answered {code} under {} idle connections", f.streams.len());
    }
    Ok(format!("{} idle connections held; /overview served", f.streams.len()))
}

/// Idle connections beyond the data-port limit on every TaskManager, then a job that
/// exchanges records between them.
pub fn data_flood(c: &Throwaway, sizes: &FloodSizes, work: &Path) -> Result<String> {
    let mut floods = Vec::new();
    for tm in c.taskmanagers()? {
        let host = tm["path"]
            .as_str()
            .and_then(|p| p.rsplit_once(':'))
            .map(|(h, _)| h.to_string())
            .ok_or_else(|| anyhow!("no TaskManager address: {tm}"))?;
        let port = tm["dataPort"].as_u64().ok_or_else(|| anyhow!("no dataPort: {tm}"))?;
        floods.push(flood(address(&format!("{host}:{port}"))?, sizes.data)?);
    }
    let held: usize = floods.iter().map(|f| f.streams.len()).sum();
    let jid = c.submit(&json!({
        "program": "keyed-sum",
        "parallelism": 4,
        "args": { "keys": "20", "records": "20000", "output": work.join("flood-out").display().to_string() },
    }))?;
    let state = c.wait_terminal(&jid)?;
    if state != "FINISHED" {
        let (_, exceptions) = c.get(&format!("/jobs/{jid}/exceptions"))?;
        bail!("the job ended {state}: {}", first_line(&exceptions.to_string()));
    }
    Ok(format!(
        "{held} idle connections held; a job across the TaskManagers FINISHED"
    ))
}

/// Idle connections beyond the Prometheus limit on a TaskManager, then a scrape; the
/// TaskManager's open descriptors stay bounded.
pub fn prometheus_flood(c: &Throwaway, sizes: &FloodSizes) -> Result<String> {
    let url = c.startup_field("taskmanager-0", "metrics.prom")?;
    let host_port = url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .ok_or_else(|| anyhow!("no address in {url}"))?
        .to_string();
    let pid = c.pid("taskmanager-0")?;
    let before = open_descriptors(pid)?;
    let f = flood(address(&host_port)?, sizes.prometheus)?;
    let scraped = ureq::get(&format!("http://{host_port}/metrics"))
        .timeout(Duration::from_secs(10))
        .call()
        .map_err(|e| {
            anyhow!(
                "a scrape was not served under {} idle connections: {e}",
                f.streams.len()
            )
        })?
        .into_string()?;
    if !scraped.contains("flink_taskmanager") {
        bail!("the scrape holds no TaskManager metrics");
    }
    let during = open_descriptors(pid)?;
    if during > before + sizes.prometheus / 2 {
        bail!("the TaskManager's descriptors grew from {before} to {during}");
    }
    Ok(format!(
        "{} idle connections attempted; scrape served; TaskManager descriptors {before} -> {during}",
        f.streams.len()
    ))
}
