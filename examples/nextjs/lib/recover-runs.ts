// Runs a crash, a deploy or an OOM kill left behind, taken over and finished by this server:
// every run in a thread is durable (its steps and tool calls are in the store), and a run whose
// server died holds its chat only until its lease runs out (lib/store.ts). instrumentation.ts
// calls this once at boot; it looks again once the runs of a server that died just before this
// one started have let go. On serverless, a cron route would call recoverRuns instead (README).
import { recoverRuns } from 'anthropic-tool-calling'
import '@/lib/ai/anthropic/tool-calling/tools' // a run's tools must be registered where it resumes
import { ensureMcpServers } from '@/lib/ai/anthropic/tool-calling/mcp-servers'
import { logRun } from '@/lib/ai/anthropic/tool-calling/service'
import { getStore, leaseMs } from '@/lib/store'

async function recoverOnce() {
  try {
    await ensureMcpServers()
    // The key, base URL and model come from the environment, as for every run here.
    const runs = await recoverRuns({ store: getStore(), limit: 50 })
    for (const { runId, result } of runs) {
      console.log(`[tool-calling] recovered ${runId}: ${result.error ? result.error.code : 'answered'}`)
      logRun(result, `recovered ${runId}`)
    }
  } catch (err) {
    console.error(`[tool-calling] recovering runs failed: ${(err as Error).message}`)
  }
}

/** Recovers now, and once more after a lease: never blocks the server's start. */
export function recoverExpiredRuns() {
  void recoverOnce()
  setTimeout(() => void recoverOnce(), leaseMs() + 1000).unref()
}
