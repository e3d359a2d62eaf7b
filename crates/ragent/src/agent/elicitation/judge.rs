//! A server's request for input as the user sees it, and how it is
//! named to the model: pure, with no store and no server.

use serde_json::Value;

use crate::elicitation::RequestRefusal;
use crate::mcp::InputRequired;
use crate::protocol::{InputAsk, InputCard, InputCardOutcome, InputReply, KeyedReply};
use crate::store::calls::CallRecord;
use crate::store::inputs::InputRecord;

/// How many times one call's server may ask before the call is stopped.
pub const MAX_ROUNDS: u32 = 5;

/// Whether the server asked for nothing but to be called again with its
/// `requestState` (the 2026-07-28 revision allows an `input_required`
/// result without input requests).
pub(crate) fn only_state(required: &InputRequired) -> bool {
    let no_requests = match &required.requests {
        Value::Null => true,
        Value::Object(requests) => requests.is_empty(),
        _ => false,
    };
    no_requests && required.request_state.is_some()
}

/// The model's words for a refusal (it reads Chinese).
pub(crate) fn refusal_words(refusal: &RequestRefusal) -> String {
    match refusal {
        RequestRefusal::Secret { field } => {
            format!("表单要求填写 {field}，看起来是密码或令牌，表单不得收集此类信息")
        }
        RequestRefusal::SecretInMessage { word } => {
            format!("表单要求填写 {word}，这是密码、卡号或验证码一类的凭据，表单不得收集此类信息")
        }
        RequestRefusal::Schema(why) => format!("表单格式不在 MCP 允许的范围内：{why}"),
        RequestRefusal::Url { url, why } => format!("链接 {url} 不能打开：{why}"),
        RequestRefusal::ForeignPage { url, origin, .. } => format!(
            "服务器要打开的页面 {url} 位于 {origin}，既不是该服务器自己的网址，也不是用户在设置中为它允许的网址；为防钓鱼，应用没有打开它"
        ),
        RequestRefusal::Unsupported { kind } => format!("本应用不支持 {kind}"),
        RequestRefusal::Empty => "请求是空的".to_string(),
    }
}

pub(crate) fn card_of(call: &CallRecord, record: &InputRecord, asks: Vec<InputAsk>) -> InputCard {
    InputCard {
        request_id: record.id.clone(),
        session_id: record.session_id.clone(),
        call_id: call.id.clone(),
        server: call.server.clone().unwrap_or_default(),
        tool: call.tool.clone().unwrap_or_default(),
        title: call.title.clone(),
        trusted: call.trusted,
        round: record.round,
        max_rounds: MAX_ROUNDS,
        created_at: record.created_at,
        expires_at: record.expires_at,
        durable: true,
        asks,
    }
}

/// What the user answered to a stored round, read back from the
/// responses sent (`{action, content}` per ask).
pub(crate) fn replies_of(record: &InputRecord) -> Vec<KeyedReply> {
    record
        .responses
        .iter()
        .flatten()
        .map(|(key, response)| KeyedReply {
            key: key.clone(),
            reply: match response.get("action").and_then(Value::as_str) {
                Some("accept") => InputReply::Accept {
                    content: response.get("content").cloned(),
                },
                Some("decline") => InputReply::Decline,
                _ => InputReply::Cancel,
            },
        })
        .collect()
}

pub(crate) fn outcome_of(replies: &[KeyedReply]) -> InputCardOutcome {
    if replies.iter().any(|r| r.reply == InputReply::Cancel) {
        InputCardOutcome::Cancelled
    } else if replies
        .iter()
        .all(|r| matches!(r.reply, InputReply::Accept { .. }))
    {
        InputCardOutcome::Accepted
    } else {
        InputCardOutcome::Declined
    }
}
