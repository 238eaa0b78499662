import { streamWithTools } from "anthropic-tool-calling";

const stream = streamWithTools("Where is order #4821?");
for await (const part of stream) {
  if (part.type === "text-delta") process.stdout.write(part.text);
  if (part.type === "tool-call") console.log(`\n→ ${part.toolName}(${JSON.stringify(part.input)})`);
}
const { data, error } = await stream.result; // also the last part: { type: "finish", result }
console.log(error?.code ?? data?.stopReason);
