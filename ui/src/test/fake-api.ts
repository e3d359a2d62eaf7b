// A fake of the backend for tests: records every call, answers from
// fields a test sets, and lets a test hold a reply to see in-flight state.

import type { Api } from "../api";
import type {
  AgentEvent,
  AuditEntry,
  DatabaseRestored,
  KeptMandate,
  CallDecision,
  DefinitionChange,
  ErrorInfo,
  EventEnvelope,
  ImportPreview,
  KeyedReply,
  McpExport,
  ModelEdit,
  ModelInfo,
  ModelStatus,
  Secret,
  SessionInfo,
  SettingsEdit,
  ServerStatus,
  SettingsView,
  StartState,
  SignInStatus,
  ToolPolicyView,
  Transcript,
} from "../protocol";

export type Recorded = { command: string; args: unknown[] };

export const DEFAULT_SETTINGS: SettingsView = {
  model: { base_url: "http://127.0.0.1:11434/v1", model: "", api_key: null, extra_headers: {} },
  mcp_servers: {},
  tool_overrides: {},
  card_expiry_secs: 1800,
  max_turns_per_run: 12,
  history_token_budget: 24000,
  appearance: { language: null, theme: "system" },
  shop: { kind: "local" },
  ucp_platform_profile: "https://bitselect.app/.well-known/ucp-platform.json",
  unencrypted: [],
};

export class FakeApi implements Api {
  calls: Recorded[] = [];
  sessions: SessionInfo[] = [];
  transcripts = new Map<string, Transcript>();
  /** What get_settings answers: as the core, never a secret value. */
  settings: SettingsView = structuredClone(DEFAULT_SETTINGS);
  /** What the shell handed the window as it was made; none unless a test says. */
  start: StartState | null = null;
  tools: ToolPolicyView[] = [];
  audit: AuditEntry[] = [];
  mandates: KeptMandate[] = [];
  /** Tool definition changes by qualified name; accepting removes one. */
  changes = new Map<string, DefinitionChange>();
  check: ModelStatus = { state: "ok", message: null };
  /** What list_models answers: these models (an id alone knows no context window), or a rejection with this error. */
  models: Array<string | ModelInfo> | ErrorInfo = ["scripted"];
  /** What preview_mcp_import answers. */
  importPreview: ImportPreview = { outcome: "refused", problems: [{ kind: "no_servers" }] };
  /** Servers apply_mcp_import adds to the settings, or an error it rejects with. */
  imported: SettingsView["mcp_servers"] | ErrorInfo = {};
  /** What export_mcp_config answers. */
  exported: McpExport = { text: '{\n  "mcpServers": {}\n}', withheld: [] };
  /** The next respond_confirmation / answer_input / send_message / retry / regenerate fails with this. */
  failNext: ErrorInfo | null = null;
  /** What server_status answers. */
  servers: ServerStatus[] = [];
  /** How the next sign_in ends: with this status, or (an ErrorInfo) rejected; `held` waits for `finishSignIn`. */
  signInResult: SignInStatus | ErrorInfo | "held" = { type: "signed_in", identity: "alice" };
  private heldSignIn: ((result: SignInStatus | ErrorInfo) => void) | null = null;
  /** When set, respond_confirmation waits until `release()` is called. */
  hold = false;
  /**
   * The events the core emits for decisions it records, before
   * respond_confirmation answers (see `test/core.ts`); none when unset.
   */
  onDecisions: ((decisions: CallDecision[], replyId: string) => AgentEvent[]) | null = null;
  /**
   * The events reach the page after the answer. In the app they may: the
   * core emits them first, but they come by the event channel and the
   * answer by the command's, and nothing orders the two.
   */
  eventsAfterAnswer = false;
  private held: Array<() => void> = [];
  private handlers: Array<(envelope: EventEnvelope) => void> = [];
  private nextId = 1;

  private record(command: string, ...args: unknown[]): void {
    this.calls.push({ command, args });
  }

  /** The recorded calls of one command. */
  of(command: string): unknown[][] {
    return this.calls.filter((c) => c.command === command).map((c) => c.args);
  }

  private maybeFail(): Promise<void> {
    const failure = this.failNext;
    this.failNext = null;
    return failure ? Promise.reject(failure) : Promise.resolve();
  }

  release(): void {
    const held = this.held;
    this.held = [];
    for (const resume of held) resume();
  }

  emit(envelope: EventEnvelope): void {
    for (const handler of this.handlers) handler(envelope);
  }

  async sendMessage(sessionId: string, text: string): Promise<void> {
    this.record("send_message", sessionId, text);
    return this.maybeFail();
  }

  async respondConfirmation(sessionId: string, replyId: string, decisions: CallDecision[]): Promise<void> {
    this.record("respond_confirmation", sessionId, replyId, decisions);
    if (this.hold) await new Promise<void>((resume) => this.held.push(resume));
    await this.maybeFail();
    const events = this.onDecisions?.(decisions, replyId) ?? [];
    const tell = (): void => {
      for (const event of events) this.emit({ session_id: sessionId, run_id: null, event });
    };
    if (this.eventsAfterAnswer) setTimeout(tell, 0);
    else tell();
  }

  async answerInput(sessionId: string, requestId: string, replies: KeyedReply[]): Promise<void> {
    this.record("answer_input", sessionId, requestId, replies);
    if (this.hold) await new Promise<void>((resume) => this.held.push(resume));
    return this.maybeFail();
  }

  async openInputUrl(sessionId: string, requestId: string, key: string): Promise<void> {
    this.record("open_input_url", sessionId, requestId, key);
    return this.maybeFail();
  }

  async cancelRun(sessionId: string): Promise<void> {
    this.record("cancel_run", sessionId);
  }

  async regenerateAnswer(sessionId: string): Promise<void> {
    this.record("regenerate_answer", sessionId);
    return this.maybeFail();
  }

  async retryRun(sessionId: string): Promise<void> {
    this.record("retry_run", sessionId);
    return this.maybeFail();
  }

  startState(): StartState | null {
    return this.start;
  }

  async listSessions(): Promise<SessionInfo[]> {
    this.record("list_sessions");
    return [...this.sessions];
  }

  async createSession(): Promise<SessionInfo> {
    this.record("create_session");
    const session = { id: `s${this.nextId++}`, title: "", created_at: 1000, updated_at: 1000 + this.nextId };
    this.sessions.push(session);
    return session;
  }

  async openSession(sessionId: string): Promise<Transcript> {
    this.record("open_session", sessionId);
    const session = this.sessions.find((s) => s.id === sessionId);
    if (!session) throw { code: "session_not_found", message: `no session ${sessionId}` } satisfies ErrorInfo;
    return this.transcripts.get(sessionId) ?? { session, items: [], pending: null, pending_input: null, running: false, failure: null };
  }

  async renameSession(sessionId: string, title: string): Promise<SessionInfo> {
    this.record("rename_session", sessionId, title);
    const session = this.sessions.find((s) => s.id === sessionId);
    if (!session) throw { code: "session_not_found", message: "gone" } satisfies ErrorInfo;
    session.title = title;
    return { ...session };
  }

  async deleteSession(sessionId: string): Promise<void> {
    this.record("delete_session", sessionId);
    this.sessions = this.sessions.filter((s) => s.id !== sessionId);
  }

  async getSettings(): Promise<SettingsView> {
    this.record("get_settings");
    return structuredClone(this.settings);
  }

  async saveSettings(settings: SettingsEdit): Promise<SettingsView> {
    this.record("save_settings", structuredClone(settings));
    await this.maybeFail();
    this.settings = viewAfter(settings);
    return structuredClone(this.settings);
  }

  async previewMcpImport(text: string): Promise<ImportPreview> {
    this.record("preview_mcp_import", text);
    return structuredClone(this.importPreview);
  }

  async applyMcpImport(text: string, fingerprint: string): Promise<SettingsView> {
    this.record("apply_mcp_import", text, fingerprint);
    if ("code" in this.imported) throw this.imported;
    this.settings = { ...this.settings, mcp_servers: { ...this.settings.mcp_servers, ...this.imported } };
    return structuredClone(this.settings);
  }

  async exportMcpConfig(): Promise<McpExport> {
    this.record("export_mcp_config");
    return structuredClone(this.exported);
  }

  async checkModel(): Promise<ModelStatus> {
    this.record("check_model");
    return this.check;
  }

  async listModels(model: ModelEdit): Promise<ModelInfo[]> {
    this.record("list_models", structuredClone(model));
    if (!Array.isArray(this.models)) throw this.models;
    return this.models.map((m) => (typeof m === "string" ? { id: m, context_tokens: null, history_budget: null } : m));
  }

  async listTools(): Promise<ToolPolicyView[]> {
    this.record("list_tools");
    return this.tools;
  }

  /** What add_ucp_merchant answers: the settings, or an error to throw. */
  merchantAdded: SettingsView | Error | null = null;

  async addUcpMerchant(address: string): Promise<SettingsView> {
    this.record("add_ucp_merchant", address);
    if (this.merchantAdded instanceof Error) throw this.merchantAdded;
    return this.merchantAdded ?? this.settings;
  }

  /** What databases_restored answers. */
  restored: DatabaseRestored[] = [];

  async databasesRestored(): Promise<DatabaseRestored[]> {
    this.record("databases_restored");
    return this.restored;
  }

  async listMandates(): Promise<KeptMandate[]> {
    this.record("list_mandates");
    return this.mandates;
  }

  async listAudit(limit: number): Promise<AuditEntry[]> {
    this.record("list_audit", limit);
    return this.audit;
  }

  async toolDefinitionChange(qualifiedName: string): Promise<DefinitionChange | null> {
    this.record("tool_definition_change", qualifiedName);
    return this.changes.get(qualifiedName) ?? null;
  }

  async acceptToolDefinition(qualifiedName: string, newHash: string): Promise<void> {
    this.record("accept_tool_definition", qualifiedName, newHash);
    await this.maybeFail();
    this.changes.delete(qualifiedName);
  }

  async serverStatus(): Promise<ServerStatus[]> {
    this.record("server_status");
    return structuredClone(this.servers);
  }

  async signIn(server: string): Promise<SignInStatus> {
    this.record("sign_in", server);
    const result =
      this.signInResult === "held"
        ? await new Promise<SignInStatus | ErrorInfo>((finish) => (this.heldSignIn = finish))
        : this.signInResult;
    if ("code" in result) throw result;
    return result;
  }

  /** Ends a held sign_in as the browser's return would. */
  finishSignIn(result: SignInStatus | ErrorInfo): void {
    this.heldSignIn?.(result);
    this.heldSignIn = null;
  }

  async cancelSignIn(server: string): Promise<boolean> {
    this.record("cancel_sign_in", server);
    this.finishSignIn({ code: "sign_in_cancelled", message: "the sign-in was cancelled" } as ErrorInfo);
    return true;
  }

  async goOnWithout(server: string): Promise<void> {
    this.record("go_on_without", server);
  }

  async signOut(server: string): Promise<void> {
    this.record("sign_out", server);
  }

  async openLogsFolder(): Promise<void> {
    this.record("open_logs_folder");
    return this.maybeFail();
  }

  async onAgentEvent(handler: (envelope: EventEnvelope) => void): Promise<() => void> {
    this.handlers.push(handler);
    return () => {
      this.handlers = this.handlers.filter((h) => h !== handler);
    };
  }
}

/** Lets pending promise callbacks run. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i += 1) await new Promise((resolve) => setTimeout(resolve, 0));
}

/**
 * The view the core would answer after saving `edit`: every secret it
 * keeps or sets is kept, the servers over plain http elsewhere are listed.
 */
function viewAfter(edit: SettingsEdit): SettingsView {
  const { renamed: _applied, ...settings } = structuredClone(edit);
  const kept = (map: { [name in string]?: Secret }): { [name in string]: Secret } =>
    Object.fromEntries(Object.keys(map).map((name) => [name, { action: "keep" } as const]));
  settings.model.api_key = settings.model.api_key && { action: "keep" };
  settings.model.extra_headers = kept(settings.model.extra_headers);
  const unencrypted: string[] = [];
  for (const [name, server] of Object.entries(settings.mcp_servers)) {
    if (!server) continue;
    if ("command" in server) server.env = kept(server.env);
    else {
      server.headers = kept(server.headers);
      if (/^http:\/\/(?!127\.0\.0\.1|localhost|\[::1\])/.test(server.url)) unencrypted.push(name);
    }
  }
  return { ...settings, unencrypted };
}
