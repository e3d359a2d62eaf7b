//! What the tests of a server's requests for input share: the turn that
//! pays, the user's answers, and the audit rows about input.

use ragent::AgentError;
use ragent::protocol::{AuditDecision, InputCard, InputReply, KeyedReply};
use serde_json::{Value, json};

use super::Harness;
use test_support::turns::calls_turn;

/// The model pays order A1 with `server`'s `pay` tool, as call `p1`.
pub fn pay_turn(server: &str) -> Vec<Value> {
    calls_turn(
        "我来支付这个订单。",
        &[("p1", &format!("{server}__pay"), json!({"order": "A1"}))],
    )
}

pub fn reply_to(key: &str, reply: InputReply) -> Vec<KeyedReply> {
    vec![KeyedReply {
        key: key.into(),
        reply,
    }]
}

/// Accepts the payment form of `key` with `method`.
pub fn accept_to(key: &str, method: &str) -> Vec<KeyedReply> {
    reply_to(
        key,
        InputReply::Accept {
            content: Some(json!({ "method": method })),
        },
    )
}

/// The audit rows about requests for input, oldest first.
pub fn input_decisions(h: &Harness) -> Vec<AuditDecision> {
    let mut rows: Vec<AuditDecision> = h
        .agent
        .audit_log(100)
        .unwrap()
        .into_iter()
        .map(|e| e.decision)
        .filter(|d| {
            matches!(
                d,
                AuditDecision::ServerRequestedInput
                    | AuditDecision::InputRequestRefused
                    | AuditDecision::UserAcceptedInput
                    | AuditDecision::UserDeclinedInput
                    | AuditDecision::UserCancelledInput
                    | AuditDecision::Expired
            )
        })
        .collect();
    rows.reverse();
    rows
}

/// A method not offered, an empty form and no answer at all are each
/// refused as not fitting the payment form of `key`.
pub fn assert_answers_off_the_form_are_refused(h: &Harness, card: &InputCard, key: &str) {
    for wrong in [
        accept_to(key, "cash"),
        reply_to(
            key,
            InputReply::Accept {
                content: Some(json!({})),
            },
        ),
        vec![],
    ] {
        let refused = h.agent.answer_input(&h.session, &card.request_id, wrong);
        assert!(
            matches!(refused, Err(AgentError::InvalidInput(_))),
            "{refused:?}"
        );
    }
}

/// Declining and cancelling: the answer, the action the server receives,
/// and the audit row.
pub fn declines_and_cancels() -> [(InputReply, &'static str, AuditDecision); 2] {
    [
        (
            InputReply::Decline,
            "decline",
            AuditDecision::UserDeclinedInput,
        ),
        (
            InputReply::Cancel,
            "cancel",
            AuditDecision::UserCancelledInput,
        ),
    ]
}
