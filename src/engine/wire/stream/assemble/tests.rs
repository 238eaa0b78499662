use super::*;

/// Applies `(event, data)` pairs and returns the assembled content, or the failure.
fn assemble(events: &[(&str, String)]) -> Result<MessageResponse, StreamFailure> {
    let mut reply = Assembly::default();
    for (name, data) in events {
        reply.apply(name, data, &mut |_| {})?;
    }
    reply.finish(None)
}

fn start() -> (&'static str, String) {
    (
            "message_start",
            r#"{"message":{"type":"message","role":"assistant","content":[],"usage":{"input_tokens":3}}}"#.into(),
        )
}

fn ev(name: &'static str, data: &str) -> (&'static str, String) {
    (name, data.to_owned())
}

#[test]
fn deltas_replace_members_in_place_and_new_ones_go_last() {
    let reply = assemble(&[
        start(),
        ev(
            "content_block_start",
            r#"{"index":0,"content_block":{"type":"thinking","thinking":"","signature":"","z":1}}"#,
        ),
        ev(
            "content_block_delta",
            r#"{"index":0,"delta":{"type":"thinking_delta","thinking":"a \"b\""}}"#,
        ),
        ev(
            "content_block_delta",
            r#"{"index":0,"delta":{"type":"signature_delta","signature":"s1"}}"#,
        ),
        ev("content_block_stop", r#"{"index":0}"#),
        ev(
            "content_block_start",
            r#"{"index":1,"content_block":{"type":"text","text":"pre-"}}"#,
        ),
        ev(
            "content_block_delta",
            r#"{"index":1,"delta":{"type":"text_delta","text":"é"}}"#,
        ),
        ev(
            "content_block_delta",
            r#"{"index":1,"delta":{"type":"citations_delta","citation":{"n":1}}}"#,
        ),
        ev(
            "content_block_delta",
            r#"{"index":1,"delta":{"type":"citations_delta","citation":{"n":2}}}"#,
        ),
        ev("content_block_stop", r#"{"index":1}"#),
        ev(
            "message_delta",
            r#"{"delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":9}}"#,
        ),
        ev("message_stop", "{}"),
    ])
    .unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(
        reply.content.get(),
        r#"[{"type":"thinking","thinking":"a \"b\"","signature":"s1","z":1},{"type":"text","text":"pre-é","citations":[{"n":1},{"n":2}]}]"#
    );
    assert_eq!(reply.usage.input_tokens, Some(3));
    assert_eq!(reply.usage.output_tokens, Some(9));
    assert_eq!(reply.stop_reason.as_deref(), Some("end_turn"));
}

#[test]
fn a_delta_that_does_not_fit_its_block_is_refused() {
    // A text block, then one delta for it.
    let on_text = |delta: &str| {
        assemble(&[
            start(),
            ev(
                "content_block_start",
                r#"{"index":0,"content_block":{"type":"text","text":""}}"#,
            ),
            ev(
                "content_block_delta",
                &format!(r#"{{"index":0,"delta":{delta}}}"#),
            ),
        ])
    };
    let failure = on_text(r#"{"type":"input_json_delta","partial_json":"{"}"#);
    assert!(matches!(failure, Err(StreamFailure::Malformed(_))));
    let failure = assemble(&[
        start(),
        ev(
            "content_block_delta",
            r#"{"index":0,"delta":{"type":"text_delta","text":"x"}}"#,
        ),
    ]);
    assert!(matches!(failure, Err(StreamFailure::Malformed(_))));
    let failure = on_text(r#"{"type":"compaction_delta","content":"x"}"#);
    assert!(
        matches!(&failure, Err(StreamFailure::Malformed(m)) if m.contains("compaction_delta") && m.contains("text block")),
        "{:?}",
        failure.err()
    );
    let failure = on_text(r#"{"type":"x_future_delta","content":"x"}"#);
    assert!(matches!(failure, Err(StreamFailure::UnknownDelta(k)) if k == "x_future_delta"));
}

#[test]
fn a_compaction_delta_assigns_the_blocks_final_values() {
    let compacted = |delta: &str| {
        assemble(&[
            start(),
            ev(
                "content_block_start",
                r#"{"index":0,"content_block":{"type":"compaction","content":null,"signature":"s"}}"#,
            ),
            ev(
                "content_block_delta",
                &format!(r#"{{"index":0,"delta":{delta}}}"#),
            ),
            ev("content_block_stop", r#"{"index":0}"#),
            ev("message_stop", "{}"),
        ])
    };
    let reply = compacted(
        r#"{"type":"compaction_delta","content":"Summary \"so far\"","encrypted_content":"ZW5j"}"#,
    )
    .unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(
        reply.content.get(),
        r#"[{"type":"compaction","content":"Summary \"so far\"","signature":"s","encrypted_content":"ZW5j"}]"#
    );
    // A failed compaction stays `null`, and no encrypted_content is made up.
    let reply = compacted(r#"{"type":"compaction_delta","content":null}"#)
        .unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(
        reply.content.get(),
        r#"[{"type":"compaction","content":null,"signature":"s"}]"#
    );
    for bad in [
        r#"{"type":"compaction_delta"}"#,
        r#"{"type":"compaction_delta","content":7}"#,
    ] {
        assert!(
            matches!(compacted(bad), Err(StreamFailure::Malformed(_))),
            "{bad}"
        );
    }
}

#[test]
fn events_before_message_start_are_refused() {
    let mut reply = Assembly::default();
    let failure = reply.apply("content_block_stop", r#"{"index":0}"#, &mut |_| {});
    assert!(matches!(failure, Err(StreamFailure::Malformed(_))));
    // Unknown event names and pings are ignored once the message started.
    reply
        .apply("message_start", &start().1, &mut |_| {})
        .unwrap();
    reply.apply("ping", "{}", &mut |_| {}).unwrap();
    // A second message_start is a spliced stream, never a fresh start.
    let again = reply.apply("message_start", &start().1, &mut |_| {});
    assert!(
        matches!(again, Err(StreamFailure::Malformed(m)) if m.contains("second message_start"))
    );
    reply
        .apply("x_future_event", "not even JSON", &mut |_| {})
        .unwrap();
}
