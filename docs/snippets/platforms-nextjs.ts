// lib/claude.ts: the one place that says which cloud the app's runs reach (server code only).
// On Vercel, OIDC federation gives each function short-lived cloud credentials: no stored key.
import type { Provider } from "anthropic-tool-calling";
import { getVercelOidcToken } from "@vercel/oidc";
import { awsCredentialsProvider } from "@vercel/oidc-aws-credentials-provider";
import { ExternalAccountClient } from "google-auth-library";

const env = process.env;

// Amazon Bedrock (or Claude Platform on AWS: type "aws" with a workspaceId): Vercel's OIDC token
// exchanged for an IAM role's credentials. The role trusts Vercel's identity provider and may call
// bedrock:InvokeModel and bedrock:InvokeModelWithResponseStream.
function bedrock(): Provider {
  return {
    type: "bedrock",
    region: env.AWS_REGION,
    credentials: awsCredentialsProvider({ roleArn: env.AWS_ROLE_ARN ?? "" }),
  };
}

// Vertex AI (or Claude on Google Cloud: type "google-cloud" with a workspaceId): Vercel's OIDC
// token exchanged through a workload identity pool for a service account's access token, by
// google-auth-library; the engine keeps each token until shortly before it expires.
function vertex(): Provider {
  const google = ExternalAccountClient.fromJSON({
    type: "external_account",
    audience: `//iam.googleapis.com/projects/${env.GCP_PROJECT_NUMBER}/locations/global/workloadIdentityPools/${env.GCP_WORKLOAD_IDENTITY_POOL_ID}/providers/${env.GCP_WORKLOAD_IDENTITY_POOL_PROVIDER_ID}`,
    subject_token_type: "urn:ietf:params:oauth:token-type:jwt",
    token_url: "https://sts.googleapis.com/v1/token",
    service_account_impersonation_url: `https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/${env.GCP_SERVICE_ACCOUNT_EMAIL}:generateAccessToken`,
    subject_token_supplier: { getSubjectToken: () => getVercelOidcToken() },
  });
  if (!google) throw new Error("the workload identity settings do not make an external account");
  return {
    type: "vertex",
    projectId: env.GCP_PROJECT_ID,
    region: env.CLOUD_ML_REGION ?? "global",
    accessToken: () => google.getAccessToken(),
  };
}

// Microsoft Foundry: the resource's key from the environment (ANTHROPIC_FOUNDRY_API_KEY).
function foundry(): Provider {
  return { type: "foundry", resource: env.ANTHROPIC_FOUNDRY_RESOURCE };
}

// Outside Vercel (a container, a VM, a laptop), the plain names are enough: the engine reads the
// AWS default chain or Google's Application Default Credentials itself.
const PROVIDERS = { bedrock, vertex, foundry, anthropic: (): Provider => "anthropic" };

export const provider: Provider = PROVIDERS[(env.CLAUDE_PLATFORM ?? "anthropic") as keyof typeof PROVIDERS]();
