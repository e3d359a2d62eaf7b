//! The audit log: every decision on a call, by the user or by policy.

use rusqlite::{Connection, params};

use super::StoreError;
use crate::protocol::{AuditDecision, AuditEntry, CallPreview};

/// A decision to record.
#[derive(Debug, Clone, PartialEq)]
pub struct NewAudit<'a> {
    pub session_id: &'a str,
    pub call_id: &'a str,
    pub server: &'a str,
    pub tool: &'a str,
    pub arguments_hash: &'a str,
    pub decision: AuditDecision,
    pub reason: Option<&'a str>,
    /// The preview the decision was taken on.
    pub preview: Option<&'a CallPreview>,
}

fn decision_text(decision: AuditDecision) -> &'static str {
    match decision {
        AuditDecision::PolicyAllowed => "policy_allowed",
        AuditDecision::AutoApprovedByUserSetting => "auto_approved_by_user_setting",
        AuditDecision::PolicyDenied => "policy_denied",
        AuditDecision::UserApproved => "user_approved",
        AuditDecision::UserApprovedEdited => "user_approved_edited",
        AuditDecision::UserDenied => "user_denied",
        AuditDecision::Expired => "expired",
        AuditDecision::Superseded => "superseded",
        AuditDecision::UserAcceptedDefinition => "user_accepted_definition",
        AuditDecision::PreviewChanged => "preview_changed",
        AuditDecision::ServerRequestedInput => "server_requested_input",
        AuditDecision::InputRequestRefused => "input_request_refused",
        AuditDecision::UserAcceptedInput => "user_accepted_input",
        AuditDecision::UserDeclinedInput => "user_declined_input",
        AuditDecision::UserCancelledInput => "user_cancelled_input",
    }
}

const DECISIONS: [AuditDecision; 15] = [
    AuditDecision::PolicyAllowed,
    AuditDecision::AutoApprovedByUserSetting,
    AuditDecision::PolicyDenied,
    AuditDecision::UserApproved,
    AuditDecision::UserApprovedEdited,
    AuditDecision::UserDenied,
    AuditDecision::Expired,
    AuditDecision::Superseded,
    AuditDecision::UserAcceptedDefinition,
    AuditDecision::PreviewChanged,
    AuditDecision::ServerRequestedInput,
    AuditDecision::InputRequestRefused,
    AuditDecision::UserAcceptedInput,
    AuditDecision::UserDeclinedInput,
    AuditDecision::UserCancelledInput,
];

pub fn record(conn: &Connection, entry: &NewAudit<'_>, now: i64) -> Result<(), StoreError> {
    let preview = entry.preview.map(serde_json::to_string).transpose()?;
    conn.prepare_cached("INSERT INTO audit_log (at, session_id, call_id, server, tool, arguments_hash, decision, reason, preview)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)")?.execute(
        params![
            now,
            entry.session_id,
            entry.call_id,
            entry.server,
            entry.tool,
            entry.arguments_hash,
            decision_text(entry.decision),
            entry.reason,
            preview
        ],
    )?;
    Ok(())
}

/// The user accepted a tool's changed definition: which tool, and the
/// pinned hash before and after.
pub fn record_definition_accepted(
    conn: &Connection,
    server: &str,
    tool: &str,
    old_hash: &str,
    new_hash: &str,
    now: i64,
) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT INTO audit_log (at, session_id, call_id, server, tool, arguments_hash, decision,
             old_definition_hash, new_definition_hash)
         VALUES (?1, '', '', ?2, ?3, '', ?4, ?5, ?6)",
    )?
    .execute(params![
        now,
        server,
        tool,
        decision_text(AuditDecision::UserAcceptedDefinition),
        old_hash,
        new_hash
    ])?;
    Ok(())
}

/// Newest first, at most `limit` rows.
pub fn list(conn: &Connection, limit: u32) -> Result<Vec<AuditEntry>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, at, session_id, call_id, server, tool, arguments_hash, decision, reason,
             old_definition_hash, new_definition_hash, preview
         FROM audit_log ORDER BY id DESC LIMIT ?1",
    )?;
    let rows = stmt.query_map(params![limit], |row| {
        Ok((
            AuditEntry {
                id: row.get(0)?,
                at: row.get(1)?,
                session_id: row.get(2)?,
                call_id: row.get(3)?,
                server: row.get(4)?,
                tool: row.get(5)?,
                arguments_hash: row.get(6)?,
                decision: AuditDecision::PolicyAllowed,
                reason: row.get(8)?,
                old_definition_hash: row.get(9)?,
                new_definition_hash: row.get(10)?,
                preview: None,
                call: None,
            },
            row.get::<_, String>(7)?,
            row.get::<_, Option<String>>(11)?,
        ))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (mut entry, text, preview) = row?;
        entry.preview = preview.map(|t| serde_json::from_str(&t)).transpose()?;
        entry.decision = DECISIONS
            .into_iter()
            .find(|d| decision_text(*d) == text)
            .ok_or_else(|| StoreError::NotFound(format!("audit decision {text:?}")))?;
        out.push(entry);
    }
    Ok(out)
}
