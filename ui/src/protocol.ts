// The one import point for the types shared with the agent core and the shell.
// The core's types are generated from crates/ragent by ts-rs into
// ./protocol/index.ts (never edit that file; see crates/ragent/src/typescript.rs).

export * from "./protocol/index";

import type {
  DatabaseRestored,
  ModelSettingsWith,
  ModelStatus,
  Secret,
  ServerConfigWith,
  SessionInfo,
  SettingsView,
  Transcript,
} from "./protocol/index";

/** The model settings as the page sees and edits them: each secret kept or set, never its value. */
export type ModelEdit = ModelSettingsWith<Secret>;
/** A server as the page sees and edits it: each env value or header kept or set, never its value. */
export type ServerEdit = ServerConfigWith<Secret>;

/**
 * What the page's first screen shows, handed to the window by the shell as
 * it is made (src-tauri/start_state.rs): the answers of get_settings,
 * databases_restored, list_sessions, and open_session of the most recently
 * updated session, and check_model's when no model is set up (null when
 * one is: whether it answers is checked by the page).
 */
export interface StartState {
  settings: SettingsView;
  restored: DatabaseRestored[];
  sessions: SessionInfo[];
  latest: Transcript | null;
  model: ModelStatus | null;
}
