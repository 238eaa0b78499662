// instrumentation.ts: a long-running server takes over, at boot, the runs a crash or a deploy
// left behind (two instances booting together never take the same run).
export async function register() {
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { recoverRuns } = await import("anthropic-tool-calling");
  await import("@/lib/tools");
  const { store } = await import("@/lib/store");
  void recoverRuns({ store }).then((runs) => {
    for (const { runId, result } of runs) console.info(`recovered ${runId}: ${result.error ? result.error.code : "answered"}`);
  });
}
