// lib/store.ts: one store per server process, kept on globalThis (next dev reloads modules).
import { createStore, type Store } from "anthropic-tool-calling";

const kept = globalThis as typeof globalThis & { __store?: Store };

// ANTHROPIC_TOOL_CALLING_STORE, else sqlite:.anthropic-tool-calling/store.db under the app.
export const store: Store = (kept.__store ??= createStore());
