import { runWithTools } from "anthropic-tool-calling";

// Amazon Bedrock with a Bedrock API key (AWS_BEARER_TOKEN_BEDROCK) in the region of AWS_REGION.
const onBedrock = await runWithTools("Where is order 4821?", {
  provider: "bedrock",
  model: "us.anthropic.claude-sonnet-5-5-v1:0",
});

// Microsoft Foundry: the resource's key (ANTHROPIC_FOUNDRY_API_KEY), or an Entra ID token as authToken.
const onFoundry = await runWithTools("Where is order 4821?", {
  provider: { type: "foundry", resource: "acme" },
});

// Claude Platform on AWS with a workspace API key (ANTHROPIC_AWS_API_KEY).
const onAws = await runWithTools("Where is order 4821?", {
  provider: { type: "aws", region: "us-west-2", workspaceId: "wrkspc_01Example" },
});

// Vertex AI and Claude on Google Cloud with an access token you fetched (Application Default
// Credentials are not read yet).
const onVertex = await runWithTools("Where is order 4821?", {
  provider: { type: "vertex", projectId: "acme-ai", region: "us-east5" },
  authToken: process.env.GOOGLE_ACCESS_TOKEN,
  model: "claude-sonnet-5-5@20261001",
});

export { onAws, onBedrock, onFoundry, onVertex };
