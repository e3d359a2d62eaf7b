//! Which tool calls must stop for the user. Code decides, not the model:
//! a pure function of the tool's declared annotations, the server's trust
//! and the user's per-tool setting. No I/O here.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::mcp::ToolInfo;
use crate::protocol::{CallRisk, ToolGroup};

/// A per-tool user setting, keyed by `server__tool`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ToolOverride {
    /// Always show a card, even for a trusted read-only tool.
    Ask,
    /// Never run this tool.
    Deny,
    /// Run this write tool without a card. Honoured only where
    /// [`ToolFacts::auto_approve_possible`] says so; audited.
    AutoApprove,
}

/// Whether a server's annotations are believed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trust {
    Trusted,
    Untrusted,
}

/// Everything the app concludes from a tool's definition and its server's
/// trust, worked out once ([`ToolFacts::of`]) and asked by everything that
/// needs it: the policy, the batch and its card, the executor, the
/// settings screen and the settings check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolFacts {
    /// Whether the server's hints are believed.
    pub trust: Trust,
    pub read_only_hint: Option<bool>,
    pub destructive_hint: Option<bool>,
    pub open_world_hint: Option<bool>,
    /// The definition's `_meta` says the tool places an order or moves
    /// money (`ragent/moves_money`). It only ever takes a permission away,
    /// so it is believed from any server.
    pub moves_money: bool,
    /// The definition's `_meta` says another call can undo this write
    /// (`ragent/undoable`). It only softens the card's badge, so
    /// [`ToolFacts::risk`] believes it from a trusted server only.
    pub undoable: bool,
    /// The definition differs from the one pinned when first seen.
    pub definition_changed: bool,
}

impl ToolFacts {
    /// The facts of a listed tool; `definition_changed` compares it with
    /// its pin.
    pub fn of(info: &ToolInfo, definition_changed: bool) -> ToolFacts {
        ToolFacts {
            trust: if info.trusted {
                Trust::Trusted
            } else {
                Trust::Untrusted
            },
            read_only_hint: info.hints.read_only,
            destructive_hint: info.hints.destructive,
            open_world_hint: info.hints.open_world,
            moves_money: info.moves_money,
            undoable: info.undoable,
            definition_changed,
        }
    }

    /// What the card's badge says about a call of this tool, first match
    /// wins: money is named whoever says it; an untrusted server's word
    /// that a tool is harmless is not taken; a trusted tool that reaches
    /// beyond the shop says so; a trusted write says it can be undone only
    /// when its server declares that.
    pub fn risk(&self) -> CallRisk {
        if self.moves_money {
            return CallRisk::MovesMoney;
        }
        if self.trust == Trust::Untrusted {
            return CallRisk::Irreversible;
        }
        if self.reads_only() {
            return CallRisk::Reads;
        }
        if self.open_world_hint == Some(true) {
            return CallRisk::ReachesOut;
        }
        if self.undoable {
            return CallRisk::Undoable;
        }
        if self.declares_destructive() {
            return CallRisk::Irreversible;
        }
        CallRisk::Adds
    }

    /// The tool declares it only reads (believed or not).
    pub fn declares_read_only(&self) -> bool {
        self.read_only_hint == Some(true)
    }

    /// The tool's declarations, taken together, say it only reads: it says
    /// read-only, and nothing else it declares contradicts that. A tool
    /// that moves money, or says it is destructive, is never a read,
    /// whatever its `readOnlyHint` claims.
    pub fn reads_only(&self) -> bool {
        self.declares_read_only() && !self.moves_money && self.destructive_hint != Some(true)
    }

    /// A call of it can change something: everything but a trusted server's
    /// tool that [`reads_only`](Self::reads_only). Such a call carries its
    /// id as idempotency key, is stored as `running` before it is sent, and
    /// is re-sent after a lost answer only where [`resend_is_safe`] says so.
    pub fn can_change(&self) -> bool {
        !(self.trust == Trust::Trusted && self.reads_only())
    }

    /// MCP's reading of the hints: a tool that does not declare itself
    /// read-only is destructive unless it says it is not; one that says
    /// both read-only and destructive is taken at its worse word.
    pub fn declares_destructive(&self) -> bool {
        self.destructive_hint == Some(true)
            || (!self.declares_read_only() && self.destructive_hint != Some(false))
    }

    /// What the card says: destructive as declared, and also any tool that
    /// moves money, and any tool of an untrusted server, whose word that it
    /// is harmless is not taken.
    pub fn treated_as_destructive(&self) -> bool {
        self.trust == Trust::Untrusted || self.moves_money || self.declares_destructive()
    }

    /// Whether the user may turn asking off for this tool, and if not, why:
    /// only a trusted server's write tool that declares itself
    /// non-destructive and closed-world and does not move money qualifies.
    pub fn auto_approve_refusal(&self) -> Option<AutoApproveRefusal> {
        if self.trust == Trust::Untrusted {
            return Some(AutoApproveRefusal::Untrusted);
        }
        // Money and destruction come before "not a write": a money tool
        // that claims to read is refused for what it does, not what it says.
        if self.moves_money {
            return Some(AutoApproveRefusal::MovesMoney);
        }
        if self.destructive_hint == Some(true) {
            return Some(AutoApproveRefusal::Destructive);
        }
        if self.read_only_hint != Some(false) {
            return Some(AutoApproveRefusal::NotAWrite);
        }
        if self.destructive_hint != Some(false) {
            return Some(AutoApproveRefusal::Destructive);
        }
        if self.open_world_hint != Some(false) {
            return Some(AutoApproveRefusal::OpenWorld);
        }
        None
    }

    /// Whether the user may turn asking off for this tool.
    pub fn auto_approve_possible(&self) -> bool {
        self.auto_approve_refusal().is_none()
    }

    /// The settings screen's group: a tool that moves money is shown with
    /// those whatever else it declares, a read-only one with the reads.
    pub fn group(&self, changes_cart: bool) -> ToolGroup {
        if self.moves_money {
            ToolGroup::Money
        } else if self.reads_only() {
            ToolGroup::Read
        } else if changes_cart {
            ToolGroup::Cart
        } else {
            ToolGroup::OtherWrite
        }
    }
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

/// Whether a call asks: the one decision function. Rules, first match wins:
/// 1. a per-tool deny refuses the call;
/// 2. a changed definition always asks;
/// 3. a per-tool ask asks;
/// 4. an untrusted server asks, whatever it declares;
/// 5. a trusted tool that only reads runs ([`ToolFacts::reads_only`]: a
///    tool that moves money or declares itself destructive never does,
///    whatever its `readOnlyHint` says);
/// 6. a write tool runs if the user turned asking off for it and
///    [`ToolFacts::auto_approve_possible`] allows that (a setting stored by
///    an older version for a tool that no longer qualifies is ignored here);
/// 7. everything else asks (write tools, missing hints).
pub fn decide(tool: &ToolFacts, user_override: Option<ToolOverride>) -> Verdict {
    if user_override == Some(ToolOverride::Deny) {
        return Verdict::Deny;
    }
    if tool.definition_changed || user_override == Some(ToolOverride::Ask) {
        return Verdict::Ask;
    }
    if tool.trust == Trust::Untrusted {
        return Verdict::Ask;
    }
    if tool.reads_only() {
        return Verdict::Allow(AllowedBy::TrustedReadOnly);
    }
    if user_override == Some(ToolOverride::AutoApprove) && tool.auto_approve_possible() {
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

/// Whether a call whose outcome is unknown (the connection broke, or the
/// app stopped while it was out) may be sent again with the same
/// idempotency key. A call that cannot change anything may; one that can
/// only to a server trusted now that declares it recognises a repeated key:
/// an untrusted one that does not would do the work twice.
pub fn resend_is_safe(can_change: bool, trust_now: Trust, server_declares_keys: bool) -> bool {
    !can_change || (trust_now == Trust::Trusted && server_declares_keys)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::ToolOverride::{Ask as OAsk, AutoApprove, Deny as ODeny};
    use super::Trust::{Trusted, Untrusted};
    use super::*;

    const READ: ToolFacts = ToolFacts {
        trust: Trusted,
        read_only_hint: Some(true),
        destructive_hint: None,
        open_world_hint: Some(false),
        moves_money: false,
        undoable: false,
        definition_changed: false,
    };
    /// A write that declares itself harmless in every way: the only kind
    /// that may skip the card.
    const WRITE: ToolFacts = ToolFacts {
        trust: Trusted,
        read_only_hint: Some(false),
        destructive_hint: Some(false),
        open_world_hint: Some(false),
        moves_money: false,
        undoable: false,
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
        trust: Trusted,
        read_only_hint: None,
        destructive_hint: None,
        open_world_hint: None,
        moves_money: false,
        undoable: false,
        definition_changed: false,
    };
    const CHANGED_READ: ToolFacts = ToolFacts {
        definition_changed: true,
        ..READ
    };
    /// Moves money, yet declares itself read-only.
    const MONEY_CLAIMING_READ: ToolFacts = ToolFacts {
        moves_money: true,
        ..READ
    };
    /// Declares itself read-only and destructive at once.
    const DESTRUCTIVE_CLAIMING_READ: ToolFacts = ToolFacts {
        destructive_hint: Some(true),
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
        ("a money tool that claims read-only asks",         MONEY_CLAIMING_READ, Trusted, None,            ASK),
        ("a money tool that claims read-only asks despite auto-approve", MONEY_CLAIMING_READ, Trusted, Some(AutoApprove), ASK),
        ("a destructive tool that claims read-only asks",   DESTRUCTIVE_CLAIMING_READ, Trusted, None,      ASK),
        ("a destructive tool that claims read-only asks despite auto-approve", DESTRUCTIVE_CLAIMING_READ, Trusted, Some(AutoApprove), ASK),
        ("an untrusted money tool that claims read-only asks", MONEY_CLAIMING_READ, Untrusted, None,       ASK),
        ("deny refuses a money tool that claims read-only", MONEY_CLAIMING_READ, Trusted, Some(ODeny),     DENY),
    ];

    #[test]
    fn the_settings_screen_groups_tools_money_first_then_reads_then_the_cart() {
        #[rustfmt::skip]
        let rows = [
            ("a read",                              READ,        false, ToolGroup::Read),
            ("a read that claims the cart",         READ,        true,  ToolGroup::Read),
            ("a cart write",                        DESTRUCTIVE, true,  ToolGroup::Cart),
            ("a write that moves money",            MONEY,       false, ToolGroup::Money),
            ("money, though it claims the cart",    MONEY,       true,  ToolGroup::Money),
            ("money, though it claims to read",     MONEY_CLAIMING_READ, false, ToolGroup::Money),
            ("destructive, though it claims to read", DESTRUCTIVE_CLAIMING_READ, false, ToolGroup::OtherWrite),
            ("any other write",                     DESTRUCTIVE, false, ToolGroup::OtherWrite),
            ("no hints at all",                     NO_HINTS,    false, ToolGroup::OtherWrite),
        ];
        for (name, facts, changes_cart, group) in rows {
            assert_eq!(facts.group(changes_cart), group, "{name}");
        }
    }

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
            (MONEY_CLAIMING_READ,       Trusted,   Some(MovesMoney)),
            (DESTRUCTIVE_CLAIMING_READ, Trusted,   Some(Destructive)),
            (WRITE_NO_OPEN_WORLD_HINT,  Trusted,   Some(OpenWorld)),
        ];
        for (tool, trust, expected) in cases {
            let tool = ToolFacts {
                trust: *trust,
                ..*tool
            };
            assert_eq!(tool.auto_approve_refusal(), *expected, "{tool:?}");
            assert_eq!(tool.auto_approve_possible(), expected.is_none());
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
    fn what_follows_from_a_tools_facts() {
        #[rustfmt::skip]
        let cases: &[(&str, ToolFacts, Trust, bool, bool, bool)] = &[
            // (tool, facts, trust, can change, declares destructive, treated as destructive)
            ("trusted read",                READ,        Trusted,   false, false, false),
            ("untrusted read",              READ,        Untrusted, true,  false, true),
            ("harmless write",              WRITE,       Trusted,   true,  false, false),
            ("harmless untrusted write",    WRITE,       Untrusted, true,  false, true),
            ("destructive write",           DESTRUCTIVE, Trusted,   true,  true,  true),
            ("write without a destructiveHint", WRITE_NO_DESTRUCTIVE_HINT, Trusted, true, true, true),
            ("money, declared harmless",    MONEY,       Trusted,   true,  false, true),
            ("no hints at all",             NO_HINTS,    Trusted,   true,  true,  true),
            ("money that claims to read",   MONEY_CLAIMING_READ, Trusted, true, false, true),
            ("destructive that claims to read", DESTRUCTIVE_CLAIMING_READ, Trusted, true, true, true),
        ];
        for (name, tool, trust, can_change, declares, treated) in cases {
            let tool = ToolFacts {
                trust: *trust,
                ..*tool
            };
            assert_eq!(tool.can_change(), *can_change, "{name}: can change");
            assert_eq!(
                tool.declares_destructive(),
                *declares,
                "{name}: declares destructive"
            );
            assert_eq!(
                tool.treated_as_destructive(),
                *treated,
                "{name}: treated as destructive"
            );
        }
    }

    #[test]
    fn the_cards_badge_follows_one_table_of_the_tools_facts() {
        use CallRisk::{Adds, Irreversible, MovesMoney, ReachesOut, Reads, Undoable};
        let undoable = ToolFacts {
            undoable: true,
            ..DESTRUCTIVE
        };
        #[rustfmt::skip]
        let rows: &[(&str, ToolFacts, Trust, CallRisk)] = &[
            ("a trusted read",                                   READ,        Trusted,   Reads),
            ("ordering or paying moves money",                   MONEY,       Trusted,   MovesMoney),
            ("money is named even by an untrusted server",       MONEY,       Untrusted, MovesMoney),
            ("money that claims to read still moves money",      MONEY_CLAIMING_READ, Trusted, MovesMoney),
            ("a cart line or an address can be undone",          undoable,    Trusted,   Undoable),
            ("an untrusted server's undoable is not believed",   undoable,    Untrusted, Irreversible),
            ("a destructive write cannot be undone",             DESTRUCTIVE, Trusted,   Irreversible),
            ("destructive that claims to read cannot be undone", DESTRUCTIVE_CLAIMING_READ, Trusted, Irreversible),
            ("a ticket reaches a person outside",                OPEN_WORLD,  Trusted,   ReachesOut),
            ("an untrusted tool is taken at its worst",          WRITE,       Untrusted, Irreversible),
            ("an untrusted read is taken at its worst",          READ,        Untrusted, Irreversible),
            ("no hints at all cannot be undone",                 NO_HINTS,    Trusted,   Irreversible),
            ("a harmless write only adds",                       WRITE,       Trusted,   Adds),
        ];
        for (name, tool, trust, risk) in rows {
            let tool = ToolFacts {
                trust: *trust,
                ..*tool
            };
            assert_eq!(tool.risk(), *risk, "{name}");
            assert_eq!(
                CallRisk::parse(Some(risk.as_str()), false),
                *risk,
                "{name}: stored name"
            );
        }
        assert_eq!(
            CallRisk::parse(None, true),
            Irreversible,
            "stored before risks, shown destructive"
        );
        assert_eq!(CallRisk::parse(Some("unknown"), false), Adds);
    }

    #[test]
    fn policy_table() {
        for (rule, tool, trust, user_override, expected) in TABLE {
            let tool = ToolFacts {
                trust: *trust,
                ..*tool
            };
            assert_eq!(decide(&tool, *user_override), *expected, "rule: {rule}");
        }
    }
}
