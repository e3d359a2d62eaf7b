//! Servers brought over from other MCP clients: a pasted configuration is
//! read into a plan (what would be added, under which names) and nothing is
//! saved until the user applies it.
//!
//! Accepted shapes:
//! - `{"mcpServers": {...}}` (Claude Desktop, Cursor, Cline, Cherry Studio):
//!   `command`/`args`/`env` or `url` (Cherry's `baseUrl`)/`headers`, `type`
//!   (Cline's older `transportType`), `disabled` (Cherry's `isActive`), and
//!   `timeout` in whole seconds, the unit Cline and Cherry Studio write.
//! - `{"servers": {...}}`, VS Code's `mcp.json` (also under `"mcp"` in its
//!   `settings.json`), with `type` `stdio` or `http`. Its top-level
//!   `inputs` (prompts VS Code shows) are left out with a note; a server
//!   that uses one (`${input:…}`) is refused, since this app cannot ask.
//!
//! Rules: every imported server is untrusted; a key the app does not know
//! is refused, naming server and key, except per-tool approval lists and
//! display metadata, which are left out (the app decides itself what asks);
//! `type: "sse"` is refused (rmcp's client has no SSE transport); a name
//! the app cannot take is made valid and one already in use (the built-in
//! shop's, a configured server's) gets a `-2` suffix, each shown as a
//! rename. `${env:NAME}` stays as written and is filled in when the server
//! starts (see `env_refs`), so secrets in the environment are not copied.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use ts_rs::TS;

use super::config::{ServerConfig, ServerTransport, timeout_is_valid, validate_server_name};
use super::env_refs::{Reference, references};
use crate::hashing::hash_json;
use crate::mcp::config::ServerConfigWith;
use crate::settings_view::{Secret, server_view};

/// Keys other clients write that only describe a server (for their own
/// lists): left out without a word.
const DISPLAY_KEYS: &[&str] = &[
    "name",
    "description",
    "id",
    "provider",
    "providerUrl",
    "logoUrl",
    "tags",
    "registryUrl",
    "installSource",
];

/// Keys that would change what a client does but that this app decides
/// itself (which calls ask, which tools are offered): left out with a note.
const NOTED_KEYS: &[&str] = &[
    "autoApprove",
    "alwaysAllow",
    "disabledTools",
    "disabledAutoApproveTools",
    "longRunning",
];

/// Which client's shape the text was in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ImportFormat {
    /// `{"mcpServers": …}`.
    McpServers,
    /// VS Code's `{"servers": …}`.
    VsCode,
}

/// What an import would add. Secret values stay in the core: the plan
/// names env values and headers only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ImportPlan {
    pub format: ImportFormat,
    pub servers: Vec<PlannedServer>,
    pub notes: Vec<ImportNote>,
    /// Names this plan: applying it is refused if the same text would now
    /// give another plan (a server was added or renamed meanwhile).
    pub fingerprint: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct PlannedServer {
    /// The name it will have here.
    pub name: String,
    /// The name in the pasted text.
    pub original_name: String,
    /// Why `name` differs from `original_name`, when it does.
    pub rename: Option<RenameReason>,
    /// What will be saved; `trusted` is always false, and `disabled`
    /// always true: nothing pasted runs until the user turns it on.
    pub server: ServerConfigWith<Secret>,
    /// Whether the pasted text had it turned off already.
    pub was_disabled: bool,
    /// Each env value (stdio) or header (HTTP), in order: what it is made
    /// of, never a value written in the text.
    pub values: Vec<PlannedValue>,
    /// The `${env:NAME}` it uses, and whether each is set now.
    pub variables: Vec<VariableUse>,
}

/// One env value or header of an imported server, as its preview shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct PlannedValue {
    /// The variable's or header's name.
    pub name: String,
    /// The `${env:NAME}` variables it is filled in from, in order.
    pub from_variables: Vec<String>,
    /// It also holds text written in the config (shown hidden: it may be
    /// a secret).
    pub has_written_text: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum RenameReason {
    /// Holds characters a server name cannot (`__`, spaces, non-ASCII…).
    InvalidName,
    /// The name of a server the app supplies (the shop).
    Builtin,
    /// The name of a server already configured.
    Existing,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct VariableUse {
    pub name: String,
    /// Set in the app's environment now; an unset one makes the server
    /// fail to start, naming the variable.
    pub set: bool,
}

/// Something of the text that is not carried over.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS, thiserror::Error)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ImportNote {
    #[error(
        "server {server:?}: {key:?} is not carried over (this app decides itself which calls ask)"
    )]
    IgnoredKey { server: String, key: String },
    #[error("{key:?} at the top level is not carried over")]
    IgnoredTopLevelKey { key: String },
}

/// What a value should have been.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum Expected {
    Text,
    TextList,
    TextMap,
    TrueOrFalse,
    /// Whole seconds, 1 to a day.
    Seconds,
}

impl std::fmt::Display for Expected {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Expected::Text => "a string",
            Expected::TextList => "a list of strings",
            Expected::TextMap => "an object of strings",
            Expected::TrueOrFalse => "true or false",
            Expected::Seconds => "whole seconds from 1 to 86400",
        })
    }
}

/// Why a text cannot be imported. Each names the server and key at fault.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS, thiserror::Error)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ImportProblem {
    #[error("not valid JSON at line {line}, column {column}: {message}")]
    Json {
        line: usize,
        column: usize,
        message: String,
    },
    #[error("no servers found: expected an object with \"mcpServers\" or \"servers\"")]
    NoServers,
    #[error("server {server:?}: not an object")]
    NotAnObject { server: String },
    #[error("server {server:?}: unknown key {key:?}")]
    UnknownKey { server: String, key: String },
    #[error("server {server:?}: {key:?} should be {expected}")]
    WrongValue {
        server: String,
        key: String,
        expected: Expected,
    },
    #[error("server {server:?}: has neither \"command\" nor \"url\"")]
    NoTransport { server: String },
    #[error("server {server:?}: has both \"command\" and \"url\"")]
    TwoTransports { server: String },
    #[error("server {server:?}: {key:?} does not fit a server of type {server_type:?}")]
    Misplaced {
        server: String,
        key: String,
        server_type: String,
    },
    #[error("server {server:?}: unknown type {value:?} (expected \"stdio\" or \"http\")")]
    UnknownType { server: String, value: String },
    #[error(
        "server {server:?} uses the old SSE transport, which this app does not support; ask its maker for a streamable HTTP URL"
    )]
    Sse { server: String },
    #[error("server {server:?}: the URL {url:?} is not http(s)")]
    BadUrl { server: String, url: String },
    #[error(
        "server {server:?}: {reference} is filled in by another app; write the value or ${{env:NAME}} instead"
    )]
    Variable { server: String, reference: String },
}

/// What the page is shown for a pasted text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum ImportPreview {
    Plan { plan: ImportPlan },
    Refused { problems: Vec<ImportProblem> },
}

/// A plan and the servers it adds, secrets and all (for the core only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Import {
    pub plan: ImportPlan,
    pub servers: BTreeMap<String, ServerConfig>,
}

/// Reads `text` against the servers in use (`builtin`, the app's;
/// `existing`, the user's). `is_set` tells whether an environment variable
/// is set, for the plan to warn of unset ones.
pub fn plan(
    text: &str,
    builtin: &[String],
    existing: &BTreeMap<String, ServerConfig>,
    is_set: impl Fn(&str) -> bool,
) -> Result<Import, Vec<ImportProblem>> {
    let (format, entries, mut notes) = read_root(text).map_err(|p| vec![p])?;
    let mut problems = Vec::new();
    let mut read = Vec::new();
    for (name, value) in entries {
        if let Some(config) = read_server(&name, value, &mut problems, &mut notes) {
            read.push((name, config));
        }
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let in_use: BTreeSet<&String> = builtin.iter().chain(existing.keys()).collect();
    // Names that are valid and free keep their name before any other is
    // given a suffix, so a rename never takes a name the text itself uses.
    let mut taken: BTreeSet<String> = in_use.iter().map(|n| n.to_string()).collect();
    taken.extend(
        read.iter()
            .map(|(name, _)| name)
            .filter(|name| validate_server_name(name).is_ok() && !in_use.contains(name))
            .cloned(),
    );
    let mut planned = Vec::new();
    let mut servers = BTreeMap::new();
    for (original, config) in read {
        let valid = valid_name(&original);
        let rename = if valid != original {
            Some(RenameReason::InvalidName)
        } else if builtin.contains(&valid) {
            Some(RenameReason::Builtin)
        } else if existing.contains_key(&valid) {
            Some(RenameReason::Existing)
        } else {
            None
        };
        let name = match rename {
            None => valid,
            Some(_) => unique_name(&valid, &taken),
        };
        taken.insert(name.clone());
        let was_disabled = config.disabled;
        // Nothing pasted runs before the user has read it and turned it on.
        let config = ServerConfig {
            disabled: true,
            ..config
        };
        planned.push(PlannedServer {
            name: name.clone(),
            original_name: original,
            rename,
            server: server_view(&config),
            was_disabled,
            values: planned_values(&config.transport),
            variables: variables(&config)
                .into_iter()
                .map(|name| VariableUse {
                    set: is_set(&name),
                    name,
                })
                .collect(),
        });
        servers.insert(name, config);
    }
    if planned.is_empty() {
        return Err(vec![ImportProblem::NoServers]);
    }
    let fingerprint = fingerprint(format, &planned, &notes);
    Ok(Import {
        plan: ImportPlan {
            format,
            servers: planned,
            notes,
            fingerprint,
        },
        servers,
    })
}

impl ImportPreview {
    pub fn of(result: Result<Import, Vec<ImportProblem>>) -> ImportPreview {
        match result {
            Ok(import) => ImportPreview::Plan { plan: import.plan },
            Err(problems) => ImportPreview::Refused { problems },
        }
    }
}

/// The plan's servers and notes, without whether variables are set now
/// (setting one between preview and apply changes nothing that is saved).
fn fingerprint(format: ImportFormat, servers: &[PlannedServer], notes: &[ImportNote]) -> String {
    let servers: Vec<Value> = servers
        .iter()
        .map(|s| serde_json::json!([s.name, s.original_name, s.rename, s.server]))
        .collect();
    hash_json(&serde_json::json!([format, servers, notes]))
}

type Entries = Vec<(String, Value)>;

fn read_root(text: &str) -> Result<(ImportFormat, Entries, Vec<ImportNote>), ImportProblem> {
    let value: Value = serde_json::from_str(text).map_err(|e| {
        let full = e.to_string();
        // serde_json appends " at line L column C"; they are fields here.
        let message = full
            .rsplit_once(" at line ")
            .map_or(full.as_str(), |(message, _)| message)
            .to_string();
        ImportProblem::Json {
            line: e.line(),
            column: e.column(),
            message,
        }
    })?;
    let Value::Object(mut root) = value else {
        return Err(ImportProblem::NoServers);
    };
    // VS Code's settings.json keeps its mcp.json shape under "mcp".
    if !root.contains_key("mcpServers")
        && !root.contains_key("servers")
        && let Some(Value::Object(inner)) = root.get("mcp")
    {
        root = inner.clone();
    }
    let (format, key) = if root.contains_key("mcpServers") {
        (ImportFormat::McpServers, "mcpServers")
    } else {
        (ImportFormat::VsCode, "servers")
    };
    let Some(Value::Object(servers)) = root.remove(key) else {
        return Err(ImportProblem::NoServers);
    };
    let notes = root
        .keys()
        .map(|key| ImportNote::IgnoredTopLevelKey { key: key.clone() })
        .collect();
    Ok((format, servers.into_iter().collect(), notes))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Stdio,
    Http,
}

/// One server's entry, each of its problems pushed to `problems`.
fn read_server(
    server: &str,
    value: Value,
    problems: &mut Vec<ImportProblem>,
    notes: &mut Vec<ImportNote>,
) -> Option<ServerConfig> {
    let Value::Object(entry) = value else {
        problems.push(ImportProblem::NotAnObject {
            server: server.to_string(),
        });
        return None;
    };
    let before = problems.len();
    let mut r = Reader { server, problems };
    let (mut command, mut args, mut env) = (None, Vec::new(), BTreeMap::new());
    let (mut url, mut headers) = (None, BTreeMap::new());
    let (mut kind, mut disabled, mut timeout_secs) = (None, false, None);
    let mut sse = false;
    for (key, value) in &entry {
        match key.as_str() {
            "command" => command = r.text(key, value),
            "args" => args = r.text_list(key, value),
            "env" => env = r.text_map(key, value),
            "url" | "baseUrl" => url = r.text(key, value),
            "headers" => headers = r.text_map(key, value),
            "type" | "transportType" => match r.text(key, value).as_deref() {
                Some("stdio") => kind = Some(Kind::Stdio),
                Some("http" | "streamableHttp" | "streamable-http" | "streamable_http") => {
                    kind = Some(Kind::Http)
                }
                Some("sse") => sse = true,
                Some(other) => r.problems.push(ImportProblem::UnknownType {
                    server: server.to_string(),
                    value: other.to_string(),
                }),
                None => {}
            },
            "disabled" => disabled |= r.flag(key, value).unwrap_or(false),
            "isActive" => disabled |= r.flag(key, value).is_some_and(|active| !active),
            "timeout" => timeout_secs = r.seconds(key, value),
            key if NOTED_KEYS.contains(&key) => notes.push(ImportNote::IgnoredKey {
                server: server.to_string(),
                key: key.to_string(),
            }),
            key if DISPLAY_KEYS.contains(&key) => {}
            key => r.problems.push(ImportProblem::UnknownKey {
                server: server.to_string(),
                key: key.to_string(),
            }),
        }
    }
    let server_name = server.to_string();
    if sse {
        problems.push(ImportProblem::Sse {
            server: server_name,
        });
        return None;
    }
    let transport = match (command, url, kind) {
        (Some(_), Some(_), _) => Err(ImportProblem::TwoTransports {
            server: server_name.clone(),
        }),
        (None, None, _) => Err(ImportProblem::NoTransport {
            server: server_name.clone(),
        }),
        (Some(_), None, Some(Kind::Http)) => Err(misplaced(server, "command", "http")),
        (None, Some(_), Some(Kind::Stdio)) => Err(misplaced(server, "url", "stdio")),
        (Some(_), None, _) if !headers.is_empty() => Err(misplaced(server, "headers", "stdio")),
        (Some(command), None, _) => Ok(ServerTransport::Stdio { command, args, env }),
        (None, Some(_), _) if !args.is_empty() || !env.is_empty() => {
            let key = if args.is_empty() { "env" } else { "args" };
            Err(misplaced(server, key, "http"))
        }
        (None, Some(url), _) if !is_http_url(&url) => Err(ImportProblem::BadUrl {
            server: server_name.clone(),
            url,
        }),
        (None, Some(url), _) => Ok(ServerTransport::Http { url, headers }),
    };
    let transport = match transport {
        Ok(transport) => transport,
        Err(problem) => {
            problems.push(problem);
            return None;
        }
    };
    for text in values(&transport) {
        for reference in references(text) {
            let bad = match reference {
                Reference::Env(name) if !name.is_empty() => continue,
                Reference::Env(_) => "${env:}".to_string(),
                Reference::Other(text) => text.to_string(),
            };
            problems.push(ImportProblem::Variable {
                server: server_name.clone(),
                reference: bad,
            });
        }
    }
    if problems.len() > before {
        return None;
    }
    Some(ServerConfig {
        transport,
        trusted: false,
        disabled,
        timeout_secs,
        oauth_client_id: None,
        // Where a server may send the user is the user's to declare in
        // settings, never a pasted config's.
        page_origins: Vec::new(),
        ucp: None,
    })
}

fn misplaced(server: &str, key: &str, server_type: &str) -> ImportProblem {
    ImportProblem::Misplaced {
        server: server.to_string(),
        key: key.to_string(),
        server_type: server_type.to_string(),
    }
}

/// A URL, or one that starts with a variable filled in at start.
fn is_http_url(url: &str) -> bool {
    url.starts_with("http://") || url.starts_with("https://") || url.starts_with("${env:")
}

/// Every text of a transport a `${…}` may appear in.
fn values(transport: &ServerTransport) -> Vec<&str> {
    match transport {
        ServerTransport::Stdio { command, args, env } => std::iter::once(command)
            .chain(args)
            .chain(env.values())
            .map(String::as_str)
            .collect(),
        ServerTransport::Http { url, headers } => std::iter::once(url)
            .chain(headers.values())
            .map(String::as_str)
            .collect(),
    }
}

/// A server's env values or headers, each as the variables it is filled
/// in from and whether it holds written text too.
fn planned_values(transport: &ServerTransport) -> Vec<PlannedValue> {
    let map = match transport {
        ServerTransport::Stdio { env, .. } => env,
        ServerTransport::Http { headers, .. } => headers,
    };
    map.iter()
        .map(|(name, value)| {
            let found = references(value);
            let from_variables = found
                .iter()
                .filter_map(|reference| match reference {
                    Reference::Env(variable) if !variable.is_empty() => {
                        Some((*variable).to_string())
                    }
                    _ => None,
                })
                .collect();
            let referenced: usize = found
                .iter()
                .map(|reference| match reference {
                    Reference::Env(variable) => variable.len() + "${env:}".len(),
                    Reference::Other(text) => text.len(),
                })
                .sum();
            PlannedValue {
                name: name.clone(),
                from_variables,
                has_written_text: value.len() > referenced,
            }
        })
        .collect()
}

/// The variables a server's `${env:NAME}` name, each once, in order.
pub fn variables(config: &ServerConfig) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for text in values(&config.transport) {
        for reference in references(text) {
            if let Reference::Env(name) = reference
                && !name.is_empty()
                && !names.iter().any(|n| n == name)
            {
                names.push(name.to_string());
            }
        }
    }
    names
}

/// Reads one server's values, noting each wrong one.
struct Reader<'a> {
    server: &'a str,
    problems: &'a mut Vec<ImportProblem>,
}

impl Reader<'_> {
    fn wrong(&mut self, key: &str, expected: Expected) {
        self.problems.push(ImportProblem::WrongValue {
            server: self.server.to_string(),
            key: key.to_string(),
            expected,
        });
    }

    fn text(&mut self, key: &str, value: &Value) -> Option<String> {
        match value {
            Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
            _ => {
                self.wrong(key, Expected::Text);
                None
            }
        }
    }

    fn text_list(&mut self, key: &str, value: &Value) -> Vec<String> {
        let items = value.as_array().and_then(|items| {
            items
                .iter()
                .map(|item| item.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
        });
        items.unwrap_or_else(|| {
            self.wrong(key, Expected::TextList);
            Vec::new()
        })
    }

    fn text_map(&mut self, key: &str, value: &Value) -> BTreeMap<String, String> {
        let map = value.as_object().and_then(|map: &Map<String, Value>| {
            map.iter()
                .map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
                .collect::<Option<BTreeMap<_, _>>>()
        });
        map.unwrap_or_else(|| {
            self.wrong(key, Expected::TextMap);
            BTreeMap::new()
        })
    }

    fn flag(&mut self, key: &str, value: &Value) -> Option<bool> {
        let flag = value.as_bool();
        if flag.is_none() {
            self.wrong(key, Expected::TrueOrFalse);
        }
        flag
    }

    fn seconds(&mut self, key: &str, value: &Value) -> Option<u64> {
        let secs = value.as_u64().filter(|secs| timeout_is_valid(*secs));
        if secs.is_none() {
            self.wrong(key, Expected::Seconds);
        }
        secs
    }
}

/// `name` made into one the app takes: other characters become `-`, runs
/// of `-` and `_` shrink to their first, the ends are trimmed, the length
/// is cut to 32; nothing left gives `server`.
pub fn valid_name(name: &str) -> String {
    if validate_server_name(name).is_ok() {
        return name.to_string();
    }
    let mut out = String::new();
    for c in name.chars() {
        let c = if c.is_ascii_alphanumeric() || c == '_' {
            c
        } else {
            '-'
        };
        let separator = |c: char| c == '-' || c == '_';
        if separator(c) && out.ends_with(separator) {
            continue;
        }
        out.push(c);
    }
    out.truncate(32);
    let trimmed = out.trim_matches(|c| c == '-' || c == '_');
    if trimmed.is_empty() {
        "server".to_string()
    } else {
        trimmed.to_string()
    }
}

/// `name`, or `name-2`, `name-3`… (kept within 32 characters), whichever
/// is free first.
pub fn unique_name(name: &str, taken: &BTreeSet<String>) -> String {
    if !taken.contains(name) {
        return name.to_string();
    }
    (2..)
        .map(|n| {
            let suffix = format!("-{n}");
            let stem = &name[..name.len().min(32 - suffix.len())];
            format!("{}{suffix}", stem.trim_end_matches(['-', '_']))
        })
        .find(|candidate| !taken.contains(candidate))
        .unwrap_or_else(|| name.to_string())
}

#[cfg(test)]
mod tests;
