//! A stdio server that keeps dying, at its start or in the middle of every
//! call: it is started again after a pause that doubles, never in a busy
//! loop; its status says how often it failed, why and when it is tried
//! again; and none of its processes is left behind, not even as a zombie.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use ragent::mcp::connect::StdioConnector;
use ragent::mcp::hub::{HubOptions, McpHub};
use ragent::mcp::{
    McpError, PageOrigins, ServerEntry, ServerPaused, ToolInvocation, ToolSource, UNWATCHED,
};
use serde_json::Map;

/// An MCP server of an older protocol revision (it refuses
/// `server/discover`) with one read-only tool. Each start is a line in
/// `$STARTS`. With `MODE=at_start` it exits before answering anything;
/// otherwise it exits in the middle of every call.
const DYING: &str = r#"#!/bin/sh
printf 'start\n' >> "$STARTS"
if [ "$MODE" = at_start ]; then exit 3; fi
while read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
  case "$line" in
    *'"server/discover"'*)
      printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}\n' "$id";;
    *'"initialize"'*)
      version=$(printf '%s' "$line" | sed -n 's/.*"protocolVersion":"\([^"]*\)".*/\1/p')
      printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"%s","capabilities":{"tools":{}},"serverInfo":{"name":"dying","version":"1"}}}\n' "$id" "$version";;
    *'"tools/list"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"look","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}]}}\n' "$id";;
    *'"tools/call"'*)
      exit 3;;
  esac
done
"#;

/// The server, installed under `program`: the name the process table
/// shows for it, by which a test finds its processes, live or zombie.
struct Dying {
    _dir: tempfile::TempDir,
    program: PathBuf,
    starts: PathBuf,
}

impl Dying {
    fn new(program: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let program = dir.path().join(program);
        std::fs::write(&program, DYING).unwrap();
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
        let starts = dir.path().join("starts");
        Dying {
            _dir: dir,
            program,
            starts,
        }
    }

    fn entry(&self, name: &str, mode: &str) -> ServerEntry {
        let connector = StdioConnector::new(
            name,
            &self.program.display().to_string(),
            vec![],
            vec![
                ("STARTS".into(), self.starts.display().to_string()),
                ("MODE".into(), mode.into()),
            ],
        );
        ServerEntry {
            name: name.into(),
            trusted: false,
            connector: Arc::new(connector),
            call_timeout: None,
            pages: PageOrigins::none(),
            ucp: None,
        }
    }

    fn starts(&self) -> usize {
        std::fs::read_to_string(&self.starts)
            .map(|text| text.lines().count())
            .unwrap_or(0)
    }
}

async fn look(hub: &McpHub, server: &str) -> Result<(), McpError> {
    hub.call_tool(
        ToolInvocation {
            server: server.into(),
            tool: "look".into(),
            arguments: Map::new(),
            idempotency_key: None,
            retry: None,
        },
        UNWATCHED,
    )
    .await
    .map(drop)
}

/// This process's children running `program`, live or zombie: (pid, state).
fn children_running(program: &str) -> Vec<(u32, char)> {
    let me = std::process::id();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid ...: comm may hold spaces, so split after it.
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let comm = &stat[open + 1..close];
        let mut rest = stat[close + 1..].split_whitespace();
        let state = rest.next().and_then(|s| s.chars().next()).unwrap_or('?');
        let ppid: u32 = rest.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        if comm == program && ppid == me {
            found.push((stat[..open].trim().parse().unwrap_or(0), state));
        }
    }
    found
}

/// Waits until none of this process's children runs `program`, live or
/// zombie: each one that exited must have been waited for.
async fn none_left(program: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left = children_running(program);
        if left.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "processes left behind (pid, state): {left:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn paused_for(error: Result<(), McpError>) -> (u32, u64, String) {
    match error {
        Err(McpError::Paused {
            failures,
            retry_in_secs,
            problem,
            ..
        }) => (failures, retry_in_secs, problem),
        other => panic!("not paused: {other:?}"),
    }
}

/// A hub whose pauses start at one second, with one dying server.
async fn hub_with(program: &str, server: &str, mode: &str) -> (Dying, McpHub) {
    let dying = Dying::new(program);
    let hub = McpHub::new(HubOptions {
        retry_start_after: Duration::from_secs(1),
        ..HubOptions::default()
    });
    hub.configure(vec![dying.entry(server, mode)]).await;
    (dying, hub)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_dies_in_every_call_is_restarted_ever_less_often_and_leaves_no_zombies() {
    let (dying, hub) = hub_with("dies-mid-call", "dying", "mid_call").await;

    let listing = hub.list_tools().await;
    assert_eq!(listing.tools.len(), 1, "{listing:?}");
    let live = children_running("dies-mid-call");
    assert_eq!(live.len(), 1, "the running server is found: {live:?}");

    // The first stop is restarted at once: a server may crash once.
    let first = look(&hub, "dying").await;
    assert!(matches!(first, Err(McpError::Stopped { .. })), "{first:?}");
    let second = look(&hub, "dying").await;
    assert!(
        matches!(second, Err(McpError::Stopped { .. })),
        "{second:?}"
    );
    assert_eq!(dying.starts(), 2);

    // Stopping again soon after its start pauses the next start; uses in
    // the pause fail at once and start nothing.
    for _ in 0..50 {
        let (failures, retry_in_secs, _) = paused_for(look(&hub, "dying").await);
        assert_eq!((failures, retry_in_secs), (1, 1));
    }
    assert_eq!(dying.starts(), 2, "no start while paused");
    let status = hub.status().await;
    assert_eq!(status[0].stops_soon, 2);
    assert_eq!(status[0].retry_in_secs, Some(1));
    assert!(!status[0].connected);
    assert!(status[0].problem.is_some(), "{status:?}");

    // Once the pause is over it is started again, stops again, and waits
    // twice as long.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let third = look(&hub, "dying").await;
    assert!(matches!(third, Err(McpError::Stopped { .. })), "{third:?}");
    assert_eq!(dying.starts(), 3);
    let (failures, retry_in_secs, _) = paused_for(look(&hub, "dying").await);
    assert_eq!((failures, retry_in_secs), (2, 2));
    let listing = hub.list_tools().await;
    assert_eq!(listing.paused.len(), 1, "{listing:?}");
    assert_eq!(listing.paused[0].failures, 2);
    assert!(listing.tools.is_empty());

    hub.disconnect("dying").await;
    none_left("dies-mid-call").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_exits_at_start_is_paused_says_why_and_leaves_no_zombies() {
    let (dying, hub) = hub_with("dies-at-start", "gone-at-start", "at_start").await;

    let listing = hub.list_tools().await;
    assert_eq!(listing.failures.len(), 1, "{listing:?}");
    for _ in 0..20 {
        let listing = hub.list_tools().await;
        let paused: Vec<(u32, u64)> = listing
            .paused
            .iter()
            .map(
                |ServerPaused {
                     failures,
                     retry_in_secs,
                     ..
                 }| (*failures, *retry_in_secs),
            )
            .collect();
        assert_eq!(paused, [(1, 1)]);
    }
    assert_eq!(dying.starts(), 1, "no start while paused");
    tokio::time::sleep(Duration::from_secs(1)).await;
    let listing = hub.list_tools().await;
    assert_eq!(listing.failures.len(), 1, "tried again: {listing:?}");
    assert_eq!(dying.starts(), 2);
    let status = hub.status().await;
    assert_eq!(status[0].failed_starts, 2);
    assert_eq!(status[0].retry_in_secs, Some(2));

    none_left("dies-at-start").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_chat_is_told_when_a_server_that_keeps_dying_is_left_out() {
    use ragent::protocol::AgentEvent;

    use crate::support::{Harness, Setup, calls_turn, text_turn};

    let dying = Dying::new("dies-in-chat");
    let mut setup = Setup::bare();
    setup.servers.push(ServerEntry {
        trusted: true,
        ..dying.entry("dying", "mid_call")
    });
    let mut h = Harness::start(setup).await;
    let mut events = Vec::new();
    for (n, id) in ["c1", "c2"].into_iter().enumerate() {
        h.model.push_turn(calls_turn(
            "",
            &[(id, "dying__look", serde_json::json!({}))],
        ));
        h.model.push_turn(text_turn("没查到。"));
        events.extend(h.say(&format!("查一下 {n}")).await.events);
    }
    h.model.push_turn(text_turn("现在查不了。"));
    events.extend(h.say("再查一下").await.events);

    let paused: Vec<(&str, u32)> = events
        .iter()
        .filter_map(|event| match event {
            AgentEvent::ServerPaused {
                server, failures, ..
            } => Some((server.as_str(), *failures)),
            _ => None,
        })
        .collect();
    assert!(
        paused.first() == Some(&("dying", 1)),
        "the first pause is told: {paused:?}"
    );
    assert!(dying.starts() <= 2, "started {} times", dying.starts());

    h.agent.shutdown().await;
    none_left("dies-in-chat").await;
}
