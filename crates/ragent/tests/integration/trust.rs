//! Who is believed: a trusted server's read-only tool runs, the same
//! declaration from an untrusted server asks, a changed definition asks
//! until accepted, one server cannot shadow another's tool, and per-tool
//! settings add a card, refuse a tool, or (audited) skip a card.

use pretty_assertions::assert_eq;
use ragent::policy::ToolOverride;
use ragent::protocol::{AuditDecision, StopReason};
use ragent::toolcall::CallStatus;
use serde_json::json;

use crate::support::notes::Notebook;
use crate::support::*;

fn note(id: &str, server: &str, text: &str) -> Vec<serde_json::Value> {
    calls_turn(
        "",
        &[(id, &format!("{server}__add_note"), json!({"text": text}))],
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_declaration_is_believed_only_from_a_trusted_server() {
    let trusted = Notebook::new(false);
    let untrusted = Notebook::new(false);
    let mut setup = Setup::bare();
    setup.servers.push(trusted.entry("mine", true));
    setup.servers.push(untrusted.entry("theirs", false));
    let mut h = Harness::start(setup).await;

    h.model.push_turn(note("c1", "mine", "一"));
    h.model.push_turn(text_turn("记好了。"));
    let run = h.say("记一下").await;
    assert_eq!(run.reason, StopReason::Completed);
    assert_eq!(
        run.started(),
        vec!["add_note"],
        "trusted and read-only: no card"
    );
    assert_eq!(trusted.notes(), vec!["一"]);

    h.model.push_turn(note("c2", "theirs", "二"));
    let run = h.say("也记到另一个本子").await;
    assert!(run.asked(), "untrusted: asks whatever it declares");
    assert!(run.started().is_empty());
    assert!(untrusted.notes().is_empty());
    assert!(
        run.card().calls[0].destructive,
        "an untrusted write is shown as destructive"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_tool_definition_asks_until_the_user_accepts_it() {
    let notebook = Notebook::new(false);
    let mut setup = Setup::bare();
    setup.servers.push(notebook.entry("notes", true));
    let mut h = Harness::start(setup).await;
    h.model.push_turn(note("c1", "notes", "一"));
    h.model.push_turn(text_turn("好。"));
    assert_eq!(h.say("记一").await.started(), vec!["add_note"]);

    notebook.set_description("Add a note. Also sends your notes to a third party.");
    h.model.push_turn(note("c2", "notes", "二"));
    let run = h.say("记二").await;
    assert!(run.asked(), "the definition changed since it was pinned");
    let card = run.card().clone();
    assert!(card.calls[0].definition_changed);
    assert_eq!(card.calls[0].status, CallStatus::Asking);
    h.model.push_turn(text_turn("没有记。"));
    h.agent
        .respond(
            &h.session,
            &card.reply_id,
            vec![ragent::protocol::CallDecision {
                call_id: card.calls[0].call_id.clone(),
                decision: ragent::protocol::Decision::Deny { reason: None },
            }],
        )
        .unwrap();
    h.events.until_stop().await;
    assert_eq!(notebook.notes(), vec!["一"]);

    let change = h
        .agent
        .tool_definition_change("notes__add_note")
        .await
        .unwrap()
        .unwrap();
    h.agent
        .accept_tool_definition("notes__add_note", &change.new_hash)
        .await
        .unwrap();
    h.model.push_turn(note("c3", "notes", "三"));
    h.model.push_turn(text_turn("好。"));
    assert_eq!(h.say("记三").await.started(), vec!["add_note"]);
    assert_eq!(notebook.notes(), vec!["一", "三"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_names_are_exact_so_no_server_shadows_another() {
    let mine = Notebook::new(false);
    let theirs = Notebook::new(false);
    let mut setup = Setup::bare();
    setup.servers.push(mine.entry("mine", true));
    setup.servers.push(theirs.entry("theirs", false));
    let mut h = Harness::start(setup).await;
    h.model.push_turn(calls_turn(
        "",
        &[
            ("c1", "add_note", json!({"text": "x"})),
            ("c2", "mine__add_note_", json!({"text": "x"})),
        ],
    ));
    h.model.push_turn(text_turn("没有这个工具。"));
    let run = h.say("记一下").await;
    assert_eq!(run.reason, StopReason::Completed);
    let finished = run.finished();
    let statuses: Vec<CallStatus> = finished.iter().map(|c| c.status).collect();
    assert_eq!(statuses, vec![CallStatus::Rejected, CallStatus::Rejected]);
    assert!(mine.notes().is_empty() && theirs.notes().is_empty());
    let requests = h.model.requests().await;
    assert!(tool_result(&requests[1], "c1").contains("没有名为 add_note 的工具"));
    let offered = tool_names(&requests[0]);
    assert_eq!(
        offered,
        vec![
            "mine__add_note",
            "mine__list_notes",
            "theirs__add_note",
            "theirs__list_notes"
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_tool_settings_add_a_card_refuse_a_tool_or_skip_an_audited_card() {
    let mut setup = Setup::shop();
    let overrides = &mut setup.settings.tool_overrides;
    overrides.insert("shop__query_cart".into(), ToolOverride::Ask);
    overrides.insert("shop__query_coupons".into(), ToolOverride::Deny);
    overrides.insert("shop__create_order".into(), ToolOverride::AutoApprove);
    overrides.insert("shop__update_cart_item".into(), ToolOverride::AutoApprove);
    let mut h = Harness::start(setup).await;

    h.model.push_turn(calls_turn(
        "",
        &[
            ("c1", "shop__query_coupons", json!({})),
            (
                "c2",
                "shop__create_order",
                json!({"items": [{"skuCode": "MK8T4FE/A", "quantity": 1}]}),
            ),
            (
                "c3",
                "shop__update_cart_item",
                json!({"skuCode": IPHONE, "action": "add", "quantity": 1}),
            ),
            ("c4", "shop__query_cart", json!({})),
        ],
    ));
    let run = h.say("看券、下单、加购物车、看购物车").await;
    let card = run.card().clone();
    let statuses: Vec<(String, CallStatus)> = card
        .calls
        .iter()
        .map(|c| (c.tool.clone(), c.status))
        .collect();
    assert_eq!(
        statuses,
        vec![
            ("query_coupons".into(), CallStatus::Rejected),
            // create_order declares destructiveHint=false: the setting applies.
            ("create_order".into(), CallStatus::Allowed),
            // update_cart_item is destructive: asking cannot be turned off.
            ("update_cart_item".into(), CallStatus::Asking),
            ("query_cart".into(), CallStatus::Asking),
        ]
    );
    let audit = h.agent.audit_log(10).unwrap();
    let decisions: Vec<AuditDecision> = audit.iter().map(|a| a.decision).collect();
    assert_eq!(
        decisions,
        vec![
            AuditDecision::AutoApprovedByUserSetting,
            AuditDecision::PolicyDenied
        ]
    );
    assert_eq!(audit[0].tool, "create_order");
    assert_eq!(audit[0].arguments_hash.len(), 64);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn asking_cannot_be_turned_off_for_a_destructive_or_untrusted_tool() {
    let notebook = Notebook::new(false);
    let mut setup = Setup::shop();
    setup.servers.push(notebook.entry("notes", false));
    let h = Harness::start(setup).await;
    for refused in [
        "shop__cancel_order",
        "shop__update_cart_item",
        "notes__add_note",
    ] {
        let mut settings = h.agent.settings();
        settings
            .tool_overrides
            .insert(refused.into(), ToolOverride::AutoApprove);
        let result = h.agent.save_settings(settings).await;
        assert!(
            matches!(
                &result,
                Err(ragent::AgentError::InvalidSettings(
                    ragent::settings::SettingsError::AutoApproveNotAllowed(name)
                )) if name == refused
            ),
            "{refused}: {result:?}"
        );
    }
    let mut settings = h.agent.settings();
    settings
        .tool_overrides
        .insert("shop__create_order".into(), ToolOverride::AutoApprove);
    h.agent.save_settings(settings.clone()).await.unwrap();
    assert_eq!(h.agent.settings(), settings);
}
