import { runWithTools } from "anthropic-tool-calling";

// Amazon Bedrock, signed with the AWS credentials of the environment (AWS_ACCESS_KEY_ID …,
// AWS_PROFILE, web identity, the container's or the instance's role) in the region of AWS_REGION;
// a Bedrock API key (AWS_BEARER_TOKEN_BEDROCK) works too.
const onBedrock = await runWithTools("Where is order 4821?", {
  provider: "bedrock",
  model: "us.anthropic.claude-sonnet-5-5-v1:0",
});

// Credentials from your own code: an object, or a function such as fromNodeProviderChain() of
// @aws-sdk/credential-providers or Vercel's awsCredentialsProvider(); asked again before they expire.
const withRole = await runWithTools("Where is order 4821?", {
  provider: {
    type: "bedrock",
    region: "eu-west-1",
    credentials: async () => ({
      accessKeyId: process.env.ROLE_ACCESS_KEY_ID ?? "",
      secretAccessKey: process.env.ROLE_SECRET_ACCESS_KEY ?? "",
      sessionToken: process.env.ROLE_SESSION_TOKEN,
    }),
  },
  model: "eu.anthropic.claude-sonnet-5-5-v1:0",
});

// Microsoft Foundry: the resource's key (ANTHROPIC_FOUNDRY_API_KEY), or an Entra ID token as authToken.
const onFoundry = await runWithTools("Where is order 4821?", {
  provider: { type: "foundry", resource: "acme" },
});

// Claude Platform on AWS, signed with the AWS credentials (AWS_PROFILE, then the default chain),
// or with a workspace API key (ANTHROPIC_AWS_API_KEY).
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

export { onAws, onBedrock, onFoundry, onVertex, withRole };
