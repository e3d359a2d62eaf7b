// A deny reason being typed, kept per call id in the page's storage so it
// survives closing and reopening the app; dropped once the call is decided.

const PREFIX = "bitselect.denyDraft.";

export type DraftStorage = Pick<Storage, "getItem" | "setItem" | "removeItem">;

/** The page's storage, or none where it cannot be reached (a draft is a nicety, not a record). */
export function pageStorage(): DraftStorage | undefined {
  try {
    return globalThis.localStorage;
  } catch {
    return undefined;
  }
}

export class DenyDrafts {
  constructor(private readonly storage: DraftStorage | undefined = pageStorage()) {}

  load(callId: string): string {
    return this.storage?.getItem(PREFIX + callId) ?? "";
  }

  save(callId: string, text: string): void {
    if (text === "") this.clear(callId);
    else this.storage?.setItem(PREFIX + callId, text);
  }

  clear(callId: string): void {
    this.storage?.removeItem(PREFIX + callId);
  }
}
