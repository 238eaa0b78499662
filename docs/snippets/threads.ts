// app/chat/[id]/page-data.ts: a new thread for the user, and a thread read back for the page.
import { store } from "@/lib/store";
import { currentUserId } from "@/lib/session";

export async function newChat(): Promise<string> {
  // A random id (128 bits), bound to its owner: nobody else can read it or run in it.
  return store.createThread({ owner: await currentUserId(), metadata: { title: "New chat" } });
}

export async function chatForPage(id: string) {
  const thread = await store.getThread(id, { owner: await currentUserId() });
  if (!thread) return null; // none, or another user's: the same answer
  // uiMessages is what useChat takes as its initial messages; pendingApprovals what waits for a person.
  return { messages: thread.uiMessages, waiting: thread.pendingApprovals, busy: thread.status === "running" };
}

export async function recentChats(before?: string) {
  // The user's threads, the most recently updated first, 20 to a page.
  return store.listThreads({ owner: await currentUserId(), limit: 20, before });
}
