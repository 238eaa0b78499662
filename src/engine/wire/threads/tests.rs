use super::*;

fn message(text: &str) -> RawMessage {
    RawMessage::from(RawValue::from_string(text.to_owned()).unwrap())
}

#[test]
fn a_thread_is_created_continued_replayed_and_given_up() {
    let mut t = ApiThread::new(true);
    assert_eq!(t.plan().thread, Some(ThreadField::Create));
    assert_eq!(t.restart(), None, "a create is sent again as it is");
    t.replied(
        Replied {
            id: Some("msg_1"),
            ..Replied::default()
        },
        1,
        false,
    );
    let plan = t.plan();
    assert_eq!(
        (plan.thread, plan.from),
        (Some(ThreadField::Continue("msg_1")), 2)
    );
    assert_eq!(
        t.restart().map(|p| (p.thread, p.from, p.strip_before)),
        Some((Some(ThreadField::Create), 0, 2))
    );
    // A paused turn's continuation joins it: the API holds as many messages as before.
    t.replied(
        Replied {
            id: Some("msg_2"),
            ..Replied::default()
        },
        2,
        true,
    );
    assert_eq!(t.plan().from, 2);
    assert!(t.recovers_from(Some("thread_not_found")));
    assert_eq!(
        (t.plan().thread, t.plan().strip_before),
        (Some(ThreadField::Create), 2)
    );
    assert!(
        !t.recovers_from(Some("thread_not_found")),
        "a create is never not found"
    );
    t.replied(
        Replied {
            id: Some("msg_3"),
            ..Replied::default()
        },
        3,
        false,
    );
    // Lost again right after the replay: the API may be unable to hold it.
    assert!(t.recovers_from(Some("thread_not_found")));
    assert_eq!(t.plan().thread, None);
    assert_eq!(t.plan().strip_before, 4);
    assert!(!t.recovers_from(Some("thread_unsupported_request")));
    assert!(!t.recovers_from(Some("thread_fingerprint_mismatch")));
}

#[test]
fn spent_or_busy_replies_are_replayed_each_time_and_unsupported_goes_unthreaded() {
    let mut t = ApiThread::new(true);
    t.replied(
        Replied {
            id: Some("msg_1"),
            ..Replied::default()
        },
        1,
        false,
    );
    for code in ["thread_already_continued", "thread_continue_in_flight"] {
        assert!(t.recovers_from(Some(code)));
        assert_eq!(t.plan().thread, Some(ThreadField::Create));
        t.replied(
            Replied {
                id: Some("msg_2"),
                ..Replied::default()
            },
            3,
            false,
        );
    }
    assert!(!t.recovers_from(Some("overloaded")));
    assert!(!t.recovers_from(None));
    assert!(t.recovers_from(Some("thread_unsupported_request")));
    assert_eq!(t.plan().thread, None);
    // A reply a fallback model wrote, or one without an id, is continued in a new thread.
    let mut t = ApiThread::new(true);
    t.replied(
        Replied {
            id: Some("msg_f"),
            fallback: true,
            ..Replied::default()
        },
        1,
        false,
    );
    assert_eq!(t.plan().thread, Some(ThreadField::Create));
    t.replied(
        Replied {
            id: None,
            ..Replied::default()
        },
        3,
        false,
    );
    assert_eq!(t.plan().thread, Some(ThreadField::Create));
    // Off: never a thread, never a marker left out.
    let mut off = ApiThread::new(false);
    off.replied(
        Replied {
            id: Some("msg_1"),
            ..Replied::default()
        },
        1,
        false,
    );
    assert_eq!(
        off.plan(),
        Plan {
            thread: None,
            from: 0,
            strip_before: 0
        }
    );
    assert!(!off.recovers_from(Some("thread_not_found")));
}

#[test]
fn answered_messages_lose_their_cache_markers_and_nothing_else() {
    let messages = [
        message(
            r#"{"role":"user","content":[{"type":"text","text":"say \"cache_control\"","cache_control":{"type":"ephemeral"},"z":1}],"cache_control":{"type":"ephemeral"}}"#,
        ),
        message(
            r#"{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"n","input":{"cache_control":1}}]}"#,
        ),
        message(
            r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"r","cache_control":{"type":"ephemeral"}}]}]}"#,
        ),
    ];
    let plan = Plan {
        thread: Some(ThreadField::Create),
        from: 0,
        strip_before: 2,
    };
    let sent = sent_messages(&messages, &plan);
    assert_eq!(
        sent[0].get(),
        r#"{"role":"user","content":[{"type":"text","text":"say \"cache_control\"","z":1}]}"#
    );
    assert_eq!(
        sent[1].get(),
        messages[1].get(),
        "a tool's input is the model's, kept as written"
    );
    assert_eq!(
        sent[2].get(),
        messages[2].get(),
        "not answered yet: sent as given"
    );
    let plan = Plan {
        thread: Some(ThreadField::Continue("m")),
        from: 2,
        strip_before: 0,
    };
    assert_eq!(sent_messages(&messages, &plan).len(), 1);
    assert_eq!(
        ThreadField::Continue("m\"1").json(),
        r#"{"type":"continue","previous_message_id":"m\"1"}"#
    );
}
