//! A damaged database at start (the assistant's, or the local shop's):
//! the app neither crashes nor silently starts empty. The damaged file is
//! kept aside, the newest copy made is put in its place, and the agent
//! says what it restored and from when.

use std::path::Path;

use pretty_assertions::assert_eq;
use ragent::agent::{Database, DatabaseRestored};

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
    assert_eq!(agent.databases_restored(), []);
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
    let restored: DatabaseRestored = agent.databases_restored().pop().expect("the user is told");
    assert_eq!(restored.database, Database::Assistant);
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

#[tokio::test]
async fn a_damaged_shop_database_is_restored_before_the_shop_starts_and_yesterdays_prices_are_back()
{
    let dir = tempfile::tempdir().unwrap();
    let shop_dir = dir.path().join("shop");
    let shop_db = shop_dir.join("shop.db");
    // Monday the shop starts and keeps a copy; the staff change a price;
    // Tuesday's start keeps a copy with it.
    drop(bitselect::Shop::open(&shop_dir).unwrap());
    test_support::shop::ShopDb::open(&shop_dir).set_price("MG6W4CH/A", 123_456);
    age(&copies(&shop_dir)[0], 1);
    drop(bitselect::Shop::open(&shop_dir).unwrap());
    assert_eq!(copies(&shop_dir).len(), 2);

    let mut bytes = std::fs::read(&shop_db).unwrap();
    bytes.truncate(bytes.len() / 2);
    bytes[..16].copy_from_slice(b"garbage garbage\0");
    std::fs::write(&shop_db, bytes).unwrap();

    let model = test_support::model::ScriptedModel::start().unwrap();
    let agent = open_agent(dir.path(), &model, Setup::shop()).await;
    let restored = agent.databases_restored();
    assert_eq!(restored.len(), 1, "{restored:?}");
    assert_eq!(restored[0].database, Database::Shop);
    assert!(restored[0].restored_from.is_some());
    let kept = Path::new(&restored[0].damaged_kept_at);
    assert!(kept.starts_with(shop_dir.join("damaged")) && kept.is_file());
    assert_eq!(
        test_support::shop::ShopDb::open(&shop_dir).price("MG6W4CH/A"),
        123_456,
        "Tuesday's copy, not a shop seeded afresh"
    );
    agent.shutdown().await;
}
