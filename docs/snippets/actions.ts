// app/actions.ts: a server action. What it returns goes to the browser: plain data only.
"use server";
import { runWithTools } from "anthropic-tool-calling";
import "@/lib/tools";

const SYSTEM = "You are the support assistant of an online shop. Use the tools; never guess.";

export async function ask(question: string) {
  const { data, error } = await runWithTools(question, { system: SYSTEM });
  if (error) {
    console.error(`[tool-calling] ${error.code}: ${error.message}`); // the developer's view stays here
    return { ok: false as const, code: error.code };
  }
  return { ok: true as const, answer: data.text, tools: data.toolCalls.map((call) => call.toolName) };
}
