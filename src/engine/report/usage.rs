//! Token counts: as each reply gives them (`usage` of a Messages API response) and summed over
//! every request of a run.

use serde::{Deserialize, Serialize};

/// Token counts summed over every request of a run.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Input tokens, not counting those read from or written to the cache.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Input tokens read from the prompt cache.
    pub cache_read_input_tokens: u64,
    /// Input tokens written to the prompt cache.
    pub cache_creation_input_tokens: u64,
}

impl Usage {
    /// Adds one response's counts: its top-level usage and the iterations that leave out
    /// (a compaction's tokens are billed, yet not in the top-level fields).
    pub fn add(&mut self, u: &ApiUsage) {
        // Saturating: the counts are the API's (or a gateway's), and a huge one must not wrap
        // the sum round to almost nothing, past the token budget.
        let more = u.iterations.map(|i| i.beyond).unwrap_or_default();
        let add = |sum: &mut u64, top: Option<u64>, iterations: u64| {
            *sum = sum
                .saturating_add(top.unwrap_or(0))
                .saturating_add(iterations);
        };
        add(&mut self.input_tokens, u.input_tokens, more.input_tokens);
        add(&mut self.output_tokens, u.output_tokens, more.output_tokens);
        add(
            &mut self.cache_read_input_tokens,
            u.cache_read_input_tokens,
            more.cache_read_input_tokens,
        );
        add(
            &mut self.cache_creation_input_tokens,
            u.cache_creation_input_tokens,
            more.cache_creation_input_tokens,
        );
    }

    /// Every token counted, input (the cache's included) and output: what a token budget spends.
    pub fn total(&self) -> u64 {
        self.input_tokens
            .saturating_add(self.output_tokens)
            .saturating_add(self.cache_read_input_tokens)
            .saturating_add(self.cache_creation_input_tokens)
    }
}

/// Token counts of one response.
#[derive(Deserialize, Default, Clone, Copy, Debug)]
pub struct ApiUsage {
    /// Tokens read from the request, cache aside.
    #[serde(default)]
    pub input_tokens: Option<u64>,
    /// Tokens the model wrote.
    #[serde(default)]
    pub output_tokens: Option<u64>,
    /// Tokens written to the prompt cache.
    #[serde(default)]
    pub cache_creation_input_tokens: Option<u64>,
    /// Tokens read from the prompt cache.
    #[serde(default)]
    pub cache_read_input_tokens: Option<u64>,
    /// What `iterations` says beyond the fields above: the tokens they leave out, and whether
    /// a fallback model wrote the reply.
    #[serde(default, deserialize_with = "beyond_the_message")]
    pub iterations: Option<Iterations>,
}

/// The `usage.iterations` of a reply, read for what the top-level usage does not say.
#[derive(Default, Clone, Copy, Debug, PartialEq, Eq)]
pub struct Iterations {
    /// The tokens of every entry but `message` and `fallback_message` (a compaction, an
    /// advisor's message …), summed: billed all the same.
    pub beyond: Tokens,
    /// A `fallback_message` entry: another model served the reply (the API's Threads do not
    /// hold such a reply).
    pub fallback: bool,
}

/// Token counts of one kind of work (input not counting the cache, output, cache read, cache
/// written).
#[derive(Deserialize, Default, Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tokens {
    /// Tokens read from the request, cache aside.
    #[serde(default)]
    pub input_tokens: u64,
    /// Tokens the model wrote.
    #[serde(default)]
    pub output_tokens: u64,
    /// Tokens written to the prompt cache.
    #[serde(default)]
    pub cache_creation_input_tokens: u64,
    /// Tokens read from the prompt cache.
    #[serde(default)]
    pub cache_read_input_tokens: u64,
}

/// Sums the `usage.iterations` entries that the top-level usage does not count, and notes a
/// fallback model's. An entry that is not an object with a `type` and counts is left out rather
/// than failing the reply: usage is reported, never acted on by the API.
fn beyond_the_message<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<Iterations>, D::Error> {
    #[derive(Deserialize)]
    struct Iteration {
        #[serde(rename = "type", default)]
        kind: String,
        #[serde(flatten)]
        tokens: Tokens,
    }
    let serde_json::Value::Array(entries) = serde_json::Value::deserialize(d)? else {
        return Ok(None);
    };
    let mut sum = Tokens::default();
    let mut fallback = false;
    for entry in entries {
        let Ok(it) = serde_json::from_value::<Iteration>(entry) else {
            continue;
        };
        fallback |= it.kind == "fallback_message";
        if matches!(it.kind.as_str(), "message" | "fallback_message") {
            continue;
        }
        let t = it.tokens;
        sum.input_tokens = sum.input_tokens.saturating_add(t.input_tokens);
        sum.output_tokens = sum.output_tokens.saturating_add(t.output_tokens);
        sum.cache_creation_input_tokens = sum
            .cache_creation_input_tokens
            .saturating_add(t.cache_creation_input_tokens);
        sum.cache_read_input_tokens = sum
            .cache_read_input_tokens
            .saturating_add(t.cache_read_input_tokens);
    }
    Ok(Some(Iterations {
        beyond: sum,
        fallback,
    }))
}
