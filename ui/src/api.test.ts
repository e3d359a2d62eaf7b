import { afterEach, describe, expect, it } from "vitest";

import { tauriApi } from "./api";
import type { StartState } from "./protocol";

const START_GLOBAL = "__BITSELECT_START__";
const state = { settings: {}, restored: [], sessions: [], latest: null } as unknown as StartState;
const page = globalThis as Record<string, unknown>;

afterEach(() => {
  delete page[START_GLOBAL];
  sessionStorage.clear();
});

describe("the first screen's state the shell hands over", () => {
  it("is taken once per window: a reload, which runs the shell's script again, asks the core", () => {
    page[START_GLOBAL] = state;
    expect(tauriApi().startState()).toBe(state);
    // The reload: the script set the same, now stale, state again.
    page[START_GLOBAL] = state;
    expect(tauriApi().startState()).toBeNull();
  });

  it("is none when the shell handed none", () => {
    expect(tauriApi().startState()).toBeNull();
  });
});
