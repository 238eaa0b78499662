// app/api/cron/recover-runs/route.ts: on serverless, a cron job (vercel.json "crons") takes over
// the runs whose function timed out or crashed, and finishes them here.
import { recoverRuns } from "anthropic-tool-calling";
import "@/lib/tools"; // the runs' tools must be registered where they resume
import { store } from "@/lib/store";

export const maxDuration = 300;

export async function GET(req: Request) {
  if (req.headers.get("authorization") !== `Bearer ${process.env.CRON_SECRET}`) {
    return new Response("Unauthorized", { status: 401 });
  }
  const recovered = await recoverRuns({ store, limit: 20 });
  return Response.json(recovered.map(({ runId, result }) => ({ runId, ok: result.error === null })));
}
