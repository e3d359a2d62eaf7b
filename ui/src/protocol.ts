// The one import point for the types shared with the agent core and the shell.
// The core's types are generated from crates/ragent by ts-rs into
// ./protocol/index.ts (never edit that file; see crates/ragent/src/typescript.rs).

export * from "./protocol/index";
