import { runWithTools } from "anthropic-tool-calling";

const first = await runWithTools("What's the status of order #4821?");
if (first.data) {
  // The whole history so far, plus the next question.
  const next = await runWithTools([...first.data.messages, { role: "user", content: "And when will it arrive?" }]);
  console.log(next.data?.text);
}
