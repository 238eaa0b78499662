// app/api/chat/[id]/stream/route.ts: what useChat({ resume: true }) asks for when the page loads.
// The answer in progress, replayed and followed to its end (204 when there is none).
import { resumeStream } from "anthropic-tool-calling";
import { store } from "@/lib/store";
import { currentUserId } from "@/lib/session";

export async function GET(_req: Request, { params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  return resumeStream({ thread: id, owner: await currentUserId() }, { store });
}
