//! End-to-end benchmarks of the agent core and the shop, with a fake model
//! and the real shop over stdio, and of the shop as a service over HTTP. The `bitselect-bench` binary runs them;
//! the criterion benches share the history builder.

pub mod agent_rounds;
pub mod app_data_dir;
pub mod app_start;
pub mod criterion_results;
pub mod earlier_report;
pub mod harness;
pub mod history_fill;
pub mod keyword_search;
pub mod machine;
pub mod process_cost;
pub mod proxy;
pub mod report;
pub mod respond_latency;
pub mod results;
pub mod shop;
pub mod shop_service;
pub mod shop_throughput;
pub mod soak;
pub mod stats;
pub mod timed_tools;
pub mod turns;

use std::path::{Path, PathBuf};

/// Why a benchmark could not run.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error("{0}")]
    Usage(String),
    #[error("setup: {0}")]
    Setup(String),
    #[error("run: {0}")]
    Run(String),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    #[error(transparent)]
    Agent(#[from] ragent::AgentError),
    #[error(transparent)]
    Store(#[from] ragent::store::StoreError),
    #[error(transparent)]
    Sqlite(#[from] rusqlite::Error),
}

impl BenchError {
    pub fn io(path: &Path, source: std::io::Error) -> BenchError {
        BenchError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}
