//! What processes cost the machine, read from /proc: CPU time (user +
//! system) and resident memory of a process, of a PostgreSQL server with
//! its sessions, and the whole machine's busy time.

use std::time::Duration;

/// Clock ticks per second, the unit of /proc's CPU times.
fn ticks_per_second() -> f64 {
    // SAFETY: sysconf reads a constant of the system and has no side effect.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if ticks > 0 { ticks as f64 } else { 100.0 }
}

fn ticks(count: u64) -> Duration {
    Duration::from_secs_f64(count as f64 / ticks_per_second())
}

/// The fields of /proc/PID/stat after the command name (from `state`).
fn stat_fields(pid: u32) -> Option<Vec<u64>> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold spaces.
    let after = text.rsplit_once(')')?.1;
    Some(
        after
            .split_whitespace()
            .skip(1)
            .map(|field| field.parse().unwrap_or(0))
            .collect(),
    )
}

/// Field `n` of stat(5) (counting from 1, `pid`), given the fields from
/// field 4 (`ppid`) on.
fn field(fields: &[u64], n: usize) -> u64 {
    fields.get(n - 4).copied().unwrap_or(0)
}

/// CPU time a process has used, its own threads (utime + stime).
pub fn cpu_time(pid: u32) -> Duration {
    stat_fields(pid)
        .map(|f| ticks(field(&f, 14) + field(&f, 15)))
        .unwrap_or_default()
}

/// CPU time a process and all its children have used: its own, that of
/// children it has waited for (cutime + cstime), and that of children
/// still running. PostgreSQL's sessions are children of the postmaster.
pub fn cpu_time_with_children(pid: u32) -> Duration {
    let own = stat_fields(pid)
        .map(|f| ticks(field(&f, 14) + field(&f, 15) + field(&f, 16) + field(&f, 17)))
        .unwrap_or_default();
    let running: Duration = children(pid).into_iter().map(cpu_time).sum();
    own + running
}

fn children(parent: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| stat_fields(pid).is_some_and(|f| field(&f, 4) == u64::from(parent)))
        .collect()
}

/// Resident memory now and at its peak, in bytes (VmRSS, VmHWM).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Memory {
    pub resident: u64,
    pub peak: u64,
}

pub fn memory(pid: u32) -> Memory {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let kib = |name: &str| {
        text.lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| {
                rest.trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse::<u64>()
                    .ok()
            })
            .unwrap_or(0)
            * 1024
    };
    Memory {
        resident: kib("VmRSS:"),
        peak: kib("VmHWM:"),
    }
}

/// Busy CPU time of the whole machine, all cores: everything but idle
/// and I/O wait in /proc/stat.
pub fn machine_busy() -> Duration {
    let text = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let Some(line) = text.lines().find(|l| l.starts_with("cpu ")) else {
        return Duration::ZERO;
    };
    let values: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|v| v.parse().unwrap_or(0))
        .collect();
    // user nice system idle iowait irq softirq steal (guest is in user).
    let busy: u64 = values
        .iter()
        .take(8)
        .enumerate()
        .filter(|(i, _)| *i != 3 && *i != 4)
        .map(|(_, v)| v)
        .sum();
    ticks(busy)
}

/// Mebibytes with one decimal.
pub fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / 1024.0 / 1024.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_has_memory_and_has_used_cpu() {
        let me = std::process::id();
        let spin = std::time::Instant::now();
        while spin.elapsed() < Duration::from_millis(30) {
            std::hint::black_box(0u64);
        }
        assert!(cpu_time(me) > Duration::ZERO);
        let memory = memory(me);
        assert!(
            memory.resident > 0 && memory.peak >= memory.resident,
            "{memory:?}"
        );
        assert!(machine_busy() > Duration::ZERO);
    }
}
