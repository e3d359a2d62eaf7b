//! The approvals table: for a server's trust, a tool's declared hints,
//! the user's setting for that tool and the user's answer on the card,
//! what happens to one call the model proposes. Each row runs end to end
//! through the public `Agent` API: a scripted model proposes the call to
//! an in-process notebook server, and the row reads the setting's fate,
//! whether a card appeared, whether the call ran, what the notebook
//! itself received, and the audit log. A new rule is a new row.

// The support module is shared with the integration stories, which use
// more of it than this table does.
#[allow(dead_code)]
#[path = "integration/support/mod.rs"]
mod support;

use futures::StreamExt;
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

/// Rows played at once: each has its own agent, model and notebook.
const AT_ONCE: usize = 4;

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
}
use Hints::{Destructive, Harmless, Missing, Money, OpenWorld, ReadOnly};

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

/// One row of the table: the case, then what is expected of it.
struct Row {
    behaviour: &'static str,
    trust: Trust,
    hints: Hints,
    setting: Option<ToolOverride>,
    refused: Option<AutoApproveRefusal>,
    answer: Answer,
    expect: Expect,
}

const fn row(
    behaviour: &'static str,
    trust: Trust,
    hints: Hints,
    setting: Option<ToolOverride>,
    refused: Option<AutoApproveRefusal>,
    answer: Answer,
    expect: Expect,
) -> Row {
    Row {
        behaviour,
        trust,
        hints,
        setting,
        refused,
        answer,
        expect,
    }
}

#[rustfmt::skip]
const ROWS: &[Row] = &[
    // No setting: the declarations decide, if the server is believed.
    row("trusted read-only tool runs without a card",                                                     Trusted,   ReadOnly,    UNSET, SAVED,               NoCard,  READS),
    row("trusted harmless write asks; approved, it runs",                                                 Trusted,   Harmless,    UNSET, SAVED,               Approve, APPROVED),
    row("trusted harmless write asks; denied, nothing is sent",                                           Trusted,   Harmless,    UNSET, SAVED,               Deny,    DENIED),
    row("trusted destructive tool asks; approved, it runs",                                               Trusted,   Destructive, UNSET, SAVED,               Approve, APPROVED),
    row("trusted destructive tool asks; denied, nothing is sent",                                         Trusted,   Destructive, UNSET, SAVED,               Deny,    DENIED),
    row("trusted money tool asks; approved, it runs",                                                     Trusted,   Money,       UNSET, SAVED,               Approve, APPROVED),
    row("trusted money tool asks; denied, nothing is sent",                                               Trusted,   Money,       UNSET, SAVED,               Deny,    DENIED),
    row("trusted open-world tool asks; approved, it runs",                                                Trusted,   OpenWorld,   UNSET, SAVED,               Approve, APPROVED),
    row("trusted open-world tool asks; denied, nothing is sent",                                          Trusted,   OpenWorld,   UNSET, SAVED,               Deny,    DENIED),
    row("trusted tool without hints asks; approved, it runs",                                             Trusted,   Missing,     UNSET, SAVED,               Approve, APPROVED),
    row("trusted tool without hints asks; denied, nothing is sent",                                       Trusted,   Missing,     UNSET, SAVED,               Deny,    DENIED),
    row("untrusted read-only tool asks; approved, it runs keyed",                                         Untrusted, ReadOnly,    UNSET, SAVED,               Approve, APPROVED),
    row("untrusted read-only tool asks; denied, nothing is sent",                                         Untrusted, ReadOnly,    UNSET, SAVED,               Deny,    DENIED),
    row("untrusted harmless write asks; approved, it runs",                                               Untrusted, Harmless,    UNSET, SAVED,               Approve, APPROVED),
    row("untrusted harmless write asks; denied, nothing is sent",                                         Untrusted, Harmless,    UNSET, SAVED,               Deny,    DENIED),
    row("untrusted destructive tool asks; approved, it runs",                                             Untrusted, Destructive, UNSET, SAVED,               Approve, APPROVED),
    row("untrusted destructive tool asks; denied, nothing is sent",                                       Untrusted, Destructive, UNSET, SAVED,               Deny,    DENIED),
    row("untrusted money tool asks; approved, it runs",                                                   Untrusted, Money,       UNSET, SAVED,               Approve, APPROVED),
    row("untrusted money tool asks; denied, nothing is sent",                                             Untrusted, Money,       UNSET, SAVED,               Deny,    DENIED),
    row("untrusted open-world tool asks; approved, it runs",                                              Untrusted, OpenWorld,   UNSET, SAVED,               Approve, APPROVED),
    row("untrusted open-world tool asks; denied, nothing is sent",                                        Untrusted, OpenWorld,   UNSET, SAVED,               Deny,    DENIED),
    row("untrusted tool without hints asks; approved, it runs",                                           Untrusted, Missing,     UNSET, SAVED,               Approve, APPROVED),
    row("untrusted tool without hints asks; denied, nothing is sent",                                     Untrusted, Missing,     UNSET, SAVED,               Deny,    DENIED),

    // "Ask": a card for every tool, even a trusted read.
    row("trusted read-only tool with ask asks; approved, it runs as a read",                              Trusted,   ReadOnly,    ASK,   SAVED,               Approve, APPROVED_READ),
    row("trusted read-only tool with ask asks; denied, nothing is sent",                                  Trusted,   ReadOnly,    ASK,   SAVED,               Deny,    DENIED),
    row("trusted harmless write with ask asks",                                                           Trusted,   Harmless,    ASK,   SAVED,               Approve, APPROVED),
    row("trusted destructive tool with ask asks",                                                         Trusted,   Destructive, ASK,   SAVED,               Deny,    DENIED),
    row("trusted money tool with ask asks",                                                               Trusted,   Money,       ASK,   SAVED,               Approve, APPROVED),
    row("trusted open-world tool with ask asks",                                                          Trusted,   OpenWorld,   ASK,   SAVED,               Deny,    DENIED),
    row("trusted tool without hints with ask asks",                                                       Trusted,   Missing,     ASK,   SAVED,               Approve, APPROVED),
    row("untrusted read-only tool with ask asks",                                                         Untrusted, ReadOnly,    ASK,   SAVED,               Deny,    DENIED),
    row("untrusted harmless write with ask asks",                                                         Untrusted, Harmless,    ASK,   SAVED,               Approve, APPROVED),
    row("untrusted destructive tool with ask asks",                                                       Untrusted, Destructive, ASK,   SAVED,               Deny,    DENIED),
    row("untrusted money tool with ask asks",                                                             Untrusted, Money,       ASK,   SAVED,               Approve, APPROVED),
    row("untrusted open-world tool with ask asks",                                                        Untrusted, OpenWorld,   ASK,   SAVED,               Deny,    DENIED),
    row("untrusted tool without hints with ask asks",                                                     Untrusted, Missing,     ASK,   SAVED,               Approve, APPROVED),

    // "Deny": refused before any card, whatever the tool declares.
    row("trusted read-only tool with deny is refused",                                                    Trusted,   ReadOnly,    DENY,  SAVED,               NoCard,  REFUSED),
    row("trusted harmless write with deny is refused",                                                    Trusted,   Harmless,    DENY,  SAVED,               NoCard,  REFUSED),
    row("trusted destructive tool with deny is refused",                                                  Trusted,   Destructive, DENY,  SAVED,               NoCard,  REFUSED),
    row("trusted money tool with deny is refused",                                                        Trusted,   Money,       DENY,  SAVED,               NoCard,  REFUSED),
    row("trusted open-world tool with deny is refused",                                                   Trusted,   OpenWorld,   DENY,  SAVED,               NoCard,  REFUSED),
    row("trusted tool without hints with deny is refused",                                                Trusted,   Missing,     DENY,  SAVED,               NoCard,  REFUSED),
    row("untrusted read-only tool with deny is refused",                                                  Untrusted, ReadOnly,    DENY,  SAVED,               NoCard,  REFUSED),
    row("untrusted harmless write with deny is refused",                                                  Untrusted, Harmless,    DENY,  SAVED,               NoCard,  REFUSED),
    row("untrusted destructive tool with deny is refused",                                                Untrusted, Destructive, DENY,  SAVED,               NoCard,  REFUSED),
    row("untrusted money tool with deny is refused",                                                      Untrusted, Money,       DENY,  SAVED,               NoCard,  REFUSED),
    row("untrusted open-world tool with deny is refused",                                                 Untrusted, OpenWorld,   DENY,  SAVED,               NoCard,  REFUSED),
    row("untrusted tool without hints with deny is refused",                                              Untrusted, Missing,     DENY,  SAVED,               NoCard,  REFUSED),

    // "Auto-approve": saved only for a trusted harmless write; refused
    // for anything else, which then behaves as with no setting.
    row("trusted read-only tool with auto_approve: the setting is refused, it still runs without a card", Trusted,   ReadOnly,    AUTO,  Some(NotAWrite),     NoCard,  READS),
    row("trusted harmless write with auto_approve runs without a card",                                   Trusted,   Harmless,    AUTO,  SAVED,               NoCard,  AUTO_RUNS),
    row("trusted destructive tool with auto_approve asks and the setting is refused",                     Trusted,   Destructive, AUTO,  Some(IsDestructive), Approve, APPROVED),
    row("trusted money tool with auto_approve asks and the setting is refused",                           Trusted,   Money,       AUTO,  Some(MovesMoney),    Approve, APPROVED),
    row("trusted open-world tool with auto_approve asks and the setting is refused",                      Trusted,   OpenWorld,   AUTO,  Some(ReachesOut),    Deny,    DENIED),
    row("trusted tool without hints with auto_approve asks and the setting is refused",                   Trusted,   Missing,     AUTO,  Some(NotAWrite),     Approve, APPROVED),
    row("untrusted read-only tool with auto_approve asks and the setting is refused",                     Untrusted, ReadOnly,    AUTO,  Some(NotTrusted),    Approve, APPROVED),
    row("untrusted harmless write with auto_approve asks and the setting is refused",                     Untrusted, Harmless,    AUTO,  Some(NotTrusted),    Deny,    DENIED),
    row("untrusted destructive tool with auto_approve asks and the setting is refused",                   Untrusted, Destructive, AUTO,  Some(NotTrusted),    Approve, APPROVED),
    row("untrusted money tool with auto_approve asks and the setting is refused",                         Untrusted, Money,       AUTO,  Some(NotTrusted),    Deny,    DENIED),
    row("untrusted open-world tool with auto_approve asks and the setting is refused",                    Untrusted, OpenWorld,   AUTO,  Some(NotTrusted),    Approve, APPROVED),
    row("untrusted tool without hints with auto_approve asks and the setting is refused",                 Untrusted, Missing,     AUTO,  Some(NotTrusted),    Deny,    DENIED),
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

impl Row {
    fn qualified_name(&self) -> String {
        format!("{SERVER}__{}", self.hints.tool())
    }

    fn expected(&self) -> Outcome {
        let setting = match (self.setting, self.refused) {
            (_, Some(reason)) => SettingFate::Refused(reason),
            (Some(setting), None) => SettingFate::Stored(setting),
            (None, None) => SettingFate::Unset,
        };
        let received = match self.expect.sent {
            Sent::Nothing => Vec::new(),
            Sent::Plain | Sent::Keyed => vec![Received {
                tool: self.hints.tool().to_string(),
                arguments: self.hints.arguments(),
                keyed: self.expect.sent == Sent::Keyed,
            }],
        };
        Outcome {
            setting,
            card: self.expect.card,
            ran: self.expect.sent != Sent::Nothing,
            stored: vec![self.expect.status],
            received,
            audit: vec![Audited {
                server: SERVER.into(),
                tool: self.hints.tool().into(),
                decision: self.expect.audit,
            }],
            ended: StopReason::Completed,
        }
    }
}

/// Saves the row's setting as the settings screen would, and reports
/// what the agent then holds for the tool.
async fn save_setting(h: &Harness, row: &Row) -> SettingFate {
    let Some(setting) = row.setting else {
        return SettingFate::Unset;
    };
    let name = row.qualified_name();
    let mut settings = h.agent.settings();
    settings.tool_overrides.insert(name.clone(), setting);
    let refused = match h.agent.save_settings(settings).await {
        Ok(()) => None,
        Err(AgentError::InvalidSettings(SettingsError::AutoApproveNotAllowed { tool, reason })) => {
            assert_eq!(tool, name, "{}: the refusal names the tool", row.behaviour);
            Some(reason)
        }
        Err(other) => panic!("{}: saving the setting failed: {other:?}", row.behaviour),
    };
    let held = h.agent.settings().tool_overrides.get(&name).copied();
    match (refused, held) {
        (None, Some(held)) => SettingFate::Stored(held),
        (Some(reason), None) => SettingFate::Refused(reason),
        (refused, held) => panic!(
            "{}: save answered {refused:?} but the agent holds {held:?}",
            row.behaviour
        ),
    }
}

/// Plays one row: the model proposes the call, the user answers any card
/// as the row says, and the model then closes the turn.
async fn play(row: &Row) -> Outcome {
    let notebook = notebook();
    let mut setup = Setup::bare();
    setup
        .servers
        .push(notebook.entry(SERVER, row.trust == Trusted));
    let mut h = Harness::start(setup).await;
    let setting = save_setting(&h, row).await;

    h.model.push_turn(calls_turn(
        "",
        &[("c1", &row.qualified_name(), row.hints.arguments())],
    ));
    h.model.push_turn(text_turn("好的。"));
    let first = h.say("记一笔").await;
    let card = first.asked();
    let mut events = first.events.clone();
    let ended = if card {
        let card = first.card().clone();
        let decision = match row.answer {
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
    let played: Vec<(&str, Outcome)> = futures::stream::iter(ROWS)
        .map(|row| async move { (row.behaviour, play(row).await) })
        .buffered(AT_ONCE)
        .collect()
        .await;
    let expected: Vec<(&str, Outcome)> = ROWS
        .iter()
        .map(|row| (row.behaviour, row.expected()))
        .collect();
    assert_eq!(played, expected);
}
