//! The tools a run offers, each with its facts worked out once: listed
//! from the servers, checked against their pins, and looked up by
//! `server__tool`. The lowest floor of a call's life: judging, cards,
//! previews and execution all read this listing.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::agent::inner::Inner;
use crate::mcp::{ToolInfo, pin, qualified_name};
use crate::policy::{ToolFacts, Trust};
use crate::protocol::{AgentEvent, ErrorCode, ErrorInfo};
use crate::store::StoreError;
use crate::store::calls::CallSchema;
use crate::ucp::binding::{GET_CHECKOUT, Operation};

/// A tool offered to the model in this turn, with its facts.
#[derive(Debug, Clone)]
pub(crate) struct KnownTool {
    pub info: ToolInfo,
    /// Worked out once, from the definition, its pin and the server's trust.
    pub facts: ToolFacts,
    /// The input schema as each call keeps it, worked out once.
    pub schema: Arc<CallSchema>,
}

impl KnownTool {
    /// `changed`: the definition differs from its pin.
    pub(crate) fn new(info: ToolInfo, changed: bool) -> KnownTool {
        let schema = Arc::new(CallSchema::of(&info.input_schema));
        KnownTool::with_schema(info, changed, schema)
    }

    /// With its call schema already worked out (`call_schemas.rs`).
    fn with_schema(info: ToolInfo, changed: bool, schema: Arc<CallSchema>) -> KnownTool {
        KnownTool {
            facts: ToolFacts::of(&info, changed),
            info,
            schema,
        }
    }
}

/// Tools by `server__tool`: lookups are exact.
pub(crate) type ToolIndex = BTreeMap<String, KnownTool>;

/// The tool that previews calls of `write`, when its word can be taken:
/// `write` is a trusted server's unchanged definition naming a tool of the
/// same server, and that tool is listed, unchanged, a trusted read, and
/// takes exactly the same input schema. Anything else has no preview: an
/// untrusted server could name a "preview" that writes.
pub(crate) fn bound_preview<'a>(write: &KnownTool, tools: &'a ToolIndex) -> Option<&'a KnownTool> {
    let name = write.info.preview.as_deref()?;
    if write.facts.trust != Trust::Trusted || write.facts.definition_changed {
        return None;
    }
    let preview = tools.get(&qualified_name(&write.info.server, name))?;
    let takes_same_arguments = preview.info.input_schema == write.info.input_schema;
    let reads = preview.facts.trust == Trust::Trusted && !preview.facts.can_change();
    (preview.info.server == write.info.server
        && reads
        && takes_same_arguments
        && !preview.facts.definition_changed
        && preview.info.qualified_name != write.info.qualified_name)
        .then_some(preview)
}

/// Where the card of a call of a tool gets what the call would do.
#[derive(Clone, Copy)]
pub(crate) enum PreviewSource<'a> {
    /// A trusted server's own preview tool ([`bound_preview`]), called
    /// with the call's arguments.
    Tool(&'a KnownTool),
    /// A UCP merchant's checkout, as the merchant signed it: read with the
    /// binding's `get_checkout` (when the core may run it), its signature
    /// checked with the merchant's keys.
    SignedCheckout {
        write: &'a KnownTool,
        read: Option<&'a KnownTool>,
    },
}

impl PreviewSource<'_> {
    /// The tool the preview is asked of, `server__tool`.
    pub(crate) fn tool_name(&self) -> String {
        match self {
            Self::Tool(preview) => preview.info.qualified_name.clone(),
            Self::SignedCheckout { write, .. } => qualified_name(&write.info.server, GET_CHECKOUT),
        }
    }
}

/// How a call of `write` is previewed, if it can be: a merchant's write on
/// a checkout from the signed checkout, anything else by its bound preview.
pub(crate) fn preview_source<'a>(
    write: &'a KnownTool,
    tools: &'a ToolIndex,
) -> Option<PreviewSource<'a>> {
    if write.info.merchant.is_some() && Operation::of(&write.info.name).shown_as_the_checkout() {
        return Some(PreviewSource::SignedCheckout {
            write,
            read: tools.get(&qualified_name(&write.info.server, GET_CHECKOUT)),
        });
    }
    bound_preview(write, tools).map(PreviewSource::Tool)
}

/// The tools offered this turn, each checked against its pin; a server
/// that asks for a sign-in is told of and left out.
pub(crate) async fn tool_index(
    inner: &Inner,
    emit: &(dyn Fn(AgentEvent) + Send + Sync),
) -> Result<ToolIndex, StoreError> {
    let (tools, needs_sign_in) = listed_tools(inner, emit).await?;
    for server in needs_sign_in {
        emit(AgentEvent::SignInRequired {
            server,
            run_waits: false,
        });
    }
    Ok(tools)
}

/// The tools offered, and the servers that ask the user to sign in first.
pub(crate) async fn listed_tools(
    inner: &Inner,
    emit: &(dyn Fn(AgentEvent) + Send + Sync),
) -> Result<(ToolIndex, Vec<String>), StoreError> {
    let listing = inner.tools.list_tools().await;
    for problem in listing.restarted {
        emit(AgentEvent::ServerRestarted {
            server: problem.server,
            reason: problem.message,
        });
    }
    for paused in listing.paused {
        emit(AgentEvent::ServerPaused {
            server: paused.server,
            failures: paused.failures,
            retry_in_secs: paused.retry_in_secs,
            problem: paused.problem,
        });
    }
    for problem in listing.failures {
        emit(AgentEvent::Error {
            error: ErrorInfo::new(
                ErrorCode::Mcp,
                format!("{}: {}", problem.server, problem.message),
            ),
        });
    }
    let now = inner.now();
    let checked = inner.store.with_tx(|tx| {
        listing
            .tools
            .into_iter()
            .map(|info| {
                let changed = pin::check(tx, &info, now)?;
                Ok((info, changed))
            })
            .collect::<Result<Vec<_>, StoreError>>()
    })?;
    let schemas = inner.call_schemas.of(checked.iter().map(|(info, _)| info));
    let index = checked
        .into_iter()
        .zip(schemas)
        .map(|((info, changed), schema)| {
            (
                info.qualified_name.clone(),
                KnownTool::with_schema(info, changed, schema),
            )
        })
        .collect();
    Ok((index, listing.needs_sign_in))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::mcp::ToolHints;

    fn tool(server: &str, name: &str, read_only: bool, trusted: bool) -> ToolInfo {
        ToolInfo {
            server: server.into(),
            name: name.into(),
            qualified_name: qualified_name(server, name),
            title: None,
            description: None,
            input_schema: json!({"type": "object", "properties": {"orderNo": {"type": "string"}}}),
            hints: ToolHints {
                read_only: Some(read_only),
                destructive: Some(!read_only),
                idempotent: None,
                open_world: Some(false),
            },
            moves_money: false,
            changes_cart: false,
            undoable: false,
            preview: None,
            definition: json!({}),
            definition_hash: String::new(),
            trusted,
            merchant: None,
        }
    }

    fn pay_order(trusted: bool) -> ToolInfo {
        ToolInfo {
            preview: Some("preview_pay_order".into()),
            ..tool("shop", "pay_order", false, trusted)
        }
    }

    fn index(tools: Vec<(ToolInfo, bool)>) -> ToolIndex {
        tools
            .into_iter()
            .map(|(info, changed)| (info.qualified_name.clone(), KnownTool::new(info, changed)))
            .collect()
    }

    fn bound(tools: &ToolIndex) -> Option<String> {
        bound_preview(&tools["shop__pay_order"], tools).map(|p| p.info.qualified_name.clone())
    }

    #[test]
    fn a_trusted_writes_preview_is_bound_when_it_is_a_trusted_read_taking_the_same_arguments() {
        let tools = index(vec![
            (pay_order(true), false),
            (tool("shop", "preview_pay_order", true, true), false),
        ]);
        assert_eq!(bound(&tools).as_deref(), Some("shop__preview_pay_order"));
    }

    #[test]
    fn an_untrusted_servers_preview_is_ignored() {
        let tools = index(vec![
            (pay_order(false), false),
            (tool("shop", "preview_pay_order", true, false), false),
        ]);
        assert_eq!(bound(&tools), None);
    }

    #[test]
    fn a_preview_that_may_write_is_not_called() {
        let tools = index(vec![
            (pay_order(true), false),
            (tool("shop", "preview_pay_order", false, true), false),
        ]);
        assert_eq!(bound(&tools), None);
    }

    #[test]
    fn a_preview_taking_other_arguments_is_not_bound() {
        let mut preview = tool("shop", "preview_pay_order", true, true);
        preview.input_schema =
            json!({"type": "object", "properties": {"orderNo": {"type": "integer"}}});
        let tools = index(vec![(pay_order(true), false), (preview, false)]);
        assert_eq!(bound(&tools), None);
    }

    #[test]
    fn a_preview_is_looked_up_on_the_writes_own_server_only() {
        let tools = index(vec![
            (pay_order(true), false),
            (tool("other", "preview_pay_order", true, true), false),
        ]);
        assert_eq!(bound(&tools), None);
    }

    #[test]
    fn a_changed_definition_of_either_tool_unbinds_the_preview() {
        let write_changed = index(vec![
            (pay_order(true), true),
            (tool("shop", "preview_pay_order", true, true), false),
        ]);
        assert_eq!(bound(&write_changed), None);
        let preview_changed = index(vec![
            (pay_order(true), false),
            (tool("shop", "preview_pay_order", true, true), true),
        ]);
        assert_eq!(bound(&preview_changed), None);
    }

    #[test]
    fn a_write_naming_itself_as_its_preview_has_none() {
        let mut write = pay_order(true);
        write.preview = Some("pay_order".into());
        let tools = index(vec![(write, false)]);
        assert_eq!(bound(&tools), None);
    }
}
