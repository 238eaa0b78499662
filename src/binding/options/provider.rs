//! `provider`: where the Messages API is reached (CONTRACT §14) — `"anthropic"` (the default),
//! `"bedrock"`, `"vertex"`, `"foundry"`, `"aws"`, `"google-cloud"`, or an object with `type` and
//! that platform's settings, each else read from the environment the JS layer passed. A missing
//! setting is `invalid_request` naming the option and the variables; on a platform,
//! `ANTHROPIC_BASE_URL`, `ANTHROPIC_API_KEY` and `ANTHROPIC_AUTH_TOKEN` are never read.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::credentials;
use super::read::{bad_kind, env_str, Given};
use crate::engine::wire::aws_auth::AwsSigning;
use crate::engine::wire::google_adc::GoogleAdc;
use crate::engine::wire::platform::Platform;
use crate::engine::wire::token_auth::TokenAuth;
use crate::engine::{RunError, Secret};

/// The platforms `provider` names.
const TYPES: &[&str] = &[
    "anthropic",
    "bedrock",
    "vertex",
    "foundry",
    "aws",
    "google-cloud",
];

/// The settings each platform's object takes besides `type`.
fn keys_of(kind: &str) -> &'static [&'static str] {
    match kind {
        "bedrock" => &["region", "credentials"],
        "vertex" => &["region", "projectId", "accessToken"],
        "foundry" => &["resource", "accessToken"],
        "aws" => &["region", "workspaceId", "credentials"],
        "google-cloud" => &["projectId", "location", "workspaceId", "accessToken"],
        _ => &[],
    }
}

/// A `provider` read: its type and its object's settings.
pub struct Provider {
    kind: &'static str,
    settings: Map<String, Value>,
}

impl Provider {
    /// Whether the run talks to the Anthropic API itself.
    pub fn is_anthropic(&self) -> bool {
        self.kind == "anthropic"
    }
}

/// Reads `provider`: a type's name, or `{ type, …settings }` with only that type's settings.
pub fn provider(option: Given) -> Result<Provider, RunError> {
    let expected = r#"one of "anthropic", "bedrock", "vertex", "foundry", "aws", "google-cloud", or an object { type, …settings }"#;
    let named = |name: &str| TYPES.iter().copied().find(|t| *t == name);
    match option.value() {
        None => Ok(Provider {
            kind: "anthropic",
            settings: Map::new(),
        }),
        Some(Value::String(name)) => match named(&name) {
            Some(kind) => Ok(Provider {
                kind,
                settings: Map::new(),
            }),
            None => Err(option.bad(expected, &Value::String(name))),
        },
        Some(Value::Object(settings)) => {
            let kind = match settings.get("type") {
                Some(Value::String(name)) => named(name),
                _ => None,
            };
            let Some(kind) = kind else {
                let got = settings.get("type").cloned().unwrap_or(Value::Null);
                return Err(bad_kind(
                    "provider.type",
                    r#"one of "anthropic", "bedrock", "vertex", "foundry", "aws", "google-cloud""#,
                    &got,
                ));
            };
            let known = keys_of(kind);
            if let Some(key) = settings
                .keys()
                .find(|k| *k != "type" && !known.contains(&k.as_str()))
            {
                let takes = if known.is_empty() {
                    "no settings".to_owned()
                } else {
                    known.join(", ")
                };
                return Err(RunError::invalid_request(format!(
                    "Option provider has no setting {key:?} for {kind:?} (it takes {takes}). Nothing was sent."
                )));
            }
            for (key, value) in &settings {
                if key == "credentials" {
                    credentials::check(value)?;
                    continue;
                }
                if key == "accessToken" {
                    credentials::check_token_function(value)?;
                    continue;
                }
                if key != "type" && !matches!(value, Value::String(s) if !s.trim().is_empty()) {
                    return Err(bad_kind(
                        &format!("provider.{key}"),
                        "a non-empty string",
                        value,
                    ));
                }
            }
            Ok(Provider { kind, settings })
        }
        Some(other) => Err(option.bad(expected, &other)),
    }
}

impl Provider {
    /// A setting: the object's, else the first of `vars` set in the environment.
    fn setting<'e>(
        &'e self,
        key: &str,
        env: &'e BTreeMap<String, Value>,
        vars: &[&str],
    ) -> Option<&'e str> {
        self.settings
            .get(key)
            .and_then(Value::as_str)
            .or_else(|| vars.iter().find_map(|v| env_str(env, v)))
    }

    /// A setting the platform cannot do without: `invalid_request` naming it and the variables.
    fn required<'e>(
        &'e self,
        key: &str,
        env: &'e BTreeMap<String, Value>,
        vars: &[&str],
        what: &str,
    ) -> Result<&'e str, RunError> {
        self.setting(key, env, vars).ok_or_else(|| {
            RunError::invalid_request(format!(
                "provider {:?} needs {what}: set provider.{key} or {}. Nothing was sent.",
                self.kind,
                vars.join(" / ")
            ))
        })
    }

    /// Refuses a credential option the platform has no use for (Google's take a token, no key;
    /// Bedrock's and Claude Platform on AWS's a key, no token).
    pub fn check_credentials(&self, api_key: Given, auth_token: Given) -> Result<(), RunError> {
        if self.settings.contains_key("accessToken") {
            for given in [&api_key, &auth_token] {
                if given.value().is_some_and(|v| !v.is_null()) {
                    return Err(RunError::invalid_request(format!(
                        "provider {:?}: give either provider.accessToken or the {} option, not both. Nothing was sent.",
                        self.kind, given.name
                    )));
                }
            }
        }
        let (refused, instead) = match self.kind {
            "vertex" | "google-cloud" => (api_key, "pass an OAuth access token as authToken"),
            "bedrock" | "aws" => (auth_token, "pass the key as apiKey"),
            _ => return Ok(()),
        };
        if refused.value().is_some_and(|v| !v.is_null()) {
            return Err(RunError::invalid_request(format!(
                "provider {:?} takes no {}: {instead}. Nothing was sent.",
                self.kind, refused.name
            )));
        }
        Ok(())
    }

    /// The platform's key (the `apiKey` option, else its own variable), or, on Bedrock and
    /// Claude Platform on AWS, how requests are signed instead; see `credentials.rs` for the
    /// order.
    pub fn credential(
        &self,
        option: Option<Secret>,
        env: &BTreeMap<String, Value>,
    ) -> Result<(Option<Secret>, Option<AwsSigning>), RunError> {
        // A token function (checked alone by `check_credentials`) leaves no key to find.
        if self.settings.contains_key("accessToken") {
            return Ok((None, None));
        }
        let var = match self.kind {
            "bedrock" | "aws" => {
                let region = || self.region(env);
                return credentials::aws(
                    self.kind,
                    option,
                    self.settings.get("credentials"),
                    env,
                    region,
                );
            }
            "foundry" => "ANTHROPIC_FOUNDRY_API_KEY",
            _ => return Ok((option, None)),
        };
        Ok((option.or_else(|| env_str(env, var).map(Secret::from)), None))
    }

    /// The AWS region: the option, else `AWS_REGION`, `AWS_DEFAULT_REGION`, else the region of
    /// the `AWS_PROFILE` (or default) profile of the shared config file; an `invalid_request`
    /// naming them when there is none.
    fn region(&self, env: &BTreeMap<String, Value>) -> Result<String, RunError> {
        let vars = ["AWS_REGION", "AWS_DEFAULT_REGION"];
        if let Some(region) = self.setting("region", env, &vars) {
            return Ok(region.to_owned());
        }
        credentials::profile_region(env).ok_or_else(|| {
            RunError::invalid_request(format!(
                "provider {:?} needs an AWS region: set provider.region or AWS_REGION / AWS_DEFAULT_REGION (or a region in the AWS_PROFILE profile of the shared config file). Nothing was sent.",
                self.kind
            ))
        })
    }

    /// The Google Cloud project: the option, else the first of `vars` set, else the project of
    /// the Application Default Credentials' file; an `invalid_request` naming them without one.
    fn project(&self, env: &BTreeMap<String, Value>, vars: &[&str]) -> Result<String, RunError> {
        if let Some(project) = self.setting("projectId", env, vars) {
            return Ok(project.to_owned());
        }
        adc(env).project().ok_or_else(|| {
            RunError::invalid_request(format!(
                "provider {:?} needs a Google Cloud project: set provider.projectId or {} (or use Application Default Credentials that name one). Nothing was sent.",
                self.kind,
                vars.join(" / ")
            ))
        })
    }

    /// Where each request's bearer token comes from: `provider.accessToken`, asked on every
    /// request on Foundry (as its official client asks its Entra ID provider) and kept while
    /// fresh on Google's platforms; else, on Google's platforms without `authToken`, Application
    /// Default Credentials.
    pub fn token_auth(
        &self,
        has_auth_token: bool,
        env: &BTreeMap<String, Value>,
    ) -> Option<TokenAuth> {
        let google = matches!(self.kind, "vertex" | "google-cloud");
        if self.settings.contains_key("accessToken") {
            return Some(TokenAuth::from_function(!google));
        }
        (google && !has_auth_token).then(|| TokenAuth::from_adc(adc(env)))
    }

    /// The platform's own base-URL variable, where its official client's reads the same thing
    /// our `baseURL` is (the scheme and host, the platform's path following).
    pub fn base_url_var(&self) -> Option<&'static str> {
        match self.kind {
            "bedrock" => Some("ANTHROPIC_BEDROCK_BASE_URL"),
            "aws" => Some("ANTHROPIC_AWS_BASE_URL"),
            _ => None,
        }
    }

    /// The platform's default `baseURL` (its `https://{host}`), or an `invalid_request` naming
    /// the setting the host is made from. `None` on the Anthropic API (its own default).
    pub fn default_base_url(&self, env: &BTreeMap<String, Value>) -> Result<String, RunError> {
        Ok(match self.kind {
            "bedrock" => format!(
                "https://bedrock-runtime.{}.amazonaws.com",
                self.region(env)?
            ),
            "aws" => format!(
                "https://aws-external-anthropic.{}.api.aws",
                self.region(env)?
            ),
            "vertex" => match self.vertex_region(env)? {
                "global" => "https://aiplatform.googleapis.com".to_owned(),
                region => format!("https://{region}-aiplatform.googleapis.com"),
            },
            "foundry" => {
                let resource = self.required(
                    "resource",
                    env,
                    &["ANTHROPIC_FOUNDRY_RESOURCE"],
                    "a Foundry resource (or the baseURL option)",
                )?;
                format!("https://{resource}.services.ai.azure.com")
            }
            _ => "https://claude.googleapis.com".to_owned(),
        })
    }

    fn vertex_region<'e>(&'e self, env: &'e BTreeMap<String, Value>) -> Result<&'e str, RunError> {
        self.required("region", env, &["CLOUD_ML_REGION"], "a Google Cloud region")
    }

    /// The engine's platform for a run of `model`; an `invalid_request` for a missing setting.
    pub fn platform(
        &self,
        env: &BTreeMap<String, Value>,
        model: &str,
    ) -> Result<Platform, RunError> {
        let project = |vars: &[&str]| self.project(env, vars);
        Ok(match self.kind {
            "bedrock" => Platform::Bedrock {
                model: model.to_owned(),
            },
            "vertex" => Platform::Vertex {
                project: project(&["ANTHROPIC_VERTEX_PROJECT_ID"])?,
                region: self.vertex_region(env)?.to_owned(),
                model: model.to_owned(),
            },
            "foundry" => Platform::Foundry,
            "aws" => Platform::Aws {
                workspace_id: self
                    .required(
                        "workspaceId",
                        env,
                        &["ANTHROPIC_AWS_WORKSPACE_ID"],
                        "a workspace",
                    )?
                    .to_owned(),
            },
            "google-cloud" => Platform::GoogleCloud {
                project: project(&["ANTHROPIC_GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_PROJECT"])?,
                location: self
                    .setting("location", env, &["ANTHROPIC_GOOGLE_CLOUD_LOCATION"])
                    .unwrap_or("global")
                    .to_owned(),
                workspace: self
                    .required(
                        "workspaceId",
                        env,
                        &["ANTHROPIC_GOOGLE_CLOUD_WORKSPACE_ID"],
                        "a workspace",
                    )?
                    .to_owned(),
            },
            _ => Platform::Anthropic,
        })
    }
}

/// Application Default Credentials as the environment the JS layer passed points to them.
fn adc(env: &BTreeMap<String, Value>) -> GoogleAdc {
    GoogleAdc::new(|name| env_str(env, name).map(str::to_owned))
}
