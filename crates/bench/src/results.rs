//! The result files every part writes, and where they live: one JSON file
//! per part in `<target dir>/bench-results/`, assembled by `report`.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::BenchError;

/// One line of a part's table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub metric: String,
    pub value: String,
    pub target: Option<String>,
    pub met: Option<bool>,
    pub notes: String,
}

impl Row {
    /// A figure without a target.
    pub fn info(
        metric: impl Into<String>,
        value: impl Into<String>,
        notes: impl Into<String>,
    ) -> Row {
        Row {
            metric: metric.into(),
            value: value.into(),
            target: None,
            met: None,
            notes: notes.into(),
        }
    }

    /// A figure judged against a target.
    pub fn judged(
        metric: impl Into<String>,
        value: impl Into<String>,
        target: impl Into<String>,
        met: bool,
        notes: impl Into<String>,
    ) -> Row {
        Row {
            metric: metric.into(),
            value: value.into(),
            target: Some(target.into()),
            met: Some(met),
            notes: notes.into(),
        }
    }
}

/// One part's results: the shape every part (also ones this binary does
/// not know, such as the app's) writes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Part {
    pub part: String,
    pub title: String,
    pub rows: Vec<Row>,
}

impl Part {
    pub fn write(&self, dir: &Path) -> Result<PathBuf, BenchError> {
        std::fs::create_dir_all(dir).map_err(|e| BenchError::io(dir, e))?;
        let path = dir.join(format!("{}.json", self.part));
        let text = serde_json::to_string_pretty(self)?;
        std::fs::write(&path, text + "\n").map_err(|e| BenchError::io(&path, e))?;
        Ok(path)
    }

    pub fn read(path: &Path) -> Result<Part, BenchError> {
        let text = std::fs::read_to_string(path).map_err(|e| BenchError::io(path, e))?;
        Ok(serde_json::from_str(&text)?)
    }
}

/// The cargo target directory: `$CARGO_TARGET_DIR`, else the one this
/// binary was built into (`<target>/<profile>/bitselect-bench`).
pub fn target_dir() -> Result<PathBuf, BenchError> {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        return Ok(PathBuf::from(dir));
    }
    let exe = std::env::current_exe().map_err(|e| BenchError::io(Path::new("current exe"), e))?;
    exe.parent()
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .ok_or_else(|| BenchError::Setup(format!("no target dir above {}", exe.display())))
}

pub fn results_dir() -> Result<PathBuf, BenchError> {
    Ok(target_dir()?.join("bench-results"))
}

/// The 1-minute load average, to show how busy the machine was.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|text| text.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "unknown".into())
}

/// A row saying how busy the machine was when a part ran.
pub fn load_row() -> Row {
    load_row_of(load_average())
}

/// [`load_row`] for a load read earlier, by the script that ran the part.
pub fn load_row_of(load: String) -> Row {
    Row::info(
        "machine load when run (1-min average)",
        load,
        "above about 0.5 on this machine, other work shared the cores",
    )
}
