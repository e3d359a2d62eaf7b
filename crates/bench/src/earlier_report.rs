//! What a report written before holds, read back from its Markdown: each
//! part's table (so a part not run this time keeps its figures and its
//! targets' verdicts), the prose written under a part's table, and sections
//! that are no part at all. `report` keeps them all, so a run of one part
//! replaces that part and nothing else.

use crate::results::{Part, Row};

/// The header line of every part's table.
pub const TABLE_HEADER: &str = "| metric | value | target | verdict | notes |";
/// The line under a kept part's heading; the date follows it.
pub const CARRIED_PREFIX: &str = "_Not run for this report: figures from the report of ";
const CARRIED_SUFFIX: &str = "._";
/// A line written by hand under a part run again alone, before the report
/// kept parts with [`CARRIED_PREFIX`]: "_Run again on DATE, on the same
/// machine, …_". The date is when its figures were taken.
const RERUN_PREFIX: &str = "_Run again on ";
/// Sections `report` writes anew every time.
const GENERATED: [&str; 2] = ["Machine", "Targets"];

/// A part as an earlier report showed it.
#[derive(Debug, Clone, PartialEq)]
pub struct EarlierPart {
    pub part: Part,
    /// When its figures were taken: the report it was first carried from,
    /// else the report it appeared in.
    pub taken: Option<String>,
    /// What follows its table, as written (subsections, notes).
    pub notes: String,
    /// When it was run again alone on the report's machine, if it says so.
    rerun: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct EarlierReport {
    /// When it was written, and on what machine.
    pub written: Option<String>,
    pub parts: Vec<EarlierPart>,
    /// Sections that are not parts, heading included, as written.
    pub other_sections: Vec<String>,
}

/// A table row's cells, `\|` read back as `|`.
fn cells(line: &str) -> Vec<String> {
    let inner = line.trim().trim_start_matches('|');
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    let mut cells = Vec::new();
    let mut current = String::new();
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                current.push('|');
                chars.next();
            }
            '|' => cells.push(std::mem::take(&mut current)),
            other => current.push(other),
        }
    }
    cells.push(current);
    cells.into_iter().map(|c| c.trim().to_owned()).collect()
}

fn row(line: &str) -> Option<Row> {
    let cells = cells(line);
    let [metric, value, target, verdict, notes] = cells.as_slice() else {
        return None;
    };
    Some(Row {
        metric: metric.clone(),
        value: value.clone(),
        target: (!target.is_empty()).then(|| target.clone()),
        met: match verdict.as_str() {
            "met" => Some(true),
            "**not met**" => Some(false),
            _ => None,
        },
        notes: notes.clone(),
    })
}

/// `## ` headings and the lines under each, up to the next.
fn sections(text: &str) -> Vec<(String, Vec<&str>)> {
    let mut sections: Vec<(String, Vec<&str>)> = Vec::new();
    for line in text.lines() {
        if let Some(title) = line.strip_prefix("## ") {
            sections.push((title.trim().to_owned(), Vec::new()));
        } else if let Some((_, body)) = sections.last_mut() {
            body.push(line);
        }
    }
    sections
}

/// A row of the machine table, by its name.
fn machine_field(body: &[&str], name: &str) -> Option<String> {
    let prefix = format!("| {name} |");
    body.iter()
        .find_map(|line| line.strip_prefix(prefix.as_str()))
        .map(|rest| rest.trim().trim_end_matches('|').trim().to_owned())
}

/// When and where the report was written: "DATE, on CPU with N cores".
fn written_on(body: &[&str]) -> Option<String> {
    let date = machine_field(body, "report written")?;
    Some(
        match (machine_field(body, "CPU"), machine_field(body, "cores")) {
            (Some(cpu), Some(cores)) => format!("{date}, on {cpu} with {cores} cores"),
            _ => date,
        },
    )
}

fn part(title: &str, body: &[&str]) -> Option<EarlierPart> {
    let mut lines = body.iter().map(|l| l.trim_end()).peekable();
    let (mut taken, mut rerun) = (None, None);
    while let Some(line) = lines.peek() {
        if line.is_empty() {
            lines.next();
        } else if let Some(rest) = line.strip_prefix(CARRIED_PREFIX) {
            taken = Some(rest.trim_end_matches(CARRIED_SUFFIX).to_owned());
            lines.next();
        } else if let Some(rest) = line.strip_prefix(RERUN_PREFIX) {
            rerun = rest.split(',').next().map(str::to_owned);
            lines.next();
        } else {
            break;
        }
    }
    if lines.next()? != TABLE_HEADER {
        return None;
    }
    lines.next(); // | --- | --- | ...
    let mut rows = Vec::new();
    while let Some(line) = lines.peek() {
        if !line.starts_with('|') {
            break;
        }
        rows.extend(row(line));
        lines.next();
    }
    let notes = lines.collect::<Vec<_>>().join("\n").trim().to_owned();
    Some(EarlierPart {
        part: Part {
            part: String::new(),
            title: title.to_owned(),
            rows,
        },
        taken,
        notes,
        rerun,
    })
}

pub fn parse(text: &str) -> EarlierReport {
    let mut report = EarlierReport::default();
    for (title, body) in sections(text) {
        if title == "Machine" {
            report.written = written_on(&body);
        }
        if GENERATED.contains(&title.as_str()) {
            continue;
        }
        match part(&title, &body) {
            Some(part) => report.parts.push(part),
            None => {
                let text = format!("## {title}\n{}", body.join("\n"));
                report.other_sections.push(text.trim().to_owned());
            }
        }
    }
    // "DATE, on CPU with N cores": a part run again alone was run on the
    // same machine, at its own date.
    let machine = report
        .written
        .as_deref()
        .and_then(|written| written.split_once(", on "))
        .map(|(_, machine)| machine.to_owned());
    for part in &mut report.parts {
        if part.taken.is_none() {
            part.taken = match (&part.rerun, &machine) {
                (Some(date), Some(machine)) => Some(format!("{date}, on {machine}")),
                (Some(date), None) => Some(date.clone()),
                (None, _) => report.written.clone(),
            };
        }
    }
    report
}

/// The line that says a part is kept from an earlier report.
pub fn carried_line(taken: &str) -> String {
    format!("{CARRIED_PREFIX}{taken}{CARRIED_SUFFIX}")
}
