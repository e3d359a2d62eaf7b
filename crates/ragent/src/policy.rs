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
    /// Run this write tool without a card. Honoured only for a trusted
    /// server's tool that declares itself non-destructive; audited.
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
/// 6. a trusted tool that declares itself a non-destructive write runs if
///    the user turned asking off for it;
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

/// Whether the user may turn asking off for this tool: a trusted server's
/// write tool that declares itself non-destructive, and nothing else.
pub fn auto_approve_possible(tool: &ToolFacts, trust: Trust) -> bool {
    trust == Trust::Trusted
        && tool.read_only_hint == Some(false)
        && tool.destructive_hint == Some(false)
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
        definition_changed: false,
    };
    const WRITE: ToolFacts = ToolFacts {
        read_only_hint: Some(false),
        destructive_hint: Some(false),
        definition_changed: false,
    };
    const DESTRUCTIVE: ToolFacts = ToolFacts {
        read_only_hint: Some(false),
        destructive_hint: Some(true),
        definition_changed: false,
    };
    /// A write tool that does not say whether it is destructive: MCP's
    /// default for a missing destructiveHint is "destructive".
    const WRITE_NO_DESTRUCTIVE_HINT: ToolFacts = ToolFacts {
        read_only_hint: Some(false),
        destructive_hint: None,
        definition_changed: false,
    };
    const NO_HINTS: ToolFacts = ToolFacts {
        read_only_hint: None,
        destructive_hint: None,
        definition_changed: false,
    };
    const CHANGED_READ: ToolFacts = ToolFacts {
        read_only_hint: Some(true),
        destructive_hint: None,
        definition_changed: true,
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
    ];

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
