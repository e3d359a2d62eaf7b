//! `report --out FILE`: every part's JSON in the results directory (also
//! parts written by other tools, such as the app's) as one Markdown
//! document, with the machine described and each target's verdict.

use std::fmt::Write as _;
use std::path::Path;

use crate::BenchError;
use crate::criterion_results;
use crate::machine::{Machine, describe};
use crate::results::{Part, Row};

const INTRO: &str = "\
Figures of the agent core and the shop, written by `scripts/bench`. The model
is faked by a local HTTP server that answers at once; the shop is the real
`bitselect-mcp` over stdio. How each figure is measured is in
docs/architecture.md (Benchmarks). Times are medians and 95th percentiles
unless a row says otherwise; each rate's notes say what time it counts.
Each part notes the machine's load while it ran: figures taken while other
work shared the two cores are noisy.
";

fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

fn verdict(row: &Row) -> &'static str {
    match row.met {
        Some(true) => "met",
        Some(false) => "**not met**",
        None => "",
    }
}

fn machine_section(out: &mut String, machine: &Machine) {
    let _ = writeln!(out, "## Machine\n");
    let _ = writeln!(out, "| | |\n| --- | --- |");
    let _ = writeln!(out, "| CPU | {} |", cell(&machine.cpu));
    let _ = writeln!(out, "| cores | {} |", machine.cores);
    let _ = writeln!(out, "| memory | {} |", machine.memory);
    let _ = writeln!(out, "| kernel | {} |", cell(&machine.kernel));
    let _ = writeln!(out, "| rustc | {} |", cell(&machine.rustc));
    let _ = writeln!(out, "| report written | {} |\n", machine.date);
}

fn targets_section(out: &mut String, parts: &[Part]) {
    let judged: Vec<(&Part, &Row)> = parts
        .iter()
        .flat_map(|p| {
            p.rows
                .iter()
                .filter(|r| r.met.is_some())
                .map(move |r| (p, r))
        })
        .collect();
    if judged.is_empty() {
        return;
    }
    let _ = writeln!(out, "## Targets\n");
    let _ = writeln!(out, "| part | metric | value | target | verdict |");
    let _ = writeln!(out, "| --- | --- | --- | --- | --- |");
    for (part, row) in judged {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            cell(&part.title),
            cell(&row.metric),
            cell(&row.value),
            cell(row.target.as_deref().unwrap_or("")),
            verdict(row)
        );
    }
    out.push('\n');
}

fn part_section(out: &mut String, part: &Part) {
    let _ = writeln!(out, "## {}\n", part.title);
    let _ = writeln!(out, "| metric | value | target | verdict | notes |");
    let _ = writeln!(out, "| --- | --- | --- | --- | --- |");
    for row in &part.rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            cell(&row.metric),
            cell(&row.value),
            cell(row.target.as_deref().unwrap_or("")),
            verdict(row),
            cell(&row.notes)
        );
    }
    out.push('\n');
}

/// The document for these parts on this machine.
pub fn render(parts: &[Part], machine: &Machine) -> String {
    let mut out = String::from("# Benchmarks\n\n");
    out.push_str(INTRO);
    out.push('\n');
    machine_section(&mut out, machine);
    targets_section(&mut out, parts);
    for part in parts {
        part_section(&mut out, part);
    }
    out
}

/// Every `*.json` part in `results_dir`, ordered by title ("1. …", "2. …").
fn read_parts(results_dir: &Path) -> Result<Vec<Part>, BenchError> {
    let mut parts = Vec::new();
    let entries = std::fs::read_dir(results_dir).map_err(|e| BenchError::io(results_dir, e))?;
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "json") {
            match Part::read(&path) {
                Ok(part) => parts.push(part),
                Err(error) => tracing::warn!(path = %path.display(), %error, "not a result file"),
            }
        }
    }
    parts.sort_by(|a, b| a.title.cmp(&b.title).then(a.part.cmp(&b.part)));
    Ok(parts)
}

pub fn run(results_dir: &Path, criterion_dir: &Path, out: &Path) -> Result<(), BenchError> {
    if let Some(store) = criterion_results::part(criterion_dir)? {
        store.write(results_dir)?;
    }
    let parts = read_parts(results_dir)?;
    let text = render(&parts, &describe());
    std::fs::write(out, text).map_err(|e| BenchError::io(out, e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_part_of_unknown_origin_gets_its_table_and_its_target_a_verdict() {
        let app = Part {
            part: "app".into(),
            title: "5. App start and memory".into(),
            rows: vec![Row::judged("start", "1.2 s", "<= 1.5 s", true, "a | b")],
        };
        let machine = Machine {
            cpu: "cpu".into(),
            cores: 2,
            memory: "1 GiB".into(),
            kernel: "k".into(),
            rustc: "rustc".into(),
            date: "d".into(),
        };
        let text = render(&[app], &machine);
        assert!(text.contains("## 5. App start and memory"), "{text}");
        assert!(
            text.contains("| start | 1.2 s | <= 1.5 s | met | a \\| b |"),
            "{text}"
        );
        assert!(
            text.contains("| 5. App start and memory | start | 1.2 s | <= 1.5 s | met |"),
            "{text}"
        );
    }
}
