// The one import point for the types shared with the agent core and the shell.
//
// The core (crates/ragent: protocol.rs, toolcall.rs, settings.rs, policy.rs,
// mcp/config.rs) generates these with ts-rs into ui/src/protocol/index.ts on
// branch `core`. Until that file is merged here, this module mirrors the Rust
// definitions by hand; when it arrives, replace the "core types" block with
//   export * from "./protocol/index";
// and nothing else in ui/ changes.

// ---- core types (mirror of crates/ragent; keep field names as serde writes them)

export type JsonValue =
  | number
  | string
  | boolean
  | Array<JsonValue>
  | { [key in string]?: JsonValue }
  | null;

export type CallDecision = { call_id: string; decision: Decision };

export type Decision =
  | { type: "approve" }
  | { type: "approve_edited"; arguments: JsonValue }
  | { type: "deny"; reason: string | null };

export type EventEnvelope = { session_id: string; run_id: string | null; event: AgentEvent };

export type AgentEvent =
  | { type: "run_started" }
  | { type: "text_delta"; text: string }
  | { type: "assistant_message"; message_id: number; text: string }
  | { type: "tool_call_started"; call: ToolCallView }
  | { type: "tool_call_finished"; call: ToolCallView }
  | { type: "confirmation_requested"; card: ConfirmationCard }
  | { type: "call_status_changed"; call_id: string; status: CallStatus }
  | { type: "server_restarted"; server: string; reason: string }
  | { type: "run_stopped"; reason: StopReason }
  | { type: "error"; error: ErrorInfo };

export type StopReason =
  | { type: "completed" }
  | { type: "awaiting_confirmation"; reply_id: string }
  | { type: "max_turns"; limit: number }
  | { type: "cancelled" }
  | { type: "failed" };

export type ErrorInfo = { code: ErrorCode; message: string };

export type ErrorCode =
  | "session_not_found"
  | "run_in_progress"
  | "empty_message"
  | "no_pending_confirmation"
  | "stale_reply"
  | "unknown_call"
  | "already_decided"
  | "duplicate_decision"
  | "confirmation_expired"
  | "invalid_arguments"
  | "invalid_settings"
  | "model"
  | "model_not_configured"
  | "mcp"
  | "store"
  | "internal";

export type ConfirmationCard = {
  reply_id: string;
  session_id: string;
  created_at: number;
  expires_at: number;
  calls: Array<CardCall>;
};

export type CardCall = {
  call_id: string;
  qualified_name: string;
  server: string;
  tool: string;
  title: string | null;
  description: string | null;
  arguments: JsonValue;
  input_schema: JsonValue;
  destructive: boolean;
  definition_changed: boolean;
  status: CallStatus;
};

export type CallStatus =
  | "proposed"
  | "asking"
  | "allowed"
  | "approved"
  | "rejected"
  | "running"
  | "succeeded"
  | "failed"
  | "denied"
  | "expired"
  | "superseded"
  | "interrupted";

export type ToolCallView = {
  call_id: string;
  qualified_name: string;
  server: string;
  tool: string;
  title: string | null;
  arguments: JsonValue;
  status: CallStatus;
  output: string | null;
  is_error: boolean;
  destructive: boolean;
  reply_id: string | null;
};

export type SessionInfo = { id: string; title: string; created_at: number; updated_at: number };

export type Transcript = {
  session: SessionInfo;
  items: Array<TranscriptItem>;
  pending: ConfirmationCard | null;
};

export type TranscriptItem =
  | { type: "user"; id: number; text: string; at: number }
  | { type: "assistant"; id: number; text: string; at: number }
  | { type: "tool_call"; call: ToolCallView }
  | { type: "notice"; id: number; text: string; at: number };

export type AuditEntry = {
  id: number;
  at: number;
  session_id: string;
  call_id: string;
  server: string;
  tool: string;
  arguments_hash: string;
  decision: AuditDecision;
  reason: string | null;
};

export type AuditDecision =
  | "policy_allowed"
  | "auto_approved_by_user_setting"
  | "policy_denied"
  | "user_approved"
  | "user_approved_edited"
  | "user_denied"
  | "expired"
  | "superseded";

export type Settings = {
  model: ModelSettings;
  mcp_servers: { [key in string]: ServerConfig };
  tool_overrides: { [key in string]: ToolOverride };
  card_expiry_secs: number;
  max_turns_per_run: number;
  history_token_budget: number;
};

export type ModelSettings = {
  base_url: string;
  model: string;
  api_key: string | null;
  extra_headers: { [key in string]: string };
};

export type ServerConfig = { trusted: boolean } & (
  | { command: string; args: Array<string>; env: { [key in string]: string } }
  | { url: string; headers: { [key in string]: string } }
);

export type ServerTransport =
  | { command: string; args: Array<string>; env: { [key in string]: string } }
  | { url: string; headers: { [key in string]: string } };

export type ToolOverride = "ask" | "deny" | "auto_approve";

// ---- shell types (the Tauri commands' own results, camelCase as the shell sends them)

/** `check_model()`: whether the configured model answers. */
export type ModelCheck = {
  state: "ok" | "not_configured" | "unreachable";
  message: string | null;
};

/** One row of `list_tools()`, for the per-tool policy screen. */
export type ToolInfo = {
  qualifiedName: string;
  server: string;
  tool: string;
  title: string | null;
  destructive: boolean;
  readOnly: boolean;
  trusted: boolean;
  decision: "allow" | "ask" | "deny";
};
