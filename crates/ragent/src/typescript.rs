//! TypeScript types for `ui/`, generated from the protocol's Rust types
//! so the page and the core cannot drift apart. The committed file is
//! checked by a test; `RAGENT_WRITE_TS=1 cargo test -p ragent typescript`
//! rewrites it.

use ts_rs::{Config, TS};

use crate::llm::models::ModelInfo;
use crate::mcp::config::{ServerConfigWith, ServerTransportWith, UcpMerchant};
use crate::mcp::export::{McpExport, SecretKind, WithheldSecret};
use crate::mcp::import::{
    Expected, ImportFormat, ImportNote, ImportPlan, ImportPreview, ImportProblem, PlannedServer,
    PlannedValue, RenameReason, VariableUse,
};
use crate::mcp::{ServerStatus, SignInStatus};
use crate::policy::ToolOverride;
use crate::protocol::{
    AgentEvent, AuditDecision, AuditEntry, CallDecision, CallPreview, CallProgress, CallRisk,
    CardCall, CheckoutProblem, ConfirmationCard, Decision, DefinitionChange, DefinitionField,
    ErrorCode, ErrorInfo, EventEnvelope, InputAsk, InputAskKind, InputCard, InputCardOutcome,
    InputOutcome, InputReply, KeyedReply, ModelFailure, ModelFailureDetails, ModelFailureKind,
    ModelState, ModelStatus, PolicyVerdict, PreviewOutcome, Rejection, SessionInfo, SignInStarted,
    StopReason, ToolCallView, ToolDefinitionView, ToolGroup, ToolPolicyView, Transcript,
    TranscriptItem,
};
use crate::settings::{
    Appearance, Language, ModelSettingsWith, SettingsWith, ShopConnection, Theme,
};
use crate::settings_view::{MASK, Secret, SettingsEdit, SettingsView};
use crate::toolcall::CallStatus;
use crate::ucp::evidence::{Check, Evidence, KeptMandate};
use sqlite_backups::{Database, DatabaseRestored};

/// Where the generated file lives, relative to this crate.
pub const TS_PATH: &str = "../../ui/src/protocol/index.ts";

/// The whole generated module, every type exported.
pub fn render() -> String {
    let cfg = Config::new().with_large_int("number");
    let decls = [
        CallDecision::decl(&cfg),
        Decision::decl(&cfg),
        EventEnvelope::decl(&cfg),
        AgentEvent::decl(&cfg),
        StopReason::decl(&cfg),
        ErrorInfo::decl(&cfg),
        ErrorCode::decl(&cfg),
        ModelFailure::decl(&cfg),
        ModelFailureKind::decl(&cfg),
        ModelFailureDetails::decl(&cfg),
        InputOutcome::decl(&cfg),
        InputCard::decl(&cfg),
        InputAsk::decl(&cfg),
        InputAskKind::decl(&cfg),
        KeyedReply::decl(&cfg),
        InputReply::decl(&cfg),
        InputCardOutcome::decl(&cfg),
        ConfirmationCard::decl(&cfg),
        CardCall::decl(&cfg),
        CallRisk::decl(&cfg),
        CallPreview::decl(&cfg),
        PreviewOutcome::decl(&cfg),
        CheckoutProblem::decl(&cfg),
        KeptMandate::decl(&cfg),
        DatabaseRestored::decl(&cfg),
        Database::decl(&cfg),
        Evidence::decl(&cfg),
        Check::decl(&cfg),
        Rejection::decl(&cfg),
        CallStatus::decl(&cfg),
        ToolCallView::decl(&cfg),
        CallProgress::decl(&cfg),
        SessionInfo::decl(&cfg),
        SignInStarted::decl(&cfg),
        Transcript::decl(&cfg),
        TranscriptItem::decl(&cfg),
        AuditEntry::decl(&cfg),
        AuditDecision::decl(&cfg),
        SettingsWith::<Secret>::decl(&cfg),
        ModelSettingsWith::<Secret>::decl(&cfg),
        Appearance::decl(&cfg),
        ShopConnection::decl(&cfg),
        Language::decl(&cfg),
        Theme::decl(&cfg),
        ServerConfigWith::<Secret>::decl(&cfg),
        ServerTransportWith::<Secret>::decl(&cfg),
        UcpMerchant::decl(&cfg),
        SettingsView::decl(&cfg),
        SettingsEdit::decl(&cfg),
        Secret::decl(&cfg),
        ToolOverride::decl(&cfg),
        ServerStatus::decl(&cfg),
        SignInStatus::decl(&cfg),
        ModelStatus::decl(&cfg),
        ModelInfo::decl(&cfg),
        ModelState::decl(&cfg),
        ToolPolicyView::decl(&cfg),
        ToolGroup::decl(&cfg),
        PolicyVerdict::decl(&cfg),
        DefinitionChange::decl(&cfg),
        ToolDefinitionView::decl(&cfg),
        DefinitionField::decl(&cfg),
        ImportPreview::decl(&cfg),
        ImportPlan::decl(&cfg),
        ImportFormat::decl(&cfg),
        PlannedServer::decl(&cfg),
        PlannedValue::decl(&cfg),
        RenameReason::decl(&cfg),
        VariableUse::decl(&cfg),
        ImportNote::decl(&cfg),
        ImportProblem::decl(&cfg),
        Expected::decl(&cfg),
        McpExport::decl(&cfg),
        WithheldSecret::decl(&cfg),
        SecretKind::decl(&cfg),
    ];
    let mut out = String::from(
        "// Generated from crates/ragent (protocol, settings) by ts-rs. Do not edit:\n\
         // run `RAGENT_WRITE_TS=1 cargo test -p ragent typescript` after changing the Rust types.\n\n\
         export type JsonValue = number | string | boolean | Array<JsonValue> | { [key in string]?: JsonValue } | null;\n",
    );
    // The page shows it in a field and sends it back to keep the value.
    out.push_str(&format!(
        "\n/** What a secret value in a server's args or URL is shown as. */\nexport const SECRET_MASK = {};\n",
        serde_json::Value::from(MASK)
    ));
    for decl in decls {
        out.push('\n');
        out.push_str("export ");
        out.push_str(&decl);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn committed_typescript_matches_the_rust_types() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(TS_PATH);
        let fresh = render();
        if std::env::var_os("RAGENT_WRITE_TS").is_some() {
            std::fs::write(&path, &fresh).unwrap();
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert_eq!(
            committed, fresh,
            "ui/src/protocol/index.ts is stale: run RAGENT_WRITE_TS=1 cargo test -p ragent typescript"
        );
    }
}
