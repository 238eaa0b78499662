//! AWS Signature Version 4 on a request to Bedrock (service `bedrock`) or Claude Platform on AWS
//! (service `aws-external-anthropic`), with AWS's own signer (`aws-sigv4`): every header the
//! attempt sends is signed (the signer leaves out those a proxy may rewrite, such as
//! `user-agent`), with `host`, `x-amz-date`, `x-amz-content-sha256` of the exact body and, for
//! temporary credentials, `x-amz-security-token`. The path is encoded once more for the
//! canonical request, as every AWS service but S3 expects.

use std::time::SystemTime;

use aws_sigv4::http_request::{
    sign, PayloadChecksumKind, SignableBody, SignableRequest, SigningSettings,
};
use aws_sigv4::sign::v4;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use crate::engine::error::RunError;
use crate::engine::wire::aws_auth::{AwsCredentials, AwsSigning};

/// Adds the signature headers to `headers` for a `POST` to `url` of a body whose SHA-256 is
/// `body_sha256` (lowercase hex), signed at `now` for the region and service of `aws` with
/// `credentials`.
pub(crate) fn sign_request(
    headers: &mut HeaderMap,
    url: &str,
    body_sha256: &str,
    aws: &AwsSigning,
    credentials: &AwsCredentials,
    now: SystemTime,
) -> Result<(), RunError> {
    let identity = credentials.identity();
    let mut settings = SigningSettings::default();
    settings.payload_checksum_kind = PayloadChecksumKind::XAmzSha256;
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region(&aws.region)
        .name(aws.service)
        .time(now)
        .settings(settings)
        .build()
        .map_err(|e| RunError::unsignable(&e.to_string()))?
        .into();
    // Only text headers can be signed (ours all are; a `headers` option value that is not
    // text is sent unsigned, which AWS allows).
    let signed: Vec<(&str, &str)> = headers
        .iter()
        .filter_map(|(name, value)| Some((name.as_str(), value.to_str().ok()?)))
        .collect();
    let request = SignableRequest::new(
        "POST",
        url,
        signed.into_iter(),
        SignableBody::Precomputed(body_sha256.to_owned()),
    )
    .map_err(|e| RunError::unsignable(&e.to_string()))?;
    let (instructions, _signature) = sign(request, &params)
        .map_err(|e| RunError::unsignable(&e.to_string()))?
        .into_parts();
    let (added, _) = instructions.into_parts();
    for header in added {
        let name = HeaderName::from_static(header.name());
        let mut value = HeaderValue::from_str(header.value())
            .map_err(|_| RunError::unsendable_platform_credential("AWS session token"))?;
        value.set_sensitive(header.sensitive() || name == "authorization");
        headers.insert(name, value);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::wire::aws_auth::AwsSource;
    use crate::engine::Secret;
    use std::time::{Duration, UNIX_EPOCH};

    /// AWS's own example key pair from its Signature Version 4 documentation (not a secret).
    fn example() -> AwsCredentials {
        AwsCredentials {
            access_key_id: "AKIDEXAMPLE".into(),
            secret_access_key: Secret::new("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"),
            session_token: None,
            expires: None,
        }
    }

    #[test]
    fn signs_host_date_and_the_body_hash_and_encodes_the_path_twice() {
        let mut headers = HeaderMap::new();
        headers.insert("content-type", HeaderValue::from_static("application/json"));
        let now = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let url =
            "http://127.0.0.1:9/model/arn:aws:bedrock:us-east-1:1:inference-profile%2Fx/invoke";
        let aws = AwsSigning::new("us-east-1".into(), "bedrock", AwsSource::Given(example()));
        // SHA-256 of `{}`.
        let hash = "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a";
        sign_request(&mut headers, url, hash, &aws, &example(), now).unwrap();
        let auth = headers["authorization"].to_str().unwrap();
        assert!(auth.starts_with(
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20231114/us-east-1/bedrock/aws4_request, SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date, Signature="
        ), "{auth}");
        assert!(headers["authorization"].is_sensitive());
        assert_eq!(headers["x-amz-date"], "20231114T221320Z");
        assert_eq!(
            headers["x-amz-content-sha256"],
            "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
        );
        assert!(headers.get("x-amz-security-token").is_none());
    }

    #[test]
    fn a_session_token_is_sent_signed_and_marked_sensitive() {
        let mut headers = HeaderMap::new();
        let creds = AwsCredentials {
            session_token: Some(Secret::new("session-token-value")),
            ..example()
        };
        let now = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let aws = AwsSigning::new(
            "us-west-2".into(),
            "aws-external-anthropic",
            AwsSource::Given(creds.clone()),
        );
        let empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
        sign_request(
            &mut headers,
            "https://h/v1/messages",
            empty,
            &aws,
            &creds,
            now,
        )
        .unwrap();
        assert_eq!(headers["x-amz-security-token"], "session-token-value");
        assert!(headers["x-amz-security-token"].is_sensitive());
        let auth = headers["authorization"].to_str().unwrap();
        assert!(
            auth.contains("/us-west-2/aws-external-anthropic/aws4_request"),
            "{auth}"
        );
        assert!(auth.contains("x-amz-security-token"), "{auth}");
    }
}
