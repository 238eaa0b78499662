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

// Microsoft Foundry: the resource's key (ANTHROPIC_FOUNDRY_API_KEY), or an Entra ID token provider
// asked on every request (such as getBearerTokenProvider() of @azure/identity).
const onFoundry = await runWithTools("Where is order 4821?", {
  provider: { type: "foundry", resource: "acme" },
});

// Claude Platform on AWS, signed with the AWS credentials (AWS_PROFILE, then the default chain),
// or with a workspace API key (ANTHROPIC_AWS_API_KEY).
const onAws = await runWithTools("Where is order 4821?", {
  provider: { type: "aws", region: "us-west-2", workspaceId: "wrkspc_01Example" },
});

// Vertex AI and Claude on Google Cloud: Application Default Credentials (GOOGLE_APPLICATION_CREDENTIALS,
// `gcloud auth application-default login`, the metadata server); the project is the key file's.
const onVertex = await runWithTools("Where is order 4821?", {
  provider: { type: "vertex", region: "us-east5" },
  model: "claude-sonnet-5-5@20261001",
});

// Or a token function, kept until shortly before it expires; with google-auth-library:
// `const auth = new GoogleAuth({ scopes: "https://www.googleapis.com/auth/cloud-platform" })`, then
// `accessToken: () => auth.getAccessToken()`.
const onGoogleCloud = await runWithTools("Where is order 4821?", {
  provider: {
    type: "google-cloud",
    projectId: "acme-ai",
    workspaceId: "wrkspc_01Example",
    accessToken: async () => ({ token: process.env.GOOGLE_ACCESS_TOKEN, expiresAt: Date.now() + 50 * 60_000 }),
  },
});

export { onAws, onBedrock, onFoundry, onGoogleCloud, onVertex, withRole };
