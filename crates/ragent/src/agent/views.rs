//! A stored call as the page shows it, in events and in the transcript.

use serde_json::Value;

use crate::protocol::ToolCallView;
use crate::store::calls::CallRecord;
use crate::toolcall::CallStatus;

/// Whether the user was asked about this call: it asks, was decided on a
/// card, or was left there. An approval's hash outlives the call's later
/// moves (running, succeeded, failed, interrupted).
pub(crate) fn was_asked(call: &CallRecord) -> bool {
    call.approved_hash.is_some()
        || matches!(
            call.status,
            CallStatus::Asking
                | CallStatus::Approved
                | CallStatus::Denied
                | CallStatus::Expired
                | CallStatus::Superseded
        )
}

/// A call as the page shows it; `reply_id` names its card when it was asked.
pub(crate) fn call_view(call: &CallRecord) -> ToolCallView {
    view_on_card(call, was_asked(call))
}

/// A call as the page shows it; `on_card`: its batch was shown as a card
/// (every call of such a batch is on it, the allowed and refused ones too).
pub(crate) fn view_on_card(call: &CallRecord, on_card: bool) -> ToolCallView {
    let arguments = call
        .arguments
        .clone()
        .unwrap_or_else(|| Value::String(call.proposed_arguments.clone()));
    ToolCallView {
        call_id: call.id.clone(),
        qualified_name: call.qualified_name.clone(),
        server: call.server.clone().unwrap_or_default(),
        tool: call.tool.clone().unwrap_or_default(),
        title: call.title.clone(),
        arguments,
        status: call.status,
        output: call.output.clone(),
        is_error: call.is_error,
        destructive: call.destructive,
        reply_id: on_card.then(|| call.reply_id.clone()),
        structured_output: call.structured_output.clone(),
        rejection: call.rejection.clone(),
        deny_reason: call.deny_reason.clone(),
        preview: call.preview.clone(),
        labels_schema: call.labels_schema.clone(),
    }
}
