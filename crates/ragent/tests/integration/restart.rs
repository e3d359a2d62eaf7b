//! Surviving restarts and crashes: a pending card outlives the app, a
//! write interrupted after it reached the server is re-sent with its key
//! (never placing a second order), a server that cannot recognise a
//! repeat gets nothing re-sent, and a crashed server is started again.

use std::sync::Arc;

use pretty_assertions::assert_eq;
use ragent::clock::{Clock, ManualClock, SystemClock};
use ragent::mcp::ServerStatus;
use ragent::protocol::{AgentEvent, StopReason, ToolCallView, TranscriptItem};
use ragent::toolcall::CallStatus;
use serde_json::json;
use tokio::sync::Notify;

use crate::support::faults::{Fault, crashing, faulty};
use crate::support::notes::{Notebook, note_tool};
use crate::support::*;

const CASE: &str = "MK8T4FE/A";

/// An approved write whose answer is lost on the way back, to a notebook
/// with the trust and the claim about keys given. A trusted notebook's
/// `add_note` claims to be read-only, so the write is its honest `tag`.
async fn lost_answer_story(trusted: bool, honours_keys: bool) -> (Run, Notebook) {
    let notebook = Notebook::new(honours_keys).with_tool(note_tool("tag", |a| a));
    let tool = if trusted {
        "notes__tag"
    } else {
        "notes__add_note"
    };
    let mut setup = Setup::bare();
    setup.servers.push(notebook.entry("notes", trusted));
    setup.wrap_tools = Some(faulty(Fault::LoseFirstAnswer {
        only: None,
        lost: std::sync::Mutex::new(false),
    }));
    let mut h = Harness::start(setup).await;
    h.model
        .push_turn(calls_turn("", &[("c1", tool, json!({"text": "一"}))]));
    let card = h.say("记一").await.card().clone();
    h.model.push_turn(text_turn("好。"));
    h.agent
        .respond(&h.session, &card.reply_id, approve_all(&card))
        .await
        .unwrap();
    (h.events.until_stop().await, notebook)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_whose_answer_was_lost_is_resent_with_its_key_where_a_trusted_server_honours_keys()
{
    let (run, notebook) = lost_answer_story(true, true).await;
    assert_eq!(notebook.notes(), vec!["一"], "the repeat was recognised");
    assert_eq!(run.finished()[0].status, CallStatus::Succeeded);
    assert!(
        run.events
            .iter()
            .any(|e| matches!(e, AgentEvent::ServerRestarted { server, .. } if server == "notes"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_whose_answer_was_lost_is_interrupted_where_keys_are_not_honoured() {
    let (run, notebook) = lost_answer_story(true, false).await;
    assert_eq!(notebook.notes(), vec!["一"], "sent once, never repeated");
    let call = &run.finished()[0];
    assert_eq!(call.status, CallStatus::Interrupted);
    assert!(call.output.as_deref().unwrap().contains("结果未知"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untrusted_servers_claim_to_honour_keys_is_not_believed_when_an_answer_is_lost() {
    let (run, notebook) = lost_answer_story(false, true).await;
    assert_eq!(notebook.notes(), vec!["一"]);
    let call = &run.finished()[0];
    assert_eq!(call.status, CallStatus::Interrupted, "not re-sent");
    assert!(call.output.as_deref().unwrap().contains("结果未知"));
    assert!(
        !run.events
            .iter()
            .any(|e| matches!(e, AgentEvent::ServerRestarted { .. })),
        "nothing was sent again: {:#?}",
        run.events
    );
}

fn notices(h: &Harness) -> Vec<String> {
    h.agent
        .transcript(&h.session)
        .unwrap()
        .items
        .into_iter()
        .filter_map(|i| match i {
            TranscriptItem::Notice { text, .. } => Some(text),
            _ => None,
        })
        .collect()
}

fn calls(h: &Harness) -> Vec<ToolCallView> {
    h.agent
        .transcript(&h.session)
        .unwrap()
        .items
        .into_iter()
        .filter_map(|i| match i {
            TranscriptItem::ToolCall { call } => Some(*call),
            _ => None,
        })
        .collect()
}

fn call_status(h: &Harness, model_order: usize) -> (CallStatus, Option<String>) {
    let calls = calls(h);
    (calls[model_order].status, calls[model_order].output.clone())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_card_pending_when_the_app_closed_can_be_decided_after_reopening() {
    let mut h = Harness::start(Setup::shop()).await;
    let card = h.card_for_iphones("买 iPhone 17", 1).await;

    h.restart(Setup::shop()).await;
    let shown = h.agent.transcript(&h.session).unwrap().pending;
    assert_eq!(
        shown.as_ref(),
        Some(&card),
        "the window shows the same card again"
    );

    h.model.push_turn(text_turn("已加入购物车。"));
    let run = h.approve(&card).await;
    assert_eq!(run.reason, StopReason::Completed);
    assert_eq!(run.started(), vec!["update_cart_item"]);
    assert_eq!(h.shop_db().cart_quantity(IPHONE), 1);
    let requests = h.model.requests();
    assert!(tool_result(&requests[1], "c1").contains("iPhone 17"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_after_approval_is_recovered_with_the_same_key_and_one_order() {
    let sent = Arc::new(Notify::new());
    let mut setup = Setup::shop();
    setup.wrap_tools = Some(crashing("create_order", sent.clone()));
    let mut h = Harness::start(setup).await;
    h.model.push_turn(calls_turn(
        "将用购物车里的 1 个保护壳下单。",
        &[(
            "c1",
            "shop__create_order",
            json!({"items": [{"skuCode": CASE, "quantity": 1}]}),
        )],
    ));
    let card = h.say("保护壳下单").await.card().clone();
    let db = h.shop_db();
    let orders_before = db.order_count();

    h.agent
        .respond(&h.session, &card.reply_id, approve_all(&card))
        .await
        .unwrap();
    sent.notified().await;
    assert_eq!(
        db.order_count(),
        orders_before + 1,
        "the server placed the order"
    );
    assert_eq!(
        call_status(&h, 0).0,
        CallStatus::Running,
        "its answer was never stored"
    );

    h.restart(Setup::shop()).await;

    assert_eq!(
        db.order_count(),
        orders_before + 1,
        "re-sent with the same key: still one order"
    );
    assert_eq!(db.cart_quantity(CASE), 1);
    let (status, output) = call_status(&h, 0);
    assert_eq!(status, CallStatus::Succeeded);
    let newest = db.orders_of(CASE).into_iter().last().unwrap().0;
    assert!(
        output.unwrap().contains(&newest),
        "the first answer, replayed"
    );
    assert_eq!(notices(&h).len(), 1);
    assert_eq!(h.agent.transcript(&h.session).unwrap().pending, None);

    // The next turn carries the recovered result to the model.
    h.model.push_turn(text_turn("订单已提交。"));
    h.say("下好了吗？").await;
    let requests = h.model.requests();
    assert!(tool_result(requests.last().unwrap(), "c1").contains(&newest));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_of_reads_cut_off_by_a_crash_leaves_nothing_half_done_and_is_asked_again() {
    let sent = Arc::new(Notify::new());
    let mut setup = Setup::shop();
    setup.wrap_tools = Some(crashing("search_product", sent.clone()));
    let mut h = Harness::start(setup).await;
    h.model.push_turn(calls_turn(
        "",
        &[("c1", "shop__search_product", json!({"skuCodes": [IPHONE]}))],
    ));
    h.agent
        .send_message(&h.session, "iPhone 17 多少钱")
        .unwrap();
    sent.notified().await;
    assert!(
        calls(&h).is_empty(),
        "a turn of reads is stored with its results, not before"
    );

    h.restart(Setup::shop()).await;

    let items = h.agent.transcript(&h.session).unwrap().items;
    assert!(
        matches!(items.as_slice(), [TranscriptItem::User { text, .. }] if text == "iPhone 17 多少钱"),
        "only the question is left: {items:?}"
    );
    h.model.push_turn(calls_turn(
        "",
        &[("c2", "shop__search_product", json!({"skuCodes": [IPHONE]}))],
    ));
    h.model.push_turn(text_turn("iPhone 17 是 6799 元。"));
    h.say("再查一下？").await;
    let (status, output) = call_status(&h, 0);
    assert_eq!(status, CallStatus::Succeeded);
    assert!(output.unwrap().contains("iPhone 17"));
    let requests = h.model.requests();
    assert!(tool_result(requests.last().unwrap(), "c2").contains("iPhone 17"));
}

/// An approved note (call `c1`) reached an untrusted notebook, and its
/// answer never came back: the app is as good as dead.
async fn note_hung_after_send(text: &str, honours_keys: bool) -> (Harness, Notebook) {
    let notebook = Notebook::new(honours_keys);
    let sent = Arc::new(Notify::new());
    let mut setup = Setup::bare();
    setup.servers.push(notebook.entry("notes", false));
    setup.wrap_tools = Some(crashing("add_note", sent.clone()));
    let mut h = Harness::start(setup).await;
    h.model.push_turn(calls_turn(
        "",
        &[("c1", "notes__add_note", json!({"text": text}))],
    ));
    let card = h.say(&format!("记一下：{text}")).await.card().clone();
    h.agent
        .respond(&h.session, &card.reply_id, approve_all(&card))
        .await
        .unwrap();
    sent.notified().await;
    (h, notebook)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_to_a_server_without_keys_is_marked_interrupted_not_resent() {
    let (mut h, notebook) = note_hung_after_send("买保护壳", false).await;

    let mut setup = Setup::bare();
    setup.servers.push(notebook.entry("notes", false));
    h.restart(setup).await;

    assert_eq!(notebook.notes(), vec!["买保护壳"], "never sent twice");
    assert_eq!(call_status(&h, 0).0, CallStatus::Interrupted);
    let told = notices(&h);
    assert_eq!(told.len(), 1);
    assert!(told[0].contains("无法确认"), "{told:?}");

    h.model.push_turn(text_turn("我先核实一下。"));
    h.say("记好了吗？").await;
    let requests = h.model.requests();
    assert!(tool_result(requests.last().unwrap(), "c1").contains("结果未知"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_shop_is_started_again_on_next_use_and_the_restart_reported() {
    let mut h = Harness::start(Setup::shop()).await;
    h.model
        .push_turn(calls_turn("", &[("c1", "shop__query_cart", json!({}))]));
    h.model.push_turn(text_turn("购物车里有 5 件商品。"));
    let run = h.say("看看购物车").await;
    assert_eq!(run.started(), vec!["query_cart"]);
    let first: Vec<ServerStatus> = h.agent.server_status().await;
    let pid = first[0].pid.expect("a child process");

    let killed = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());

    h.model
        .push_turn(calls_turn("", &[("c2", "shop__query_cart", json!({}))]));
    h.model.push_turn(text_turn("还是 5 件。"));
    let run = h.say("再看一次").await;
    assert_eq!(run.reason, StopReason::Completed);
    assert!(
        run.events
            .iter()
            .any(|e| matches!(e, AgentEvent::ServerRestarted { server, .. } if server == "shop")),
        "{:#?}",
        run.events
    );
    let finished = run.finished();
    assert_eq!(finished.len(), 1);
    assert_eq!(finished[0].status, CallStatus::Succeeded);
    let after = h.agent.server_status().await;
    assert_eq!(after[0].restarts, 1);
    assert_ne!(after[0].pid, Some(pid));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_left_halfway_by_a_dead_run_is_finished_before_the_next_message() {
    let (mut h, notebook) = note_hung_after_send("一", false).await;
    // The run dies; the same agent goes on.
    h.agent.shutdown().await;

    h.model.push_turn(text_turn("我先核实一下。"));
    let run = h.say("记好了吗？").await;
    assert_eq!(run.reason, StopReason::Completed);
    let finished = run.finished();
    assert_eq!(finished.len(), 1);
    assert_eq!(finished[0].status, CallStatus::Interrupted);
    assert_eq!(notebook.notes(), vec!["一"]);
    let last = h.model.requests().pop().unwrap();
    assert_eq!(roles(&last)[1..], ["user", "assistant", "tool", "user"]);
    assert!(tool_result(&last, "c1").contains("结果未知"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untrusted_server_that_claims_to_honour_keys_gets_nothing_resent_after_a_crash() {
    let (mut h, notebook) = note_hung_after_send("买保护壳", true).await;

    let mut setup = Setup::bare();
    setup.servers.push(notebook.entry("notes", false));
    h.restart(setup).await;

    assert_eq!(notebook.notes(), vec!["买保护壳"]);
    let (status, output) = call_status(&h, 0);
    assert_eq!(status, CallStatus::Interrupted, "its claim is not believed");
    assert!(output.unwrap().contains("结果未知"));
    let told = notices(&h);
    assert_eq!(told.len(), 1);
    assert!(told[0].contains("无法确认"), "{told:?}");
}

/// A card of two approved notes to an untrusted notebook: `c1` (add_note)
/// reached it and hung, `c2` (tag) was never sent. The app is as good as
/// dead. The clock is the harness's.
async fn second_note_left_unsent(clock: Arc<ManualClock>) -> (Harness, Notebook) {
    let notebook = Notebook::new(false).with_tool(note_tool("tag", |a| a));
    let sent = Arc::new(Notify::new());
    let mut setup = Setup::bare();
    setup.servers.push(notebook.entry("notes", false));
    setup.wrap_tools = Some(crashing("add_note", sent.clone()));
    setup.clock = Some(clock);
    let mut h = Harness::start(setup).await;
    h.model.push_turn(calls_turn(
        "",
        &[
            ("c1", "notes__add_note", json!({"text": "一"})),
            ("c2", "notes__tag", json!({"text": "二"})),
        ],
    ));
    let card = h.say("记两条").await.card().clone();
    h.agent
        .respond(&h.session, &card.reply_id, approve_all(&card))
        .await
        .unwrap();
    sent.notified().await;
    (h, notebook)
}

fn start_clock() -> Arc<ManualClock> {
    Arc::new(ManualClock::new(SystemClock.now_ms()))
}

fn notebook_setup(notebook: &Notebook, clock: &Arc<ManualClock>) -> Setup {
    let mut setup = Setup::bare();
    setup.servers.push(notebook.entry("notes", false));
    setup.clock = Some(clock.clone());
    setup
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approved_call_left_unsent_by_a_failed_run_does_not_run_silently_before_the_next_message()
 {
    let (mut h, notebook) = second_note_left_unsent(start_clock()).await;
    // The run dies; the same agent goes on.
    h.agent.shutdown().await;

    h.model
        .push_turn(text_turn("第一条结果未知，第二条没有记。"));
    let run = h.say("记好了吗？").await;
    assert_eq!(run.reason, StopReason::Completed);
    assert_eq!(
        run.started(),
        vec!["add_note"],
        "only the first note, sent by the run that died"
    );
    assert_eq!(
        notebook.notes(),
        vec!["一"],
        "the second note never went out"
    );
    assert_eq!(call_status(&h, 0).0, CallStatus::Interrupted);
    assert_eq!(call_status(&h, 1).0, CallStatus::Superseded);
    let told = notices(&h);
    assert!(
        told.iter()
            .any(|n| n.contains("「tag」") && n.contains("没有执行")),
        "{told:?}"
    );
    let last = h.model.requests().pop().unwrap();
    assert!(tool_result(&last, "c1").contains("结果未知"));
    assert!(tool_result(&last, "c2").contains("没有执行"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approved_call_left_unsent_by_a_crash_is_not_run_after_its_card_expired() {
    let clock = start_clock();
    let (mut h, notebook) = second_note_left_unsent(clock.clone()).await;

    let expiry = i64::try_from(h.agent.settings().card_expiry_secs).unwrap() * 1000;
    clock.advance_ms(expiry + 1);
    h.restart(notebook_setup(&notebook, &clock)).await;

    assert_eq!(
        notebook.notes(),
        vec!["一"],
        "the second note never went out"
    );
    assert_eq!(call_status(&h, 0).0, CallStatus::Interrupted);
    let (status, output) = call_status(&h, 1);
    assert_eq!(status, CallStatus::Expired);
    assert!(output.unwrap().contains("没有执行"));
    assert_eq!(h.agent.transcript(&h.session).unwrap().pending, None);
    let told = notices(&h);
    assert!(
        told.iter()
            .any(|n| n.contains("「tag」") && n.contains("已过期")),
        "{told:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approved_call_left_unsent_by_a_crash_is_asked_again_within_its_cards_time() {
    let clock = start_clock();
    let (mut h, notebook) = second_note_left_unsent(clock.clone()).await;

    clock.advance_ms(60_000);
    h.restart(notebook_setup(&notebook, &clock)).await;

    assert_eq!(notebook.notes(), vec!["一"], "not sent at start");
    assert_eq!(call_status(&h, 0).0, CallStatus::Interrupted);
    let card = h
        .agent
        .transcript(&h.session)
        .unwrap()
        .pending
        .expect("the card is shown again");
    let statuses: Vec<CallStatus> = card.calls.iter().map(|c| c.status).collect();
    assert_eq!(statuses, vec![CallStatus::Interrupted, CallStatus::Asking]);
    assert!(notices(&h).iter().any(|n| n.contains("再次确认")));

    h.model.push_turn(text_turn("第二条记好了。"));
    let run = h.approve(&card).await;
    assert_eq!(run.reason, StopReason::Completed);
    assert_eq!(run.started(), vec!["tag"]);
    assert_eq!(notebook.notes(), vec!["一", "二"]);
}
