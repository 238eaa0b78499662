// app/api/chat/stop/route.ts: a stop button that really stops the server's work, wherever it
// runs; closing the response does not.
import { stopRun } from "anthropic-tool-calling";
import { store } from "@/lib/store";
import { currentUserId } from "@/lib/session";

export async function POST(req: Request) {
  const { id } = (await req.json()) as { id: string };
  const owner = await currentUserId();
  const thread = await store.getThread(id, { owner });
  if (!thread || !thread.activeRunId) return new Response(null, { status: 204 });
  await stopRun(thread.activeRunId, { store, owner });
  return new Response(null, { status: 204 });
}
