//! The approvals table: for a server's trust, a tool's declared hints,
//! the user's setting for that tool and the user's answer on the card,
//! what happens to one call the model proposes. Each row runs end to end
//! through the public `Agent` API: a scripted model proposes the call to
//! an in-process notebook server, and the row reads the setting's fate,
//! whether a card appeared, whether the call ran, what the notebook
//! itself received, and the audit log. A new rule is a new row.

// The support module is shared with the integration stories, which use
// more of it than this table does.
#[allow(dead_code, unused_imports)]
#[path = "integration/support/mod.rs"]
mod support;

use pretty_assertions::assert_eq;
use ragent::AgentError;
use ragent::policy::AutoApproveRefusal::{
    self, Destructive as IsDestructive, MovesMoney, NotAWrite, OpenWorld as ReachesOut,
    Untrusted as NotTrusted,
};
use ragent::policy::ToolOverride;
use ragent::protocol::{AuditDecision, CallDecision, Decision, StopReason, TranscriptItem};
use ragent::settings::SettingsError;
use ragent::toolcall::CallStatus;
use rmcp::model::Tool;
use serde_json::{Value, json};

use support::notes::{Notebook, Received, moving_money, note_tool};
use support::{Harness, Run, Setup, calls_turn, text_turn};

/// The notebook's name as a server.
const SERVER: &str = "books";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Trust {
    Trusted,
    Untrusted,
}
use Trust::{Trusted, Untrusted};

/// What a tool declares about itself.
#[derive(Debug, Clone, Copy)]
enum Hints {
    /// `readOnlyHint: true`.
    ReadOnly,
    /// A write that says it is neither destructive nor open-world.
    Harmless,
    /// A write with `destructiveHint: true`.
    Destructive,
    /// A harmless-looking write with `_meta["ragent/moves_money"]`.
    Money,
    /// A write with `openWorldHint: true`: it reaches a person outside.
    OpenWorld,
    /// No annotations at all.
    Missing,
    /// A money tool that also declares `readOnlyHint: true`.
    MoneyClaimingRead,
    /// `readOnlyHint: true` and `destructiveHint: true` at once.
    DestructiveClaimingRead,
}
use Hints::{
    Destructive, DestructiveClaimingRead, Harmless, Missing, Money, MoneyClaimingRead, OpenWorld,
    ReadOnly,
};

impl Hints {
    /// The notebook's tool that declares these hints.
    fn tool(self) -> &'static str {
        match self {
            ReadOnly => "list_notes",
            Harmless => "tag",
            Destructive => "erase",
            Money => "pay",
            OpenWorld => "hand_over",
            Missing => "scribble",
            MoneyClaimingRead => "peek_and_pay",
            DestructiveClaimingRead => "peek_and_erase",
        }
    }

    fn arguments(self) -> Value {
        match self {
            ReadOnly => json!({}),
            _ => json!({"text": "一笔"}),
        }
    }
}

/// The notebook with a tool for each kind of hints (its own `list_notes`
/// is the read-only one).
fn notebook() -> Notebook {
    Notebook::new(false)
        .with_tool(note_tool(Harmless.tool(), |a| a))
        .with_tool(note_tool(Destructive.tool(), |a| a.destructive(true)))
        .with_tool(moving_money(note_tool(Money.tool(), |a| a)))
        .with_tool(note_tool(OpenWorld.tool(), |a| a.open_world(true)))
        .with_tool(without_hints(note_tool(Missing.tool(), |a| a)))
        .with_tool(moving_money(note_tool(MoneyClaimingRead.tool(), |a| {
            a.read_only(true)
        })))
        .with_tool(note_tool(DestructiveClaimingRead.tool(), |a| {
            a.read_only(true).destructive(true)
        }))
}

/// `tool` with no annotations at all.
fn without_hints(mut tool: Tool) -> Tool {
    tool.annotations = None;
    tool
}

/// The user's per-tool setting, saved as the settings screen saves it.
const UNSET: Option<ToolOverride> = None;
const ASK: Option<ToolOverride> = Some(ToolOverride::Ask);
const DENY: Option<ToolOverride> = Some(ToolOverride::Deny);
const AUTO: Option<ToolOverride> = Some(ToolOverride::AutoApprove);

/// The save is accepted.
const SAVED: Option<AutoApproveRefusal> = None;

/// What the user does if a card appears.
#[derive(Debug, Clone, Copy)]
enum Answer {
    Approve,
    Deny,
    /// No card is expected (one that appears anyway is denied).
    NoCard,
}
use Answer::{Approve, Deny, NoCard};

/// What the notebook receives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sent {
    Nothing,
    /// The call, without an idempotency key (a trusted read).
    Plain,
    /// The call, with the idempotency key every other call carries.
    Keyed,
}

/// The expected fate of the call, past the setting's.
#[derive(Debug, Clone, Copy)]
struct Expect {
    card: bool,
    status: CallStatus,
    sent: Sent,
    audit: AuditDecision,
}

/// A card (or none), the call's stored status, what the server got, and
/// the one audit entry.
const fn expect(card: bool, status: CallStatus, sent: Sent, audit: AuditDecision) -> Expect {
    Expect {
        card,
        status,
        sent,
        audit,
    }
}

use AuditDecision::{
    AutoApprovedByUserSetting, PolicyAllowed, PolicyDenied, UserApproved, UserDenied,
};
use CallStatus::{Denied, Rejected, Succeeded};

/// Runs without a card because a trusted server says it only reads.
const READS: Expect = expect(false, Succeeded, Sent::Plain, PolicyAllowed);
/// Runs without a card because the user turned asking off.
const AUTO_RUNS: Expect = expect(false, Succeeded, Sent::Keyed, AutoApprovedByUserSetting);
/// Refused by the user's deny setting: no card, nothing sent.
const REFUSED: Expect = expect(false, Rejected, Sent::Nothing, PolicyDenied);
/// A card; approved, the call runs with its key.
const APPROVED: Expect = expect(true, Succeeded, Sent::Keyed, UserApproved);
/// A card on a trusted read; approved, it runs as a read (no key).
const APPROVED_READ: Expect = expect(true, Succeeded, Sent::Plain, UserApproved);
/// A card; denied, nothing reaches the server.
const DENIED: Expect = expect(true, Denied, Sent::Nothing, UserDenied);

/// One row of the table: the behaviour it pins; the case (the server's
/// trust, the tool's hints, the user's setting for it); why saving that
/// setting is refused, if it is; the user's answer should a card appear;
/// and what is expected.
#[derive(Clone, Copy)]
struct Row(
    &'static str,
    Trust,
    Hints,
    Option<ToolOverride>,
    Option<AutoApproveRefusal>,
    Answer,
    Expect,
);

#[rustfmt::skip]
const ROWS: &[Row] = &[
    // No setting: the declarations decide, if the server is believed.
    Row("trusted read-only tool runs without a card",                                                     Trusted,   ReadOnly,    UNSET, SAVED,               NoCard,  READS),
    Row("trusted harmless write asks; approved, it runs",                                                 Trusted,   Harmless,    UNSET, SAVED,               Approve, APPROVED),
    Row("trusted harmless write asks; denied, nothing is sent",                                           Trusted,   Harmless,    UNSET, SAVED,               Deny,    DENIED),
    Row("trusted destructive tool asks; approved, it runs",                                               Trusted,   Destructive, UNSET, SAVED,               Approve, APPROVED),
    Row("trusted destructive tool asks; denied, nothing is sent",                                         Trusted,   Destructive, UNSET, SAVED,               Deny,    DENIED),
    Row("trusted money tool asks; approved, it runs",                                                     Trusted,   Money,       UNSET, SAVED,               Approve, APPROVED),
    Row("trusted money tool asks; denied, nothing is sent",                                               Trusted,   Money,       UNSET, SAVED,               Deny,    DENIED),
    Row("trusted open-world tool asks; approved, it runs",                                                Trusted,   OpenWorld,   UNSET, SAVED,               Approve, APPROVED),
    Row("trusted open-world tool asks; denied, nothing is sent",                                          Trusted,   OpenWorld,   UNSET, SAVED,               Deny,    DENIED),
    Row("trusted tool without hints asks; approved, it runs",                                             Trusted,   Missing,     UNSET, SAVED,               Approve, APPROVED),
    Row("trusted tool without hints asks; denied, nothing is sent",                                       Trusted,   Missing,     UNSET, SAVED,               Deny,    DENIED),
    Row("untrusted read-only tool asks; approved, it runs keyed",                                         Untrusted, ReadOnly,    UNSET, SAVED,               Approve, APPROVED),
    Row("untrusted read-only tool asks; denied, nothing is sent",                                         Untrusted, ReadOnly,    UNSET, SAVED,               Deny,    DENIED),
    Row("untrusted harmless write asks; approved, it runs",                                               Untrusted, Harmless,    UNSET, SAVED,               Approve, APPROVED),
    Row("untrusted harmless write asks; denied, nothing is sent",                                         Untrusted, Harmless,    UNSET, SAVED,               Deny,    DENIED),
    Row("untrusted destructive tool asks; approved, it runs",                                             Untrusted, Destructive, UNSET, SAVED,               Approve, APPROVED),
    Row("untrusted destructive tool asks; denied, nothing is sent",                                       Untrusted, Destructive, UNSET, SAVED,               Deny,    DENIED),
    Row("untrusted money tool asks; approved, it runs",                                                   Untrusted, Money,       UNSET, SAVED,               Approve, APPROVED),
    Row("untrusted money tool asks; denied, nothing is sent",                                             Untrusted, Money,       UNSET, SAVED,               Deny,    DENIED),
    Row("untrusted open-world tool asks; approved, it runs",                                              Untrusted, OpenWorld,   UNSET, SAVED,               Approve, APPROVED),
    Row("untrusted open-world tool asks; denied, nothing is sent",                                        Untrusted, OpenWorld,   UNSET, SAVED,               Deny,    DENIED),
    Row("untrusted tool without hints asks; approved, it runs",                                           Untrusted, Missing,     UNSET, SAVED,               Approve, APPROVED),
    Row("untrusted tool without hints asks; denied, nothing is sent",                                     Untrusted, Missing,     UNSET, SAVED,               Deny,    DENIED),

    // A tool that moves money or declares itself destructive asks, even when
    // a trusted server also says it only reads.
    Row("trusted money tool that claims read-only asks; approved, it runs keyed",                         Trusted,   MoneyClaimingRead,       UNSET, SAVED,   Approve, APPROVED),
    Row("trusted money tool that claims read-only asks; denied, nothing is sent",                         Trusted,   MoneyClaimingRead,       UNSET, SAVED,   Deny,    DENIED),
    Row("trusted destructive tool that claims read-only asks; approved, it runs keyed",                   Trusted,   DestructiveClaimingRead, UNSET, SAVED,   Approve, APPROVED),
    Row("trusted destructive tool that claims read-only asks; denied, nothing is sent",                   Trusted,   DestructiveClaimingRead, UNSET, SAVED,   Deny,    DENIED),
    Row("untrusted money tool that claims read-only asks",                                                Untrusted, MoneyClaimingRead,       UNSET, SAVED,   Deny,    DENIED),
    Row("trusted money tool that claims read-only with auto_approve asks and the setting is refused",     Trusted,   MoneyClaimingRead,       AUTO,  Some(MovesMoney),    Approve, APPROVED),
    Row("trusted destructive tool that claims read-only with auto_approve asks and the setting is refused", Trusted, DestructiveClaimingRead, AUTO,  Some(IsDestructive), Deny,    DENIED),
    Row("trusted money tool that claims read-only with deny is refused",                                  Trusted,   MoneyClaimingRead,       DENY,  SAVED,   NoCard,  REFUSED),

    // "Ask": a card for every tool, even a trusted read.
    Row("trusted read-only tool with ask asks; approved, it runs as a read",                              Trusted,   ReadOnly,    ASK,   SAVED,               Approve, APPROVED_READ),
    Row("trusted read-only tool with ask asks; denied, nothing is sent",                                  Trusted,   ReadOnly,    ASK,   SAVED,               Deny,    DENIED),
    Row("trusted harmless write with ask asks",                                                           Trusted,   Harmless,    ASK,   SAVED,               Approve, APPROVED),
    Row("trusted destructive tool with ask asks",                                                         Trusted,   Destructive, ASK,   SAVED,               Deny,    DENIED),
    Row("trusted money tool with ask asks",                                                               Trusted,   Money,       ASK,   SAVED,               Approve, APPROVED),
    Row("trusted open-world tool with ask asks",                                                          Trusted,   OpenWorld,   ASK,   SAVED,               Deny,    DENIED),
    Row("trusted tool without hints with ask asks",                                                       Trusted,   Missing,     ASK,   SAVED,               Approve, APPROVED),
    Row("untrusted read-only tool with ask asks",                                                         Untrusted, ReadOnly,    ASK,   SAVED,               Deny,    DENIED),
    Row("untrusted harmless write with ask asks",                                                         Untrusted, Harmless,    ASK,   SAVED,               Approve, APPROVED),
    Row("untrusted destructive tool with ask asks",                                                       Untrusted, Destructive, ASK,   SAVED,               Deny,    DENIED),
    Row("untrusted money tool with ask asks",                                                             Untrusted, Money,       ASK,   SAVED,               Approve, APPROVED),
    Row("untrusted open-world tool with ask asks",                                                        Untrusted, OpenWorld,   ASK,   SAVED,               Deny,    DENIED),
    Row("untrusted tool without hints with ask asks",                                                     Untrusted, Missing,     ASK,   SAVED,               Approve, APPROVED),

    // "Deny": refused before any card, whatever the tool declares.
    Row("trusted read-only tool with deny is refused",                                                    Trusted,   ReadOnly,    DENY,  SAVED,               NoCard,  REFUSED),
    Row("trusted harmless write with deny is refused",                                                    Trusted,   Harmless,    DENY,  SAVED,               NoCard,  REFUSED),
    Row("trusted destructive tool with deny is refused",                                                  Trusted,   Destructive, DENY,  SAVED,               NoCard,  REFUSED),
    Row("trusted money tool with deny is refused",                                                        Trusted,   Money,       DENY,  SAVED,               NoCard,  REFUSED),
    Row("trusted open-world tool with deny is refused",                                                   Trusted,   OpenWorld,   DENY,  SAVED,               NoCard,  REFUSED),
    Row("trusted tool without hints with deny is refused",                                                Trusted,   Missing,     DENY,  SAVED,               NoCard,  REFUSED),
    Row("untrusted read-only tool with deny is refused",                                                  Untrusted, ReadOnly,    DENY,  SAVED,               NoCard,  REFUSED),
    Row("untrusted harmless write with deny is refused",                                                  Untrusted, Harmless,    DENY,  SAVED,               NoCard,  REFUSED),
    Row("untrusted destructive tool with deny is refused",                                                Untrusted, Destructive, DENY,  SAVED,               NoCard,  REFUSED),
    Row("untrusted money tool with deny is refused",                                                      Untrusted, Money,       DENY,  SAVED,               NoCard,  REFUSED),
    Row("untrusted open-world tool with deny is refused",                                                 Untrusted, OpenWorld,   DENY,  SAVED,               NoCard,  REFUSED),
    Row("untrusted tool without hints with deny is refused",                                              Untrusted, Missing,     DENY,  SAVED,               NoCard,  REFUSED),

    // "Auto-approve": saved only for a trusted harmless write; refused
    // for anything else, which then behaves as with no setting.
    Row("trusted read-only tool with auto_approve: the setting is refused, it still runs without a card", Trusted,   ReadOnly,    AUTO,  Some(NotAWrite),     NoCard,  READS),
    Row("trusted harmless write with auto_approve runs without a card",                                   Trusted,   Harmless,    AUTO,  SAVED,               NoCard,  AUTO_RUNS),
    Row("trusted destructive tool with auto_approve asks and the setting is refused",                     Trusted,   Destructive, AUTO,  Some(IsDestructive), Approve, APPROVED),
    Row("trusted money tool with auto_approve asks and the setting is refused",                           Trusted,   Money,       AUTO,  Some(MovesMoney),    Approve, APPROVED),
    Row("trusted open-world tool with auto_approve asks and the setting is refused",                      Trusted,   OpenWorld,   AUTO,  Some(ReachesOut),    Deny,    DENIED),
    Row("trusted tool without hints with auto_approve asks and the setting is refused",                   Trusted,   Missing,     AUTO,  Some(NotAWrite),     Approve, APPROVED),
    Row("untrusted read-only tool with auto_approve asks and the setting is refused",                     Untrusted, ReadOnly,    AUTO,  Some(NotTrusted),    Approve, APPROVED),
    Row("untrusted harmless write with auto_approve asks and the setting is refused",                     Untrusted, Harmless,    AUTO,  Some(NotTrusted),    Deny,    DENIED),
    Row("untrusted destructive tool with auto_approve asks and the setting is refused",                   Untrusted, Destructive, AUTO,  Some(NotTrusted),    Approve, APPROVED),
    Row("untrusted money tool with auto_approve asks and the setting is refused",                         Untrusted, Money,       AUTO,  Some(NotTrusted),    Deny,    DENIED),
    Row("untrusted open-world tool with auto_approve asks and the setting is refused",                    Untrusted, OpenWorld,   AUTO,  Some(NotTrusted),    Approve, APPROVED),
    Row("untrusted tool without hints with auto_approve asks and the setting is refused",                 Untrusted, Missing,     AUTO,  Some(NotTrusted),    Deny,    DENIED),
];

/// What became of the user's setting.
#[derive(Debug, Clone, PartialEq, Eq)]
enum SettingFate {
    Unset,
    Stored(ToolOverride),
    Refused(AutoApproveRefusal),
}

/// One audit entry: who decided what for which tool.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Audited {
    server: String,
    tool: String,
    decision: AuditDecision,
}

/// Everything a row checks, as seen from outside the core: the settings
/// it holds, its events, the notebook's own record and the audit log.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Outcome {
    setting: SettingFate,
    card: bool,
    ran: bool,
    /// The call's status as stored, from the session's transcript.
    stored: Vec<CallStatus>,
    received: Vec<Received>,
    audit: Vec<Audited>,
    ended: StopReason,
}

/// The name the model calls the tool by.
fn qualified_name(hints: Hints) -> String {
    format!("{SERVER}__{}", hints.tool())
}

impl Row {
    fn expected(&self) -> Outcome {
        let Row(_, _, hints, setting, refused, _, expect) = *self;
        let setting = match (setting, refused) {
            (_, Some(reason)) => SettingFate::Refused(reason),
            (Some(setting), None) => SettingFate::Stored(setting),
            (None, None) => SettingFate::Unset,
        };
        let received = match expect.sent {
            Sent::Nothing => Vec::new(),
            Sent::Plain | Sent::Keyed => vec![Received {
                tool: hints.tool().to_string(),
                arguments: hints.arguments(),
                keyed: expect.sent == Sent::Keyed,
            }],
        };
        Outcome {
            setting,
            card: expect.card,
            ran: expect.sent != Sent::Nothing,
            stored: vec![expect.status],
            received,
            audit: vec![Audited {
                server: SERVER.into(),
                tool: hints.tool().into(),
                decision: expect.audit,
            }],
            ended: StopReason::Completed,
        }
    }
}

/// Saves the row's setting as the settings screen would, and reports
/// what the agent then holds for the tool.
async fn save_setting(h: &Harness, row: &Row) -> SettingFate {
    let Row(behaviour, _, hints, setting, ..) = *row;
    let Some(setting) = setting else {
        return SettingFate::Unset;
    };
    let name = qualified_name(hints);
    let mut settings = h.agent.settings();
    settings.tool_overrides.insert(name.clone(), setting);
    let refused = match h.agent.save_settings(settings).await {
        Ok(()) => None,
        Err(AgentError::InvalidSettings(SettingsError::AutoApproveNotAllowed { tool, reason })) => {
            assert_eq!(tool, name, "{behaviour}: the refusal names the tool");
            Some(reason)
        }
        Err(other) => panic!("{behaviour}: saving the setting failed: {other:?}"),
    };
    let held = h.agent.settings().tool_overrides.get(&name).copied();
    match (refused, held) {
        (None, Some(held)) => SettingFate::Stored(held),
        (Some(reason), None) => SettingFate::Refused(reason),
        (refused, held) => {
            panic!("{behaviour}: save answered {refused:?} but the agent holds {held:?}")
        }
    }
}

/// Plays one row: the model proposes the call, the user answers any card
/// as the row says, and the model then closes the turn.
async fn play(row: &Row) -> Outcome {
    let Row(_, trust, hints, _, _, answer, _) = *row;
    let notebook = notebook();
    let mut setup = Setup::bare();
    setup.servers.push(notebook.entry(SERVER, trust == Trusted));
    let mut h = Harness::start(setup).await;
    let setting = save_setting(&h, row).await;

    h.model.push_turn(calls_turn(
        "",
        &[("c1", &qualified_name(hints), hints.arguments())],
    ));
    h.model.push_turn(text_turn("好的。"));
    let first = h.say("记一笔").await;
    let card = first.asked();
    let mut events = first.events.clone();
    let ended = if card {
        let card = first.card().clone();
        let decision = match answer {
            Answer::Approve => Decision::Approve,
            Answer::Deny | Answer::NoCard => Decision::Deny { reason: None },
        };
        let decisions = card
            .calls
            .iter()
            .map(|c| CallDecision {
                call_id: c.call_id.clone(),
                decision: decision.clone(),
            })
            .collect();
        h.agent
            .respond(&h.session, &card.reply_id, decisions)
            .await
            .unwrap();
        let after = h.events.until_stop().await;
        events.extend(after.events);
        after.reason
    } else {
        first.reason
    };
    let run = Run {
        events,
        reason: ended.clone(),
    };
    let stored = h
        .agent
        .transcript(&h.session)
        .unwrap()
        .items
        .into_iter()
        .filter_map(|item| match item {
            TranscriptItem::ToolCall { call } => Some(call.status),
            _ => None,
        })
        .collect();
    let mut audit: Vec<Audited> = h
        .agent
        .audit_log(10)
        .unwrap()
        .into_iter()
        .map(|a| Audited {
            server: a.server,
            tool: a.tool,
            decision: a.decision,
        })
        .collect();
    audit.reverse();
    h.agent.shutdown().await;
    Outcome {
        setting,
        card,
        ran: !run.started().is_empty(),
        stored,
        received: notebook.calls(),
        audit,
        ended,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_trust_hints_setting_and_answer_ends_as_the_table_says() {
    // One agent, model and notebook per row, one row after another: about
    // 50 ms a row, no faster when several run at once on two cores.
    let mut played: Vec<(&str, Outcome)> = Vec::new();
    for row in ROWS {
        played.push((row.0, play(row).await));
    }
    let expected: Vec<(&str, Outcome)> = ROWS.iter().map(|row| (row.0, row.expected())).collect();
    assert_eq!(played, expected);
}
