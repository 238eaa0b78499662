//! The platforms a run's requests can go to, with the settings that shape them; what each does
//! with a request is `platform.rs`'s.

/// Which front end a run's requests go to, with the settings that shape them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Platform {
    /// The Anthropic API (`api.anthropic.com`, or a gateway at `baseURL`).
    #[default]
    Anthropic,
    /// Amazon Bedrock Runtime: `/model/{model}/invoke`, the body's `anthropic_version`.
    Bedrock {
        /// The model id (or ARN), sent as one path segment.
        model: String,
    },
    /// Google Vertex AI: `…/publishers/anthropic/models/{model}:rawPredict`.
    Vertex {
        /// The Google Cloud project.
        project: String,
        /// The region (`global` included).
        region: String,
        /// The model id, sent as one path segment.
        model: String,
    },
    /// Microsoft Foundry: the Messages API under `/anthropic`.
    Foundry,
    /// Claude Platform on AWS: the Messages API with the workspace header.
    Aws {
        /// The `anthropic-workspace-id` header.
        workspace_id: String,
    },
    /// Claude on Google Cloud (Anthropic managed): the Messages API under the workspace's path.
    GoogleCloud {
        /// The Google Cloud project.
        project: String,
        /// The location (`global` by default).
        location: String,
        /// The workspace.
        workspace: String,
    },
}
