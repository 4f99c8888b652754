//! Serving a TaskManager's log file through the JobManager's REST API: the file is
//! fetched from the TaskManager over `ReadLogFile`, one chunk per RPC.
//!
//! At most [`SERVED_BYTES_LIMIT`] bytes are served: of a longer file, its end (the newest
//! lines), after a line saying how much was left out.

use tonic::transport::Channel;
use weir_rest::RestError;
use weir_rpc::task_executor_gateway_client::TaskExecutorGatewayClient;
use weir_rpc::ReadLogFileRequest;

/// The most bytes of one log file served.
pub const SERVED_BYTES_LIMIT: u64 = 64 << 20;

/// Bytes asked for per RPC (the TaskManager caps it at 1 MiB too).
const CHUNK_BYTES: u32 = 1 << 20;

/// Fetches the log file `name` (the main log for `None`) from the TaskManager behind
/// `client`.
pub async fn fetch(mut client: TaskExecutorGatewayClient<Channel>, name: Option<String>) -> Result<Vec<u8>, RestError> {
    let unreachable =
        |e: tonic::Status| RestError::Internal(format!("cannot read the TaskManager's log: {}", e.message()));
    let file_name = name.clone().unwrap_or_default();
    let read = |offset: u64| ReadLogFileRequest {
        name: file_name.clone(),
        offset,
        max_bytes: CHUNK_BYTES,
    };
    let first = client.read_log_file(read(0)).await.map_err(unreachable)?.into_inner();
    if !first.found {
        return Err(RestError::no_such_taskmanager_file(name.as_deref()));
    }
    let size = first.file_size;
    let (mut out, mut offset) = if size > SERVED_BYTES_LIMIT {
        let skipped = size - SERVED_BYTES_LIMIT;
        (
            format!("[the first {skipped} bytes of this {size}-byte log are not shown]\n").into_bytes(),
            skipped,
        )
    } else {
        let offset = first.data.len() as u64;
        (first.data, offset)
    };
    // The file may grow while it is read; it is served up to the size first seen.
    while offset < size {
        let chunk = client
            .read_log_file(read(offset))
            .await
            .map_err(unreachable)?
            .into_inner();
        if !chunk.found || chunk.data.is_empty() {
            break;
        }
        let take = chunk.data.len().min((size - offset) as usize);
        out.extend_from_slice(&chunk.data[..take]);
        offset += take as u64;
    }
    Ok(out)
}
