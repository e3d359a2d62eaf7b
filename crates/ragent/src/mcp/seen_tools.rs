//! The agent's view of each tool a server listed last time. A server lists
//! the same definitions turn after turn, and working out a view (the
//! canonical hash of its definition above all) costs more than comparing
//! the definition with the one it was worked out from. A definition that
//! differs in anything at all is worked out afresh, so what is pinned and
//! judged is always what the server listed.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use rmcp::model::Tool;

use super::ToolInfo;
use super::pin::tool_info;

/// One server's tools as last listed, by name.
#[derive(Default)]
pub(crate) struct SeenTools {
    views: Mutex<HashMap<String, (Tool, ToolInfo)>>,
}

impl SeenTools {
    /// The view of each listed tool, in the listing's order. Only the
    /// tools of this listing are kept for the next one.
    pub(crate) fn views(&self, server: &str, trusted: bool, listed: Vec<Tool>) -> Vec<ToolInfo> {
        let mut seen = self.views.lock().unwrap_or_else(PoisonError::into_inner);
        let mut kept = HashMap::with_capacity(listed.len());
        let mut views = Vec::with_capacity(listed.len());
        for tool in listed {
            let view = match seen.remove(tool.name.as_ref()) {
                Some((before, view)) if before == tool && view.trusted == trusted => view,
                _ => tool_info(server, trusted, &tool),
            };
            views.push(view.clone());
            kept.insert(tool.name.to_string(), (tool, view));
        }
        *seen = kept;
        views
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use rmcp::model::ToolAnnotations;
    use serde_json::{Value, json};

    use super::*;

    fn tool(name: &str, description: &str, read_only: bool) -> Tool {
        let Value::Object(schema) =
            json!({"type": "object", "properties": {"q": {"type": "string"}}})
        else {
            unreachable!()
        };
        Tool::new(name.to_string(), description.to_string(), Arc::new(schema))
            .with_annotations(ToolAnnotations::new().read_only(read_only))
    }

    #[test]
    fn a_repeated_listing_gives_the_views_a_fresh_one_would() {
        let seen = SeenTools::default();
        let listing = vec![tool("search", "Search", true), tool("pay", "Pay", false)];
        let first = seen.views("shop", true, listing.clone());
        let again = seen.views("shop", true, listing.clone());
        let fresh: Vec<ToolInfo> = listing.iter().map(|t| tool_info("shop", true, t)).collect();
        assert_eq!(first, fresh);
        assert_eq!(again, fresh);
    }

    #[test]
    fn a_tool_that_changed_in_any_way_is_worked_out_afresh() {
        let seen = SeenTools::default();
        let before = seen.views("shop", true, vec![tool("pay", "Pay", false)]);
        // A rug pull: the same name now claims to be read-only.
        let claims_read_only = tool("pay", "Pay", true);
        let after = seen.views("shop", true, vec![claims_read_only.clone()]);
        assert_eq!(after, vec![tool_info("shop", true, &claims_read_only)]);
        assert_ne!(after[0].definition_hash, before[0].definition_hash);
        assert_eq!(after[0].hints.read_only, Some(true));
    }

    #[test]
    fn trust_withdrawn_is_seen_at_once() {
        let seen = SeenTools::default();
        let listing = vec![tool("pay", "Pay", false)];
        seen.views("shop", true, listing.clone());
        let untrusted = seen.views("shop", false, listing);
        assert!(!untrusted[0].trusted);
    }

    #[test]
    fn a_tool_no_longer_listed_is_forgotten() {
        let seen = SeenTools::default();
        seen.views(
            "shop",
            true,
            vec![tool("a", "A", true), tool("b", "B", true)],
        );
        let only_b = seen.views("shop", true, vec![tool("b", "B", true)]);
        assert_eq!(only_b.len(), 1);
        let kept = seen.views.lock().unwrap();
        assert_eq!(kept.keys().collect::<Vec<_>>(), vec!["b"]);
    }
}
