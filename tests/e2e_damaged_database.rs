//! The app started on a damaged database: it opens, puts back the newest
//! copy it made, and says so above the page (which copy, from when, where
//! the damaged file is kept) until the shopper closes the notice.

mod support;

use std::error::Error;
use std::path::{Path, PathBuf};

use support::{RunningApp, configure_model, edit_settings};

const DAY_MS: i64 = 24 * 60 * 60 * 1000;

/// The copies of the assistant's database, the newest first.
fn copies(data: &Path) -> Vec<PathBuf> {
    let mut copies: Vec<PathBuf> = std::fs::read_dir(data.join("backups"))
        .map(|entries| entries.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    copies.sort();
    copies.reverse();
    copies
}

#[test]
fn a_damaged_database_is_restored_from_yesterdays_copy_and_the_window_says_so()
-> Result<(), Box<dyn Error>> {
    let data = tempfile::tempdir()?;
    // Monday the app was set up; the copy of that start is a day old.
    configure_model(data.path(), "http://127.0.0.1:9/v1")?;
    let monday = copies(data.path()).pop().ok_or("a first copy")?;
    let name = monday
        .file_name()
        .ok_or("a name")?
        .to_string_lossy()
        .into_owned();
    let (taken_at, rest) = name.split_once('-').ok_or("a time in the name")?;
    let older = taken_at.parse::<i64>()? - DAY_MS;
    std::fs::rename(&monday, monday.with_file_name(format!("{older}-{rest}")))?;
    // Tuesday's start keeps a copy with the settings in it.
    edit_settings(data.path(), |settings| {
        settings.model.model = "scripted-tuesday".into()
    })?;

    let database = data.path().join(bitselect_assistant::CORE_DB_FILE);
    let mut bytes = std::fs::read(&database)?;
    bytes.truncate(bytes.len() / 2);
    bytes[..16].copy_from_slice(b"garbage garbage\0");
    std::fs::write(&database, bytes)?;

    let app = RunningApp::launch(data.path())?;
    app.wait_for_text(
        "[data-testid=restore-notice]",
        "助手的数据文件损坏了，已恢复到",
    )?;
    app.wait_for_text("[data-testid=restore-notice]", "damaged")?;
    app.save_screenshot("restore-notice")?;
    let close = app.session.find("[data-testid=restore-notice-close]")?;
    app.session.click(&close)?;
    let gone = app.session.execute(
        "return document.querySelector('[data-testid=restore-notice]') === null;",
        serde_json::json!([]),
    )?;
    assert_eq!(gone, serde_json::json!(true));
    drop(app);

    let kept: Vec<PathBuf> = std::fs::read_dir(data.path().join("damaged"))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    assert!(
        kept.iter()
            .any(|p| p.to_string_lossy().ends_with("assistant.db")),
        "the damaged file is kept: {kept:?}"
    );
    Ok(())
}
