// The one import point for the types shared with the agent core and the shell.
// The core's types are generated from crates/ragent by ts-rs into
// ./protocol/index.ts (never edit that file; see crates/ragent/src/typescript.rs).

export * from "./protocol/index";

// ---- the Tauri shell's own results (camelCase, as the shell sends them)

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
