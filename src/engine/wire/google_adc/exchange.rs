//! The exchanges that turn Google credentials into an access token (scope `cloud-platform`): a
//! service account's RS256-signed JWT posted to its key file's `token_uri` (the JWT bearer
//! grant), a gcloud user's refresh token posted to the token endpoint, or the metadata server's
//! token for the instance's service account. Each is bounded in time; what an endpoint says back
//! is quoted short, and the caller takes the file's secrets out of it.

use std::sync::OnceLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde::{Deserialize, Serialize};

use super::KeyFile;
use crate::engine::wire::access_token::{AccessToken, LOOKUP_TIMEOUT};
use crate::engine::wire::secret::Secret;

/// The scope every token is asked for.
pub const CLOUD_PLATFORM: &str = "https://www.googleapis.com/auth/cloud-platform";

/// Google's token endpoint, for a user's credentials that name none.
const GOOGLE_TOKEN_URL: &str = "https://oauth2.googleapis.com/token";

/// The metadata server is given this long: off Google Cloud nothing answers there.
const METADATA_TIMEOUT: Duration = Duration::from_secs(3);

pub(super) fn http() -> Result<&'static reqwest::Client, String> {
    static HTTP: OnceLock<Result<reqwest::Client, String>> = OnceLock::new();
    HTTP.get_or_init(|| {
        reqwest::Client::builder()
            // A token endpoint that redirects is not followed: the JWT or the refresh token
            // goes to the named endpoint only.
            .redirect(reqwest::redirect::Policy::none())
            .timeout(LOOKUP_TIMEOUT)
            .build()
            .map_err(|e| format!("the HTTP client could not be built: {e}"))
    })
    .as_ref()
    .map_err(Clone::clone)
}

#[derive(Serialize)]
struct Claims<'a> {
    iss: &'a str,
    scope: &'a str,
    aud: &'a str,
    iat: u64,
    exp: u64,
}

/// A service account's token: a JWT signed with its private key, exchanged at its `token_uri`.
pub async fn service_account(key: &KeyFile) -> Result<AccessToken, String> {
    let (Some(email), Some(pem), Some(token_uri)) =
        (&key.client_email, &key.private_key, &key.token_uri)
    else {
        return Err("the service account key needs client_email, private_key and token_uri".into());
    };
    let signer = EncodingKey::from_rsa_pem(pem.as_bytes())
        .map_err(|_| "its private_key is not an RSA private key in PEM".to_owned())?;
    let iat = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let claims = Claims {
        iss: email,
        scope: CLOUD_PLATFORM,
        aud: token_uri,
        iat,
        exp: iat + 3600,
    };
    let jwt = jsonwebtoken::encode(&Header::new(Algorithm::RS256), &claims, &signer)
        .map_err(|e| format!("the JWT could not be signed ({e})"))?;
    let form = [
        ("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"),
        ("assertion", jwt.as_str()),
    ];
    post_form(token_uri, &form).await
}

/// A gcloud user's token: the refresh token exchanged at the token endpoint.
pub async fn authorized_user(key: &KeyFile) -> Result<AccessToken, String> {
    let (Some(id), Some(secret), Some(refresh)) =
        (&key.client_id, &key.client_secret, &key.refresh_token)
    else {
        return Err("the user credentials need client_id, client_secret and refresh_token".into());
    };
    let url = key.token_uri.as_deref().unwrap_or(GOOGLE_TOKEN_URL);
    let form = [
        ("grant_type", "refresh_token"),
        ("client_id", id.as_str()),
        ("client_secret", secret.as_str()),
        ("refresh_token", refresh.as_str()),
    ];
    let mut token = post_form(url, &form).await?;
    token.quota_project = key.quota_project_id.clone();
    Ok(token)
}

/// The instance's service account's token from the metadata server at `host`.
pub async fn metadata(host: &str) -> Result<AccessToken, String> {
    let url = format!(
        "http://{host}/computeMetadata/v1/instance/service-accounts/default/token?scopes={CLOUD_PLATFORM}"
    );
    let asked = http()?
        .get(&url)
        .header("Metadata-Flavor", "Google")
        .timeout(METADATA_TIMEOUT)
        .send();
    let response = asked.await.map_err(|e| {
        format!(
            "the metadata server at {host} did not answer ({})",
            short(&e.to_string())
        )
    })?;
    token_answer(response, &format!("the metadata server at {host}")).await
}

/// Posts an OAuth form to a token endpoint and reads the token it answers.
pub(super) async fn post_form(url: &str, form: &[(&str, &str)]) -> Result<AccessToken, String> {
    let response = http()?.post(url).form(form).send().await.map_err(|e| {
        format!(
            "the token endpoint {url} could not be reached ({})",
            short(&e.to_string())
        )
    })?;
    token_answer(response, &format!("the token endpoint {url}")).await
}

#[derive(Deserialize)]
struct Granted {
    access_token: String,
    expires_in: Option<f64>,
}

#[derive(Deserialize)]
struct Refused {
    error: Option<String>,
    error_description: Option<String>,
}

/// Reads `{ access_token, expires_in }`, or says what `who` answered instead (OAuth's
/// `{ error, error_description }`, quoted short).
async fn token_answer(response: reqwest::Response, who: &str) -> Result<AccessToken, String> {
    let status = response.status();
    let body = response.bytes().await.map_err(|e| {
        format!("{who} answered HTTP {status} but its body could not be read ({e})")
    })?;
    if status.is_success() {
        let granted: Granted = serde_json::from_slice(&body)
            .map_err(|_| format!("{who} answered HTTP {status} without an access_token"))?;
        let expires = granted
            .expires_in
            .filter(|s| s.is_finite() && *s > 0.0)
            .map(|s| SystemTime::now() + Duration::from_secs_f64(s));
        return Ok(AccessToken {
            token: Secret::new(granted.access_token),
            expires,
            quota_project: None,
        });
    }
    let said = match serde_json::from_slice::<Refused>(&body) {
        Ok(Refused {
            error: Some(error),
            error_description,
        }) => match error_description {
            Some(d) => format!("{error}: {}", short(&d)),
            None => error,
        },
        _ => "no OAuth error body".to_owned(),
    };
    Err(format!("{who} answered HTTP {} ({said})", status.as_u16()))
}

/// At most 300 characters of outside text.
pub(super) fn short(text: &str) -> String {
    match text.char_indices().nth(300) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}
