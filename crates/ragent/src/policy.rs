//! Which tool calls must stop for the user. Code decides, not the model:
//! a pure function of the tool's declared annotations, the server's trust
//! and the user's per-tool setting. No I/O here.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// A per-tool user setting, keyed by `server__tool`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ToolOverride {
    /// Always show a card, even for a trusted read-only tool.
    Ask,
    /// Never run this tool.
    Deny,
    /// Run this write tool without a card. Honoured only where
    /// [`auto_approve_possible`] says so; audited.
    AutoApprove,
}

/// Whether a server's annotations are believed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trust {
    Trusted,
    Untrusted,
}

/// What the policy looks at in a tool's definition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ToolFacts {
    pub read_only_hint: Option<bool>,
    pub destructive_hint: Option<bool>,
    pub open_world_hint: Option<bool>,
    /// The definition's `_meta` says the tool places an order or moves
    /// money (`ragent/moves_money`). It only ever takes a permission away,
    /// so it is believed from any server.
    pub moves_money: bool,
    /// The definition differs from the one pinned when first seen.
    pub definition_changed: bool,
}

/// The policy's answer for one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Allow(AllowedBy),
    Ask,
    Deny,
}

/// Why a call may run without a card (the audit log records which).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AllowedBy {
    /// A trusted server declares the tool read-only.
    TrustedReadOnly,
    /// The user turned asking off for this non-destructive write tool.
    UserSetting,
}

/// The one decision function. Rules, first match wins:
/// 1. a per-tool deny refuses the call;
/// 2. a changed definition always asks;
/// 3. a per-tool ask asks;
/// 4. an untrusted server asks, whatever it declares;
/// 5. a trusted read-only tool runs;
/// 6. a write tool runs if the user turned asking off for it and
///    [`auto_approve_possible`] allows that (a setting stored by an older
///    version for a tool that no longer qualifies is ignored here);
/// 7. everything else asks (write tools, missing hints).
pub fn decide(tool: &ToolFacts, trust: Trust, user_override: Option<ToolOverride>) -> Verdict {
    if user_override == Some(ToolOverride::Deny) {
        return Verdict::Deny;
    }
    if tool.definition_changed || user_override == Some(ToolOverride::Ask) {
        return Verdict::Ask;
    }
    if trust == Trust::Untrusted {
        return Verdict::Ask;
    }
    if tool.read_only_hint == Some(true) {
        return Verdict::Allow(AllowedBy::TrustedReadOnly);
    }
    if user_override == Some(ToolOverride::AutoApprove) && auto_approve_possible(tool, trust) {
        return Verdict::Allow(AllowedBy::UserSetting);
    }
    Verdict::Ask
}

/// Why the user may not turn asking off for a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AutoApproveRefusal {
    /// The server is not trusted: nothing it declares is believed.
    Untrusted,
    /// A read, or a tool that does not say it writes: nothing to turn off.
    NotAWrite,
    /// It places an order or moves money.
    MovesMoney,
    /// It is destructive, or does not say it is not (MCP's default).
    Destructive,
    /// It reaches beyond the shop (a person, another service), or does not
    /// say it does not (MCP's default): what it sets off there cannot be
    /// seen or undone from here, so a person should see each call.
    OpenWorld,
}

impl std::fmt::Display for AutoApproveRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            AutoApproveRefusal::Untrusted => "its server is not trusted",
            AutoApproveRefusal::NotAWrite => "it does not declare itself a write tool",
            AutoApproveRefusal::MovesMoney => "it places an order or moves money",
            AutoApproveRefusal::Destructive => {
                "it is destructive, or does not declare that it is not"
            }
            AutoApproveRefusal::OpenWorld => {
                "it reaches beyond the shop, or does not declare that it does not"
            }
        })
    }
}

/// Whether the user may turn asking off for this tool, and if not, why:
/// only a trusted server's write tool that declares itself
/// non-destructive and closed-world and does not move money qualifies.
pub fn auto_approve_refusal(tool: &ToolFacts, trust: Trust) -> Option<AutoApproveRefusal> {
    if trust == Trust::Untrusted {
        return Some(AutoApproveRefusal::Untrusted);
    }
    if tool.read_only_hint != Some(false) {
        return Some(AutoApproveRefusal::NotAWrite);
    }
    if tool.moves_money {
        return Some(AutoApproveRefusal::MovesMoney);
    }
    if tool.destructive_hint != Some(false) {
        return Some(AutoApproveRefusal::Destructive);
    }
    if tool.open_world_hint != Some(false) {
        return Some(AutoApproveRefusal::OpenWorld);
    }
    None
}

/// Whether the user may turn asking off for this tool.
pub fn auto_approve_possible(tool: &ToolFacts, trust: Trust) -> bool {
    auto_approve_refusal(tool, trust).is_none()
}

/// Whether a write whose outcome is unknown (the connection broke, or the
/// app stopped while it was out) may be sent again with the same
/// idempotency key. Only a trusted server's claim to recognise a repeated
/// key is believed: an untrusted one that does not would do the work twice.
pub fn resend_is_safe(sends_key: bool, trust: Trust, server_declares_keys: bool) -> bool {
    !sends_key || (trust == Trust::Trusted && server_declares_keys)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::ToolOverride::{Ask as OAsk, AutoApprove, Deny as ODeny};
    use super::Trust::{Trusted, Untrusted};
    use super::*;

    const READ: ToolFacts = ToolFacts {
        read_only_hint: Some(true),
        destructive_hint: None,
        open_world_hint: Some(false),
        moves_money: false,
        definition_changed: false,
    };
    /// A write that declares itself harmless in every way: the only kind
    /// that may skip the card.
    const WRITE: ToolFacts = ToolFacts {
        read_only_hint: Some(false),
        destructive_hint: Some(false),
        open_world_hint: Some(false),
        moves_money: false,
        definition_changed: false,
    };
    const DESTRUCTIVE: ToolFacts = ToolFacts {
        destructive_hint: Some(true),
        ..WRITE
    };
    /// A write tool that does not say whether it is destructive: MCP's
    /// default for a missing destructiveHint is "destructive".
    const WRITE_NO_DESTRUCTIVE_HINT: ToolFacts = ToolFacts {
        destructive_hint: None,
        ..WRITE
    };
    /// Places an order or pays, though it declares itself non-destructive.
    const MONEY: ToolFacts = ToolFacts {
        moves_money: true,
        ..WRITE
    };
    /// Reaches a person outside the shop (a ticket to a human agent).
    const OPEN_WORLD: ToolFacts = ToolFacts {
        open_world_hint: Some(true),
        ..WRITE
    };
    /// MCP's default for a missing openWorldHint is "open world".
    const WRITE_NO_OPEN_WORLD_HINT: ToolFacts = ToolFacts {
        open_world_hint: None,
        ..WRITE
    };
    const NO_HINTS: ToolFacts = ToolFacts {
        read_only_hint: None,
        destructive_hint: None,
        open_world_hint: None,
        moves_money: false,
        definition_changed: false,
    };
    const CHANGED_READ: ToolFacts = ToolFacts {
        definition_changed: true,
        ..READ
    };

    const ALLOW: Verdict = Verdict::Allow(AllowedBy::TrustedReadOnly);
    const ALLOW_BY_USER: Verdict = Verdict::Allow(AllowedBy::UserSetting);
    const ASK: Verdict = Verdict::Ask;
    const DENY: Verdict = Verdict::Deny;

    #[rustfmt::skip]
    const TABLE: &[(&str, ToolFacts, Trust, Option<ToolOverride>, Verdict)] = &[
        ("trusted read-only tool runs",                     READ,        Trusted,   None,              ALLOW),
        ("untrusted read-only tool asks",                   READ,        Untrusted, None,              ASK),
        ("trusted write tool asks",                         WRITE,       Trusted,   None,              ASK),
        ("trusted destructive tool asks",                   DESTRUCTIVE, Trusted,   None,              ASK),
        ("untrusted write tool asks",                       WRITE,       Untrusted, None,              ASK),
        ("missing hints ask, even when trusted",            NO_HINTS,    Trusted,   None,              ASK),
        ("missing hints ask when untrusted",                NO_HINTS,    Untrusted, None,              ASK),
        ("changed definition asks, even read-only trusted", CHANGED_READ, Trusted,  None,              ASK),
        ("changed definition asks despite auto-approve",    ToolFacts { definition_changed: true, ..WRITE }, Trusted, Some(AutoApprove), ASK),
        ("override ask adds a card to a trusted read",      READ,        Trusted,   Some(OAsk),        ASK),
        ("override deny refuses a trusted read",            READ,        Trusted,   Some(ODeny),       DENY),
        ("override deny refuses a write",                   WRITE,       Trusted,   Some(ODeny),       DENY),
        ("override deny refuses an untrusted tool",         NO_HINTS,    Untrusted, Some(ODeny),       DENY),
        ("override deny wins over a changed definition",    CHANGED_READ, Trusted,  Some(ODeny),       DENY),
        ("auto-approve lets a trusted non-destructive write run", WRITE, Trusted,   Some(AutoApprove), ALLOW_BY_USER),
        ("auto-approve never applies to a destructive tool", DESTRUCTIVE, Trusted,  Some(AutoApprove), ASK),
        ("auto-approve needs an explicit destructiveHint=false", WRITE_NO_DESTRUCTIVE_HINT, Trusted, Some(AutoApprove), ASK),
        ("auto-approve never applies on an untrusted server", WRITE,     Untrusted, Some(AutoApprove), ASK),
        ("auto-approve on a tool without hints still asks", NO_HINTS,    Trusted,   Some(AutoApprove), ASK),
        ("auto-approve on a trusted read changes nothing",  READ,        Trusted,   Some(AutoApprove), ALLOW),
        ("a tool that moves money asks",                    MONEY,       Trusted,   None,              ASK),
        ("auto-approve never applies to a tool that moves money", MONEY, Trusted,   Some(AutoApprove), ASK),
        ("override deny refuses a tool that moves money",   MONEY,       Trusted,   Some(ODeny),       DENY),
        ("auto-approve never applies to an open-world tool", OPEN_WORLD, Trusted,   Some(AutoApprove), ASK),
        ("auto-approve needs an explicit openWorldHint=false", WRITE_NO_OPEN_WORLD_HINT, Trusted, Some(AutoApprove), ASK),
        ("an open-world write asks",                        OPEN_WORLD,  Trusted,   None,              ASK),
    ];

    #[test]
    fn auto_approve_is_refused_for_a_tool_that_moves_money_is_destructive_or_open_world() {
        use AutoApproveRefusal::{Destructive, MovesMoney, NotAWrite, OpenWorld};
        #[rustfmt::skip]
        let cases: &[(ToolFacts, Trust, Option<AutoApproveRefusal>)] = &[
            (WRITE,                     Trusted,   None),
            (WRITE,                     Untrusted, Some(AutoApproveRefusal::Untrusted)),
            (READ,                      Trusted,   Some(NotAWrite)),
            (NO_HINTS,                  Trusted,   Some(NotAWrite)),
            (MONEY,                     Trusted,   Some(MovesMoney)),
            (ToolFacts { destructive_hint: Some(true), ..MONEY }, Trusted, Some(MovesMoney)),
            (DESTRUCTIVE,               Trusted,   Some(Destructive)),
            (WRITE_NO_DESTRUCTIVE_HINT, Trusted,   Some(Destructive)),
            (OPEN_WORLD,                Trusted,   Some(OpenWorld)),
            (WRITE_NO_OPEN_WORLD_HINT,  Trusted,   Some(OpenWorld)),
        ];
        for (tool, trust, expected) in cases {
            assert_eq!(
                auto_approve_refusal(tool, *trust),
                *expected,
                "{tool:?} {trust:?}"
            );
            assert_eq!(auto_approve_possible(tool, *trust), expected.is_none());
        }
    }

    #[test]
    fn only_a_trusted_servers_claim_to_honour_keys_makes_a_resend_safe() {
        assert!(resend_is_safe(true, Trusted, true));
        assert!(!resend_is_safe(true, Trusted, false));
        assert!(
            !resend_is_safe(true, Untrusted, true),
            "an untrusted claim is not believed"
        );
        assert!(!resend_is_safe(true, Untrusted, false));
        assert!(
            resend_is_safe(false, Trusted, false),
            "a trusted read carries no key and changes nothing"
        );
    }

    #[test]
    fn policy_table() {
        for (rule, tool, trust, user_override, expected) in TABLE {
            assert_eq!(
                decide(tool, *trust, *user_override),
                *expected,
                "rule: {rule}"
            );
        }
    }
}
