import { createStore } from "anthropic-tool-calling";

// ANTHROPIC_TOOL_CALLING_STORE, else sqlite:.anthropic-tool-calling/store.db under the working directory.
export const store = createStore();
// One file, shared by the processes of one machine (WAL mode).
export const onDisk = createStore("sqlite:/var/lib/app/threads.db");
// Several server instances: postgres://user:password@host:5432/db?sslmode=require
export const fleet = createStore(process.env.DATABASE_URL, { maxConnections: 10 });
