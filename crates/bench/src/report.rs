//! `report --out FILE`: every part's JSON in the results directory (also
//! parts written by other tools, such as the app's) as one Markdown
//! document, with the machine described and each target's verdict. What
//! FILE held before is kept where this run made nothing new: the other
//! parts (marked with the date of their figures), the notes under each
//! part's table, and sections that are no part.

use std::fmt::Write as _;
use std::path::Path;

use crate::BenchError;
use crate::criterion_results;
use crate::earlier_report::{self, EarlierReport, TABLE_HEADER};
use crate::machine::{Machine, describe};
use crate::results::{Part, Row};

const INTRO: &str = "\
Figures of the agent core and the shop, written by `scripts/bench`. The model
is faked by a local HTTP server that answers at once; the shop is the real
`bitselect-mcp` over stdio, and in part 6 over HTTP as a service (PostgreSQL,
instances behind HAProxy, signed-in shoppers). How each figure is measured is
in docs/architecture.md (Benchmarks). Times are medians and 95th
percentiles unless a row says otherwise; each rate's notes say what time it
counts. Each part notes the machine's load while it ran: figures taken while
other work shared the two cores are noisy. A part not run for this report
keeps the figures of the report it was last run for, and says so.
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

/// A part as the document shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    pub part: Part,
    /// `Some(date)`: not run for this report; its figures are from `date`.
    pub carried_from: Option<String>,
    /// Written under its table, kept from report to report.
    pub notes: String,
}

fn targets_section(out: &mut String, sections: &[Section]) {
    let judged: Vec<(&Part, &Row)> = sections
        .iter()
        .flat_map(|s| {
            s.part
                .rows
                .iter()
                .filter(|r| r.met.is_some())
                .map(move |r| (&s.part, r))
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

fn part_section(out: &mut String, section: &Section) {
    let part = &section.part;
    let _ = writeln!(out, "## {}\n", part.title);
    if let Some(taken) = &section.carried_from {
        let _ = writeln!(out, "{}\n", earlier_report::carried_line(taken));
    }
    let _ = writeln!(out, "{TABLE_HEADER}");
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
    if !section.notes.is_empty() {
        let _ = writeln!(out, "{}\n", section.notes);
    }
}

/// The document for these parts on this machine, then the sections that
/// are no part.
pub fn render(sections: &[Section], other_sections: &[String], machine: &Machine) -> String {
    let mut out = String::from("# Benchmarks\n\n");
    out.push_str(INTRO);
    out.push('\n');
    machine_section(&mut out, machine);
    targets_section(&mut out, sections);
    for section in sections {
        part_section(&mut out, section);
    }
    for other in other_sections {
        let _ = writeln!(out, "{other}\n");
    }
    out.truncate(out.trim_end().len());
    out.push('\n');
    out
}

/// This run's parts with the earlier report's: a part run now replaces
/// the earlier one of its title but keeps its notes; an earlier part not
/// run now is kept as it was. Ordered by title ("1. …", "2. …").
pub fn merge(fresh: Vec<Part>, earlier: EarlierReport) -> (Vec<Section>, Vec<String>) {
    let mut earlier_parts = earlier.parts;
    let mut sections: Vec<Section> = fresh
        .into_iter()
        .map(|part| {
            let notes = earlier_parts
                .iter()
                .position(|e| e.part.title == part.title)
                .map(|i| earlier_parts.remove(i).notes)
                .unwrap_or_default();
            Section {
                part,
                carried_from: None,
                notes,
            }
        })
        .collect();
    sections.extend(earlier_parts.into_iter().map(|e| Section {
        carried_from: Some(e.taken.unwrap_or_else(|| "an earlier run".into())),
        part: e.part,
        notes: e.notes,
    }));
    sections.sort_by(|a, b| {
        a.part
            .title
            .cmp(&b.part.title)
            .then(a.part.part.cmp(&b.part.part))
    });
    (sections, earlier.other_sections)
}

/// Every `*.json` part in `results_dir`.
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
    Ok(parts)
}

pub fn run(results_dir: &Path, criterion_dir: &Path, out: &Path) -> Result<(), BenchError> {
    if let Some(store) = criterion_results::part(criterion_dir)? {
        store.write(results_dir)?;
    }
    let fresh = read_parts(results_dir)?;
    let earlier = match std::fs::read_to_string(out) {
        Ok(text) => earlier_report::parse(&text),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => EarlierReport::default(),
        Err(error) => return Err(BenchError::io(out, error)),
    };
    let (sections, other_sections) = merge(fresh, earlier);
    let text = render(&sections, &other_sections, &describe());
    std::fs::write(out, text).map_err(|e| BenchError::io(out, e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn machine(date: &str) -> Machine {
        Machine {
            cpu: "cpu".into(),
            cores: 2,
            memory: "1 GiB".into(),
            kernel: "k".into(),
            rustc: "rustc".into(),
            date: date.into(),
        }
    }

    fn app_part() -> Part {
        Part {
            part: "app".into(),
            title: "5. App start and memory".into(),
            rows: vec![
                Row::judged("start", "1.2 s", "<= 1.5 s", true, "a | b"),
                Row::judged("rss", "2x", "<= 1.3x", false, ""),
                Row::info("windows", "1", "plain"),
            ],
        }
    }

    fn fresh(part: Part) -> Section {
        Section {
            part,
            carried_from: None,
            notes: String::new(),
        }
    }

    #[test]
    fn a_part_of_unknown_origin_gets_its_table_and_its_target_a_verdict() {
        let text = render(&[fresh(app_part())], &[], &machine("d"));
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

    #[test]
    fn a_part_not_run_again_keeps_its_rows_notes_and_verdicts_and_says_from_when() {
        let mut first = fresh(app_part());
        first.notes = "### Why\n\nA note written by hand.".into();
        let free = vec!["## Why the code is shaped as it is\n\n- a reason".to_owned()];
        let earlier = render(&[first], &free, &machine("2026-11-30T16:46:53+08:00"));

        let service = Part {
            part: "shop-service".into(),
            title: "6. Service".into(),
            rows: vec![Row::info("calls", "900 calls/s", "n")],
        };
        let (sections, other) = merge(vec![service.clone()], earlier_report::parse(&earlier));
        let kept = &sections[0];
        assert_eq!(kept.part.rows, app_part().rows);
        assert_eq!(kept.notes, "### Why\n\nA note written by hand.");
        assert_eq!(
            kept.carried_from.as_deref(),
            Some("2026-11-30T16:46:53+08:00, on cpu with 2 cores")
        );
        assert_eq!(sections[1], fresh(service));
        assert_eq!(other, free);

        // Written again and read again, the kept part keeps its first date.
        let again = render(&sections, &other, &machine("2026-12-02T09:00:00+08:00"));
        assert!(
            again.contains("| 5. App start and memory | rss | 2x | <= 1.3x | **not met** |"),
            "{again}"
        );
        let reread = earlier_report::parse(&again);
        assert_eq!(
            reread.parts[0].taken.as_deref(),
            Some("2026-11-30T16:46:53+08:00, on cpu with 2 cores")
        );
        assert_eq!(
            reread.parts[1].taken.as_deref(),
            Some("2026-12-02T09:00:00+08:00, on cpu with 2 cores")
        );
        assert!(again.ends_with("- a reason\n"), "{again}");
    }

    #[test]
    fn a_part_run_again_replaces_its_figures_and_keeps_the_notes_under_them() {
        let mut first = fresh(app_part());
        first.notes = "Measured with care.".into();
        let earlier = render(&[first], &[], &machine("then"));
        let mut rerun = app_part();
        rerun.rows.truncate(1);
        let (sections, _) = merge(vec![rerun.clone()], earlier_report::parse(&earlier));
        assert_eq!(sections.len(), 1);
        assert_eq!(sections[0].part, rerun);
        assert_eq!(sections[0].carried_from, None);
        assert_eq!(sections[0].notes, "Measured with care.");
    }

    #[test]
    fn a_part_run_again_alone_by_hand_is_kept_as_a_part_of_its_own_date() {
        let earlier = render(
            &[fresh(app_part())],
            &[],
            &machine("2026-12-02T19:16:12+08:00"),
        )
        .replace(
            "## 5. App start and memory\n",
            "## 5. App start and memory\n\n_Run again on 2026-12-02T22:56:44+08:00, on the \
                 same machine, after a change (the rest of this report is from the time \
                 above)._\n",
        );
        let report = earlier_report::parse(&earlier);
        assert!(report.other_sections.is_empty(), "{report:?}");
        assert_eq!(report.parts[0].part.rows, app_part().rows);
        assert_eq!(
            report.parts[0].taken.as_deref(),
            Some("2026-12-02T22:56:44+08:00, on cpu with 2 cores")
        );
    }
}
