//! What machine the figures came from: CPU, cores, memory, kernel, Rust.

use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

pub struct Machine {
    pub cpu: String,
    pub cores: usize,
    pub memory: String,
    pub kernel: String,
    pub rustc: String,
    pub date: String,
}

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

fn field<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    text.lines()
        .filter_map(|line| line.split_once(':'))
        .find(|(key, _)| key.trim() == name)
        .map(|(_, value)| value.trim())
}

fn memory() -> String {
    let meminfo = read("/proc/meminfo");
    field(&meminfo, "MemTotal")
        .and_then(|v| v.trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kib| format!("{:.1} GiB", kib as f64 / 1024.0 / 1024.0))
        .unwrap_or_else(|| "unknown".into())
}

fn rustc() -> String {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    Command::new(rustc)
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into())
}

/// Now, in the shop's RFC 3339 form (China Standard Time).
fn now_text() -> String {
    let ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0);
    bitselect::clock::format_rfc3339(ms)
}

pub fn describe() -> Machine {
    let cpuinfo = read("/proc/cpuinfo");
    Machine {
        cpu: field(&cpuinfo, "model name")
            .unwrap_or("unknown")
            .to_string(),
        cores: std::thread::available_parallelism()
            .map(usize::from)
            .unwrap_or(1),
        memory: memory(),
        kernel: read("/proc/sys/kernel/osrelease").trim().to_string(),
        rustc: rustc(),
        date: now_text(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_field_of_proc_text_is_found_by_name() {
        let text = "processor\t: 0\nmodel name\t: Some CPU @ 2.0GHz\n";
        assert_eq!(field(text, "model name"), Some("Some CPU @ 2.0GHz"));
        assert_eq!(field(text, "flags"), None);
    }
}
