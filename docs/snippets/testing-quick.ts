import { runWithTools } from "anthropic-tool-calling";
import { startStandIn, text, toolUse } from "anthropic-tool-calling/testing";

const api = await startStandIn({ replies: [toolUse("get_order", { orderId: "4821" }), text("It has shipped.")] });
const result = await runWithTools("Where is order 4821?", { apiKey: api.apiKey, baseURL: api.url, tools: ["get_order"] });
api.requests; // the parsed body of every request it received, in order
await api.close();
console.log(result.data?.text);
