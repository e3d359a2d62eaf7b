//! Criterion's own results, read back into a part: for each benchmark, the
//! median time per iteration from `<target>/criterion/<id>/new/estimates.json`
//! and, when the benchmark declared a throughput, the rate it gives.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use crate::BenchError;
use crate::results::{Part, Row, load_row_of};

#[derive(Deserialize)]
struct Estimate {
    point_estimate: f64,
}

#[derive(Deserialize)]
struct Estimates {
    median: Estimate,
}

#[derive(Deserialize)]
struct Benchmark {
    full_id: String,
    #[serde(default)]
    throughput: Value,
}

/// Elements per iteration, when the benchmark declared them
/// (`{"Elements": n}` or `{"ElementsAndBytes": {"elements": n, ...}}`).
fn elements(throughput: &Value) -> Option<u64> {
    throughput["Elements"]
        .as_u64()
        .or_else(|| throughput["ElementsAndBytes"]["elements"].as_u64())
}

/// Every `new/` directory under `root` (one per benchmark).
fn result_dirs(root: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if !path.is_dir() || path.file_name().is_some_and(|n| n == "report") {
            continue;
        }
        if path.file_name().is_some_and(|n| n == "new") {
            out.push(path);
        } else {
            result_dirs(&path, out);
        }
    }
}

fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<T, BenchError> {
    let text = std::fs::read_to_string(path).map_err(|e| BenchError::io(path, e))?;
    Ok(serde_json::from_str(&text)?)
}

fn pretty_time(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.3} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.2} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

/// Where scripts/bench leaves the 1-minute load as the criterion benches
/// end: they run under cargo, not this binary.
pub const LOAD_FILE: &str = "load-when-run";

/// The criterion results under `criterion_dir` as the store part.
pub fn part(criterion_dir: &Path) -> Result<Option<Part>, BenchError> {
    let mut dirs = Vec::new();
    result_dirs(criterion_dir, &mut dirs);
    let mut rows = Vec::new();
    for dir in dirs {
        let (Ok(benchmark), Ok(estimates)) = (
            read_json::<Benchmark>(&dir.join("benchmark.json")),
            read_json::<Estimates>(&dir.join("estimates.json")),
        ) else {
            continue;
        };
        let ns = estimates.median.point_estimate;
        let rate = elements(&benchmark.throughput).map(|n| n as f64 * 1e9 / ns.max(1e-9));
        let (value, notes) = match rate {
            Some(rate) => (
                format!("{rate:.0} /s"),
                format!("median {} per iteration (criterion)", pretty_time(ns)),
            ),
            None => (
                pretty_time(ns),
                "median per iteration (criterion)".to_string(),
            ),
        };
        rows.push(Row::info(benchmark.full_id, value, notes));
    }
    if rows.is_empty() {
        return Ok(None);
    }
    rows.sort_by(|a, b| a.metric.cmp(&b.metric));
    if let Ok(load) = std::fs::read_to_string(criterion_dir.join(LOAD_FILE)) {
        rows.push(load_row_of(load.trim().to_string()));
    }
    Ok(Some(Part {
        part: "store".into(),
        title: "4. Store and shop domain (criterion)".into(),
        rows,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("dir");
        std::fs::write(path, text).expect("write");
    }

    #[test]
    fn a_benchmark_reads_as_its_rate_and_the_load_the_script_left_closes_the_part() {
        let root = tempfile::tempdir().expect("temp dir");
        let new = root.path().join("store").join("append_message").join("new");
        write(
            &new.join("benchmark.json"),
            r#"{"full_id": "store/append_message", "throughput": {"Elements": 1}}"#,
        );
        write(
            &new.join("estimates.json"),
            r#"{"median": {"point_estimate": 2000.0}}"#,
        );
        write(&root.path().join(LOAD_FILE), "0.42\n");

        let part = part(root.path()).expect("read").expect("a part");

        let rows: Vec<(&str, &str)> = part
            .rows
            .iter()
            .map(|row| (row.metric.as_str(), row.value.as_str()))
            .collect();
        assert_eq!(
            rows,
            [
                ("store/append_message", "500000 /s"),
                ("machine load when run (1-min average)", "0.42"),
            ]
        );
    }
}
