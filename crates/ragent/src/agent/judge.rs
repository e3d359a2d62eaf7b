//! Judging, with no store and no server: the calls of one model turn
//! against the tools offered and the user's settings ([`judge`]: each
//! call's [`FirstMove`]), and a call that waited in a batch against the
//! settings in force when it is about to run ([`judge_waiting`]).

use serde_json::Value;

use crate::agent::tools::{KnownTool, ToolIndex, preview_source};
use crate::instructions::results;
use crate::llm::{ToolCallRequest, turn};
use crate::policy::{self, AllowedBy, ToolOverride, Verdict};
use crate::protocol::{AuditDecision, CallRisk, Rejection};
use crate::schema::SchemaCache;
use crate::settings::Settings;
use crate::store::calls::{CallRecord, NewCall};
use crate::toolcall::CallStatus;

/// The first move of a proposed call.
pub(crate) enum FirstMove {
    Ask,
    Allow(AuditDecision),
    Reject {
        output: String,
        audit: Option<AuditDecision>,
        rejection: Rejection,
    },
}

/// A call's arguments that are not an object: what the model is told,
/// and what the user is shown.
#[derive(Debug, Clone)]
struct BadArguments {
    output: String,
    problem: String,
}

/// A call's arguments as an object, or what is wrong with them (`""`,
/// which models often send for no arguments, is `{}`).
fn parse_arguments(text: &str) -> Result<Value, BadArguments> {
    turn::parse_object(text)
        .map(Value::Object)
        .map_err(|problem| BadArguments {
            output: results::invalid_arguments(&problem, text),
            problem: match problem {
                turn::ArgumentsProblem::NotJson(error) => format!("not JSON: {error}"),
                turn::ArgumentsProblem::NotAnObject(kind) => {
                    format!("a JSON {kind}, not an object")
                }
            },
        })
}

/// What the policy makes of a call of this tool under the user's settings.
pub(crate) fn verdict(known: &KnownTool, settings: &Settings) -> Verdict {
    let user_override = settings
        .tool_overrides
        .get(&known.info.qualified_name)
        .copied();
    policy::decide(&known.facts, user_override)
}

fn judge_call(
    known: &KnownTool,
    arguments: &Result<Value, BadArguments>,
    schemas: &SchemaCache,
    settings: &Settings,
) -> FirstMove {
    let arguments = match arguments {
        Ok(arguments) => arguments,
        Err(bad) => {
            return FirstMove::Reject {
                output: bad.output.clone(),
                audit: None,
                rejection: Rejection::InvalidArguments {
                    details: vec![bad.problem.clone()],
                },
            };
        }
    };
    let schema = &known.info.input_schema;
    // The definition's hash names the schema inside it.
    if let Err(details) = schemas.validate_keyed(&known.info.definition_hash, schema, arguments) {
        return FirstMove::Reject {
            output: results::schema_mismatch(&details),
            audit: None,
            rejection: Rejection::InvalidArguments { details },
        };
    }
    match verdict(known, settings) {
        Verdict::Ask => FirstMove::Ask,
        Verdict::Allow(AllowedBy::TrustedReadOnly) => {
            FirstMove::Allow(AuditDecision::PolicyAllowed)
        }
        Verdict::Allow(AllowedBy::UserSetting) => {
            FirstMove::Allow(AuditDecision::AutoApprovedByUserSetting)
        }
        Verdict::Deny => FirstMove::Reject {
            output: results::policy_denied(),
            audit: Some(AuditDecision::PolicyDenied),
            rejection: Rejection::PolicyDenied,
        },
    }
}

fn new_call(
    request: &ToolCallRequest,
    known: Option<&KnownTool>,
    arguments: Option<Value>,
    tools: &ToolIndex,
) -> NewCall {
    let info = known.map(|k| &k.info);
    let preview_tool = known
        .and_then(|k| preview_source(k, tools))
        .map(|source| source.tool_name());
    NewCall {
        id: uuid::Uuid::new_v4().to_string(),
        model_call_id: request.id.clone(),
        qualified_name: request.name.clone(),
        server: info.map(|i| i.server.clone()),
        tool: info.map(|i| i.name.clone()),
        title: info.and_then(|i| i.title.clone()),
        description: info.and_then(|i| i.description.clone()),
        proposed_arguments: request.arguments.clone(),
        arguments,
        schema: known.map(|k| k.schema.clone()),
        destructive: known.is_some_and(|k| k.facts.treated_as_destructive()),
        definition_changed: known.is_some_and(|k| k.facts.definition_changed),
        can_change: known.is_some_and(|k| k.facts.can_change()),
        trusted: known.is_some_and(|k| k.facts.trust == policy::Trust::Trusted),
        declares_read_only: known.is_some_and(|k| k.facts.declares_read_only()),
        // A tool no server lists is taken at its worst.
        risk: known.map_or(CallRisk::Irreversible, |k| k.facts.risk()),
        preview_tool,
    }
}

/// The calls of one model turn, judged and ready to be stored as a batch.
pub(crate) struct JudgedBatch {
    pub reply_id: String,
    pub calls: Vec<NewCall>,
    pub first_moves: Vec<FirstMove>,
    pub expiry_ms: i64,
}

impl JudgedBatch {
    /// Whether every call that would run is a trusted read (the rest are
    /// refused outright): nothing to ask, nothing a crash could leave
    /// half-done.
    pub(crate) fn reads_only(&self) -> bool {
        self.calls
            .iter()
            .zip(&self.first_moves)
            .all(|(call, first_move)| match first_move {
                FirstMove::Ask => false,
                FirstMove::Allow(_) => !call.can_change,
                FirstMove::Reject { .. } => true,
            })
    }

    /// The calls allowed without asking, as they stand once allowed.
    pub(crate) fn allowed(&self, session_id: &str) -> Vec<CallRecord> {
        self.calls
            .iter()
            .zip(&self.first_moves)
            .enumerate()
            .filter(|(_, (_, first_move))| matches!(first_move, FirstMove::Allow(_)))
            .map(|(seq, (call, _))| {
                call.record(session_id, &self.reply_id, seq, CallStatus::Allowed)
            })
            .collect()
    }
}

/// How long a card may wait under these settings.
pub(crate) fn expiry_ms(settings: &Settings) -> i64 {
    i64::try_from(settings.card_expiry_secs.saturating_mul(1000)).unwrap_or(i64::MAX)
}

/// Judges the calls of one model turn against the tools offered in the
/// run and the user's settings. Nothing is stored yet.
pub(crate) fn judge(
    schemas: &SchemaCache,
    settings: &Settings,
    requests: &[ToolCallRequest],
    tools: &ToolIndex,
) -> JudgedBatch {
    let mut calls = Vec::new();
    let mut first_moves = Vec::new();
    for request in requests {
        let known = tools.get(&request.name);
        let Some(known) = known else {
            let available: Vec<String> = tools.keys().cloned().collect();
            calls.push(new_call(request, None, None, tools));
            first_moves.push(FirstMove::Reject {
                output: results::unknown_tool(&request.name, &available),
                audit: None,
                rejection: Rejection::UnknownTool,
            });
            continue;
        };
        let arguments = parse_arguments(&request.arguments);
        first_moves.push(judge_call(known, &arguments, schemas, settings));
        calls.push(new_call(request, Some(known), arguments.ok(), tools));
    }
    JudgedBatch {
        reply_id: uuid::Uuid::new_v4().to_string(),
        calls,
        first_moves,
        expiry_ms: expiry_ms(settings),
    }
}

/// What becomes of the user's approvals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Approvals {
    /// They stand (the card was just answered).
    Keep,
    /// They are asked for again (the app stopped before sending them).
    AskAgain,
}

/// What a waiting call gets now.
pub(crate) enum Now {
    Runs,
    Asks,
    Refused,
}

pub(crate) fn judge_waiting(
    call: &CallRecord,
    tools: Option<&ToolIndex>,
    settings: &Settings,
    approvals: Approvals,
) -> Now {
    if settings.tool_overrides.get(&call.qualified_name) == Some(&ToolOverride::Deny) {
        return Now::Refused;
    }
    if call.status == CallStatus::Approved {
        return match approvals {
            Approvals::Keep => Now::Runs,
            Approvals::AskAgain => Now::Asks,
        };
    }
    // A tool no longer listed cannot be judged: the user decides.
    match tools.and_then(|tools| tools.get(&call.qualified_name)) {
        Some(known) => match verdict(known, settings) {
            Verdict::Allow(_) => Now::Runs,
            Verdict::Ask => Now::Asks,
            Verdict::Deny => Now::Refused,
        },
        None => Now::Asks,
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::parse_arguments;

    #[test]
    fn empty_arguments_mean_an_empty_object_and_garbage_is_an_error() {
        assert_eq!(parse_arguments("").unwrap(), json!({}));
        assert_eq!(parse_arguments(" {\"a\":1} ").unwrap(), json!({"a": 1}));
        assert!(parse_arguments("{\"a\":").is_err());
    }
}
