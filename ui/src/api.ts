// Every call to the Tauri shell goes through this module. Views receive an
// `Api` object (tests pass a fake), so nothing else imports @tauri-apps/api.

import { Channel, invoke } from "@tauri-apps/api/core";

import type {
  AuditEntry,
  DatabaseRestored,
  KeptMandate,
  CallDecision,
  DefinitionChange,
  ErrorCode,
  ErrorInfo,
  EventEnvelope,
  ImportPreview,
  KeyedReply,
  McpExport,
  ModelEdit,
  ModelInfo,
  ModelStatus,
  ServerStatus,
  SessionInfo,
  SettingsEdit,
  SettingsView,
  SignInStatus,
  StartState,
  ToolPolicyView,
  Transcript,
} from "./protocol";

export interface Api {
  /** The first screen's state as the shell handed it to this window, once
   * per window: null when it did not, and after a reload (it would be stale). */
  startState(): StartState | null;
  sendMessage(sessionId: string, text: string): Promise<void>;
  respondConfirmation(sessionId: string, replyId: string, decisions: CallDecision[]): Promise<void>;
  /** Answers a server's request for input that the core stored and showed. */
  answerInput(sessionId: string, requestId: string, replies: KeyedReply[]): Promise<void>;
  /** Opens the page of a waiting URL request in the browser (the core gives the address). */
  openInputUrl(sessionId: string, requestId: string, key: string): Promise<void>;
  cancelRun(sessionId: string): Promise<void>;
  /** Asks the model again after a failed turn (no new message). */
  retryRun(sessionId: string): Promise<void>;
  /** Another final answer in place of the last one. */
  regenerateAnswer(sessionId: string): Promise<void>;

  /** What this start did about each damaged database; empty when none was. */
  databasesRestored(): Promise<DatabaseRestored[]>;

  listSessions(): Promise<SessionInfo[]>;
  createSession(): Promise<SessionInfo>;
  openSession(sessionId: string): Promise<Transcript>;
  renameSession(sessionId: string, title: string): Promise<SessionInfo>;
  deleteSession(sessionId: string): Promise<void>;

  /** The settings without secret values: only whether each is set. */
  getSettings(): Promise<SettingsView>;
  /** Saves an edit (each secret kept, set or cleared); answers with the new view. */
  saveSettings(settings: SettingsEdit): Promise<SettingsView>;
  /** What importing a pasted MCP configuration would add (nothing saved). */
  previewMcpImport(text: string): Promise<ImportPreview>;
  /** Adds the previewed servers in one save; refused if the plan changed. */
  applyMcpImport(text: string, fingerprint: string): Promise<SettingsView>;
  /** The user's servers in the mcpServers shape, secret values left out. */
  exportMcpConfig(): Promise<McpExport>;
  checkModel(): Promise<ModelStatus>;
  /** The models the provider lists, asked with the model settings as edited (nothing saved). */
  listModels(model: ModelEdit): Promise<ModelInfo[]>;
  listTools(): Promise<ToolPolicyView[]>;
  listAudit(limit: number): Promise<AuditEntry[]>;
  /** The checkout mandates the shopper signed, each verified again. */
  listMandates(): Promise<KeptMandate[]>;
  /** Adds the UCP merchant at `address`; the settings the core then holds. */
  addUcpMerchant(address: string): Promise<SettingsView>;
  /** What changed in a tool's definition since it was pinned; null if nothing. */
  toolDefinitionChange(qualifiedName: string): Promise<DefinitionChange | null>;
  /** Accepts the definition shown (named by its hash); the core audits it. */
  acceptToolDefinition(qualifiedName: string, newHash: string): Promise<void>;
  /** Opens the folder with the app's log files in the OS's file manager. */
  openLogsFolder(): Promise<void>;

  /** Each server's state, with its sign-in where it asks for one. */
  serverStatus(): Promise<ServerStatus[]>;
  /**
   * Signs in to `server`: the shell opens the core's authorization page in
   * the system browser and resolves once the browser comes back (or the
   * sign-in is cancelled, fails or times out, as an error).
   */
  signIn(server: string): Promise<SignInStatus>;
  /** Stops waiting for the browser; the sign-in ends as cancelled. */
  cancelSignIn(server: string): Promise<boolean>;
  /** Runs waiting for `server`'s sign-in go on without its tools. */
  goOnWithout(server: string): Promise<void>;
  /** Forgets the tokens kept for `server`. */
  signOut(server: string): Promise<void>;

  /** Subscribes to agent events; resolves to an unsubscribe function. */
  onAgentEvent(handler: (envelope: EventEnvelope) => void): Promise<() => void>;
}

/** The real API over Tauri IPC. Argument keys are camelCase, as Tauri maps them. */
export function tauriApi(): Api {
  return {
    startState: takeStartState,
    sendMessage: (sessionId, text) => call("send_message", { sessionId, text }),
    respondConfirmation: (sessionId, replyId, decisions) =>
      call("respond_confirmation", { sessionId, replyId, decisions }),
    answerInput: (sessionId, requestId, replies) => call("answer_input", { sessionId, requestId, replies }),
    openInputUrl: (sessionId, requestId, key) => call("open_input_url", { sessionId, requestId, key }),
    cancelRun: (sessionId) => call("cancel_run", { sessionId }),
    retryRun: (sessionId) => call("retry_run", { sessionId }),
    regenerateAnswer: (sessionId) => call("regenerate_answer", { sessionId }),

    databasesRestored: () => call("databases_restored"),

    listSessions: () => call("list_sessions"),
    createSession: () => call("create_session"),
    openSession: (sessionId) => call("open_session", { sessionId }),
    renameSession: (sessionId, title) => call("rename_session", { sessionId, title }),
    deleteSession: (sessionId) => call("delete_session", { sessionId }),

    getSettings: () => call("get_settings"),
    saveSettings: (settings) => call("save_settings", { settings }),
    previewMcpImport: (text) => call("preview_mcp_import", { text }),
    applyMcpImport: (text, fingerprint) => call("apply_mcp_import", { text, fingerprint }),
    exportMcpConfig: () => call("export_mcp_config"),
    checkModel: () => call("check_model"),
    listModels: (model) => call("list_models", { model }),
    listTools: () => call("list_tools"),
    listAudit: (limit) => call("list_audit", { limit }),
    listMandates: () => call("list_mandates", {}),
    addUcpMerchant: (address) => call("add_ucp_merchant", { address }),
    toolDefinitionChange: (qualifiedName) => call("tool_definition_change", { qualifiedName }),
    acceptToolDefinition: (qualifiedName, newHash) => call("accept_tool_definition", { qualifiedName, newHash }),
    openLogsFolder: () => call("open_logs_folder"),

    serverStatus: () => call("server_status"),
    signIn: (server) => call("sign_in", { server }),
    cancelSignIn: (server) => call("cancel_sign_in", { server }),
    goOnWithout: (server) => call("go_on_without", { server }),
    signOut: (server) => call("sign_out", { server }),

    onAgentEvent: subscribeEvents,
  };
}

/** The global the shell's start script sets (src-tauri/start_state.rs). */
const START_GLOBAL = "__BITSELECT_START__";
/** Set in the window's session storage once its start state was taken. */
const START_TAKEN = "bitselect-start-taken";

/** The shell's script runs again on a reload with the state of the window's
 * making, so it is taken once per window, which session storage outlives a
 * reload in. */
function takeStartState(): StartState | null {
  const state = (globalThis as Record<string, unknown>)[START_GLOBAL];
  try {
    if (sessionStorage.getItem(START_TAKEN) !== null) return null;
    sessionStorage.setItem(START_TAKEN, "1");
  } catch {
    // No storage: the state may be stale, so it is not used.
    return null;
  }
  return typeof state === "object" && state !== null ? (state as StartState) : null;
}

/** The core's events, on a channel of this page's own: the shell sends them
 * to the latest subscription. The answer stops handing them to `handler`. */
async function subscribeEvents(handler: (envelope: EventEnvelope) => void): Promise<() => void> {
  let deliver: ((envelope: EventEnvelope) => void) | null = handler;
  const onEvent = new Channel<EventEnvelope>((envelope) => deliver?.(envelope));
  await call("subscribe_events", { onEvent });
  return () => {
    deliver = null;
  };
}

async function call<T>(command: string, args?: Record<string, unknown>): Promise<T> {
  try {
    return await invoke<T>(command, args);
  } catch (error) {
    throw toErrorInfo(error);
  }
}

const INTERNAL: ErrorCode = "internal";

/** Whatever a command rejected with, as an ErrorInfo (the shell sends one). */
export function toErrorInfo(error: unknown): ErrorInfo {
  if (isErrorInfo(error)) return error;
  if (error instanceof Error) return { code: INTERNAL, message: error.message };
  if (typeof error === "string") return { code: INTERNAL, message: error };
  return { code: INTERNAL, message: JSON.stringify(error) ?? String(error) };
}

export function isErrorInfo(value: unknown): value is ErrorInfo {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { code?: unknown }).code === "string" &&
    typeof (value as { message?: unknown }).message === "string"
  );
}
