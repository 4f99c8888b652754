//! The receiving end of a SELECT's collect sink: a loopback socket the sink subtasks
//! connect to, one reader thread per connection; rows can be taken as they arrive and
//! the rest once every connection is closed after the job ended.

use anyhow::{anyhow, Result};
use std::io::BufRead;
use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::Duration;

/// A decoded row: the changelog kind and the fields (`None` for NULL).
pub type CollectedRow = (String, Vec<Option<String>>);

/// A socket collecting rows.
pub struct RowCollector {
    address: String,
    stop: Arc<AtomicBool>,
    acceptor: JoinHandle<Vec<JoinHandle<()>>>,
    rows: mpsc::Receiver<CollectedRow>,
}

impl RowCollector {
    /// Listens on an ephemeral loopback port.
    pub fn start() -> Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        listener.set_nonblocking(true)?;
        let address = listener.local_addr()?.to_string();
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rows) = mpsc::channel();
        let flag = stop.clone();
        let acceptor = std::thread::spawn(move || {
            let mut readers = Vec::new();
            loop {
                // Connections already made are accepted before a stop is honoured.
                match listener.accept() {
                    Ok((stream, _)) => {
                        if stream.set_nonblocking(false).is_err() {
                            continue;
                        }
                        let tx = tx.clone();
                        readers.push(std::thread::spawn(move || {
                            for line in std::io::BufReader::new(stream).lines().map_while(Result::ok) {
                                if let Some(row) = weir_sql::exec::collect::decode(&line) {
                                    if tx.send(row).is_err() {
                                        return;
                                    }
                                }
                            }
                        }));
                    }
                    Err(_) if flag.load(Ordering::Acquire) => break,
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
            readers
        });
        Ok(Self {
            address,
            stop,
            acceptor,
            rows,
        })
    }

    /// The `host:port` the sink connects to.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// The next row, if one arrives within `timeout`.
    pub fn next_row(&self, timeout: Duration) -> Option<CollectedRow> {
        self.rows.recv_timeout(timeout).ok()
    }

    /// Stops accepting, waits for the open connections to close, returns the rows
    /// not yet taken with [`RowCollector::next_row`].
    pub fn finish(self) -> Result<Vec<CollectedRow>> {
        self.stop.store(true, Ordering::Release);
        let readers = self
            .acceptor
            .join()
            .map_err(|_| anyhow!("the collect socket's thread panicked"))?;
        for r in readers {
            r.join().map_err(|_| anyhow!("a collect reader thread panicked"))?;
        }
        Ok(self.rows.try_iter().collect())
    }
}
