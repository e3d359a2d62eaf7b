import { afterEach, describe, expect, it } from "vitest";

import type { Channel } from "@tauri-apps/api/core";
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";

import { tauriApi } from "./api";
import type { EventEnvelope, StartState } from "./protocol";

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

describe("the core's events", () => {
  afterEach(() => clearMocks());

  /** The shell's end of the page's subscriptions: each channel it was given. */
  function shellTakingChannels(): Channel<EventEnvelope>[] {
    const channels: Channel<EventEnvelope>[] = [];
    mockIPC((command, args) => {
      if (command !== "subscribe_events") throw new Error(`unexpected command ${command}`);
      channels.push((args as { onEvent: Channel<EventEnvelope> }).onEvent);
    });
    return channels;
  }

  /** What the shell does with an event: the channel's message, in order. */
  function shellSends(channel: Channel<EventEnvelope>, index: number, message: EventEnvelope): void {
    const internals = (window as unknown as { __TAURI_INTERNALS__: { runCallback(id: number, data: unknown): void } })
      .__TAURI_INTERNALS__;
    internals.runCallback(channel.id, { message, index });
  }

  const started: EventEnvelope = { session_id: "s1", run_id: "r1", event: { type: "run_started" } };
  const stopped: EventEnvelope = {
    session_id: "s1",
    run_id: "r1",
    event: { type: "run_stopped", reason: { type: "completed" } },
  };

  it("reach the page's handler on the channel it gave the shell, in the order sent", async () => {
    const channels = shellTakingChannels();
    const heard: EventEnvelope[] = [];
    await tauriApi().onAgentEvent((envelope) => heard.push(envelope));
    expect(channels).toHaveLength(1);
    shellSends(channels[0], 1, stopped);
    shellSends(channels[0], 0, started);
    expect(heard).toEqual([started, stopped]);
  });

  it("stop reaching the handler once the page unsubscribes", async () => {
    const channels = shellTakingChannels();
    const heard: EventEnvelope[] = [];
    const unsubscribe = await tauriApi().onAgentEvent((envelope) => heard.push(envelope));
    unsubscribe();
    shellSends(channels[0], 0, started);
    expect(heard).toEqual([]);
  });
});
