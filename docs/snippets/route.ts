// app/api/chat/route.ts: the route useChat posts to. The conversation is a thread of the store,
// owned by the signed-in user; the page posts only the thread's id and the new message.
import { streamWithTools } from "anthropic-tool-calling";
import "@/lib/tools";
import { store } from "@/lib/store";
import { currentUserId } from "@/lib/session";

export async function POST(req: Request) {
  const { id, text } = (await req.json()) as { id: string; text: string };
  if (typeof id !== "string" || typeof text !== "string") return new Response("Bad request", { status: 400 });
  const stream = streamWithTools(text, {
    store,
    thread: { id, owner: await currentUserId() }, // another user's thread is not found
    system: "You are the support assistant of an online shop. Use the tools; never guess.",
    // No `signal: req.signal`: a reload or a closed tab leaves the run going (resumeStream follows
    // it again); a stop button calls stopRun.
  });
  return stream.toUIMessageStreamResponse(); // what useChat reads
}
