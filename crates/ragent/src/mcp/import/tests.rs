use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;
use crate::mcp::config::ServerTransportWith;
use crate::settings_view::Secret;

const SHOP: &str = "bitselect";

fn fixture(name: &str) -> String {
    let path = format!(
        "{}/tests/fixtures/mcp-config/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Plans `text` with the shop built in, no user servers and only
/// `SET_VAR` set.
fn plan_of(text: &str) -> Result<Import, Vec<ImportProblem>> {
    plan(text, &[SHOP.to_string()], &BTreeMap::new(), |name| {
        name == "SET_VAR"
    })
}

fn planned(text: &str) -> Import {
    plan_of(text).unwrap_or_else(|problems| panic!("refused: {problems:?}"))
}

fn problems(text: &str) -> Vec<String> {
    match plan_of(text) {
        Ok(import) => panic!("planned: {:?}", import.plan),
        Err(problems) => problems.iter().map(ToString::to_string).collect(),
    }
}

fn stdio(command: &str, args: &[&str], env: &[(&str, &str)]) -> ServerTransport {
    ServerTransport::Stdio {
        command: command.into(),
        args: args.iter().map(|a| a.to_string()).collect(),
        env: env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    }
}

fn http(url: &str, headers: &[(&str, &str)]) -> ServerTransport {
    ServerTransport::Http {
        url: url.into(),
        headers: headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    }
}

/// An imported server as saved: untrusted and turned off.
fn imported(transport: ServerTransport) -> ServerConfig {
    ServerConfig {
        disabled: true,
        ..ServerConfig::untrusted(transport)
    }
}

fn names(import: &Import) -> Vec<(&str, &str, Option<RenameReason>)> {
    import
        .plan
        .servers
        .iter()
        .map(|s| (s.original_name.as_str(), s.name.as_str(), s.rename))
        .collect()
}

#[test]
fn claude_desktop_servers_are_planned_untrusted_with_their_commands_and_env() {
    let import = planned(&fixture("claude-desktop.json"));
    assert_eq!(import.plan.format, ImportFormat::McpServers);
    assert_eq!(
        names(&import),
        vec![
            ("filesystem", "filesystem", None),
            ("github", "github", None)
        ]
    );
    assert_eq!(
        import.servers["github"],
        imported(stdio(
            "npx",
            &["-y", "@modelcontextprotocol/server-github"],
            &[("GITHUB_PERSONAL_ACCESS_TOKEN", "ghp_example_token")]
        ))
    );
    // Nothing pasted runs until the user turns it on.
    assert!(import.servers.values().all(|s| !s.trusted && s.disabled));
    assert!(
        import
            .plan
            .servers
            .iter()
            .all(|s| s.server.disabled && !s.was_disabled)
    );
    // The token is written in the text: the preview says so, hiding it.
    assert_eq!(
        import.plan.servers[1].values,
        vec![PlannedValue {
            name: "GITHUB_PERSONAL_ACCESS_TOKEN".into(),
            from_variables: vec![],
            has_written_text: true,
        }]
    );
    // The page is told the env's names, never its values.
    let shown = serde_json::to_string(&import.plan).unwrap();
    assert!(!shown.contains("ghp_example_token"), "{shown}");
    assert_eq!(
        import.plan.servers[1].server.transport,
        ServerTransportWith::Stdio {
            command: "npx".into(),
            args: vec!["-y".into(), "@modelcontextprotocol/server-github".into()],
            env: [("GITHUB_PERSONAL_ACCESS_TOKEN".to_string(), Secret::Keep)].into(),
        }
    );
    assert_eq!(import.plan.notes, vec![]);
}

#[test]
fn cursor_env_references_are_kept_as_written_and_a_name_with_a_space_is_renamed() {
    let import = planned(&fixture("cursor.json"));
    assert_eq!(
        names(&import),
        vec![
            (
                "remote notes",
                "remote-notes",
                Some(RenameReason::InvalidName)
            ),
            ("web-search", "web-search", None),
        ]
    );
    assert_eq!(
        import.servers["remote-notes"],
        imported(http(
            "https://notes.example.com/mcp",
            &[("Authorization", "Bearer ${env:NOTES_TOKEN}")]
        ))
    );
    assert_eq!(
        import.servers["web-search"].transport,
        stdio(
            "npx",
            &["-y", "example-search-mcp"],
            &[("SEARCH_API_KEY", "${env:SEARCH_API_KEY}")]
        )
    );
    assert_eq!(
        import.plan.servers[0].variables,
        vec![VariableUse {
            name: "NOTES_TOKEN".into(),
            set: false
        }]
    );
    // Each value says which variable fills it in, and whether text is written beside it.
    assert_eq!(
        import.plan.servers[0].values,
        vec![PlannedValue {
            name: "Authorization".into(),
            from_variables: vec!["NOTES_TOKEN".into()],
            has_written_text: true,
        }]
    );
    assert_eq!(
        import.plan.servers[1].values,
        vec![PlannedValue {
            name: "SEARCH_API_KEY".into(),
            from_variables: vec!["SEARCH_API_KEY".into()],
            has_written_text: false,
        }]
    );
}

#[test]
fn vscode_servers_are_read_by_type_and_its_inputs_are_left_out_with_a_note() {
    let import = planned(&fixture("vscode.json"));
    assert_eq!(import.plan.format, ImportFormat::VsCode);
    assert_eq!(
        names(&import),
        vec![
            ("fetch", "fetch", None),
            ("github", "github", None),
            ("memory", "memory", None)
        ]
    );
    assert_eq!(
        import.servers["github"].transport,
        http(
            "https://api.example.com/mcp/",
            &[("Authorization", "Bearer ${env:GITHUB_TOKEN}")]
        )
    );
    assert_eq!(
        import.servers["memory"].transport,
        stdio("npx", &["-y", "@modelcontextprotocol/server-memory"], &[])
    );
    assert_eq!(
        import.plan.notes,
        vec![ImportNote::IgnoredTopLevelKey {
            key: "inputs".into()
        }]
    );
}

#[test]
fn a_vscode_settings_file_is_read_from_its_mcp_key() {
    let import = planned(
        r#"{"editor.fontSize": 14, "mcp": {"servers": {"m": {"type": "stdio", "command": "m-mcp"}}}}"#,
    );
    assert_eq!(import.plan.format, ImportFormat::VsCode);
    assert_eq!(names(&import), vec![("m", "m", None)]);
}

#[test]
fn a_server_that_needs_a_vscode_input_or_variable_is_refused_naming_it() {
    assert_eq!(
        problems(
            r#"{"servers": {"search": {"type": "stdio", "command": "s", "env": {"KEY": "${input:search-key}"}, "args": ["${workspaceFolder}"]}}}"#
        ),
        vec![
            "server \"search\": ${workspaceFolder} is filled in by another app; write the value or ${env:NAME} instead",
            "server \"search\": ${input:search-key} is filled in by another app; write the value or ${env:NAME} instead",
        ]
    );
}

#[test]
fn cherry_studio_base_url_inactive_flag_and_timeout_in_seconds_are_read() {
    let import = planned(&fixture("cherry-studio.json"));
    assert_eq!(
        names(&import),
        vec![
            ("fetch", "fetch", None),
            ("高德地图", "server", Some(RenameReason::InvalidName))
        ]
    );
    assert_eq!(
        import.servers["fetch"],
        ServerConfig {
            timeout_secs: Some(60),
            ..imported(stdio("uvx", &["mcp-server-fetch"], &[]))
        }
    );
    assert_eq!(
        import.servers["server"],
        ServerConfig {
            timeout_secs: Some(120),
            ..imported(http("https://mcp.example.cn/mcp?key=${env:AMAP_KEY}", &[]))
        }
    );
    let was_disabled: Vec<bool> = import.plan.servers.iter().map(|s| s.was_disabled).collect();
    assert_eq!(
        was_disabled,
        vec![false, true],
        "Cherry's isActive: false is read"
    );
    assert_eq!(
        import.plan.notes,
        vec![],
        "display keys are left out quietly"
    );
}

#[test]
fn cline_disabled_and_timeout_are_kept_and_its_auto_approve_lists_are_left_out_with_a_note() {
    let import = planned(&fixture("cline.json"));
    assert_eq!(
        import.servers["weather"],
        ServerConfig {
            timeout_secs: Some(30),
            ..imported(stdio(
                "node",
                &["/Users/me/Documents/Cline/MCP/weather-server/build/index.js"],
                &[("OPENWEATHER_API_KEY", "owm_example_key")]
            ))
        }
    );
    assert_eq!(
        import.servers["tracker"],
        imported(http("https://tracker.example.com/mcp", &[]))
    );
    let was_disabled: Vec<(&str, bool)> = import
        .plan
        .servers
        .iter()
        .map(|s| (s.name.as_str(), s.was_disabled))
        .collect();
    assert_eq!(was_disabled, vec![("tracker", true), ("weather", false)]);
    let notes: Vec<String> = import.plan.notes.iter().map(ToString::to_string).collect();
    assert_eq!(
        notes,
        vec![
            "server \"tracker\": \"autoApprove\" is not carried over (this app decides itself which calls ask)",
            "server \"weather\": \"autoApprove\" is not carried over (this app decides itself which calls ask)",
        ]
    );
}

#[test]
fn an_unknown_key_is_refused_naming_the_server_and_the_key() {
    assert_eq!(
        problems(&fixture("unknown-key.json")),
        vec!["server \"notes\": unknown key \"cwd\""]
    );
}

#[test]
fn a_server_named_like_the_builtin_shop_or_a_configured_one_is_renamed() {
    let import = planned(&fixture("clash-with-shop.json"));
    assert_eq!(
        names(&import),
        vec![("bitselect", "bitselect-2", Some(RenameReason::Builtin))]
    );
    assert!(!import.servers["bitselect-2"].trusted);

    let existing: BTreeMap<String, ServerConfig> = [(
        "notes".to_string(),
        ServerConfig::untrusted(stdio("old", &[], &[])),
    )]
    .into();
    let import = plan(
        r#"{"mcpServers": {"notes": {"command": "n"}, "notes-2": {"command": "m"}, "a b": {"command": "x"}, "a-b": {"command": "y"}}}"#,
        &[SHOP.to_string()],
        &existing,
        |_| true,
    )
    .unwrap();
    assert_eq!(
        names(&import),
        vec![
            ("a b", "a-b-2", Some(RenameReason::InvalidName)),
            ("a-b", "a-b", None),
            ("notes", "notes-3", Some(RenameReason::Existing)),
            ("notes-2", "notes-2", None),
        ]
    );
}

#[test]
fn malformed_json_is_refused_with_its_line_and_column() {
    let refused = plan_of(&fixture("malformed.json")).unwrap_err();
    assert_eq!(
        refused,
        vec![ImportProblem::Json {
            line: 5,
            column: 5,
            message: "trailing comma".into()
        }]
    );
    assert_eq!(
        refused[0].to_string(),
        "not valid JSON at line 5, column 5: trailing comma"
    );
}

#[test]
fn an_sse_server_is_refused_with_a_sentence_that_says_what_to_ask_for() {
    assert_eq!(
        problems(r#"{"mcpServers": {"old": {"type": "sse", "url": "https://h/sse"}}}"#),
        vec![
            "server \"old\" uses the old SSE transport, which this app does not support; ask its maker for a streamable HTTP URL"
        ]
    );
}

#[test]
fn every_problem_of_a_text_is_told_at_once() {
    assert_eq!(
        problems(
            r#"{"mcpServers": {
                "a": {"command": "x", "timeout": 0, "args": "one"},
                "b": {"url": "ftp://h"},
                "c": {"command": "x", "url": "http://h"},
                "d": {},
                "e": {"type": "websocket", "url": "http://h"},
                "f": {"type": "http", "command": "x"},
                "g": {"command": "x", "headers": {"A": "b"}},
                "h": []
            }}"#
        ),
        vec![
            "server \"a\": \"args\" should be a list of strings",
            "server \"a\": \"timeout\" should be whole seconds from 1 to 86400",
            "server \"b\": the URL \"ftp://h\" is not http(s)",
            "server \"c\": has both \"command\" and \"url\"",
            "server \"d\": has neither \"command\" nor \"url\"",
            "server \"e\": unknown type \"websocket\" (expected \"stdio\" or \"http\")",
            "server \"f\": \"command\" does not fit a server of type \"http\"",
            "server \"g\": \"headers\" does not fit a server of type \"stdio\"",
            "server \"h\": not an object",
        ]
    );
}

#[test]
fn a_text_without_servers_is_refused() {
    for text in [r#"{"other": {}}"#, "[]", r#"{"mcpServers": {}}"#] {
        assert_eq!(
            plan_of(text).unwrap_err(),
            vec![ImportProblem::NoServers],
            "{text}"
        );
    }
}

#[test]
fn names_the_app_cannot_take_are_made_valid() {
    for (given, made) in [
        ("my__server", "my_server"),
        ("a b c", "a-b-c"),
        ("_x_", "x"),
        ("notes.app", "notes-app"),
        ("文件 files", "files"),
        ("文件", "server"),
        (&"x".repeat(40), &"x".repeat(32)),
        ("ok-name", "ok-name"),
    ] {
        let valid = valid_name(given);
        assert_eq!(valid, made, "{given:?}");
        assert_eq!(validate_server_name(&valid), Ok(()), "{given:?}");
    }
}

#[test]
fn the_fingerprint_follows_what_is_saved_not_whether_a_variable_is_set() {
    let text = fixture("cursor.json");
    let none = BTreeMap::new();
    let first = plan(&text, &[], &none, |_| false).unwrap().plan;
    let set = plan(&text, &[], &none, |_| true).unwrap().plan;
    assert_eq!(first.fingerprint, set.fingerprint);
    let existing: BTreeMap<String, ServerConfig> = [(
        "web-search".to_string(),
        ServerConfig::untrusted(stdio("x", &[], &[])),
    )]
    .into();
    let clashing = plan(&text, &[], &existing, |_| false).unwrap().plan;
    assert_ne!(first.fingerprint, clashing.fingerprint);
}

#[test]
fn a_preview_travels_as_a_tagged_outcome() {
    let refused = ImportPreview::of(plan_of(&fixture("unknown-key.json")));
    assert_eq!(
        serde_json::to_value(&refused).unwrap(),
        json!({"outcome": "refused", "problems": [{"kind": "unknown_key", "server": "notes", "key": "cwd"}]})
    );
    let ImportPreview::Plan { plan } = ImportPreview::of(plan_of(&fixture("clash-with-shop.json")))
    else {
        panic!("refused")
    };
    assert_eq!(
        serde_json::to_value(&plan.servers[0]).unwrap(),
        json!({
            "name": "bitselect-2",
            "original_name": "bitselect",
            "rename": "builtin",
            "server": {
                "command": "bitselect-mcp",
                "args": ["--data-dir", "/home/me/.local/share/bitselect"],
                "env": {},
                "trusted": false,
                "disabled": true,
                "timeout_secs": null
            },
            "was_disabled": false,
            "values": [],
            "variables": []
        })
    );
}

#[test]
fn secret_args_and_url_parameters_are_kept_for_saving_but_masked_in_the_plan() {
    let import = planned(
        r#"{"mcpServers": {
            "notes": {"command": "npx", "args": ["notes-mcp", "--api-key", "sk-PASTED-1", "--port", "8080"]},
            "remote": {"url": "https://h.example/mcp?token=PASTED-2&page=2"}
        }}"#,
    );
    assert_eq!(
        import.servers["notes"],
        imported(stdio(
            "npx",
            &["notes-mcp", "--api-key", "sk-PASTED-1", "--port", "8080"],
            &[]
        ))
    );
    let shown = serde_json::to_string(&import.plan).unwrap();
    assert!(!shown.contains("PASTED"), "{shown}");
    let mask = crate::settings_view::MASK;
    assert_eq!(
        import.plan.servers[0].server.transport,
        ServerTransportWith::Stdio {
            command: "npx".into(),
            args: ["notes-mcp", "--api-key", mask, "--port", "8080"]
                .map(String::from)
                .into(),
            env: BTreeMap::new(),
        }
    );
    assert!(matches!(
        &import.plan.servers[1].server.transport,
        ServerTransportWith::Http { url, .. } if *url == format!("https://h.example/mcp?token={mask}&page=2")
    ));
}
