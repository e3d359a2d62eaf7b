//! A damaged database at start: the app neither crashes nor silently
//! starts empty. The damaged file is kept aside, the newest copy the app
//! made is put in its place, and the agent says what it restored and from
//! when.

use std::path::Path;

use pretty_assertions::assert_eq;
use ragent::agent::DatabaseRestored;

use crate::support::*;

const DAY_MS: i64 = 24 * 60 * 60 * 1000;

fn titles(agent: &ragent::Agent) -> Vec<String> {
    let mut titles: Vec<String> = agent
        .list_sessions()
        .unwrap()
        .into_iter()
        .map(|session| session.title)
        .collect();
    titles.sort();
    titles
}

/// The copies in `dir/backups`, the newest first.
fn copies(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut copies: Vec<_> = std::fs::read_dir(dir.join("backups"))
        .map(|entries| entries.map(|entry| entry.unwrap().path()).collect())
        .unwrap_or_default();
    copies.sort();
    copies.reverse();
    copies
}

/// Makes the copy at `copy` look `days` older than it is: the app reads a
/// copy's time from its name.
fn age(copy: &Path, days: i64) {
    let name = copy.file_name().unwrap().to_string_lossy().into_owned();
    let (taken_at, rest) = name.split_once('-').unwrap();
    let older = taken_at.parse::<i64>().unwrap() - days * DAY_MS;
    std::fs::rename(copy, copy.with_file_name(format!("{older}-{rest}"))).unwrap();
}

#[tokio::test]
async fn a_damaged_database_is_kept_aside_and_yesterdays_copy_restored_and_the_user_is_told() {
    let dir = tempfile::tempdir().unwrap();
    let model = test_support::model::ScriptedModel::start().unwrap();
    let database = dir.path().join("agent.db");

    // Monday: the first start makes a copy of the new database.
    let agent = open_agent(dir.path(), &model, Setup::bare()).await;
    assert_eq!(agent.database_restored(), None);
    agent.create_session(Some("周一的购物")).unwrap();
    agent.shutdown().await;
    drop(agent);
    assert_eq!(copies(dir.path()).len(), 1);

    // Tuesday: a day later, the start makes a copy with Monday in it.
    age(&copies(dir.path())[0], 1);
    let agent = open_agent(dir.path(), &model, Setup::bare()).await;
    assert_eq!(copies(dir.path()).len(), 2, "a day passed: a new copy");
    agent.create_session(Some("周二的购物")).unwrap();
    agent.shutdown().await;
    drop(agent);

    // The file is damaged while the app is closed.
    let mut bytes = std::fs::read(&database).unwrap();
    bytes.truncate(bytes.len() / 3);
    bytes[..16].copy_from_slice(b"garbage garbage\0");
    std::fs::write(&database, bytes).unwrap();

    let agent = open_agent(dir.path(), &model, Setup::bare()).await;
    let restored: DatabaseRestored = agent.database_restored().expect("the user is told");
    let newest = copies(dir.path())[0].clone();
    let taken_at: i64 = newest
        .file_name()
        .unwrap()
        .to_string_lossy()
        .split('-')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(restored.restored_from, Some(taken_at), "Tuesday's copy");
    assert!(
        titles(&agent).contains(&"周一的购物".to_owned()),
        "what the copy held is back: {:?}",
        titles(&agent)
    );
    assert!(!titles(&agent).contains(&"周二的购物".to_owned()));
    let kept = Path::new(&restored.damaged_kept_at);
    assert!(kept.starts_with(dir.path().join("damaged")), "{kept:?}");
    assert!(kept.is_file(), "the damaged file is kept, not deleted");
    assert!(!restored.problem.is_empty());

    // And the app carries on.
    agent.create_session(Some("周三的购物")).unwrap();
    agent.shutdown().await;
}
