// app/api/chat/route.ts: the route useChat posts to. The server keeps each chat's history; the
// page posts only its chat id and the new message.
import { streamWithTools } from "anthropic-tool-calling";
import "@/lib/tools";
import { loadChat, saveChat } from "@/lib/chats";
import { currentUserId } from "@/lib/session";

export async function POST(req: Request) {
  const { id, text } = (await req.json()) as { id: string; text: string };
  const history = await loadChat(id, await currentUserId()); // the server's copy of this user's chat
  if (!history || typeof text !== "string") return new Response("No such chat", { status: 400 });
  const stream = streamWithTools([...history, { role: "user", content: text }], {
    system: "You are the support assistant of an online shop. Use the tools; never guess.",
    signal: req.signal, // the browser went away: the run is aborted
    approvalScope: id, // an approval issued in another chat is refused
  });
  stream.result.then(({ data }) => data && saveChat(id, data.messages));
  return stream.toUIMessageStreamResponse(); // what useChat reads
}
