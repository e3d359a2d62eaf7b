//! Previews: what a write would do, computed by its own server. A write
//! tool may name in its definition's `_meta["ragent/preview"]` a tool of
//! the same server that takes the same arguments and only reads. The core
//! believes that only of a trusted server (`tools::bound_preview`), calls
//! the preview when the card is made ([`fill_card`]) and again when the
//! user approves (`respond.rs`): an approval whose call would now do
//! something else is refused, and the card shows the new preview. A call
//! that moves money is previewed once more before it is sent behind a
//! write of its card that went out (`recheck.rs`). A UCP merchant's write
//! on a checkout is previewed by the core itself, from the checkout the
//! merchant signed (`checkout_preview.rs`).

use serde_json::{Map, Value};

use crate::agent::checkout_preview;
use crate::agent::inner::Inner;
use crate::agent::tools::{KnownTool, PreviewSource, ToolIndex, preview_source};
use crate::mcp::{ToolInvocation, UNWATCHED};
use crate::protocol::{CallPreview, PreviewOutcome};
use crate::store::StoreError;
use crate::store::calls::{self, CallRecord};
use crate::toolcall::CallStatus;

/// Asks `source` what a call with `arguments` would do.
async fn compute(
    inner: &Inner,
    source: PreviewSource<'_>,
    arguments: &Value,
    now: i64,
) -> CallPreview {
    let outcome = match (source, arguments) {
        (PreviewSource::Tool(preview), Value::Object(arguments)) => {
            ask(inner, preview, arguments.clone()).await
        }
        (PreviewSource::SignedCheckout { write, read }, Value::Object(_)) => {
            checkout_preview::outcome(inner, write, read, arguments).await
        }
        _ => PreviewOutcome::Unavailable {
            message: "the call's arguments are not an object".into(),
        },
    };
    CallPreview {
        tool: source.tool_name(),
        computed_at: now,
        outcome,
    }
}

async fn ask(inner: &Inner, preview: &KnownTool, arguments: Map<String, Value>) -> PreviewOutcome {
    let invocation = ToolInvocation {
        server: preview.info.server.clone(),
        tool: preview.info.name.clone(),
        arguments,
        idempotency_key: None,
        retry: None,
    };
    match inner
        .tools
        .call_tool(invocation, UNWATCHED)
        .await
        .map(|o| o.into_output())
    {
        // The shopper reads the card: the server's own sentence for them
        // (`{error: {message}}`) when it gives one, else its text.
        Ok(output) if output.is_error => PreviewOutcome::Refused {
            message: output
                .structured
                .as_ref()
                .and_then(|content| content.pointer("/error/message"))
                .and_then(Value::as_str)
                .filter(|message| !message.trim().is_empty())
                .map_or(output.text, str::to_owned),
        },
        Ok(output) => match output.structured {
            Some(content) => PreviewOutcome::Computed { content },
            None => PreviewOutcome::Unavailable {
                message: "the preview answered without structured content".into(),
            },
        },
        Err(error) => PreviewOutcome::Unavailable {
            message: error.to_string(),
        },
    }
}

/// What a preview tool that can no longer be believed stands for.
fn unbound(tool: &str, now: i64) -> CallPreview {
    CallPreview {
        tool: tool.to_string(),
        computed_at: now,
        outcome: PreviewOutcome::Unavailable {
            message: "the server's preview is no longer available or trusted".into(),
        },
    }
}

/// `call`'s preview computed again with `arguments`, by the tool that
/// binds it in `tools` now (none bound: unavailable).
pub(crate) async fn again(
    inner: &Inner,
    tools: &ToolIndex,
    call: &CallRecord,
    arguments: &Value,
) -> CallPreview {
    let now = inner.now();
    match tools
        .get(&call.qualified_name)
        .and_then(|write| preview_source(write, tools))
    {
        Some(source) => compute(inner, source, arguments, now).await,
        None => unbound(call.preview_tool.as_deref().unwrap_or_default(), now),
    }
}

/// Whether `fresh` promises what `call`'s card showed.
pub(crate) fn promises_what_was_shown(call: &CallRecord, fresh: &CallPreview) -> bool {
    call.preview
        .as_ref()
        .is_some_and(|shown| shown.outcome.same_consequences(&fresh.outcome))
}

/// Computes the preview of every asking call of the batch that has none
/// yet and whose tool binds one, and stores it with the call, before the
/// card is shown. `tools` is the listing the calls were judged against.
pub(crate) async fn fill_card(
    inner: &Inner,
    reply_id: &str,
    tools: &ToolIndex,
) -> Result<(), StoreError> {
    let waiting = inner
        .store
        .with_conn(|c| calls::calls_of_batch(c, reply_id))?;
    for call in waiting {
        if call.status != CallStatus::Asking || call.preview.is_some() {
            continue;
        }
        let Some(write) = tools.get(&call.qualified_name) else {
            continue;
        };
        let Some(source) = preview_source(write, tools) else {
            continue;
        };
        let arguments = call.arguments.clone().unwrap_or(Value::Null);
        let computed = compute(inner, source, &arguments, inner.now()).await;
        let now = inner.now();
        inner
            .store
            .with_tx(|tx| calls::set_preview(tx, &call, &computed, None, now))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::protocol::PreviewOutcome;

    #[test]
    fn previews_differ_when_any_consequence_differs_and_two_failures_are_alike() {
        let computed = |pay: i64| PreviewOutcome::Computed {
            content: json!({"totals": [{"kind": "pay", "amountFen": pay}]}),
        };
        assert!(computed(679_900).same_consequences(&computed(679_900)));
        assert!(!computed(679_900).same_consequences(&computed(699_900)));
        let refused = |message: &str| PreviewOutcome::Refused {
            message: message.into(),
        };
        assert!(!refused("库存不足").same_consequences(&computed(679_900)));
        assert!(!refused("库存不足").same_consequences(&refused("订单不存在")));
        let unavailable = |message: &str| PreviewOutcome::Unavailable {
            message: message.into(),
        };
        assert!(unavailable("timeout").same_consequences(&unavailable("stopped")));
        assert!(!unavailable("timeout").same_consequences(&computed(1)));
    }
}
