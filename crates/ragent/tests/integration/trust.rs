//! Who is believed: a trusted server's read-only tool runs, the same
//! declaration from an untrusted server asks, a changed definition asks
//! until accepted, one server cannot shadow another's tool, and per-tool
//! settings add a card, refuse a tool, or (audited) skip a card.

use pretty_assertions::assert_eq;
use ragent::policy::{AutoApproveRefusal, ToolOverride};
use ragent::protocol::{AuditDecision, ErrorCode, StopReason};
use ragent::settings::SettingsError;
use ragent::toolcall::CallStatus;
use serde_json::json;

use crate::support::notes::{Notebook, moving_money, note_tool};
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
        .await
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
    let requests = h.model.requests();
    assert!(tool_result(&requests[1], "c1").contains("没有名为 add_note 的工具"));
    let offered = tool_names(&requests[0]);
    assert_eq!(
        offered,
        vec![
            "mine__add_note",
            "mine__count_pages",
            "mine__list_notes",
            "theirs__add_note",
            "theirs__count_pages",
            "theirs__list_notes"
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_tool_settings_add_a_card_or_refuse_a_tool() {
    let mut setup = Setup::shop();
    let overrides = &mut setup.settings.tool_overrides;
    overrides.insert("shop__query_cart".into(), ToolOverride::Ask);
    overrides.insert("shop__query_coupons".into(), ToolOverride::Deny);
    // Stored without the check a save makes: never honoured for a
    // destructive tool.
    overrides.insert("shop__update_cart_item".into(), ToolOverride::AutoApprove);
    let mut h = Harness::start(setup).await;

    h.model.push_turn(calls_turn(
        "",
        &[
            ("c1", "shop__query_coupons", json!({})),
            (
                "c2",
                "shop__update_cart_item",
                json!({"skuCode": IPHONE, "action": "add", "quantity": 1}),
            ),
            ("c3", "shop__query_cart", json!({})),
        ],
    ));
    let run = h.say("看券、加购物车、看购物车").await;
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
            // update_cart_item is destructive: asking cannot be turned off.
            ("update_cart_item".into(), CallStatus::Asking),
            ("query_cart".into(), CallStatus::Asking),
        ]
    );
    let audit = h.agent.audit_log(10).unwrap();
    let decisions: Vec<AuditDecision> = audit.iter().map(|a| a.decision).collect();
    assert_eq!(decisions, vec![AuditDecision::PolicyDenied]);
}

/// A trusted notebook with three more write tools: `tag` declares itself
/// harmless, `pay` moves money (though it says it is not destructive),
/// `hand_over` reaches a person outside.
fn ledger() -> Notebook {
    Notebook::new(false)
        .with_tool(note_tool("tag", |a| a))
        .with_tool(moving_money(note_tool("pay", |a| a)))
        .with_tool(note_tool("hand_over", |a| a.open_world(true)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_approve_is_refused_for_a_tool_that_moves_money_or_reaches_a_person_and_nothing_is_saved()
 {
    let ledger = ledger();
    let mut setup = Setup::bare();
    setup.servers.push(ledger.entry("books", true));
    let mut h = Harness::start(setup).await;
    let before = h.agent.settings();
    for (refused, why) in [
        ("books__pay", AutoApproveRefusal::MovesMoney),
        ("books__hand_over", AutoApproveRefusal::OpenWorld),
    ] {
        let mut settings = h.agent.settings();
        settings
            .tool_overrides
            .insert(refused.into(), ToolOverride::AutoApprove);
        settings.card_expiry_secs = 600;
        let error = h.agent.save_settings(settings).await.unwrap_err();
        assert!(
            matches!(
                &error,
                ragent::AgentError::InvalidSettings(SettingsError::AutoApproveNotAllowed {
                    tool,
                    reason
                }) if tool == refused && *reason == why
            ),
            "{refused}: {error:?}"
        );
        let info = error.info();
        assert_eq!(info.code, ErrorCode::AutoApproveNotAllowed);
        assert!(info.message.contains(refused), "{}", info.message);
        assert_eq!(h.agent.settings(), before, "nothing saved");
    }
    let views = h.agent.tool_policies().await;
    let allowed: Vec<(&str, bool, bool)> = views
        .iter()
        .filter(|v| ["tag", "pay", "hand_over"].contains(&v.tool.as_str()))
        .map(|v| (v.tool.as_str(), v.auto_approve_allowed, v.moves_money))
        .collect();
    assert_eq!(
        allowed,
        vec![
            ("tag", true, false),
            ("pay", false, true),
            ("hand_over", false, false)
        ]
    );

    let mut setup = Setup::bare();
    setup.servers.push(ledger.entry("books", true));
    h.restart(setup).await;
    assert_eq!(h.agent.settings(), before, "nothing was stored either");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_auto_approve_is_never_honoured_for_a_tool_that_moves_money_or_reaches_a_person() {
    let ledger = ledger();
    let mut setup = Setup::bare();
    setup.servers.push(ledger.entry("books", true));
    // As an older version could have stored them.
    for tool in ["books__tag", "books__pay", "books__hand_over"] {
        setup
            .settings
            .tool_overrides
            .insert(tool.into(), ToolOverride::AutoApprove);
    }
    let mut h = Harness::start(setup).await;
    h.model.push_turn(calls_turn(
        "",
        &[
            ("c1", "books__tag", json!({"text": "标签"})),
            ("c2", "books__pay", json!({"text": "付款"})),
            ("c3", "books__hand_over", json!({"text": "转人工"})),
        ],
    ));
    let run = h.say("记账").await;
    let statuses: Vec<(String, CallStatus)> = run
        .card()
        .calls
        .iter()
        .map(|c| (c.tool.clone(), c.status))
        .collect();
    assert_eq!(
        statuses,
        vec![
            ("tag".into(), CallStatus::Allowed),
            ("pay".into(), CallStatus::Asking),
            ("hand_over".into(), CallStatus::Asking),
        ]
    );
    assert!(
        run.card().calls[1].destructive,
        "money is marked on the card"
    );
    assert!(ledger.notes().is_empty(), "the whole batch waits");
    let audit = h.agent.audit_log(10).unwrap();
    assert_eq!(audit.len(), 1);
    assert_eq!(audit[0].decision, AuditDecision::AutoApprovedByUserSetting);
    assert_eq!(audit[0].tool, "tag");
    assert_eq!(audit[0].arguments_hash.len(), 64);
}

/// Saving auto-approve for `refused` fails, naming it.
async fn assert_auto_approve_refused(h: &Harness, refused: &str) {
    let mut settings = h.agent.settings();
    settings
        .tool_overrides
        .insert(refused.into(), ToolOverride::AutoApprove);
    let result = h.agent.save_settings(settings).await;
    assert!(
        matches!(
            &result,
            Err(ragent::AgentError::InvalidSettings(
                SettingsError::AutoApproveNotAllowed { tool, .. }
            )) if tool == refused
        ),
        "{refused}: {result:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn asking_cannot_be_turned_off_for_a_destructive_or_untrusted_tool() {
    let notebook = Notebook::new(false);
    let mut setup = Setup::shop();
    setup.servers.push(notebook.entry("notes", false));
    setup.servers.push(ledger().entry("books", true));
    let h = Harness::start(setup).await;
    for refused in [
        "shop__cancel_order",
        "shop__update_cart_item",
        "notes__add_note",
    ] {
        assert_auto_approve_refused(&h, refused).await;
    }
    let mut settings = h.agent.settings();
    settings
        .tool_overrides
        .insert("books__tag".into(), ToolOverride::AutoApprove);
    h.agent.save_settings(settings.clone()).await.unwrap();
    assert_eq!(h.agent.settings(), settings);
}

/// Passes once the shop declares its money tools (`_meta` and
/// `destructiveHint`) and `submit_ticket` as open-world.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_approve_is_refused_for_every_shop_tool_that_moves_money_or_reaches_a_person() {
    let h = Harness::start(Setup::shop()).await;
    let before = h.agent.settings();
    for refused in [
        "shop__create_order",
        "shop__pay_order",
        "shop__apply_after_sale",
        "shop__cancel_order",
        "shop__submit_ticket",
    ] {
        assert_auto_approve_refused(&h, refused).await;
        assert_eq!(h.agent.settings(), before);
    }
    let mut money: Vec<String> = h
        .agent
        .tool_policies()
        .await
        .into_iter()
        .filter(|v| v.moves_money)
        .map(|v| v.tool)
        .collect();
    money.sort();
    assert_eq!(
        money,
        vec![
            "apply_after_sale",
            "cancel_order",
            "create_order",
            "pay_order"
        ]
    );
}
