//! The data directory on a disk that fills up: sending a message, a card's
//! approval and a write's result each meet a full disk (SQLITE_FULL). The
//! app says so, reports nothing as done that it did not record, loses
//! nothing already stored, and carries on once space is freed. The disk is
//! a small tmpfs of its own, which needs root (as CI runs).

use std::path::Path;
use std::sync::Arc;

use pretty_assertions::assert_eq;
use ragent::protocol::{AgentEvent, ErrorCode, StopReason};
use ragent::toolcall::CallStatus;
use test_support::small_disk::{SmallDisk, SmallDiskError};

use crate::support::faults::{Fault, faulty};
use crate::support::*;

/// A data directory on a disk of its own, or `None` (said on stderr) where
/// this machine does not let the test mount one.
fn small_disk() -> Option<SmallDisk> {
    match SmallDisk::mount(48) {
        Ok(disk) => Some(disk),
        Err(SmallDiskError::NotRoot) => {
            eprintln!("skipped: a full disk needs a mount of its own, which needs root");
            None
        }
        Err(error) => panic!("{error}"),
    }
}

/// Fills `disk` to the last byte. The database's write-ahead log is
/// emptied first, so the next commit must take new space, as on a disk
/// that filled while the app was idle.
fn fill(disk: &SmallDisk, data: &Path) {
    let conn = rusqlite::Connection::open(data.join("agent.db")).unwrap();
    let (busy, _, _): (i64, i64, i64) = conn
        .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |row| {
            Ok((row.get(0)?, row.get(1)?, row.get(2)?))
        })
        .unwrap();
    assert_eq!(busy, 0, "the log was emptied");
    drop(conn);
    disk.fill().unwrap();
}

async fn on_small_disk(disk: &SmallDisk, setup: Setup) -> Harness {
    let dir = tempfile::tempdir().unwrap();
    Harness::start_in(setup, dir, disk.path().to_path_buf()).await
}

fn disk_full_errors(run: &Run) -> usize {
    run.events
        .iter()
        .filter(|event| matches!(event, AgentEvent::Error { error } if error.code == ErrorCode::DiskFull))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_sent_on_a_full_disk_is_refused_as_such_and_sent_once_space_is_freed() {
    let Some(disk) = small_disk() else { return };
    let mut h = on_small_disk(&disk, Setup::bare()).await;
    h.model.push_turn(text_turn("你好！"));
    h.say("第一条").await;

    fill(&disk, &h.data);
    let refused = h.agent.send_message(&h.session, "第二条").unwrap_err();
    assert_eq!(refused.code(), ErrorCode::DiskFull, "{refused}");
    assert_eq!(
        h.conversation(),
        [("user", "第一条".into()), ("assistant", "你好！".into())],
        "what was stored is all there, and nothing half-stored"
    );

    disk.free().unwrap();
    h.model.push_turn(text_turn("收到第二条。"));
    h.say("第二条").await;
    assert_eq!(
        h.conversation(),
        [
            ("user", "第一条".into()),
            ("assistant", "你好！".into()),
            ("user", "第二条".into()),
            ("assistant", "收到第二条。".into()),
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_on_a_full_disk_sends_nothing_and_the_card_can_be_approved_once_space_is_freed()
{
    let Some(disk) = small_disk() else { return };
    let mut h = on_small_disk(&disk, Setup::shop()).await;
    let card = h.card_for_iphones("买一台", 1).await;

    fill(&disk, &h.data);
    let refused = h
        .agent
        .respond(&h.session, &card.reply_id, approve_all(&card))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), ErrorCode::DiskFull, "{refused}");
    assert_eq!(h.shop_db().cart_quantity(IPHONE), 0, "nothing was sent");
    let pending = h.agent.transcript(&h.session).unwrap().pending;
    assert_eq!(
        pending.map(|card| card.reply_id),
        Some(card.reply_id.clone()),
        "the card still waits"
    );

    disk.free().unwrap();
    h.model.push_turn(text_turn("已加入购物车。"));
    h.agent
        .respond(&h.session, &card.reply_id, approve_all(&card))
        .await
        .unwrap();
    let run = h.events.until_stop().await;
    assert_eq!(run.finished()[0].status, CallStatus::Succeeded);
    assert_eq!(
        h.shop_db().cart_quantity(IPHONE),
        1,
        "the cart went up once"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_whose_result_meets_a_full_disk_is_not_shown_done_and_is_recorded_once_after() {
    let Some(disk) = small_disk() else { return };
    let disk = Arc::new(disk);
    let mut setup = Setup::shop();
    setup.wrap_tools = Some(faulty(Fault::FillDiskAfter {
        tool: "update_cart_item",
        disk: disk.clone(),
        filled: Default::default(),
    }));
    let mut h = on_small_disk(&disk, setup).await;
    let card = h.card_for_iphones("买一台", 1).await;
    h.agent
        .respond(&h.session, &card.reply_id, approve_all(&card))
        .await
        .unwrap();
    let run = h.events.until_stop().await;
    assert_eq!(run.reason, StopReason::Failed, "{:?}", run.events);
    assert_eq!(disk_full_errors(&run), 1, "{:?}", run.events);
    assert!(
        run.finished().is_empty(),
        "the write is not shown done: {:?}",
        run.finished()
    );
    assert_eq!(h.shop_db().cart_quantity(IPHONE), 1, "the shop did it");

    disk.free().unwrap();
    h.model.push_turn(text_turn("已加入购物车。"));
    h.model.push_turn(text_turn("好的。"));
    h.say("好了吗").await;
    let calls = h.transcript_calls();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0].status, CallStatus::Succeeded);
    assert_eq!(
        h.shop_db().cart_quantity(IPHONE),
        1,
        "recorded once it could be, never sent twice"
    );
}
